//! HTTP/1.1 behaviour: keep-alive, close, HEAD, request bodies, pipelining, bad input, speed.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use rip_testserver::{LinkGraph, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{client, header, raw, split};

async fn server() -> TestServer {
    TestServer::builder()
        .graph(LinkGraph::new(100))
        .start()
        .await
        .unwrap()
}

#[tokio::test]
async fn keep_alive_reuses_one_connection() {
    let server = server().await;
    let client = client();
    for i in 0..20 {
        let response = client
            .get(server.url(&format!("/item-{}", i + 1)))
            .send()
            .await
            .unwrap();
        response.bytes().await.unwrap();
    }
    let connections: HashSet<u64> = server.requests().iter().map(|r| r.connection).collect();
    assert_eq!(connections.len(), 1);
}

#[tokio::test]
async fn connection_close_and_http_1_0_close_after_the_response() {
    let server = server().await;
    let (head, body) = split(
        &raw(
            server.addr(),
            b"GET /item-1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await,
    );
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
    assert_eq!(header(&head, "connection"), Some("close"));
    assert_eq!(
        header(&head, "content-length"),
        Some(&*body.len().to_string())
    );
    // raw() returned, so the server closed the connection.
    let (head, _) = split(&raw(server.addr(), b"GET /item-1 HTTP/1.0\r\n\r\n").await);
    assert!(head.starts_with("HTTP/1.1 200 OK\r\n"), "{head}");
}

#[tokio::test]
async fn head_has_the_headers_of_get_and_no_body() {
    let server = server().await;
    let client = client();
    let get = client.get(server.url("/item-3")).send().await.unwrap();
    let length = get.content_length().unwrap();
    get.bytes().await.unwrap();
    let head = client.head(server.url("/item-3")).send().await.unwrap();
    assert_eq!(head.status().as_u16(), 200);
    assert_eq!(
        head.headers()["content-length"],
        length.to_string().as_str()
    );
    assert!(head.headers().get("etag").is_some());
    assert!(head.bytes().await.unwrap().is_empty());
    // And the connection is still usable afterwards.
    let again = client.get(server.url("/item-3")).send().await.unwrap();
    assert_eq!(again.content_length(), Some(length));
    let connections: HashSet<u64> = server.requests().iter().map(|r| r.connection).collect();
    assert_eq!(connections.len(), 1);
}

#[tokio::test]
async fn pipelined_requests_and_discarded_bodies() {
    let server = server().await;
    let requests = b"POST /item-1 HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world\
GET /item-2 HTTP/1.1\r\nHost: x\r\n\r\n\
GET /item-3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let response = String::from_utf8_lossy(&raw(server.addr(), requests).await).into_owned();
    let statuses: Vec<&str> = response
        .match_indices("HTTP/1.1 ")
        .map(|(i, _)| &response[i + 9..i + 12])
        .collect();
    assert_eq!(statuses, ["405", "200", "200"], "{response}");
    assert!(response.contains("Allow: GET, HEAD"));
    let methods: Vec<String> = server.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["POST", "GET", "GET"]);
}

#[tokio::test]
async fn bad_input_gets_4xx_and_never_takes_the_server_down() {
    let server = server().await;
    let huge = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "a".repeat(70 * 1024)
    );
    let many: String = (0..300).map(|i| format!("X-{i}: v\r\n")).collect();
    let many = format!("GET / HTTP/1.1\r\n{many}\r\n");
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n".to_vec(),
            "400",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n".to_vec(),
            "400",
        ),
        (b"GET / HTTP/9.9\r\n\r\n".to_vec(), "400"),
        (b"GET * HTTP/1.1\r\n\r\n".to_vec(), "400"),
        (huge.into_bytes(), "431"),
        (many.into_bytes(), "431"),
        (
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".to_vec(),
            "501",
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n".to_vec(),
            "400",
        ),
        (
            b"POST / HTTP/1.1\r\nContent-Length: 999999999999\r\n\r\n".to_vec(),
            "413",
        ),
    ];
    for (request, status) in cases {
        let response = raw(server.addr(), &request).await;
        let (head, _) = split(&response);
        assert!(
            head.starts_with(&format!("HTTP/1.1 {status} ")),
            "{:?} -> {head}",
            String::from_utf8_lossy(&request[..request.len().min(40)])
        );
        assert_eq!(header(&head, "connection"), Some("close"));
    }
    // Half a request, then the peer goes away.
    let mut stream = TcpStream::connect(server.addr()).await.unwrap();
    stream.write_all(b"GET /item-1 HTT").await.unwrap();
    drop(stream);
    // None of that was logged, and the server still serves.
    assert_eq!(server.total(), 0);
    let response = client().get(server.url("/item-1")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
}

#[tokio::test]
async fn a_slow_head_is_assembled_across_reads() {
    let server = server().await;
    let mut stream = TcpStream::connect(server.addr()).await.unwrap();
    for part in [
        &b"GET /item-1 HT"[..],
        b"TP/1.1\r\nHost:",
        b" x\r\nConnection: close\r\n",
        b"\r\n",
    ] {
        stream.write_all(part).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.unwrap();
    assert!(out.starts_with(b"HTTP/1.1 200 OK\r\n"));
}

#[tokio::test]
async fn thousands_of_requests_over_keep_alive() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(20_000))
        .start_background()
        .unwrap();
    let client = client();
    let n = 4_000;
    let started = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..8 {
        let client = client.clone();
        let urls: Vec<String> = (0..n / 8)
            .map(|i| server.url(&format!("/item-{}", 1 + worker * (n / 8) + i)))
            .collect();
        tasks.push(tokio::spawn(async move {
            for url in urls {
                let response = client.get(url).send().await.unwrap();
                assert_eq!(response.status().as_u16(), 200);
                response.bytes().await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = started.elapsed();
    let rate = n as f64 / elapsed.as_secs_f64();
    eprintln!("{n} requests in {elapsed:?}: {rate:.0} requests/s");
    assert_eq!(server.total(), n as usize);
    // Keep-alive held: eight clients' requests came over a handful of connections, not one
    // each (the rate is for the benchmarks; this machine is shared).
    let connections: std::collections::HashSet<u64> =
        server.requests().iter().map(|r| r.connection).collect();
    assert!(connections.len() <= 32, "{} connections", connections.len());
}

#[tokio::test]
async fn random_bytes_never_take_the_server_down() {
    let server = server().await;
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let pieces: [&[u8]; 8] = [
        b"GET ",
        b"/item-1",
        b" HTTP/1.1\r\n",
        b"Host: x\r\n",
        b"Content-Length: 3\r\n",
        b"\r\n",
        b"%00%2e%2e/",
        b"\xff\xfe\x00",
    ];
    for _ in 0..200 {
        let mut request = Vec::new();
        for _ in 0..(next() % 12) {
            if next() % 3 == 0 {
                request.extend((0..next() % 16).map(|_| next() as u8));
            } else {
                request.extend_from_slice(pieces[(next() % 8) as usize]);
            }
        }
        let mut stream = TcpStream::connect(server.addr()).await.unwrap();
        let _ = stream.write_all(&request).await;
        let _ = stream.shutdown().await;
        let mut sink = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut sink)).await;
    }
    let response = client().get(server.url("/item-1")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
}
