//! Every failure category and retry path.

use std::time::Duration;

use rip_core::{CharsetSource, ErrorCategory, Phase, Record, Ref};
use rip_http::{Fetcher, Outcome, records};
use rip_testserver::{
    Fault, FaultPlan, LocationStyle, RetryAfter, Rule, SAMPLE_TEXT, Sample, TestServer,
};

use crate::{HTML, config, fail, page};

#[tokio::test]
async fn throttled_429_waits_for_retry_after_seconds() {
    let server = TestServer::builder()
        .file("/t", HTML)
        .rule(Rule::path("/t").times(1, Fault::retry_after(429, RetryAfter::Seconds(1))))
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f.fetch(&server.url("/t")).await;
    assert_eq!(page(&got).status, 200);
    assert_eq!(got.stats.http_attempts, 2);
    assert_eq!(got.stats.retries, 1);
    let reqs = server.requests_for("/t");
    assert_eq!(reqs.len(), 2);
    let gap = reqs[1].elapsed - reqs[0].elapsed;
    assert!(
        gap >= Duration::from_millis(990),
        "Retry-After 1 not honoured: {gap:?}"
    );
    assert!(
        gap < Duration::from_millis(1900),
        "waited too long: {gap:?}"
    );
}

#[tokio::test]
async fn throttled_429_waits_for_retry_after_http_date() {
    let server = TestServer::builder()
        .file("/d", HTML)
        .rule(Rule::path("/d").times(
            1,
            Fault::retry_after(429, RetryAfter::After(Duration::from_millis(1500))),
        ))
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f.fetch(&server.url("/d")).await;
    assert_eq!(page(&got).status, 200);
    let reqs = server.requests_for("/d");
    assert_eq!(reqs.len(), 2);
    let gap = reqs[1].elapsed - reqs[0].elapsed;
    // The date is rounded up to a whole second: at least 1.5 s, at most ~2.5 s.
    assert!(
        gap >= Duration::from_millis(1400),
        "HTTP-date not honoured: {gap:?}"
    );
    assert!(gap < Duration::from_millis(3000), "{gap:?}");
}

#[tokio::test]
async fn throttled_until_attempts_run_out_is_a_failure_with_the_hint() {
    let server = TestServer::builder()
        .rule(Rule::path("/x").always(Fault::retry_after(429, RetryAfter::Seconds(0))))
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f.fetch(&server.url("/x")).await;
    let x = fail(&got);
    assert_eq!(x.class.category, ErrorCategory::Throttled);
    assert!(x.class.retryable);
    assert_eq!(x.status, Some(429));
    assert_eq!(x.class.retry_after, Some(Duration::ZERO));
    assert_eq!(got.stats.http_attempts, 3);
    assert_eq!(server.count("/x"), 3);
}

#[tokio::test]
async fn a_long_retry_after_ends_the_fetch_when_give_up_after_says_so() {
    let server = TestServer::builder()
        .rule(Rule::path("/x").always(Fault::retry_after(429, RetryAfter::Seconds(120))))
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.retry.give_up_after = Some(Duration::from_secs(10));
    let f = Fetcher::new(c).unwrap();
    let t0 = std::time::Instant::now();
    let got = f.fetch(&server.url("/x")).await;
    assert!(t0.elapsed() < Duration::from_secs(5));
    let x = fail(&got);
    assert_eq!(x.class.retry_after, Some(Duration::from_secs(120)));
    let r = Ref::new(server.url("/x"));
    let rec = records::failure_record(&r, x, &got.stats, Phase::Fetch, "rip-fetch");
    assert_eq!(rec.retry_after_ms, Some(120_000));
    assert_eq!(rec.errors[0].code, "httpError.throttled");
    assert_eq!(rec.attempt, 1);
}

