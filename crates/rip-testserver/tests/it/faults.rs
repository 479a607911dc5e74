//! One test per fault, each asserting what a real client sees.

use std::io::{self, Read};
use std::time::{Duration, Instant, SystemTime};

use rip_testserver::{
    Fault, FaultPlan, LocationStyle, RetryAfter, Rule, SAMPLE_TEXT, Sample, TestServer,
};

use crate::support::{chain, client, client_builder, header, io_kind, raw, split};

const PAGE: &str = "<!doctype html><title>p</title><p>a page of some length, for the body</p>\n";

async fn server_with(rules: Vec<Rule>) -> TestServer {
    let mut builder = TestServer::builder()
        .file("/p", PAGE)
        .file("/final", "done");
    for rule in rules {
        builder = builder.rule(rule);
    }
    builder.start().await.expect("server")
}

#[tokio::test]
async fn any_status_with_a_small_body() {
    let server = server_with(vec![Rule::path("/p").always(Fault::status(418))]).await;
    let response = client().get(server.url("/p")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 418);
    assert_eq!(
        response.headers()["content-type"],
        "text/plain; charset=utf-8"
    );
    assert_eq!(response.text().await.unwrap(), "418 I'm a teapot\n");
}

#[tokio::test]
async fn status_with_the_site_page_or_a_custom_body() {
    let server = server_with(vec![
        Rule::path("/p").always(Fault::serve().with_status(500)),
        Rule::path("/gone").always(Fault::body("text/html", "<h1>gone</h1>").with_status(410)),
    ])
    .await;
    let response = client().get(server.url("/p")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 500);
    assert_eq!(response.text().await.unwrap(), PAGE);
    let response = client().get(server.url("/gone")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 410);
    assert_eq!(response.text().await.unwrap(), "<h1>gone</h1>");
}

#[tokio::test]
async fn retry_after_in_seconds_and_as_an_http_date() {
    let server = server_with(vec![
        Rule::path("/seconds").always(Fault::retry_after(429, RetryAfter::Seconds(2))),
        Rule::path("/date").always(Fault::retry_after(
            503,
            RetryAfter::After(Duration::from_secs(5)),
        )),
        Rule::path("/raw").always(Fault::retry_after(503, RetryAfter::Raw("soon".into()))),
    ])
    .await;
    let client = client();

    let response = client.get(server.url("/seconds")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 429);
    let value = response.headers()["retry-after"].to_str().unwrap();
    assert_eq!(value.parse::<u64>().unwrap(), 2);

    let response = client.get(server.url("/date")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 503);
    let value = response.headers()["retry-after"].to_str().unwrap();
    let date = httpdate::parse_http_date(value).expect("an HTTP-date");
    let ahead = date
        .duration_since(SystemTime::now())
        .expect("in the future");
    assert!(
        ahead > Duration::from_secs(3) && ahead <= Duration::from_secs(6),
        "{value} is {ahead:?} ahead"
    );

    let response = client.get(server.url("/raw")).send().await.unwrap();
    assert_eq!(response.headers()["retry-after"], "soon");
}

#[tokio::test]
async fn fail_n_times_then_succeed() {
    let server = server_with(vec![Rule::path("/p").times(3, Fault::status(503))]).await;
    let client = client();
    let mut statuses = Vec::new();
    for _ in 0..5 {
        let response = client.get(server.url("/p")).send().await.unwrap();
        statuses.push(response.status().as_u16());
    }
    assert_eq!(statuses, [503, 503, 503, 200, 200]);
    assert_eq!(server.count("/p"), 5);
}

#[tokio::test]
async fn a_sequence_of_different_faults_then_normal() {
    let server = server_with(vec![
        Rule::path("/p")
            .once(Fault::reset())
            .once(Fault::retry_after(429, RetryAfter::Seconds(1)))
            .once(Fault::status(500)),
    ])
    .await;
    let client = client();
    let first = client.get(server.url("/p")).send().await;
    assert!(first.is_err(), "reset: {first:?}");
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(
            client
                .get(server.url("/p"))
                .send()
                .await
                .unwrap()
                .status()
                .as_u16(),
        );
    }
    assert_eq!(statuses, [429, 500, 200]);
    let logged: Vec<_> = server
        .requests_for("/p")
        .into_iter()
        .map(|r| (r.fault, r.status))
        .collect();
    assert_eq!(
        logged,
        [
            ("reset".into(), None),
            ("respond".into(), Some(429)),
            ("respond".into(), Some(500)),
            ("respond".into(), Some(200)),
        ]
    );
}

