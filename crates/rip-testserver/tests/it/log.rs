//! The request log: counts, headers, timestamps, gaps, hosts, and reading it from outside.

use std::time::{Duration, SystemTime};

use rip_testserver::{Fault, LinkGraph, RequestRecord, Rule, TestServer, min_gap};

use crate::support::client;

async fn graph_server() -> TestServer {
    TestServer::builder()
        .graph(LinkGraph::new(50))
        .start()
        .await
        .unwrap()
}

#[tokio::test]
async fn counts_methods_queries_and_headers_are_recorded() {
    let server = graph_server().await;
    let client = client();
    client
        .get(server.url("/item-1?a=1&b=2"))
        .header("user-agent", "ripperoni-test/1.0")
        .header("if-none-match", "\"abc\"")
        .send()
        .await
        .unwrap();
    client.head(server.url("/item-1")).send().await.unwrap();
    client.get(server.url("/item-2")).send().await.unwrap();

    assert_eq!(server.total(), 3);
    assert_eq!(server.count("/item-1"), 2);
    assert_eq!(server.count("/item-1?a=1&b=2"), 1);
    assert_eq!(server.count("/item-3"), 0);
    let log = server.requests();
    assert_eq!(log.iter().map(|r| r.seq).collect::<Vec<_>>(), [0, 1, 2]);
    let first = &log[0];
    assert_eq!(first.method, "GET");
    assert_eq!(first.path, "/item-1");
    assert_eq!(first.query.as_deref(), Some("a=1&b=2"));
    assert_eq!(first.target, "/item-1?a=1&b=2");
    assert_eq!(first.header("User-Agent"), Some("ripperoni-test/1.0"));
    assert_eq!(first.header("if-none-match"), Some("\"abc\""));
    assert_eq!(first.host.as_deref(), Some(&*server.addr().to_string()));
    assert_eq!(first.status, Some(200));
    assert_eq!(first.rule, None);
    assert_eq!(log[1].method, "HEAD");
    assert_eq!(server.requests_for("/item-2").len(), 1);
}

#[tokio::test]
async fn timestamps_are_monotonic_and_gaps_are_measured() {
    let server = graph_server().await;
    let client = client();
    let before = SystemTime::now();
    for i in 0..4 {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        client.get(server.url("/")).send().await.unwrap();
    }
    let after = SystemTime::now();
    let log = server.requests();
    for pair in log.windows(2) {
        assert!(pair[1].elapsed > pair[0].elapsed);
        assert!(pair[1].time >= pair[0].time);
    }
    assert!(log[0].time >= before - Duration::from_millis(1) && log[3].time <= after);
    let gap = server.min_gap().unwrap();
    assert!(
        gap >= Duration::from_millis(100) && gap < Duration::from_secs(2),
        "{gap:?}"
    );
    assert_eq!(min_gap(&log), Some(gap));
    assert_eq!(rip_testserver::gaps(&log).len(), 3);
    // started_at + elapsed is the arrival instant on tokio's clock.
    assert!(server.started_at() + log[3].elapsed <= tokio::time::Instant::now());
}

#[tokio::test]
async fn two_host_names_on_one_server_fetched_in_parallel() {
    let server = graph_server().await;
    let client = client();
    let fetch_spaced = |host: &'static str| {
        let client = client.clone();
        let urls: Vec<String> = (1..=3)
            .map(|i| server.url_for_host(host, &format!("/item-{i}")))
            .collect();
        async move {
            for (i, url) in urls.into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(150)).await;
                }
                client.get(url).send().await.unwrap();
            }
        }
    };
    tokio::join!(fetch_spaced("localhost"), fetch_spaced("127.0.0.1"));

    assert_eq!(server.requests_for_host("localhost").len(), 3);
    assert_eq!(server.requests_for_host("127.0.0.1").len(), 3);
    let per_host = server.min_gap_for_host("localhost").unwrap();
    assert!(per_host >= Duration::from_millis(150), "{per_host:?}");
    let per_host = server.min_gap_for_host("127.0.0.1").unwrap();
    assert!(per_host >= Duration::from_millis(150), "{per_host:?}");
    // In parallel, the two hosts' requests interleave closely.
    let overall = server.min_gap().unwrap();
    assert!(overall < Duration::from_millis(150), "{overall:?}");
}

