//! rip-fetch on wiki refs, against the real test MediaWiki (`rip-testwiki`): batches of at
//! most 50 titles (the wiki's request log shows them), redirects, missing and invalid
//! titles, maxlag and HTTP faults, the per-title cache, POST for long batches.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rip_core::{ErrorCategory, Failure, Page, Record};
use rip_testwiki::{LoggedRequest, Manifest, Wiki};

use crate::rip_fetch;

/// The article URL of a title on the test wiki (its articlepath is `/index.php/$1`).
fn article(wiki: &Wiki, title: &str) -> String {
    let api = wiki.api_url().as_str();
    let base = api.strip_suffix("/api.php").expect("an api.php URL");
    format!("{base}/index.php/{}", rip_mediawiki::wiki_urlencode(title))
}

fn wiki_refs(wiki: &Wiki, titles: &[String]) -> String {
    titles
        .iter()
        .map(|t| {
            let r = serde_json::json!({
                "_type": "ref", "url": article(wiki, t), "depth": 0,
                "title": t, "wikiApi": wiki.api_url().as_str(),
            });
            format!("{r}\n")
        })
        .collect()
}

fn batches(wiki: &Wiki) -> Vec<LoggedRequest> {
    wiki.requests()
        .unwrap()
        .into_iter()
        .filter(|r| r.param("prop").as_deref() == Some("revisions"))
        .collect()
}

fn pages(recs: &[Record]) -> BTreeMap<String, Page> {
    recs.iter()
        .filter_map(|r| match r {
            Record::Page(p) => Some((p.context.title.clone().unwrap(), p.clone())),
            _ => None,
        })
        .collect()
}