#[tokio::test]
async fn per_target_sequences_under_a_prefix() {
    let server = TestServer::builder()
        .graph(rip_testserver::LinkGraph::new(10))
        .rule(Rule::prefix("/item-").once(Fault::status(503)))
        .start()
        .await
        .unwrap();
    let client = client();
    for path in ["/item-1", "/item-1", "/item-2", "/item-2"] {
        client.get(server.url(path)).send().await.unwrap();
    }
    let statuses: Vec<_> = server.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [Some(503), Some(200), Some(503), Some(200)]);
}

#[tokio::test]
async fn reset_is_a_connection_error() {
    let server = server_with(vec![Rule::path("/p").always(Fault::reset())]).await;
    let error = client().get(server.url("/p")).send().await.unwrap_err();
    assert!(
        error.is_request() || error.is_connect(),
        "{}",
        chain(&error)
    );
    assert_eq!(
        io_kind(&error),
        Some(io::ErrorKind::ConnectionReset),
        "{}",
        chain(&error)
    );
    assert_eq!(server.count("/p"), 1, "the client did not retry");
    assert_eq!(server.requests()[0].fault, "reset");
}

#[tokio::test]
async fn close_without_a_response_is_an_incomplete_message() {
    let server = server_with(vec![Rule::path("/p").always(Fault::close())]).await;
    let error = client().get(server.url("/p")).send().await.unwrap_err();
    assert!(error.status().is_none());
    assert_ne!(io_kind(&error), Some(io::ErrorKind::ConnectionReset));
    let response = raw(server.addr(), b"GET /p HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(response.is_empty(), "{response:?}");
}

#[tokio::test]
async fn stall_after_headers_times_out_the_body_read() {
    let server = server_with(vec![
        Rule::path("/p").always(Fault::serve().stall(Duration::from_secs(30))),
    ])
    .await;
    let client = client_builder()
        .read_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let started = Instant::now();
    let response = client
        .get(server.url("/p"))
        .send()
        .await
        .expect("headers arrive");
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(
        response.content_length(),
        Some(PAGE.len() as u64),
        "the full length is announced"
    );
    let error = response.bytes().await.unwrap_err();
    assert!(error.is_timeout(), "{}", chain(&error));
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    // Shutting down ends the stall instead of holding the connection for 30 s.
    let started = Instant::now();
    server.shutdown().await;
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn short_body_is_a_body_error_or_a_truncated_body() {
    let server = server_with(vec![
        Rule::path("/p").always(Fault::serve().short_body(10)),
        Rule::path("/tiny").always(Fault::body("text/plain", "abc").short_body(100)),
    ])
    .await;
    let response = client().get(server.url("/p")).send().await.unwrap();
    assert_eq!(response.content_length(), Some(PAGE.len() as u64));
    let error = response.bytes().await.unwrap_err();
    assert!(error.is_body() || error.is_decode(), "{}", chain(&error));

    let (head, body) = split(&raw(server.addr(), b"GET /p HTTP/1.1\r\nHost: x\r\n\r\n").await);
    assert_eq!(
        header(&head, "content-length"),
        Some(&*PAGE.len().to_string())
    );
    assert_eq!(body, PAGE.as_bytes()[..10]);

    // A body no longer than `sent` is sent whole, and announced one byte longer.
    let (head, body) = split(&raw(server.addr(), b"GET /tiny HTTP/1.1\r\nHost: x\r\n\r\n").await);
    assert_eq!(header(&head, "content-length"), Some("4"));
    assert_eq!(body, b"abc");
}

#[tokio::test]
async fn reset_in_the_middle_of_the_body() {
    let server = server_with(vec![
        Rule::path("/p").always(Fault::serve().short_body(10).end_with_reset()),
    ])
    .await;
    let response = client().get(server.url("/p")).send().await.unwrap();
    let error = response.bytes().await.unwrap_err();
    assert!(error.is_body() || error.is_decode(), "{}", chain(&error));
}

#[tokio::test]
async fn delay_before_headers() {
    let server = server_with(vec![
        Rule::path("/p").always(Fault::serve().delay(Duration::from_millis(300))),
    ])
    .await;
    let started = Instant::now();
    let response = client().get(server.url("/p")).send().await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(response.text().await.unwrap(), PAGE);

    let impatient = client_builder()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let error = impatient.get(server.url("/p")).send().await.unwrap_err();
    assert!(error.is_timeout(), "{}", chain(&error));
}

#[tokio::test]
async fn trickled_body_is_slow_but_whole() {
    let body = "x".repeat(100);
    let server = server_with(vec![Rule::path("/slow").always(
        Fault::body("text/plain", body.clone()).trickle(10, Duration::from_millis(50)),
    )])
    .await;
    let started = Instant::now();
    let response = client().get(server.url("/slow")).send().await.unwrap();
    let headers_after = started.elapsed();
    assert_eq!(response.text().await.unwrap(), body);
    let total = started.elapsed();
    // The headers come before the trickle: the body's ten 50 ms gaps follow them (a busy
    // machine only stretches the gaps, so this holds under load too).
    assert!(
        total - headers_after >= Duration::from_millis(400),
        "headers after {headers_after:?}, body done after {total:?}"
    );
}

#[tokio::test]
async fn redirect_chain_is_followed_to_the_end() {
    let plan =
        FaultPlan::new().redirect_chain(&["/r0", "/r1", "/r2"], "/final", 301, LocationStyle::Path);
    let server = TestServer::builder()
        .file("/final", "done")
        .plan(plan)
        .start()
        .await
        .unwrap();
    let following = client_builder()
        .redirect(reqwest::redirect::Policy::limited(10))
        .build()
        .unwrap();
    let response = following.get(server.url("/r0")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.url().path(), "/final");
    assert_eq!(response.text().await.unwrap(), "done");
    let paths: Vec<_> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/r0", "/r1", "/r2", "/final"]);
}

#[tokio::test]
async fn redirect_locations_absolute_and_relative() {
    let plan = FaultPlan::new()
        .redirect_chain(&["/a/r0"], "/b/final", 308, LocationStyle::Absolute)
        .redirect_chain(&["/a/r1"], "/b/final", 307, LocationStyle::Relative)
        .rule(Rule::path("/a/r2").always(Fault::redirect(302, "{origin}/x")));
    let server = TestServer::builder().plan(plan).start().await.unwrap();
    let client = client();
    let response = client.get(server.url("/a/r0")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 308);
    assert_eq!(
        response.headers()["location"],
        server.url("/b/final").as_str()
    );
    let response = client.get(server.url("/a/r1")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 307);
    assert_eq!(response.headers()["location"], "../b/final");
    // {origin} follows the host name the client used.
    let response = client
        .get(server.url_for_host("localhost", "/a/r2"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["location"],
        server.url_for_host("localhost", "/x").as_str()
    );
}

#[tokio::test]
async fn redirect_loop_loops() {
    let plan = FaultPlan::new().redirect_loop(&["/loop-a", "/loop-b"], 302, LocationStyle::Path);
    let server = TestServer::builder().plan(plan).start().await.unwrap();
    let following = client_builder()
        .redirect(reqwest::redirect::Policy::limited(10))
        .build()
        .unwrap();
    let error = following
        .get(server.url("/loop-a"))
        .send()
        .await
        .unwrap_err();
    assert!(error.is_redirect(), "{}", chain(&error));
    assert!(server.count("/loop-a") >= 2 && server.count("/loop-b") >= 2);
}

#[tokio::test]
async fn gzip_honours_accept_encoding() {
    let server = server_with(vec![Rule::path("/p").always(Fault::serve().gzip())]).await;
    // reqwest with the gzip feature asks for gzip and decodes it.
    let response = client().get(server.url("/p")).send().await.unwrap();
    assert_eq!(response.text().await.unwrap(), PAGE);
    let asked = server.requests()[0]
        .header("accept-encoding")
        .unwrap_or_default()
        .to_owned();
    assert!(asked.contains("gzip"), "{asked}");

    // On the wire: gzip when asked, identity when not.
    let (head, body) = split(
        &raw(
            server.addr(),
            b"GET /p HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n",
        )
        .await,
    );
    assert_eq!(header(&head, "content-encoding"), Some("gzip"));
    assert_eq!(header(&head, "vary"), Some("Accept-Encoding"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(&body[..])
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, PAGE);
    let (head, body) = split(
        &raw(
            server.addr(),
            b"GET /p HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .await,
    );
    assert_eq!(header(&head, "content-encoding"), None);
    assert_eq!(body, PAGE.as_bytes());
}

#[tokio::test]
async fn gzip_bomb_is_small_and_expands_hugely() {
    let expanded = 64u64 << 20;
    let server = server_with(vec![Rule::path("/bomb").always(Fault::gzip_bomb(expanded))]).await;
    let plain = client_builder().gzip(false).build().unwrap();
    let response = plain.get(server.url("/bomb")).send().await.unwrap();
    assert_eq!(response.headers()["content-encoding"], "gzip");
    let compressed = response.bytes().await.unwrap();
    assert!(compressed.len() < 200_000, "{} bytes", compressed.len());
    let mut decoder = flate2::read::GzDecoder::new(&compressed[..]);
    let n = io::copy(&mut decoder, &mut io::sink()).unwrap();
    assert_eq!(n, expanded);
    // A decoding client gets all of it.
    let decoded = client().get(server.url("/bomb")).send().await.unwrap();
    assert_eq!(decoded.bytes().await.unwrap().len() as u64, expanded);
}

#[tokio::test]
async fn wrong_and_missing_charsets_and_non_html_bodies() {
    let mut builder = TestServer::builder();
    for sample in Sample::ALL {
        builder = builder.rule(Rule::path(format!("/{sample:?}")).always(Fault::sample(sample)));
    }
    let server = builder.start().await.unwrap();
    let client = client();
    for sample in Sample::ALL {
        let response = client
            .get(server.url(&format!("/{sample:?}")))
            .send()
            .await
            .unwrap();
        assert_eq!(response.headers()["content-type"], sample.content_type());
        assert_eq!(
            &response.bytes().await.unwrap()[..],
            sample.bytes(),
            "{sample:?}"
        );
    }
    // The classic trap: decoding by the header gives replacement characters.
    let response = client
        .get(server.url("/Windows1252LabelledUtf8"))
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    assert!(
        text.contains('\u{FFFD}') && !text.contains(SAMPLE_TEXT),
        "{text}"
    );
    let pdf = client.get(server.url("/Pdf")).send().await.unwrap();
    assert!(pdf.bytes().await.unwrap().starts_with(b"%PDF-"));
}

#[tokio::test]
async fn custom_headers_replace_or_add() {
    let server = server_with(vec![
        Rule::path("/p").always(
            Fault::serve()
                .header("Cache-Control", "max-age=60")
                .header("Content-Type", "text/x-custom")
                .header("X-Twice", "1")
                .header("X-Twice", "2"),
        ),
    ])
    .await;
    let response = client().get(server.url("/p")).send().await.unwrap();
    let headers = response.headers();
    assert_eq!(headers["cache-control"], "max-age=60");
    assert_eq!(headers["content-type"], "text/x-custom");
    assert_eq!(headers.get_all("content-type").iter().count(), 1);
    assert_eq!(headers.get_all("x-twice").iter().count(), 2);
}

#[tokio::test]
async fn etag_and_last_modified_revalidate_with_304() {
    let server = server_with(vec![]).await;
    let client = client();
    let first = client.get(server.url("/p")).send().await.unwrap();
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let modified = first.headers()["last-modified"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    assert_eq!(modified, "Mon, 01 Jan 2024 00:00:00 GMT");

    let revalidate = |name: &'static str, value: String| {
        let request = client.get(server.url("/p")).header(name, value);
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.bytes().await.unwrap().len())
        }
    };
    assert_eq!(revalidate("if-none-match", etag.clone()).await, (304, 0));
    assert_eq!(
        revalidate("if-none-match", format!("\"x\", W/{etag}")).await,
        (304, 0)
    );
    assert_eq!(
        revalidate("if-none-match", "\"stale\"".into()).await,
        (200, PAGE.len())
    );
    assert_eq!(revalidate("if-modified-since", modified).await, (304, 0));
    assert_eq!(
        revalidate("if-modified-since", "Sun, 31 Dec 2023 23:59:59 GMT".into()).await,
        (200, PAGE.len())
    );
    let logged = server.requests()[1]
        .header("if-none-match")
        .map(str::to_owned);
    assert_eq!(logged, Some(etag));
}

#[tokio::test]
async fn fixed_and_changing_validators() {
    let server = server_with(vec![
        Rule::path("/p")
            .once(Fault::serve().etag("\"v1\""))
            .then(Fault::serve().etag("\"v2\"")),
        Rule::path("/final").always(Fault::serve().no_validators()),
    ])
    .await;
    let client = client();
    let first = client.get(server.url("/p")).send().await.unwrap();
    assert_eq!(first.headers()["etag"], "\"v1\"");
    // The content changed: revalidating with v1 gets a 200 with v2.
    let second = client
        .get(server.url("/p"))
        .header("if-none-match", "\"v1\"")
        .send()
        .await
        .unwrap();
    assert_eq!(second.status().as_u16(), 200);
    assert_eq!(second.headers()["etag"], "\"v2\"");
    let third = client
        .get(server.url("/p"))
        .header("if-none-match", "\"v2\"")
        .send()
        .await
        .unwrap();
    assert_eq!(third.status().as_u16(), 304);

    let plain = client
        .get(server.url("/final"))
        .header("if-none-match", "*")
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status().as_u16(), 200);
    assert!(plain.headers().get("etag").is_none());
    assert!(plain.headers().get("last-modified").is_none());
}

#[tokio::test]
async fn huge_headers_arrive_or_exceed_the_client_limit() {
    let server = server_with(vec![
        Rule::path("/p").always(Fault::serve().huge_headers(8, 8192)),
        Rule::path("/final").always(Fault::serve().huge_headers(1, 2 << 20)),
    ])
    .await;
    let client = client();
    let response = client.get(server.url("/p")).send().await.unwrap();
    assert_eq!(response.headers()["x-huge-7"].len(), 8192);
    let error = client.get(server.url("/final")).send().await.unwrap_err();
    assert!(error.status().is_none(), "{}", chain(&error));
}

#[tokio::test]
async fn query_specific_and_host_specific_rules() {
    let server = server_with(vec![
        Rule::path("/p?q=a").always(Fault::status(500)),
        Rule::path("/final")
            .host("localhost")
            .always(Fault::status(503)),
    ])
    .await;
    let client = client();
    let status = |url: String| {
        let request = client.get(url);
        async move { request.send().await.unwrap().status().as_u16() }
    };
    assert_eq!(status(server.url("/p?q=a")).await, 500);
    assert_eq!(status(server.url("/p?q=b")).await, 200);
    assert_eq!(status(server.url("/p")).await, 200);
    assert_eq!(
        status(server.url_for_host("localhost", "/final")).await,
        503
    );
    assert_eq!(status(server.url("/final")).await, 200);
}

#[tokio::test]
async fn rules_can_be_added_to_a_running_server() {
    let server = server_with(vec![]).await;
    let client = client();
    assert_eq!(
        client.get(server.url("/p")).send().await.unwrap().status(),
        200
    );
    server.add_rule(Rule::path("/p").once(Fault::status(503)));
    assert_eq!(
        client.get(server.url("/p")).send().await.unwrap().status(),
        503
    );
    assert_eq!(
        client.get(server.url("/p")).send().await.unwrap().status(),
        200
    );
    server.set_plan(FaultPlan::new().rule(Rule::path("/p").always(Fault::status(404))));
    assert_eq!(
        client.get(server.url("/p")).send().await.unwrap().status(),
        404
    );
}

#[tokio::test]
async fn the_json_plan_drives_the_same_faults() {
    let plan = FaultPlan::from_json(
        r#"{"rules": [
            {"path": "/p", "sequence": [{"status": 503, "retry_after": 1, "times": 2}]},
            {"path": "/final", "then": {"reset": true}}
        ]}"#,
    )
    .unwrap();
    let server = TestServer::builder()
        .file("/p", PAGE)
        .plan(plan)
        .start()
        .await
        .unwrap();
    let client = client();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let response = client.get(server.url("/p")).send().await.unwrap();
        statuses.push(response.status().as_u16());
    }
    assert_eq!(statuses, [503, 503, 200]);
    let error = client.get(server.url("/final")).send().await.unwrap_err();
    assert_eq!(io_kind(&error), Some(io::ErrorKind::ConnectionReset));
}

#[tokio::test]
async fn reset_on_a_reused_connection_is_not_retried_by_a_default_client() {
    let server = server_with(vec![
        Rule::path("/p").once(Fault::serve()).once(Fault::reset()),
    ])
    .await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let first = client.get(server.url("/p")).send().await.unwrap();
    first.bytes().await.unwrap();
    let error = client.get(server.url("/p")).send().await.unwrap_err();
    assert_eq!(
        io_kind(&error),
        Some(io::ErrorKind::ConnectionReset),
        "{}",
        chain(&error)
    );
    let log = server.requests();
    assert_eq!(log.len(), 2);
    assert_eq!(
        log[0].connection, log[1].connection,
        "the pooled connection was reused"
    );
}
