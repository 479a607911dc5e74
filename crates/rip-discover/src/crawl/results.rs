//! What the crawl does with a finished task: a page's links become frontier items (or
//! duplicates, or a better parent for an item still waiting), a failed page becomes a
//! `failure` record, a sitemap's URLs become items, and targets are written.

use std::io::Write;

use rip_core::{Phase, Record, Ref, Status};
use rip_http::records;

use super::Crawl;
use crate::frontier::{Item, ItemKind, key_in};
use crate::task::{Done, Found, FoundLinks, PageResult, SitemapResult, Work};
use crate::{DiscoverError, STAGE};

impl<W: Write> Crawl<W> {
    fn add_children(&mut self, parent: &Item, found: FoundLinks, depth: u32) {
        let FoundLinks { strings, links } = found;
        for f in links {
            if !self.frontier.visit(f.key) {
                self.counters.duplicates += 1;
                self.maybe_reparent(parent, f, &strings, depth);
                continue;
            }
            // At the depth limit only targets are worth a fetch: their links are not followed.
            if self.cfg.max_depth == Some(depth) && !f.target {
                self.counters.depth_limited += 1;
                continue;
            }
            let mut r = Ref::new(f.url(&strings).to_owned());
            r.context.depth = depth;
            r.context.parent = Some(parent.record.url.clone());
            r.context.link_text = link_text(f.text(&strings));
            r.context.raw = f.raw;
            self.enqueue(Item {
                is_target: f.target,
                dispatch_order: parent.dispatch_order,
                ..Item::new(r, f.key, ItemKind::Page)
            });
        }
    }

    /// A URL found again while it still waits at the same depth: it keeps the finding with
    /// row context if only one has it, else the parent first in BFS order; so parent, link
    /// text and raw do not depend on which fetch ended first.
    fn maybe_reparent(&mut self, parent: &Item, f: Found, strings: &str, depth: u32) {
        let journal = &mut self.journal;
        self.frontier.update(f.key, |waiting| {
            if waiting.depth() != depth || waiting.kind != ItemKind::Page || waiting.is_start {
                return;
            }
            let better = match (f.raw.is_empty(), waiting.record.context.raw.is_empty()) {
                (false, true) => true,
                (true, false) => false,
                _ => parent.dispatch_order < waiting.dispatch_order,
            };
            if !better {
                return;
            }
            waiting.dispatch_order = parent.dispatch_order;
            waiting.record.context.parent = Some(parent.record.url.clone());
            waiting.record.context.link_text = link_text(f.text(strings));
            waiting.record.context.raw = f.raw;
            if let Some(j) = journal {
                j.enqueued(waiting);
            }
        });
    }

    /// A sitemap file to read (once per run), found at `level` of the index tree;
    /// `declared` when robots.txt or an index named it (else it is a guessed location).
    fn enqueue_sitemap(&mut self, parent: &Item, url: String, level: u32, declared: bool) {
        let k = key_in("sitemap", &url);
        if self.frontier.visit(k) {
            self.sitemap_files += 1;
            let mut r = Ref::new(url);
            r.context.parent = Some(parent.record.url.clone());
            self.enqueue(Item::new(r, k, ItemKind::Sitemap { level, declared }));
        }
    }

    pub(super) fn handle(&mut self, done: Done) -> Result<(), DiscoverError> {
        let Done { item, outcome } = done;
        self.finish_item(&item);
        match outcome {
            Work::Page(p) => self.page(item, p),
            Work::Sitemap(s) => self.sitemap(item, s),
            Work::Seed(maps, problem) => {
                if let Some(p) = problem {
                    self.notes.push(p);
                }
                for (url, declared) in maps {
                    self.enqueue_sitemap(&item, url, 0, declared);
                }
                self.done(&item, false);
                Ok(())
            }
        }
    }

