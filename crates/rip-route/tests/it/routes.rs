//! The four routes and pass-through, on hand-written streams.

use crate::support::*;
use rip_core::{ErrorCategory, ExpectedSource, Phase, Record, Status};

#[test]
fn other_records_pass_through_byte_for_byte() {
    let input = concat!(
        r#"{"_type":"ref","url":"http://h/a","depth":0,"attempt":0}"#,
        "\n",
        r#"{"_type":"page","url":"http://h/a","finalUrl":"http://h/a","status":200,"fetchedAt":"2026-12-01T09:00:00Z","body":"<p>é</p>","truncated":false,"attempt":1,"future":{"x":[1, 2.50]}}"#,
        "\n",
        r#"{"_type":"telemetry","n":1}"#,
        "\n",
        r#"{"_type":"doc","url":"http://h/a","concept":"item","price":3}"#,
        "\n",
    );
    let r = route(&[], input);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.lines(), input.lines().collect::<Vec<_>>());
    assert_eq!(r.summary().stage, "rip-route");
}

#[test]
fn a_transient_failure_is_retried_with_its_history_context_and_retry_after() {
    let mut f: serde_json::Value =
        serde_json::from_str(&failure("http://h/items/7.html", 429, 1)).unwrap();
    f["retryAfterMs"] = 2000.into();
    f["raw"] = serde_json::json!({"price": "3 gp"});
    let r = route(&[], &format!("{f}\n"));
    assert_eq!(
        r.code, 0,
        "a retry is not a failure of this stage: {}",
        r.stderr
    );
    let [Record::Ref(retry)] = r.records() else {
        panic!("{:?}", r.lines())
    };
    assert_eq!(retry.url, "http://h/items/7.html");
    assert_eq!(retry.attempt, 1, "the next round's ref");
    assert!(!retry.is_entry(), "a retry is not a new entry");
    assert_eq!(
        retry.not_before.unwrap().to_rfc3339(),
        "2026-12-01T09:00:02+00:00"
    );
    assert_eq!(retry.errors.len(), 1);
    assert_eq!(retry.errors[0].code, "httpError.throttled");
    assert_eq!(retry.context.link_text.as_deref(), Some("Catfolk"));
    assert_eq!(retry.context.raw["price"], "3 gp");
    assert_eq!(r.summary().counters.get("retried"), Some(&1));
}

#[test]
fn past_max_retries_the_failure_is_captured_with_every_error() {
    // Round 3 of a URL that failed twice before: its history has three errors.
    let mut f: serde_json::Value = serde_json::from_str(&failure("http://h/x", 503, 3)).unwrap();
    let e = f["errors"][0].clone();
    f["errors"] = serde_json::json!([
        {"code":"network.reset","message":"connection reset","operation":"rip-fetch","attempt":1},
        {"code":"httpError.transient","message":"HTTP 502","operation":"rip-fetch","attempt":2},
        e
    ]);
    let r = route(&[], &format!("{f}\n"));
    assert_eq!(r.code, 2, "a capture makes the run partial");
    let [Record::Error(doc)] = r.records() else {
        panic!("{:?}", r.lines())
    };
    assert_eq!(doc.url, "http://h/x");
    let codes: Vec<_> = doc.errors.iter().map(|e| e.code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "network.reset",
            "httpError.transient",
            "httpError.transient"
        ]
    );
    assert_eq!(
        (doc.status, doc.category, doc.phase, doc.attempt),
        (
            Some(503),
            Some(ErrorCategory::Transient),
            Some(Phase::Fetch),
            3
        )
    );
    assert_eq!(doc.context.parent.as_deref(), Some("http://h/classes/"));
    assert!(doc.captured_at.is_some());
}

#[test]
fn a_permanent_404_is_captured_on_the_first_round() {
    let r = route(
        &[],
        &format!("{}\n", failure("http://h/items/item-99.html", 404, 1)),
    );
    let [Record::Error(doc)] = r.records() else {
        panic!("{:?}", r.lines())
    };
    assert_eq!((doc.attempt, doc.status), (1, Some(404)));
    assert_eq!(r.summary().counters.get("captured"), Some(&1));
    assert_eq!(r.summary().status, Status::Partial);
}

#[test]
fn max_retries_decides_which_rip_route_is_the_last() {
    let input = format!(
        "{}\n{}\n",
        failure("http://h/a", 503, 1),
        failure("http://h/b", 503, 2)
    );
    let r = route(&["--max-retries", "1"], &input);
    assert!(matches!(&r.records()[0], Record::Ref(x) if x.url == "http://h/a" && x.attempt == 1));
    assert!(matches!(&r.records()[1], Record::Error(x) if x.url == "http://h/b"));
    let r = route(&[], &input);
    assert_eq!(r.of("ref").len(), 2, "the default budget is 2 retries");
}

#[test]
fn a_policy_rule_turns_a_410_into_an_expected_record() {
    let policy = testdata("policy/emberfall.toml");
    let r = route(
        &["--policy", &policy],
        &format!("{}\n", failure("http://h/old.html", 410, 1)),
    );
    assert_eq!(r.code, 0, "an expected gap is not a failure: {}", r.stderr);
    let [Record::Expected(e)] = r.records() else {
        panic!("{:?}", r.lines())
    };
    assert_eq!(e.reason, "removed upstream");
    assert_eq!(e.source, Some(ExpectedSource::Policy));
    assert_eq!(e.rule.as_deref(), Some("removed upstream"));
    assert_eq!((e.status, e.attempt), (Some(410), 1));
    assert_eq!(e.context.link_text.as_deref(), Some("Catfolk"));
}

#[test]
fn write_failures_are_annotations_and_pass_through() {
    let line = r#"{"_type":"failure","url":"http://h/a","category":"RESOURCE","retryable":false,"attempt":1,"phase":"write","errors":[{"code":"write.io","message":"cannot write out/a.json: Permission denied","operation":"rip-write"}],"record":"doc"}"#;
    let r = route(&[], &format!("{line}\n"));
    assert_eq!(r.lines(), [line]);
    assert_eq!(r.code, 0);
}

#[test]
fn a_bad_failure_record_is_reported_and_kept() {
    let bad = r#"{"_type":"failure","url":"http://h/a","category":"EXPLODED"}"#;
    let input = format!("{bad}\n{}\n", failure("http://h/b", 404, 1));
    let r = route(&[], &input);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.starts_with("-:1: bad `failure` record"),
        "{}",
        r.stderr
    );
    assert_eq!(r.lines().len(), 2, "{:?}", r.lines());
    assert_eq!(r.lines()[0], bad, "passed on, not lost");
    assert!(matches!(record(&r.lines()[1]), Record::Error(e) if e.url == "http://h/b"));
}

#[test]
fn a_bad_policy_file_is_fatal_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.toml");
    std::fs::write(
        &p,
        "[[rules]]\nstatus = 404\nroute = \"resolve\"\nurl = \"([\"\n",
    )
    .unwrap();
    let r = rip_testkit::Stage::new("rip-route")
        .args(["--policy", p.to_str().unwrap()])
        .run();
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("bad.toml: rules[0].url: not a valid regex"),
        "{}",
        r.stderr
    );
}
