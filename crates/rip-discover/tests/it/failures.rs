//! Failures with Ladon's semantics: a start URL that cannot be fetched ends the run "not
//! ready" (exit 3); a deeper listing page that fails is a `failure` record and the crawl
//! goes on; a target that fails is still written as a target.

use std::collections::BTreeSet;

use regex::Regex;
use rip_core::{ErrorCategory, Phase, Status};
use rip_testserver::{Fault, LinkGraph, Rule, TestServer};

use crate::*;

#[test]
fn a_start_url_that_fails_is_not_ready() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(50))
        .rule(Rule::path("/").always(Fault::status(503)))
        .start_background()
        .unwrap();
    let r = run(&[&server.url("/"), "--attempts", "2"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(r.status(), Status::NotReady);
    assert!(r.refs().is_empty());
    let f = r.failures();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].url, server.url("/"));
    assert_eq!(f[0].phase, Phase::Discover);
    assert_eq!(f[0].status, Some(503));
    assert_eq!(f[0].category, ErrorCategory::Transient);
    assert_eq!(f[0].http_attempts, 2);
    assert_eq!(server.count("/"), 2);
}

#[test]
fn an_unreachable_start_url_is_not_ready() {
    // A port nothing listens on: bind, learn the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let r = run(&[&url, "--attempts", "1"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let f = r.failures();
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].category, ErrorCategory::Network);
    // The host is down: that is the cause, not its robots.txt.
    assert_eq!(f[0].errors[0].code, "network.refused", "{:?}", f[0].errors);
}

#[test]
fn a_robots_txt_that_fails_while_pages_answer_is_robots_unreachable() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(5))
        .rule(Rule::path("/robots.txt").always(Fault::status(500)))
        .start_background()
        .unwrap();
    let r = run(&[&server.url("/"), "--attempts", "1"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    let f = r.failures();
    assert_eq!(f.len(), 1);
    assert_eq!(
        f[0].errors[0].code, "robots.unreachable",
        "{:?}",
        f[0].errors
    );
    assert_eq!(f[0].category, ErrorCategory::Transient);
    assert_eq!(server.count("/"), 0, "not fetched without its robots.txt");
}

#[test]
fn a_bad_start_url_is_refused_before_anything_runs() {
    let r = rip_testkit::Stage::new("rip-discover")
        .args(["mailto:someone@example.com"])
        .run();
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("bad start URL"));
}

/// A listing page (traversed, not a target) that fails becomes a `failure` with
/// `phase: discover`; the rest of the crawl goes on and the run is partial (exit 2).
#[test]
fn a_failing_listing_page_is_recorded_and_the_crawl_goes_on() {
    let g = LinkGraph::new(300).seed(4).sections(3);
    // Section 0 pages are listings (traversed only); item-3 (section 0) always fails.
    let broken = g.path(3);
    assert!(broken.starts_with("/section-0/"));
    let server = TestServer::builder()
        .graph(g.clone())
        .rule(Rule::path(broken.clone()).always(Fault::status(500)))
        .start_background()
        .unwrap();
    let target = Regex::new(r"/section-[12]/").unwrap();
    let r = run(&[
        &server.url("/"),
        "--target",
        target.as_str(),
        "--attempts",
        "2",
    ]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.status(), Status::Partial);
    let f = r.failures();
    assert_eq!(f.len(), 1, "{:?}", f);
    assert_eq!(path_of(&f[0].url), broken);
    assert_eq!(f[0].phase, Phase::Discover);
    assert_eq!(f[0].status, Some(500));
    assert!(f[0].context.parent.is_some());
    // Everything reachable without the broken page's links was still collected.
    let want: BTreeSet<String> = bfs(&g, |_| true, |p| p == broken, u32::MAX)
        .into_keys()
        .filter(|p| target.is_match(p))
        .collect();
    assert!(want.len() > 150);
    assert_eq!(r.paths(), want);
}

/// A target that fails is still written as a target (rip-fetch records its failure); a
/// reset connection is a failure like any other.
#[test]
fn a_failing_target_is_still_a_target() {
    let g = LinkGraph::new(40).seed(1);
    let server = TestServer::builder()
        .graph(g.clone())
        .rule(Rule::path(g.path(5)).always(Fault::status(404)))
        .rule(Rule::path(g.path(6)).always(Fault::reset()))
        .start_background()
        .unwrap();
    let r = run(&[&server.url("/"), "--attempts", "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let paths = r.paths();
    assert!(paths.contains(&g.path(5)) && paths.contains(&g.path(6)));
    assert!(r.failures().is_empty());
    assert_eq!(r.counter("targetsFailed"), 2);
    assert_eq!(server.count(&g.path(6)), 2, "a reset is retried");
}

#[test]
fn a_read_only_cache_folder_that_is_not_there_stops_the_crawl_naming_it() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(5))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo");
    let out = rip_testkit::Stage::new("rip-discover")
        .args([&server.url("/"), "--cache", "read-only", "-q"])
        .arg("--cache-dir")
        .arg(&typo)
        .command()
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    let said = format!(
        "rip-discover: error: the cache folder {} does not exist (cache folder given by \
         --cache-dir; the cache mode read-only reads a cache and creates none)",
        typo.display()
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert!(!typo.exists(), "read-only made the folder");
    assert_eq!(server.total(), 0);
}
