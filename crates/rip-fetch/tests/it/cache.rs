//! rip-fetch and its cache folder: a cache hit obeys this run's limits; a read-only cache
//! that does not exist is an error, not a run of misses.

use rip_core::{Page, Record};
use rip_testserver::TestServer;

use crate::{HTML, refs, rip_fetch};

fn page(out: &rip_testkit::Ran) -> &Page {
    let pages: Vec<&Page> = out
        .records()
        .iter()
        .filter_map(|r| match r {
            Record::Page(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(pages.len(), 1, "{}", out.stderr);
    pages[0]
}

#[test]
fn a_cache_hit_is_cut_at_max_body_as_a_fresh_fetch_is() {
    let body = HTML.repeat(50);
    let server = TestServer::builder()
        .file("/robots.txt", "User-agent: *\n")
        .file("/big", body.clone())
        .start_background()
        .unwrap();
    let input = refs(&[server.url("/big")]);
    let cache = tempfile::tempdir().unwrap();
    let fill = rip_fetch(&[], cache.path(), &input);
    assert_eq!(
        (page(&fill).body.len(), page(&fill).truncated),
        (body.len(), false)
    );

    let fresh = tempfile::tempdir().unwrap();
    let fresh = rip_fetch(&["--max-body", "10"], fresh.path(), &input);
    assert_eq!(
        (page(&fresh).body.as_str(), page(&fresh).truncated),
        (&body[..10], true)
    );
    for mode in ["read-write", "read-only"] {
        let hit = rip_fetch(&["--max-body", "10", "--cache", mode], cache.path(), &input);
        assert!(page(&hit).from_cache, "{mode}");
        assert_eq!(page(&hit).body, page(&fresh).body, "{mode}");
        assert!(page(&hit).truncated, "{mode}");
        assert_eq!(hit.counter("truncated"), 1, "{mode}: {}", hit.stderr);
    }
    assert_eq!(server.count("/big"), 2, "the fill and the fresh fetch");
}

#[test]
fn a_read_only_cache_folder_that_is_not_there_is_an_error_naming_it() {
    let server = TestServer::builder()
        .file("/p", HTML)
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo");
    let out = rip_fetch(&["--cache", "read-only"], &typo, &refs(&[server.url("/p")]));
    assert_eq!(out.code, 1, "{}", out.stderr);
    let said = format!(
        "the cache folder {} does not exist (cache folder given by --cache-dir; the cache \
         mode read-only reads a cache and creates none) (hint: check the path",
        typo.display()
    );
    assert!(out.stderr.contains(&said), "{}", out.stderr);
    assert!(!typo.exists(), "read-only made the folder");
    assert_eq!(server.count("/p"), 0);

    // Named by RIP_CACHE_DIR instead, the message says so.
    let out = rip_testkit::Stage::new("rip-fetch")
        .args(["--cache", "read-only"])
        .env("RIP_CACHE_DIR", &typo)
        .stdin(refs(&[server.url("/p")]))
        .run();
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("(cache folder from RIP_CACHE_DIR;"),
        "{}",
        out.stderr
    );
    assert!(!typo.exists());
}
