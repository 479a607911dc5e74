//! The work of one frontier item, run as a task: a page (robots.txt, fetch, links), a
//! sitemap (fetch, parse) or an origin's seed (its robots.txt `Sitemap:` lines). Tasks
//! only read shared state; the crawl loop ([`crate::crawl`]) decides what their results
//! mean (which links are new, what is written).

use std::ops::Range;
use std::sync::Arc;

use rip_http::{FetchFailure, FetchOptions, Fetcher, Outcome, RequestStats, Skip};
use rip_url::{Canonicalizer, Url};
use serde_json::Map;

use crate::frontier::{Item, ItemKind, key};
use crate::html;
use crate::resolved::{Link, Resolutions};
use crate::scope::{Decision, Scope};
use crate::sitemap::{self, Limits};
use rip_links::Extracted;
use rip_links::context::ContextRules;

/// What every task reads.
#[derive(Debug)]
pub(crate) struct Shared {
    pub fetcher: Fetcher,
    pub canon: Canonicalizer,
    pub follow_nofollow: bool,
    pub robots: bool,
    pub context: Option<ContextRules>,
    pub max_depth: Option<u32>,
    pub sitemap_limits: Limits,
    /// `--render`: pages' links are read from their DOM after a browser ran their scripts.
    pub renderer: Option<rip_render::Renderer>,
    /// `--render auto`: only the pages whose content needs script are rendered.
    pub adaptive: Option<rip_adaptive::Adaptive>,
    /// Hrefs already resolved, by directory.
    pub resolutions: Resolutions,
}

/// A link worth the crawl loop's attention: canonical, in the domain and followed. Its
/// URL and text are in its [`FoundLinks`]' strings.
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// The visited-set key of the canonical URL.
    pub key: u64,
    url: Range<u32>,
    text: Range<u32>,
    pub raw: Map<String, serde_json::Value>,
    pub target: bool,
}

impl Found {
    /// The canonical URL, in the strings of the [`FoundLinks`] it came in.
    pub fn url<'a>(&self, strings: &'a str) -> &'a str {
        &strings[self.url.start as usize..self.url.end as usize]
    }

    /// The link text (empty when there is none), as [`Found::url`].
    pub fn text<'a>(&self, strings: &'a str) -> &'a str {
        &strings[self.text.start as usize..self.text.end as usize]
    }
}

/// The links of a page (or sitemap) worth the crawl loop's attention, their URLs and
/// texts in one string: most of a page's links are duplicates that the crawl loop only
/// counts, and one string is one allocation to make and free for all of them.
#[derive(Debug, Clone, Default)]
pub(crate) struct FoundLinks {
    pub strings: String,
    pub links: Vec<Found>,
}

impl FoundLinks {
    /// Room for `links` links whose URLs and texts take `bytes` bytes.
    fn with_capacity(links: usize, bytes: usize) -> Self {
        Self {
            strings: String::with_capacity(bytes),
            links: Vec::with_capacity(links),
        }
    }

    fn push(&mut self, link: &Link, text: &str, raw: Map<String, serde_json::Value>, target: bool) {
        let url = self.add(link.url.as_str());
        let text = self.add(text);
        self.links.push(Found {
            key: link.key,
            url,
            text,
            raw,
            target,
        });
    }

    fn add(&mut self, s: &str) -> Range<u32> {
        let start = self.strings.len();
        self.strings.push_str(s);
        // A page's links are bounded (MAX_LINKS_PER_PAGE, each text MAX_LINK_TEXT):
        // far from 4 GiB.
        let end = u32::try_from(self.strings.len()).expect("a page's links under 4 GiB");
        start as u32..end
    }
}

/// How the links of a page (or sitemap) were sorted.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LinkStats {
    pub links: u64,
    pub rejected: u64,
    pub out_of_domain: u64,
    pub not_followed: u64,
    pub nofollow: u64,
    pub dropped: u64,
    /// Pages whose links were read from the rendered DOM.
    pub rendered: u64,
    /// Pages whose render failed: their links were read from the HTML as sent.
    pub render_failed: u64,
    /// Pages `--render auto` kept from the browser: their links were read from the HTML.
    pub auto_kept: u64,
}

