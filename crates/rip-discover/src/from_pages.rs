//! `rip-discover --from-pages`: the gaps of pages already fetched, with no crawl. Reads a
//! stream holding `page` records (`rip-warc read crawl.warc.gz`, or `rip-fetch`'s output)
//! and passes every record through unchanged; at the end of the input it writes a `ref` for
//! each link of those pages the scope keeps as a target whose URL the stream did not carry
//! (no `page`, `failure`, `ref` or other record of that URL came through), once per URL: what
//! an archive links to and does not hold, for gap analysis. So `rip-warc read a.warc.gz |
//! rip-discover --from-pages | rip-fetch | …` fetches the gaps only, and every URL still ends
//! exactly once (the archive's pages entered rip-warc's ledger, the gaps enter rip-fetch's).
//!
//! The links are read, resolved, canonicalised and scoped exactly as a crawl reads a
//! fetched page's ([`rip_links`], `<base href>`, `rel=nofollow` skipped unless
//! `--follow-nofollow`, `--domain`/`--follow`/`--target`). Without `--domain`, the
//! domain is the origins of the start URLs given and of the pages read (an archive's
//! pages define its site). A ref's `depth` is 1 (one link from a page read), its `parent`
//! the first page found linking to it. URLs are compared canonical. Nothing is fetched. The
//! links waiting for the end of the input are held in memory (about 100 bytes and their URL
//! and text each, once per URL).

use std::collections::HashSet;
use std::io::{Read, Write};

use rip_core::{BodyEncoding, Kind, Page, Pipe, PipeError, Record, Ref, Summary};
use rip_url::Url;

use crate::scope::{Decision, Scope};
use crate::{Config, STAGE, frontier, html};

/// The counters of the summary.
#[derive(Debug, Default)]
struct Counts {
    pages: u64,
    html_pages: u64,
    links: u64,
    targets: u64,
    carried: u64,
    duplicates: u64,
    out_of_domain: u64,
    not_followed: u64,
    not_targets: u64,
    nofollow: u64,
    rejected: u64,
}

/// Reads `input`, writes its records and then the refs of its pages' links it did not carry
/// to `output`.
pub fn run<R, W>(cfg: &Config, input: R, output: W) -> Result<Summary, PipeError>
where
    R: Read + Send + 'static,
    W: Write,
{
    let mut pipe = Pipe::new(cfg.pipe.clone(), input, output)?;
    let mut scope = Scope::with_starts(cfg);
    let (mut linked, mut carried) = (HashSet::new(), HashSet::new());
    let mut links = Vec::new();
    let mut counts = Counts::default();
    while let Some(line) = pipe.next_line()? {
        let record = match line.decode() {
            Ok(r) => r,
            Err(e) if *line.kind() == Kind::Page => {
                pipe.bad_record(&line, e)?;
                continue;
            }
            // Not ours to judge: passed on as it came.
            Err(_) => {
                pipe.pass(&line)?;
                continue;
            }
        };
        pipe.pass(&line)?;
        for url in record.url().into_iter().chain(final_url(&record)) {
            if let Ok(u) = cfg.canon.parse(url) {
                carried.insert(frontier::key(u.as_str()));
            }
        }
        if let Record::Page(page) = &record {
            counts.pages += 1;
            links.extend(page_refs(cfg, &mut scope, page, &mut linked, &mut counts));
        }
    }
    for r in links {
        if carried.contains(&frontier::key(&r.url)) {
            counts.carried += 1;
        } else {
            counts.targets += 1;
            pipe.emit(&Record::Ref(r))?;
        }
    }
    finish(pipe, &counts)
}

/// A page's final URL (after redirects), which the stream carried too.
fn final_url(record: &Record) -> Option<&str> {
    match record {
        Record::Page(p) => Some(&p.final_url),
        _ => None,
    }
}

/// The refs of `page`'s links not seen before (none when it is not HTML text).
fn page_refs(
    cfg: &Config,
    scope: &mut Scope,
    page: &Page,
    seen: &mut HashSet<u64>,
    counts: &mut Counts,
) -> Vec<Ref> {
    let body = page.body.as_bytes();
    if page.body_encoding != BodyEncoding::Text
        || !html::is_html(page.content_type.as_deref(), body)
    {
        return Vec::new();
    }
    let Ok(page_url) = cfg.canon.parse(&page.final_url) else {
        return Vec::new();
    };
    counts.html_pages += 1;
    scope.add_start(&page_url);
    // The body is UTF-8 already: the fetching stage decoded it.
    let extracted = rip_links::extract(body, encoding_rs::UTF_8);
    let base = extracted.base_url(&page_url);
    let nofollow_page = extracted.nofollow_page;
    let mut refs = Vec::new();
    for l in extracted.links() {
        counts.links += 1;
        if !cfg.follow_nofollow && (l.nofollow || nofollow_page) {
            counts.nofollow += 1;
            continue;
        }
        let Ok(url) = cfg.canon.resolve(&base, l.href) else {
            counts.rejected += 1;
            continue;
        };
        match scope.decide(&url) {
            Decision::OutOfDomain => counts.out_of_domain += 1,
            Decision::NotFollowed => counts.not_followed += 1,
            Decision::Traverse => counts.not_targets += 1,
            Decision::Target if !seen.insert(frontier::key(url.as_str())) => {
                counts.duplicates += 1;
            }
            Decision::Target => refs.push(link_ref(&url, &page_url, l.text)),
        }
    }
    refs
}

fn link_ref(url: &Url, parent: &Url, text: &str) -> Ref {
    let mut r = Ref::new(url.as_str());
    r.context.depth = 1;
    r.context.parent = Some(parent.as_str().to_owned());
    if !text.is_empty() {
        r.context.link_text = Some(text.to_owned());
    }
    r
}

fn finish<W: Write>(mut pipe: Pipe<W>, c: &Counts) -> Result<Summary, PipeError> {
    for (name, n) in [
        ("pages", c.pages),
        ("htmlPages", c.html_pages),
        ("links", c.links),
        ("targets", c.targets),
        ("carried", c.carried),
        ("duplicates", c.duplicates),
        ("outOfDomain", c.out_of_domain),
        ("notFollowed", c.not_followed),
        ("notTargets", c.not_targets),
        ("nofollowSkipped", c.nofollow),
        ("rejected", c.rejected),
    ] {
        pipe.count(name, n);
    }
    pipe.note(format!(
        "{STAGE} --from-pages: links of the pages read that the input did not carry, nothing fetched"
    ));
    pipe.finish(None)
}