    fn page(&mut self, item: Item, p: PageResult) -> Result<(), DiscoverError> {
        match p {
            PageResult::Denied(skip) => {
                self.counters.robots_denied += 1;
                let rec = records::expected_record(&item.record, &skip, Phase::Discover);
                self.books.emit(&Record::Expected(rec))?;
                self.done(&item, false);
            }
            PageResult::Failed(f, stats) => {
                self.counters.failed += 1;
                if item.is_start {
                    // Ladon's ExpansionNotReadyError: the source itself is not there. Not
                    // marked done: a later run (same --state) tries it again.
                    self.books.raise(Status::NotReady);
                    let rec =
                        records::failure_record(&item.record, &f, &stats, Phase::Discover, STAGE);
                    self.books.emit(&Record::Failure(rec))?;
                } else if item.is_target {
                    // Still a target: rip-fetch fetches it and records its failure.
                    self.counters.targets_failed += 1;
                    self.emit_target(&item)?;
                } else {
                    self.books.mark_partial();
                    let rec =
                        records::failure_record(&item.record, &f, &stats, Phase::Discover, STAGE);
                    self.books.emit(&Record::Failure(rec))?;
                    self.done(&item, false);
                }
            }
            PageResult::Fetched {
                final_key,
                links,
                stats,
                html,
                render_failed,
            } => {
                self.counters.fetched += 1;
                if let Some(why) = render_failed {
                    tracing::warn!(url = %item.record.url, "render failed: {why}");
                    self.notes.push(format!(
                        "{}: render failed ({why}): its links were read from the HTML as sent",
                        item.record.url
                    ));
                }
                self.counters.max_depth = self.counters.max_depth.max(item.depth());
                if !html {
                    self.counters.non_html += 1;
                }
                if let Some(k) = final_key {
                    if !self.frontier.visit(k) {
                        // A redirect to a page already known: one page, one URL.
                        self.counters.redirect_duplicates += 1;
                        self.done(&item, false);
                        return Ok(());
                    }
                    if let Some(j) = &mut self.journal {
                        j.seen(k);
                    }
                }
                self.counters.add_links(&stats);
                if item.is_target {
                    self.emit_target(&item)?;
                } else {
                    self.done(&item, false);
                }
                // Children are journalled after the parent's `d` line; both land in the
                // same commit, so a crash loses both or neither.
                self.add_children(&item, links, item.depth() + 1);
            }
        }
        Ok(())
    }

    fn sitemap(&mut self, item: Item, s: SitemapResult) -> Result<(), DiscoverError> {
        let ItemKind::Sitemap { level, declared } = item.kind else {
            unreachable!("sitemap results come from sitemap items")
        };
        match s {
            SitemapResult::Denied(skip) => {
                self.notes.push(format!(
                    "sitemap {} not read: {}",
                    item.record.url,
                    skip.rule.as_deref().unwrap_or(&skip.reason)
                ));
            }
            SitemapResult::Failed(f, stats) => {
                if declared {
                    self.books.mark_partial();
                    let rec =
                        records::failure_record(&item.record, &f, &stats, Phase::Discover, STAGE);
                    self.books.emit(&Record::Failure(rec))?;
                } else {
                    self.notes.push(format!(
                        "no sitemap at {} ({})",
                        item.record.url, f.class.message
                    ));
                }
            }
            SitemapResult::Parsed {
                pages,
                sitemaps,
                problems,
                stats,
            } => {
                self.counters.sitemaps += 1;
                self.counters.sitemap_urls += pages.links.len() as u64;
                self.counters.add_links(&stats);
                for p in problems.into_iter().take(3) {
                    self.notes.push(format!("sitemap {}: {p}", item.record.url));
                }
                let limits = self.shared.sitemap_limits;
                for url in sitemaps {
                    if level + 1 > limits.max_index_depth {
                        self.notes.push(format!(
                            "sitemap index {} nests deeper than {}: {url} not read",
                            item.record.url, limits.max_index_depth
                        ));
                        break;
                    }
                    if self.sitemap_files >= limits.max_files {
                        self.notes.push(format!(
                            "more than {} sitemap files: the rest not read",
                            limits.max_files
                        ));
                        break;
                    }
                    self.enqueue_sitemap(&item, url, level + 1, true);
                }
                if self.cfg.max_depth != Some(0) {
                    self.add_children(&item, pages, 1);
                }
            }
        }
        self.done(&item, false);
        Ok(())
    }
}

/// A ref's `linkText`: none for an empty text.
fn link_text(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}