#[derive(Debug)]
pub(crate) enum PageResult {
    /// robots.txt disallows it.
    Denied(Skip),
    /// Could not be fetched (robots.txt unreachable included).
    Failed(Box<FetchFailure>, RequestStats),
    /// Fetched: where it led and the links worth following.
    Fetched {
        final_key: Option<u64>,
        links: FoundLinks,
        stats: LinkStats,
        html: bool,
        /// Why the render failed (`--render`): the links are the HTML's as sent.
        render_failed: Option<String>,
    },
}

#[derive(Debug)]
pub(crate) enum SitemapResult {
    Denied(Skip),
    Failed(Box<FetchFailure>, RequestStats),
    Parsed {
        pages: FoundLinks,
        sitemaps: Vec<String>,
        problems: Vec<String>,
        stats: LinkStats,
    },
}

#[derive(Debug)]
pub(crate) enum Work {
    Page(PageResult),
    Sitemap(SitemapResult),
    /// Sitemap URLs of an origin, with whether robots.txt declared them.
    Seed(Vec<(String, bool)>, Option<String>),
}

#[derive(Debug)]
pub(crate) struct Done {
    pub item: Item,
    pub outcome: Work,
}

/// Runs one item.
pub(crate) async fn run(shared: Arc<Shared>, scope: Arc<Scope>, item: Item) -> Done {
    let outcome = match item.kind {
        ItemKind::Page => Work::Page(page(&shared, &scope, &item).await),
        ItemKind::Sitemap { .. } => Work::Sitemap(sitemap(&shared, &scope, &item).await),
        ItemKind::Seed => {
            let (maps, problem) = seed(&shared, &item).await;
            Work::Seed(maps, problem)
        }
    };
    Done { item, outcome }
}

/// What robots.txt says of `url` when the crawl obeys it (rip-http's one check).
async fn robots_denied(shared: &Shared, url: &Url) -> Result<Option<Skip>, FetchFailure> {
    if !shared.robots {
        return Ok(None);
    }
    shared.fetcher.disallowed_by_robots(url).await
}

/// A URL that does not parse: a `VALIDATION` failure, as the fetcher reports one.
fn invalid(url: &str, e: impl std::fmt::Display) -> FetchFailure {
    FetchFailure {
        class: rip_http::Classification {
            category: rip_core::ErrorCategory::Validation,
            retryable: false,
            code: "validation.url".into(),
            message: format!("invalid URL `{url}`: {e}"),
            retry_after: None,
        },
        status: None,
        final_url: None,
        content_type: None,
        body: None,
    }
}

async fn page(shared: &Shared, scope: &Scope, item: &Item) -> PageResult {
    let url = match Url::parse(&item.record.url) {
        Ok(u) => u,
        Err(e) => {
            return PageResult::Failed(
                Box::new(invalid(&item.record.url, e)),
                RequestStats::default(),
            );
        }
    };
    match robots_denied(shared, &url).await {
        Ok(Some(skip)) => return PageResult::Denied(skip),
        Ok(None) => {}
        Err(f) => return PageResult::Failed(Box::new(f), RequestStats::default()),
    }
    let fetched = shared
        .fetcher
        .fetch_parsed(&item.record.url, &url, &FetchOptions::default())
        .await;
    let resp = match fetched.outcome {
        Outcome::Page(resp) => resp,
        Outcome::Failure(f) => return PageResult::Failed(Box::new(f), fetched.stats),
        Outcome::Skipped(s) => return PageResult::Denied(s),
    };
    let final_url = Url::parse(&resp.final_url).unwrap_or_else(|_| url.clone());
    let final_key = if resp.final_url != item.record.url {
        let mut f = final_url.clone();
        shared.canon.canonicalize(&mut f);
        Some(key(f.as_str())).filter(|k| *k != item.key)
    } else {
        None
    };
    let html = html::is_html(resp.content_type(), &resp.body);
    let wants_links = shared.max_depth.is_none_or(|m| item.depth() < m);
    let mut stats = LinkStats::default();
    let mut found = FoundLinks::default();
    let mut render_failed = None;
    if html && wants_links {
        let renders = shared.renderer.as_ref().filter(|_| {
            let kept = shared.adaptive.as_ref().is_some_and(|a| {
                let (text, _, _) =
                    html::charset_for(resp.content_type(), &resp.body).decode(&resp.body);
                !a.decide(&item.record.url, &text).render
            });
            stats.auto_kept += u64::from(kept);
            !kept
        });
        let extracted = match renders {
            Some(renderer) => {
                let (extracted, failed) =
                    rendered_links(shared, renderer, item, resp, fetched.stats).await;
                stats.rendered += u64::from(failed.is_none());
                stats.render_failed += u64::from(failed.is_some());
                render_failed = failed;
                extracted
            }
            None => page_links(shared, item, resp.content_type(), &resp.body),
        };
        found = sort_links(shared, scope, &final_url, extracted, &mut stats);
    }
    PageResult::Fetched {
        final_key,
        links: found,
        stats,
        html,
        render_failed,
    }
}

