//! Refs scheduled for later (`notBefore`, written by rip-route from a Retry-After): a wait
//! is said on stderr, and one past the longest wait rip-fetch honours (`--max-retry-after`)
//! is not waited for: it becomes a THROTTLED failure at once.

use std::time::{Duration, Instant};

use rip_core::{ErrorCategory, Record};

use rip_testkit::Ran;

use crate::{fetch_stage, server};

/// Runs rip-fetch on `input`, killing it after `limit` (a test must not hang on a wait).
fn fetch_within(args: &[&str], cache: &std::path::Path, input: &str, limit: Duration) -> Ran {
    let args = [&["--ignore-robots"], args].concat();
    let mut child = fetch_stage(&args, cache, input).spawn();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            child.kill().unwrap();
            let out = Ran::wait("rip-fetch", child);
            panic!(
                "rip-fetch still running after {limit:?}; stderr: {}",
                out.stderr
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ran::wait("rip-fetch", child)
}

fn scheduled(url: &str, at: chrono::DateTime<chrono::Utc>) -> String {
    format!(
        "{{\"_type\":\"ref\",\"url\":\"{url}\",\"attempt\":1,\"notBefore\":\"{}\"}}\n",
        at.to_rfc3339()
    )
}

#[test]
fn a_not_before_years_away_is_a_failure_at_once_not_a_wait() {
    let server = server(2).start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let far = chrono::Utc::now() + chrono::Duration::days(3 * 365);
    let input = scheduled(&server.url("/p0"), far)
        + &format!("{{\"_type\":\"ref\",\"url\":\"{}\"}}\n", server.url("/p1"));
    let t0 = Instant::now();
    // The default longest wait (--max-retry-after 300s).
    let out = fetch_within(&[], dir.path(), &input, Duration::from_secs(20));
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    assert_eq!(out.code, 2, "a failure makes it partial");
    assert_eq!(server.count("/p0"), 0, "never asked for");
    let recs = out.records();
    let mut failures = recs.iter().filter(|r| matches!(r, Record::Failure(_)));
    let Some(Record::Failure(f)) = failures.next() else {
        panic!("no failure: {recs:?}")
    };
    assert!(failures.next().is_none(), "one failure: {recs:?}");
    assert_eq!(f.url, server.url("/p0"));
    assert_eq!(
        (f.category, f.retryable, f.attempt),
        (ErrorCategory::Throttled, true, 2)
    );
    assert_eq!(f.http_attempts, 0);
    let wait = f.retry_after_ms.expect("the wait left, as the hint");
    assert!(wait > 2 * 365 * 86_400_000, "{wait}");
    let e = f.errors.last().unwrap();
    assert_eq!(e.code, "fetch.notBefore");
    assert!(
        e.message
            .contains(&far.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
            && e.message.contains("--max-retry-after 5m"),
        "{}",
        e.message
    );
    assert!(
        recs.iter()
            .any(|r| matches!(r, Record::Page(p) if p.url == server.url("/p1"))),
        "the other ref is fetched"
    );
    let stderr = &out.stderr;
    assert!(stderr.contains("notBefore"), "{stderr}");
}

#[test]
fn max_retry_after_bounds_the_wait_and_give_up_after_does_not() {
    let server = server(2).start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |path: &str, in_ms: i64, args: &[&str]| {
        let at = chrono::Utc::now() + chrono::Duration::milliseconds(in_ms);
        let input = scheduled(&server.url(path), at);
        fetch_within(args, dir.path(), &input, Duration::from_secs(20))
            .records()
            .to_vec()
    };
    let recs = run("/p0", 30_000, &["--max-retry-after", "2s"]);
    let Some(Record::Failure(f)) = recs.first() else {
        panic!("{recs:?}")
    };
    let e = f.errors.last().unwrap();
    assert!(e.message.contains("--max-retry-after 2s"), "{}", e.message);

    // --give-up-after hands long Retry-After waits to rip-route, whose notBefore then
    // brings them back: it is waited for.
    let recs = run("/p1", 1500, &["--give-up-after", "500ms"]);
    assert!(matches!(recs.first(), Some(Record::Page(_))), "{recs:?}");
}

#[test]
fn a_wait_is_said_on_stderr_with_how_long_and_for_how_many_refs() {
    let server = server(2).start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let at = chrono::Utc::now() + chrono::Duration::milliseconds(1500);
    let input = scheduled(&server.url("/p0"), at) + &scheduled(&server.url("/p1"), at);
    let t0 = Instant::now();
    let out = fetch_within(&[], dir.path(), &input, Duration::from_secs(20));
    assert!(
        t0.elapsed() >= Duration::from_millis(1400),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!(out.code, 0);
    let stderr = &out.stderr;
    let line = stderr
        .lines()
        .find(|l| l.contains("waiting"))
        .unwrap_or_else(|| panic!("no waiting line: {stderr}"));
    // The line counts the refs known to wait when it is said: both, or (the second still
    // being read, under load) the first.
    let counted = line.contains("2 refs") || line.contains("1 ref:");
    assert!(
        counted && line.contains("notBefore") && line.contains("1s"),
        "{line}"
    );
}
