//! rip-http against rip-testserver over loopback: every failure category and retry path,
//! politeness, the cache, robots.txt.

mod api;
mod cache;
mod cache_limits;
mod faults;
mod maintain;
mod missing_folder;
mod network;
mod politeness;
mod robots;
mod robots_conformance;
mod robots_fetch;
mod tap;

use std::time::Duration;

use rip_http::{CacheMode, FetchFailure, Fetched, HttpConfig, Outcome, Response};

/// A config for tests: fast backoff, no jitter, a small gap, robots off, no cache.
pub fn config() -> HttpConfig {
    let mut c = HttpConfig::default();
    c.retry.base_delay = Duration::from_millis(20);
    c.retry.max_delay = Duration::from_millis(100);
    c.politeness.min_gap = Duration::ZERO;
    c.politeness.jitter = Duration::ZERO;
    c.client.read_timeout = Duration::from_secs(5);
    c.client.total_timeout = Duration::from_secs(20);
    c.robots = false;
    c.cache.mode = CacheMode::Off;
    c
}

/// The page `f` fetched; panics on any other outcome.
pub fn page(f: &Fetched) -> &Response {
    match &f.outcome {
        Outcome::Page(p) => p,
        other => panic!("expected a page, got {other:?}"),
    }
}

/// The failure `f` ended in; panics on any other outcome.
pub fn fail(f: &Fetched) -> &FetchFailure {
    match &f.outcome {
        Outcome::Failure(x) => x,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// A small HTML page the tests serve.
pub const HTML: &str = "<!doctype html><title>t</title><p>hello</p>";