#[tokio::test]
async fn a_429_slows_the_whole_host() {
    let server = TestServer::builder()
        .file("/a", HTML)
        .file("/b", HTML)
        .rule(Rule::path("/a").times(1, Fault::retry_after(429, RetryAfter::Seconds(1))))
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let fa = f.clone();
    let ua = server.url("/a");
    let ta = tokio::spawn(async move { fa.fetch(&ua).await });
    assert!(server.wait_for_count("/a", 1, Duration::from_secs(5)).await);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let got_b = f.fetch(&server.url("/b")).await;
    page(&got_b);
    page(&ta.await.unwrap());
    let a0 = server.requests_for("/a")[0].elapsed;
    let b0 = server.requests_for("/b")[0].elapsed;
    assert!(
        b0 - a0 >= Duration::from_millis(950),
        "/b went out {:?} after the 429 on /a",
        b0 - a0
    );
}

#[tokio::test]
async fn transient_503_n_times_then_ok_recovers() {
    let server = TestServer::builder()
        .file("/r", HTML)
        .rule(Rule::path("/r").times(2, Fault::status(503)))
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f.fetch(&server.url("/r")).await;
    assert_eq!(page(&got).body, HTML.as_bytes());
    assert_eq!(got.stats.http_attempts, 3);
    assert_eq!(got.stats.retries, 2);
    assert_eq!(f.stats().retries, 2);
}

#[tokio::test]
async fn permanent_404_is_one_request() {
    let server = TestServer::builder().start().await.unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f.fetch(&server.url("/missing")).await;
    let x = fail(&got);
    assert_eq!(x.class.category, ErrorCategory::Permanent);
    assert!(!x.class.retryable);
    assert_eq!(x.status, Some(404));
    assert_eq!(server.count("/missing"), 1);
    assert_eq!(got.stats.http_attempts, 1);
}

#[tokio::test]
async fn connection_reset_is_network_and_retried() {
    let server = TestServer::builder()
        .rule(Rule::path("/reset").always(Fault::reset()))
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f.fetch(&server.url("/reset")).await;
    let x = fail(&got);
    assert_eq!(x.class.category, ErrorCategory::Network, "{x:?}");
    assert_eq!(x.class.code, "network.reset", "{x:?}");
    assert!(x.class.retryable);
    assert_eq!(server.count("/reset"), 3);
}

#[tokio::test]
async fn stall_is_a_read_timeout() {
    let server = TestServer::builder()
        .file("/stall", HTML)
        .rule(Rule::path("/stall").always(Fault::serve().stall(Duration::from_secs(10))))
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.client.read_timeout = Duration::from_millis(300);
    c.retry.max_attempts = 2;
    let f = Fetcher::new(c).unwrap();
    let t0 = std::time::Instant::now();
    let got = f.fetch(&server.url("/stall")).await;
    let x = fail(&got);
    assert_eq!(x.class.category, ErrorCategory::Timeout, "{x:?}");
    assert_eq!(x.class.code, "timeout.read");
    assert_eq!(server.count("/stall"), 2);
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
}

#[tokio::test]
async fn short_body_is_a_retryable_network_failure() {
    let server = TestServer::builder()
        .file("/short", HTML.repeat(20))
        .rule(Rule::path("/short").times(1, Fault::serve().short_body(10)))
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f.fetch(&server.url("/short")).await;
    assert_eq!(
        page(&got).body.len(),
        HTML.len() * 20,
        "recovered on the retry"
    );
    let mut c = config();
    c.retry.max_attempts = 1;
    server.add_rule(Rule::path("/short2").always(Fault::serve().short_body(10)));
    let f = Fetcher::new(c).unwrap();
    let got = f.fetch(&server.url("/short2")).await;
    let x = fail(&got);
    assert_eq!(x.class.category, ErrorCategory::Network, "{x:?}");
    assert!(x.class.retryable);
}

