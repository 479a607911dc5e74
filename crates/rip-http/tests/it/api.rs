//! API calls ([`Fetcher::call_api`]): an error reported in a 200 body is retried like an
//! HTTP failure, its Retry-After honoured; and per-item caching ([`Fetcher::remember`],
//! [`Fetcher::cached`]).

use std::time::Duration;

use bytes::Bytes;
use chrono::Utc;
use rip_core::ErrorCategory;
use rip_http::{CacheMode, Classification, Fetcher, Response};
use rip_testserver::{Fault, RetryAfter, Rule, TestServer};

use crate::{config, fail, page};

const OK: &str = r#"{"batchcomplete":true}"#;
const LAGGED: &str = r#"{"error":{"code":"maxlag","info":"Waiting: 7 seconds lagged"}}"#;

/// What MediaWiki's client does with a 200: an `error` object is a failure.
fn check(resp: &Response) -> Option<Classification> {
    let text = std::str::from_utf8(&resp.body).ok()?;
    if !text.contains("\"error\"") {
        return None;
    }
    let lagged = text.contains("maxlag");
    Some(Classification {
        category: if lagged {
            ErrorCategory::Throttled
        } else {
            ErrorCategory::Validation
        },
        retryable: lagged,
        code: "wiki.api.test".into(),
        message: text.to_owned(),
        retry_after: resp
            .header("retry-after")
            .and_then(|s| s.parse().ok())
            .map(Duration::from_secs),
    })
}

#[tokio::test]
async fn an_error_in_a_200_body_is_retried_after_its_retry_after() {
    let server = TestServer::builder()
        .file("/api.php", OK)
        .rule(Rule::path("/api.php").times(
            1,
            Fault::body("application/json", LAGGED).header("Retry-After", "1"),
        ))
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f
        .call_api(&server.url("/api.php?action=query"), None, &check)
        .await;
    assert_eq!(page(&got).body, OK.as_bytes());
    assert_eq!((got.stats.http_attempts, got.stats.retries), (2, 1));
    let reqs = server.requests_for("/api.php");
    assert_eq!(reqs.len(), 2);
    let gap = reqs[1].elapsed - reqs[0].elapsed;
    assert!(
        gap >= Duration::from_millis(990),
        "Retry-After ignored: {gap:?}"
    );
    assert_eq!(f.stats().retries, 1);
}

#[tokio::test]
async fn a_lasting_api_error_ends_as_its_classification_with_the_body() {
    let server = TestServer::builder()
        .file("/api.php", r#"{"error":{"code":"badvalue"}}"#)
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let got = f.call_api(&server.url("/api.php"), None, &check).await;
    let failure = fail(&got);
    assert_eq!(failure.class.category, ErrorCategory::Validation);
    assert_eq!(failure.class.code, "wiki.api.test");
    assert_eq!(failure.status, Some(200));
    assert!(
        failure
            .body
            .as_ref()
            .is_some_and(|b| b.starts_with(b"{\"error\""))
    );
    assert_eq!(server.count("/api.php"), 1, "not retryable: one request");
}

#[tokio::test]
async fn http_failures_of_an_api_call_are_retried_and_classified() {
    let server = TestServer::builder()
        .file("/api.php", OK)
        .file("/gone.php", OK)
        .rule(Rule::path("/api.php").times(2, Fault::status(503)))
        .rule(Rule::path("/gone.php").always(Fault::retry_after(429, RetryAfter::Seconds(600))))
        .start()
        .await
        .unwrap();
    let mut cfg = config();
    cfg.retry.give_up_after = Some(Duration::from_secs(30));
    let f = Fetcher::new(cfg).unwrap();
    let got = f.call_api(&server.url("/api.php"), None, &check).await;
    assert_eq!(page(&got).body, OK.as_bytes());
    assert_eq!(server.count("/api.php"), 3);
    // A Retry-After past give_up_after ends the call at once, with the hint.
    let got = f.call_api(&server.url("/gone.php"), None, &check).await;
    let failure = fail(&got);
    assert_eq!(failure.class.category, ErrorCategory::Throttled);
    assert_eq!(failure.class.retry_after, Some(Duration::from_secs(600)));
    assert_eq!(server.count("/gone.php"), 1);
}

fn item(body: &str) -> Response {
    Response {
        final_url: "http://wiki.invalid/index.php/Ash_Wyrm".into(),
        status: 200,
        headers: vec![("content-type".into(), "text/x-wiki; charset=utf-8".into())],
        body: Bytes::from(body.to_owned()),
        truncated: false,
        redirects: Vec::new(),
        fetched_at: Utc::now(),
    }
}

#[tokio::test]
async fn items_are_cached_one_by_one_under_the_callers_keys() {
    let dir = tempfile::tempdir().unwrap();
    let key = "http://wiki.invalid/index.php/Ash_Wyrm";
    let mut cfg = config();
    cfg.cache.dir = Some(dir.path().to_owned());
    cfg.cache.mode = CacheMode::ReadWrite;
    let f = Fetcher::new(cfg.clone()).unwrap();
    assert!(f.cached(key).await.is_none());
    assert!(!f.cache_only());
    let site = rip_core::SiteFetch {
        fetched_by: "rip-fetch".into(),
        http_attempts: 2,
        statuses: vec![Some(200), Some(200)],
        faults: vec!["wiki.api.maxlag".into()],
        ..Default::default()
    };
    f.remember(key, &item("{{Infobox creature}}"), Some(&site))
        .await;
    let (hit, origin) = f.cached(key).await.expect("a fresh entry");
    assert_eq!(hit.body, "{{Infobox creature}}".as_bytes());
    assert_eq!(hit.content_type(), Some("text/x-wiki; charset=utf-8"));
    assert_eq!(
        origin,
        Some(site),
        "the batch's site fetch, kept with the item"
    );
    assert_eq!(f.stats().cache_hits, 1);

    // Stale: a miss for read-write, served for read-only; write-only never reads.
    std::thread::sleep(Duration::from_millis(20));
    cfg.cache.ttl = Some(Duration::from_millis(10));
    assert!(
        Fetcher::new(cfg.clone())
            .unwrap()
            .cached(key)
            .await
            .is_none()
    );
    cfg.cache.mode = CacheMode::ReadOnly;
    let ro = Fetcher::new(cfg.clone()).unwrap();
    assert!(ro.cache_only());
    assert!(ro.cached(key).await.is_some());
    cfg.cache.mode = CacheMode::WriteOnly;
    let wo = Fetcher::new(cfg).unwrap();
    assert!(wo.cached(key).await.is_none());
    wo.remember(key, &item("new"), None).await;
    assert_eq!(ro.cached(key).await.unwrap().0.body, "new".as_bytes());
}