/// The links of a page's body as the server sent it (or through the context rules).
fn page_links(shared: &Shared, item: &Item, ct: Option<&str>, body: &[u8]) -> Extracted {
    let encoding = html::charset_for(ct, body);
    match &shared.context {
        Some(rules) if rules.applies(&item.record.url) => {
            let (text, _, _) = encoding.decode(body);
            rules.extract(&text)
        }
        _ => rip_links::extract(body, encoding),
    }
}

/// The links of a page's DOM after the browser ran its scripts (the rendered variant is
/// cached, so a `rip-render` after replays it); when the render fails, the links of the
/// HTML as sent and why it failed.
async fn rendered_links(
    shared: &Shared,
    renderer: &rip_render::Renderer,
    item: &Item,
    resp: rip_http::Response,
    stats: RequestStats,
) -> (Extracted, Option<String>) {
    let doc = Arc::new(resp);
    match renderer.fetched(&item.record, doc.clone(), stats).await {
        rip_core::Record::Page(page) if page.render.is_some() => {
            let body = page.body.as_bytes();
            (
                page_links(shared, item, Some("text/html; charset=utf-8"), body),
                None,
            )
        }
        other => {
            let why = match &other {
                rip_core::Record::Failure(f) => f
                    .errors
                    .last()
                    .map(|e| format!("{}: {}", e.code, e.message))
                    .unwrap_or_default(),
                r => format!("no rendered page ({})", r.kind().as_str()),
            };
            (
                page_links(shared, item, doc.content_type(), &doc.body),
                Some(why),
            )
        }
    }
}

/// Resolves, canonicalises and scopes a page's links; drops nofollow ones unless told.
fn sort_links(
    shared: &Shared,
    scope: &Scope,
    page: &Url,
    extracted: Extracted,
    stats: &mut LinkStats,
) -> FoundLinks {
    let base = extracted.base_url(page);
    stats.dropped += extracted.dropped as u64;
    let nofollow_page = extracted.nofollow_page;
    let (strings, links) = extracted.into_parts();
    let mut out = FoundLinks::with_capacity(
        links.len(),
        strings.len() + links.len() * base.as_str().len(),
    );
    let mut resolved = shared.resolutions.page(&shared.canon, &base);
    for l in links {
        stats.links += 1;
        if !shared.follow_nofollow && (l.nofollow || nofollow_page) {
            stats.nofollow += 1;
            continue;
        }
        let Some(link) = resolved.resolve(&strings[l.href]) else {
            stats.rejected += 1;
            continue;
        };
        admit(scope, link, &strings[l.text], l.raw, stats, &mut out);
    }
    out
}