#[tokio::test]
async fn redirect_loop_is_a_validation_failure_and_chains_are_recorded() {
    let plan = FaultPlan::new()
        .redirect_loop(&["/l1", "/l2", "/l3"], 302, LocationStyle::Path)
        .redirect_chain(&["/c1", "/c2"], "/final", 301, LocationStyle::Absolute);
    let server = TestServer::builder()
        .file("/final", HTML)
        .plan(plan)
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f.fetch(&server.url("/l1")).await;
    let x = fail(&got);
    assert_eq!(x.class.category, ErrorCategory::Validation);
    assert_eq!(x.class.code, "validation.redirectLoop");
    assert!(!x.class.retryable);
    assert_eq!(server.count("/l1"), 1, "a loop is not retried");
    let got = f.fetch(&server.url("/c1")).await;
    let p = page(&got);
    assert_eq!(p.final_url, server.url("/final"));
    assert_eq!(p.redirects, [server.url("/c1"), server.url("/c2")]);
    assert_eq!(got.stats.http_attempts, 3);
}

#[tokio::test]
async fn too_many_redirects_and_non_http_targets_are_refused() {
    let plan = FaultPlan::new().redirect_chain(
        &["/h1", "/h2", "/h3", "/h4"],
        "/end",
        302,
        LocationStyle::Path,
    );
    let server = TestServer::builder()
        .file("/end", HTML)
        .plan(plan)
        .rule(Rule::path("/ftp").always(Fault::redirect(302, "ftp://example.invalid/x")))
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.client.max_redirects = 2;
    let f = Fetcher::new(c).unwrap();
    let x = fail(&f.fetch(&server.url("/h1")).await).clone();
    assert_eq!(x.class.code, "validation.tooManyRedirects");
    let x = fail(&f.fetch(&server.url("/ftp")).await).clone();
    assert_eq!(x.class.code, "validation.redirect");
    assert!(x.class.message.contains("ftp://"), "{}", x.class.message);
}

#[tokio::test]
async fn redirect_out_of_scope_is_a_skip_naming_the_location() {
    let server = TestServer::builder()
        .rule(Rule::path("/away").always(Fault::redirect(302, "http://elsewhere.invalid/")))
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.client.redirect_scope = rip_http::RedirectScope::SameHost;
    let f = Fetcher::new(c).unwrap();
    let got = f.fetch(&server.url("/away")).await;
    let Outcome::Skipped(s) = &got.outcome else {
        panic!("{got:?}")
    };
    assert_eq!(
        s.rule.as_deref(),
        Some("Location: http://elsewhere.invalid/")
    );
    assert_eq!(s.status, Some(302));
}

#[tokio::test]
async fn gzip_is_decompressed_and_a_bomb_is_cut_at_the_limit() {
    let body = HTML.repeat(100);
    let server = TestServer::builder()
        .file("/gz", body.clone())
        .rule(Rule::path("/gz").always(Fault::serve().gzip()))
        .rule(Rule::path("/bomb").always(Fault::gzip_bomb(50 << 20)))
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.client.max_body = 1 << 20;
    let f = Fetcher::new(c).unwrap();
    let got = f.fetch(&server.url("/gz")).await;
    assert_eq!(page(&got).body, body.as_bytes());
    assert!(!page(&got).truncated);
    let req = &server.requests_for("/gz")[0];
    assert!(req.header("accept-encoding").unwrap_or("").contains("gzip"));
    let got = f.fetch(&server.url("/bomb")).await;
    let p = page(&got);
    assert!(p.truncated);
    assert_eq!(p.body.len(), 1 << 20);
    assert_eq!(f.stats().truncated, 1);
}

#[tokio::test]
async fn wrong_and_missing_charsets_are_decoded_right() {
    let mut b = TestServer::builder();
    for s in Sample::ALL {
        let path = format!("/{s:?}");
        b = b.rule(Rule::path(path).always(Fault::sample(s)));
    }
    let server = b.start().await.unwrap();
    let f = Fetcher::new(config()).unwrap();
    for s in Sample::ALL {
        let url = server.url(&format!("/{s:?}"));
        let got = f.fetch(&url).await;
        let r = Ref::new(url.clone());
        let Record::Page(p) = records::record_for(&r, &got, Phase::Fetch, "rip-fetch") else {
            panic!("{s:?}: {got:?}")
        };
        match s.true_charset() {
            None => assert_eq!(p.body_encoding, rip_core::BodyEncoding::Base64, "{s:?}"),
            Some(cs) => {
                assert!(p.body.contains(SAMPLE_TEXT), "{s:?}: {}", p.body);
                assert_eq!(p.charset.as_deref(), Some(cs), "{s:?}");
                let want = match s {
                    Sample::Windows1252LabelledUtf8 | Sample::NoCharsetUtf8 => {
                        CharsetSource::Sniffed
                    }
                    _ => CharsetSource::Meta,
                };
                assert_eq!(p.charset_source, Some(want), "{s:?}");
            }
        }
    }
}

