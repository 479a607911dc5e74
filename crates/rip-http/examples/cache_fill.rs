//! Fills a cache folder for `scripts/bench/cache`: URLS URLs over 1,000 hosts, each stored
//! ROUNDS times (every round but the last leaves a replaced entry, as re-crawls do), with
//! bodies of BODY bytes, through `DiskCache::put` as the stages store them.
//!
//! Usage: `cache_fill DIR URLS ROUNDS BODY`

use std::time::Instant;

use chrono::Utc;
use rip_http::cache::{CacheMeta, DiskCache};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, urls, rounds, body] = &args[..] else {
        eprintln!("usage: cache_fill DIR URLS ROUNDS BODY");
        std::process::exit(1);
    };
    let number = |s: &str| -> usize { s.parse().expect("a number") };
    let (urls, rounds, body) = (number(urls), number(rounds), number(body));
    let cache = DiskCache::new(dir);
    let started = Instant::now();
    for round in 0..rounds {
        for i in 0..urls {
            let url = format!(
                "https://host{}.example/section/{}/page-{i}.html",
                i % 1000,
                i % 37
            );
            let text = format!("<html><p>{url} round {round}</p>{}", "x".repeat(body));
            cache.put(meta(&url), text.as_bytes()).expect("stored");
        }
    }
    let puts = urls * rounds;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "cache_fill: {puts} puts in {secs:.1} s ({:.1} µs each)",
        secs * 1e6 / puts as f64
    );
}

fn meta(url: &str) -> CacheMeta {
    let now = Utc::now();
    CacheMeta {
        url: url.into(),
        final_url: url.into(),
        status: 200,
        headers: vec![
            ("content-type".into(), "text/html; charset=utf-8".into()),
            ("etag".into(), "\"5f3a-1b2c\"".into()),
        ],
        redirects: vec![],
        fetched_at: now,
        stored_at_ms: now.timestamp_millis() as u64,
        etag: Some("\"5f3a-1b2c\"".into()),
        last_modified: None,
        truncated: false,
        body_len: 0,
        body_xxh3: String::new(),
        body_sha256: String::new(),
        site_fetch: None,
    }
}