/// A link (or sitemap entry) as the scope decides it: added to `out` when it is traversed
/// (and whether it is a target), else counted in `stats` as out of domain or not followed.
fn admit(
    scope: &Scope,
    link: &Link,
    text: &str,
    raw: Map<String, serde_json::Value>,
    stats: &mut LinkStats,
    out: &mut FoundLinks,
) {
    match scope.decide(&link.url) {
        Decision::OutOfDomain => stats.out_of_domain += 1,
        Decision::NotFollowed => stats.not_followed += 1,
        d @ (Decision::Traverse | Decision::Target) => {
            out.push(link, text, raw, d == Decision::Target);
        }
    }
}

async fn sitemap(shared: &Shared, scope: &Scope, item: &Item) -> SitemapResult {
    let declared = matches!(item.kind, ItemKind::Sitemap { declared: true, .. });
    // Sitemaps named by robots.txt are meant for crawlers: fetched whatever its rules say.
    let url = Url::parse(&item.record.url).ok();
    if !declared && let Some(url) = &url {
        match robots_denied(shared, url).await {
            Ok(Some(skip)) => return SitemapResult::Denied(skip),
            Ok(None) => {}
            Err(f) => return SitemapResult::Failed(Box::new(f), RequestStats::default()),
        }
    }
    let opts = FetchOptions {
        ignore_robots: declared,
        ..FetchOptions::default()
    };
    let fetched = match &url {
        Some(url) => {
            let given = &item.record.url;
            shared.fetcher.fetch_parsed(given, url, &opts).await
        }
        // The fetcher reports the URL that does not parse.
        None => shared.fetcher.fetch_with(&item.record.url, &opts).await,
    };
    let resp = match fetched.outcome {
        Outcome::Page(resp) => resp,
        Outcome::Failure(f) => return SitemapResult::Failed(Box::new(f), fetched.stats),
        Outcome::Skipped(s) => return SitemapResult::Denied(s),
    };
    let parsed = sitemap::parse(&resp.body, &shared.sitemap_limits);
    let base = Url::parse(&resp.final_url).ok().or(url);
    let mut stats = LinkStats::default();
    let mut pages = FoundLinks::default();
    let mut sitemaps = Vec::new();
    let mut problems = parsed.problems;
    if parsed.kind == sitemap::Kind::Unknown && problems.is_empty() {
        problems.push("not a sitemap (neither XML nor a list of URLs)".into());
    }
    for loc in parsed.locs {
        stats.links += 1;
        let resolved = match &base {
            Some(b) => shared.canon.resolve(b, &loc),
            None => shared.canon.parse(&loc),
        };
        let Ok(url) = resolved else {
            stats.rejected += 1;
            continue;
        };
        if parsed.kind == sitemap::Kind::Index {
            sitemaps.push(String::from(url));
            continue;
        }
        admit(
            scope,
            &Link::new(url),
            "",
            Map::new(),
            &mut stats,
            &mut pages,
        );
    }
    SitemapResult::Parsed {
        pages,
        sitemaps,
        problems,
        stats,
    }
}

/// The sitemaps of a start URL's origin: robots.txt `Sitemap:` lines (resolved against
/// robots.txt), else the guessed `/sitemap.xml`.
async fn seed(shared: &Shared, item: &Item) -> (Vec<(String, bool)>, Option<String>) {
    let Ok(url) = Url::parse(&item.record.url) else {
        return (Vec::new(), None);
    };
    let mut robots_url = url.clone();
    robots_url.set_path("/robots.txt");
    robots_url.set_query(None);
    let guess = || {
        let mut g = url.clone();
        g.set_path("/sitemap.xml");
        g.set_query(None);
        (String::from(g), false)
    };
    match shared.fetcher.robots(&url).await {
        Ok(rules) => {
            let declared: Vec<(String, bool)> = rules
                .sitemaps()
                .iter()
                .filter_map(|s| shared.canon.resolve(&robots_url, s).ok())
                .map(|u| (String::from(u), true))
                .collect();
            if declared.is_empty() {
                (vec![guess()], None)
            } else {
                (declared, None)
            }
        }
        Err(f) => (
            vec![guess()],
            Some(format!(
                "{robots_url}: {} (sitemaps: trying /sitemap.xml)",
                f.class.message
            )),
        ),
    }
}