#[tokio::test]
async fn circuit_opens_after_consecutive_failures() {
    let server = TestServer::builder()
        .rule(Rule::prefix("/down").always(Fault::status(503)))
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.retry.max_attempts = 1;
    c.politeness.circuit_threshold = 3;
    c.politeness.circuit_recovery = Duration::from_secs(30);
    let f = Fetcher::new(c).unwrap();
    for i in 0..3 {
        let got = f.fetch(&server.url(&format!("/down/{i}"))).await;
        assert_eq!(fail(&got).class.category, ErrorCategory::Transient);
    }
    let t0 = std::time::Instant::now();
    let got = f.fetch(&server.url("/down/3")).await;
    let x = fail(&got);
    assert_eq!(x.class.code, "circuit.open");
    assert!(x.class.retryable);
    assert!(x.class.retry_after.unwrap() > Duration::from_secs(25));
    assert!(
        t0.elapsed() < Duration::from_secs(3),
        "an open circuit must not hang (its recovery is 30 s)"
    );
    assert_eq!(
        server.count("/down/3"),
        0,
        "no request while the circuit is open"
    );
    // Another host is not affected.
    let other = server.url_for_host("localhost", "/down/9");
    assert_eq!(
        fail(&f.fetch(&other).await).class.category,
        ErrorCategory::Transient
    );
}

#[tokio::test]
async fn bad_urls_are_validation_failures_without_requests() {
    let f = Fetcher::new(config()).unwrap();
    for url in ["not a url", "ftp://example.invalid/x", "mailto:a@b.c"] {
        let got = f.fetch(url).await;
        let x = fail(&got);
        assert_eq!(x.class.category, ErrorCategory::Validation, "{url}");
        assert_eq!(got.stats.http_attempts, 0);
    }
    let long = format!("http://127.0.0.1:1/{}", "a".repeat(10_000));
    assert_eq!(fail(&f.fetch(&long).await).class.code, "validation.url");
}

#[tokio::test]
async fn connection_refused_is_network() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut c = config();
    c.retry.max_attempts = 2;
    let f = Fetcher::new(c).unwrap();
    let got = f.fetch(&format!("http://127.0.0.1:{port}/")).await;
    let x = fail(&got);
    assert_eq!(x.class.category, ErrorCategory::Network, "{x:?}");
    assert_eq!(got.stats.http_attempts, 2);
}

#[tokio::test]
async fn user_rule_makes_403_throttled() {
    let server = TestServer::builder()
        .file("/f", HTML)
        .rule(Rule::path("/f").times(1, Fault::status(403)))
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.rules = vec!["403@127.0.0.1=THROTTLED".parse().unwrap()];
    let f = Fetcher::new(c).unwrap();
    let got = f.fetch(&server.url("/f")).await;
    page(&got);
    assert_eq!(server.count("/f"), 2);
}

#[tokio::test]
async fn huge_response_headers_are_refused_cleanly() {
    let server = TestServer::builder()
        .file("/h", HTML)
        .rule(Rule::path("/h").always(Fault::serve().huge_headers(200, 8192)))
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.retry.max_attempts = 1;
    let f = Fetcher::new(c).unwrap();
    let got = f.fetch(&server.url("/h")).await;
    let x = fail(&got);
    assert!(
        matches!(
            x.class.category,
            ErrorCategory::Validation | ErrorCategory::Network
        ),
        "{x:?}"
    );
}
