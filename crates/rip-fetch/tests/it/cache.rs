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
