//! A crawl over several sites: within a depth the frontier serves hosts in turn, so one
//! large site does not starve the others (judged from the servers' logs).

use std::time::{Duration, SystemTime};

use rip_testkit::Stage;
use rip_testserver::{Fault, Rule, TestServer};

fn page(links: &[String]) -> String {
    let a: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a>"))
        .collect();
    format!("<!doctype html><title>p</title><body>{a}</body>")
}

/// A site whose home links to `pages` pages; its home answers after `home_delay`.
fn site(prefix: &str, pages: usize, home_delay: Duration) -> TestServer {
    let links: Vec<String> = (0..pages).map(|i| format!("/{prefix}{i}")).collect();
    let mut b = TestServer::builder()
        .file("/robots.txt", "User-agent: *\nAllow: /\n")
        .rule(Rule::path("/").always(Fault::body("text/html", page(&links)).delay(home_delay)));
    for l in &links {
        b = b.file(l.clone(), page(&[]));
    }
    b.start_background().unwrap()
}

fn last_request(s: &TestServer) -> SystemTime {
    s.requests().iter().map(|r| r.time).max().unwrap()
}

#[test]
fn one_large_site_does_not_starve_the_others() {
    // The large site's home answers first, so its 16 links are queued at depth 1 before
    // the small sites' 2 each. Served in the order found, the small sites' pages would
    // wait for 15 of the large site's gaps (2.4 s); host by host, they go at once.
    let gap = Duration::from_millis(160);
    let large = site("l", 16, Duration::ZERO);
    let small: Vec<TestServer> = (0..2)
        .map(|_| site("s", 2, Duration::from_millis(150)))
        .collect();
    let cache = tempfile::tempdir().unwrap();
    let out = Stage::new("rip-discover")
        .args(["--delay", "160ms", "--jitter", "0", "-c", "2", "-q"])
        .arg("--cache-dir")
        .arg(cache.path())
        .arg(large.url("/"))
        .args(small.iter().map(|s| s.url("/")))
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.of("ref").len(), 3 + 16 + 2 * 2, "every page once");
    let first = large.requests().iter().map(|r| r.time).min().unwrap();
    let large_done = last_request(&large).duration_since(first).unwrap();
    assert!(
        large_done >= gap * 16,
        "the large site kept its gap: {large_done:?}"
    );
    for s in &small {
        let done = last_request(s).duration_since(first).unwrap();
        assert!(
            done < gap * 8,
            "a small site finished {done:?} after the crawl began (large: {large_done:?})"
        );
    }
}