fn failures(recs: &[Record]) -> BTreeMap<String, Failure> {
    recs.iter()
        .filter_map(|r| match r {
            Record::Failure(f) => Some((f.context.title.clone().unwrap(), f.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn every_title_is_fetched_in_batches_of_at_most_fifty() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let titles = manifest.main_titles();
    assert_eq!(titles.len(), 330);
    let cache = tempfile::tempdir().unwrap();
    let out = rip_fetch(
        &["--cache", "off"],
        cache.path(),
        &wiki_refs(&wiki, &titles),
    );
    let stderr = &out.stderr;
    assert_eq!(out.code, 0, "{stderr}");
    let recs = out.records();
    let pages = pages(recs);
    assert_eq!(pages.len(), 330, "one page per title");

    for title in &manifest.articles {
        let p = &pages[title];
        assert_eq!(p.url, article(&wiki, title));
        assert_eq!(p.final_url, p.url, "{title}: not redirected");
        assert_eq!(p.wiki_title.as_deref(), Some(title.as_str()));
        assert_eq!(
            p.content_type.as_deref(),
            Some("text/x-wiki; charset=utf-8")
        );
        assert!(p.pageid.is_some() && p.revid.is_some(), "{title}");
        assert!(!p.body.is_empty() && !p.from_cache && p.redirects.is_empty());
    }
    for (from, to) in &manifest.redirects {
        let p = &pages[from];
        assert_eq!(p.wiki_title.as_deref(), Some(to.as_str()), "{from}");
        assert_eq!(p.final_url, article(&wiki, to), "{from} → {to}");
        assert_eq!(p.redirects, std::slice::from_ref(&p.url));
        assert_eq!(p.body, pages[to].body, "{from}: the target's wikitext");
        assert_eq!(p.pageid, pages[to].pageid);
    }
    let wisp = &pages["Aether Wisp"];
    assert_eq!(wisp.wiki_title.as_deref(), Some("Æther Wisp"));
    assert!(wisp.final_url.ends_with("/index.php/%C3%86ther_Wisp"));

    // The wiki's own log: requests of at most 50 titles, maxlag sent, every title once.
    // ceil(330 / 50) = 7 when the refs stream in without a pause; a pause in the input
    // longer than rip-fetch's idle wait (a loaded machine) sends a partial batch early, so
    // a few more may go, but never one per title.
    let sent = batches(&wiki);
    assert!(
        (7..=12).contains(&sent.len()),
        "{} requests for 330 titles",
        sent.len()
    );
    let mut asked = BTreeSet::new();
    for req in &sent {
        let t = req.titles();
        assert!(!t.is_empty() && t.len() <= 50, "{} titles", t.len());
        assert_eq!(req.param("maxlag").as_deref(), Some("5"));
        asked.extend(t);
    }
    assert_eq!(asked, titles.iter().cloned().collect::<BTreeSet<_>>());
    let s = out.summary();
    assert_eq!(s.counters.get("wikiBatches"), Some(&(sent.len() as u64)));
    assert_eq!(s.counters.get("wikiTitles"), Some(&330));
    let entered: usize = recs
        .iter()
        .map(|r| match r {
            Record::Ledger(l) => l.entered.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(entered, 330, "every wiki ref is in the ledger");
}

#[test]
fn deleted_and_invalid_titles_become_failures_and_other_lines_pass() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    wiki.delete(&[&manifest.doomed]).unwrap();
    let titles: Vec<String> = [&manifest.doomed, "Ash Wyrm", "Bad[title]", "Never Existed"]
        .map(String::from)
        .to_vec();
    let input = format!(
        "{{\"_type\":\"odd\",\"x\":1}}\n{}",
        wiki_refs(&wiki, &titles)
    );
    let cache = tempfile::tempdir().unwrap();
    let out = rip_fetch(&["--ordered"], cache.path(), &input);
    assert_eq!(out.code, 2);
    assert!(&out.stdout.contains("\"_type\":\"odd\""));
    let recs = out.records();
    let order: Vec<&str> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Page(p) => p.context.title.as_deref(),
            Record::Failure(f) => f.context.title.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(order, titles, "--ordered keeps input order across a batch");
    let fails = failures(recs);
    assert_eq!(pages(recs).keys().collect::<Vec<_>>(), ["Ash Wyrm"]);
    for gone in [manifest.doomed.as_str(), "Never Existed"] {
        let f = &fails[gone];
        assert_eq!(f.category, ErrorCategory::Permanent);
        assert!(!f.retryable);
        assert_eq!(f.phase, rip_core::Phase::Fetch);
        assert_eq!(f.url, article(&wiki, gone));
        assert_eq!(f.errors.last().unwrap().code, "wiki.missing");
        assert_eq!(f.context.wiki_api.as_deref(), Some(wiki.api_url().as_str()));
    }
    let bad = &fails["Bad[title]"];
    assert_eq!(bad.category, ErrorCategory::Validation);
    assert_eq!(bad.errors.last().unwrap().code, "wiki.invalid");
    assert_eq!(batches(&wiki).len(), 1, "four titles, one request");
    let s = out.summary();
    assert_eq!(s.counters.get("wikiMissing"), Some(&2));
    assert_eq!(s.counters.get("failed.PERMANENT"), Some(&2));
}

#[test]
fn maxlag_is_retried_after_its_retry_after() {
    let wiki = Wiki::start().unwrap();
    wiki.fault_maxlag(10, 1).unwrap();
    let titles: Vec<String> = ["Ash Wyrm", "Bone Hound", "Q&A Tavern"]
        .map(String::from)
        .to_vec();
    let cache = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = rip_fetch(
        &["--cache", "off"],
        cache.path(),
        &wiki_refs(&wiki, &titles),
    );
    let took = start.elapsed();
    assert_eq!(out.code, 0, "{}", &out.stderr);
    let recs = out.records();
    assert_eq!(pages(recs).len(), 3);
    assert_eq!(
        batches(&wiki).len(),
        2,
        "the lagged request, then the retry"
    );
    assert!(
        took >= Duration::from_secs(5),
        "Retry-After 5 not honoured: {took:?}"
    );
    assert_eq!(out.summary().counters.get("retries"), Some(&1));
}

#[test]
fn a_lasting_failure_fails_every_title_of_its_batch() {
    let wiki = Wiki::start().unwrap();
    wiki.fault_status(503, 2).unwrap();
    let titles: Vec<String> = ["Ash Wyrm", "Bone Hound", "Q&A Tavern"]
        .map(String::from)
        .to_vec();
    let cache = tempfile::tempdir().unwrap();
    let out = rip_fetch(
        &["--cache", "off", "--attempts", "2"],
        cache.path(),
        &wiki_refs(&wiki, &titles),
    );
    assert_eq!(out.code, 2);
    let recs = out.records();
    let fails = failures(recs);
    assert_eq!(fails.len(), 3, "each title of the batch");
    for f in fails.values() {
        assert_eq!(f.category, ErrorCategory::Transient);
        assert!(f.retryable);
        assert_eq!(f.status, Some(503));
        assert_eq!(f.http_attempts, 2);
        assert_eq!(f.errors.last().unwrap().code, "httpError.transient");
    }
    assert_eq!(batches(&wiki).len(), 2);
}

#[test]
fn a_second_run_is_answered_from_the_cache_without_asking_the_wiki() {
    let wiki = Wiki::start().unwrap();
    let titles: Vec<String> = ["Ash Wyrm", "Aether Wisp", "Pyro"]
        .map(String::from)
        .to_vec();
    let input = wiki_refs(&wiki, &titles);
    let cache = tempfile::tempdir().unwrap();
    let first = rip_fetch(&[], cache.path(), &input);
    let sent = wiki.requests().unwrap().len();
    let second = rip_fetch(&[], cache.path(), &input);
    assert_eq!(second.code, 0);
    assert_eq!(
        wiki.requests().unwrap().len(),
        sent,
        "no request on the second run"
    );
    let (a, b) = (pages(first.records()), pages(second.records()));
    assert_eq!(b.len(), 3);
    for (title, p) in &b {
        assert!(p.from_cache && p.http_attempts == 0, "{title}");
        let q = &a[title];
        assert_eq!(
            (
                &p.body,
                &p.final_url,
                &p.redirects,
                p.pageid,
                p.revid,
                &p.wiki_title
            ),
            (
                &q.body,
                &q.final_url,
                &q.redirects,
                q.pageid,
                q.revid,
                &q.wiki_title
            ),
            "{title}"
        );
    }
    assert_eq!(second.summary().counters.get("cacheHits"), Some(&3));
    // Read-only: what is cached is served, the rest is a cache.miss failure, no request.
    let more = wiki_refs(&wiki, &["Ash Wyrm".into(), "Bone Hound".into()]);
    let out = rip_fetch(&["--cache", "read-only"], cache.path(), &more);
    let recs = out.records();
    assert_eq!(pages(recs).len(), 1);
    assert_eq!(
        failures(recs)["Bone Hound"].errors.last().unwrap().code,
        "cache.miss"
    );
    assert_eq!(wiki.requests().unwrap().len(), sent);
}

#[test]
fn a_batch_too_long_for_a_url_is_one_post() {
    let wiki = Wiki::start().unwrap();
    let titles: Vec<String> = (0..50)
        .map(|i| format!("A rather long page title about a creature that never was, number {i}"))
        .collect();
    let cache = tempfile::tempdir().unwrap();
    let out = rip_fetch(
        &["--cache", "off"],
        cache.path(),
        &wiki_refs(&wiki, &titles),
    );
    let recs = out.records();
    let fails = failures(recs);
    assert_eq!(fails.len(), 50);
    assert!(
        fails
            .values()
            .all(|f| f.errors.last().unwrap().code == "wiki.missing")
    );
    let sent = batches(&wiki);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].method, "POST");
    assert_eq!(sent[0].titles().len(), 50);
}
