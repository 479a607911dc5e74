//! The per-host gap holds while two hosts are fetched in parallel, and across fetchers
//! that share a cache folder (the cross-process schedule; the binary test in rip-fetch
//! runs two real processes).
//!
//! The gap is enforced on the client, right before each request is handed to the
//! connection pool; arrivals at the server can differ from that by the connect time, so
//! the assertions allow 15 ms of scheduling noise on a loaded 2-core machine.

use std::time::Duration;

use rip_http::Fetcher;
use rip_testserver::{TestServer, min_gap};

use crate::{HTML, config, page};

const GAP: Duration = Duration::from_millis(200);

fn server_with_pages(n: usize) -> rip_testserver::ServerBuilder {
    let mut b = TestServer::builder();
    for i in 0..n {
        b = b.file(format!("/p{i}"), HTML);
    }
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gap_per_host_while_two_hosts_go_in_parallel() {
    let server = server_with_pages(5).start().await.unwrap();
    let mut c = config();
    c.politeness.min_gap = GAP;
    let f = Fetcher::new(c).unwrap();
    let t0 = std::time::Instant::now();
    let mut tasks = Vec::new();
    for host in ["127.0.0.1", "localhost"] {
        for i in 0..5 {
            let f = f.clone();
            let url = server.url_for_host(host, &format!("/p{i}"));
            tasks.push(tokio::spawn(async move { f.fetch(&url).await }));
        }
    }
    for t in tasks {
        page(&t.await.unwrap());
    }
    let elapsed = t0.elapsed();
    for host in ["127.0.0.1", "localhost"] {
        let reqs = server.requests_for_host(host);
        assert_eq!(reqs.len(), 5, "{host}");
        let g = min_gap(&reqs).unwrap();
        // Slots are reserved on the client; allow for scheduling noise on arrival.
        assert!(
            g >= GAP - Duration::from_millis(15),
            "{host}: requests {g:?} apart"
        );
    }
    // Sequential would take 9 gaps; parallel hosts take about 4.
    assert!(
        elapsed < GAP * 7,
        "hosts were not fetched in parallel: {elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetchers_sharing_a_cache_folder_share_each_hosts_gap() {
    let server = server_with_pages(8).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = config();
    c.politeness.min_gap = GAP;
    c.cache.dir = Some(dir.path().to_owned());
    // No cache reads or writes: only the shared schedule is under test.
    c.cache.mode = rip_http::CacheMode::Off;
    let a = Fetcher::new(c.clone()).unwrap();
    let b = Fetcher::new(c).unwrap();
    // Warm both clients on another host name: a fresh client's first connection takes a
    // few milliseconds more than later ones, which would shift only the first arrival.
    for f in [&a, &b] {
        f.fetch(&server.url_for_host("localhost", "/p0")).await;
    }
    server.clear_log();
    let mut tasks = Vec::new();
    for i in 0..8 {
        let f = if i % 2 == 0 { a.clone() } else { b.clone() };
        let url = server.url(&format!("/p{i}"));
        tasks.push(tokio::spawn(async move { f.fetch(&url).await }));
    }
    for t in tasks {
        page(&t.await.unwrap());
    }
    let reqs = server.requests();
    assert_eq!(reqs.len(), 8);
    let g = min_gap(&reqs).unwrap();
    assert!(g >= GAP - Duration::from_millis(15), "requests {g:?} apart");
    assert!(dir.path().join("hosts").read_dir().unwrap().count() >= 1);
}