#[tokio::test]
async fn any_host_name_through_the_clients_resolver() {
    let server = graph_server().await;
    let client = crate::support::client_builder()
        .resolve("a.test", server.addr())
        .resolve("b.test", server.addr())
        .build()
        .unwrap();
    for host in ["a.test", "b.test", "b.test"] {
        let response = client
            .get(server.url_for_host(host, "/item-1"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
    }
    assert_eq!(server.requests_for_host("a.test").len(), 1);
    assert_eq!(server.requests_for_host("B.TEST").len(), 2);
}

#[tokio::test]
async fn control_endpoints_serve_the_log_and_are_not_logged() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(10))
        .rule(Rule::prefix("/").always(Fault::status(500)))
        .start()
        .await
        .unwrap();
    let client = client();
    client.get(server.url("/item-1")).send().await.unwrap();
    client.get(server.url("/item-2?x=1")).send().await.unwrap();

    let all: Vec<RequestRecord> = client
        .get(server.url("/__rip/log"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        all,
        server.requests(),
        "faults do not apply to control endpoints"
    );
    assert_eq!(all.len(), 2);
    let filtered: Vec<RequestRecord> = client
        .get(server.url("/__rip/log?path=%2Fitem-2%3Fx%3D1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(filtered.len(), 1);
    assert_eq!(filtered[0].query.as_deref(), Some("x=1"));
    let count: serde_json::Value = client
        .get(server.url("/__rip/count?path=/item-1"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(count["count"], 1);
    let health = client
        .get(server.url("/__rip/health"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status().as_u16(), 200);
    client.get(server.url("/__rip/clear")).send().await.unwrap();
    assert_eq!(server.total(), 0);
    let unknown = client.get(server.url("/__rip/nope")).send().await.unwrap();
    assert_eq!(unknown.status().as_u16(), 404);
    assert_eq!(server.total(), 0);
}

#[tokio::test]
async fn the_log_file_has_one_ndjson_line_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("requests.ndjson");
    let server = TestServer::builder()
        .graph(LinkGraph::new(10))
        .log_file(&path)
        .start()
        .await
        .unwrap();
    let client = client();
    for i in 1..=3 {
        client
            .get(server.url(&format!("/item-{i}")))
            .send()
            .await
            .unwrap();
    }
    client.get(server.url("/__rip/log")).send().await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<RequestRecord> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines, server.requests());
    assert_eq!(lines.len(), 3);
    assert!(
        text.lines()
            .all(|l| l.starts_with('{') && !l.contains('\n'))
    );
}

#[tokio::test]
async fn waiting_for_a_count() {
    let server = graph_server().await;
    let url = server.url("/item-1");
    let requester = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        client().get(url).send().await.unwrap();
    });
    assert!(
        server
            .wait_for_count("/item-1", 1, Duration::from_secs(5))
            .await
    );
    assert!(
        !server
            .wait_for_count("/item-1", 2, Duration::from_millis(50))
            .await
    );
    requester.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_paused_clock_drives_delays_and_log_times() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(5))
        .rule(Rule::path("/item-1").always(Fault::serve().delay(Duration::from_secs(30))))
        .start()
        .await
        .unwrap();
    let real = std::time::Instant::now();
    // No client timeout: with a paused clock it would fire as soon as the runtime idles.
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    client.get(server.url("/")).send().await.unwrap();
    tokio::time::sleep(Duration::from_secs(60)).await;
    let response = client.get(server.url("/item-1")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        real.elapsed() < Duration::from_secs(10),
        "{:?}",
        real.elapsed()
    );
    let gap = server.min_gap().unwrap();
    assert!(gap >= Duration::from_secs(60), "virtual gap {gap:?}");
}

#[test]
fn a_background_server_for_synchronous_tests() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(5))
        .start_background()
        .unwrap();
    let addr = server.addr();
    let response = std::thread::spawn(move || crate::support::blocking_get(addr, "/item-2"))
        .join()
        .unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    assert!(server.wait_for_count_blocking("/item-2", 1, Duration::from_secs(5)));
    drop(server);
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "stopped on drop"
    );
}
