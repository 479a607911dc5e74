//! A stage's summary counts what it did; what only passed through is counted apart, on its
//! stderr line and in its `summary` record (`passedThrough`), while `input` and `output`
//! keep counting every record read and written (rip-health compares them between stages).

use crate::{Ran, run};
use serde_json::{Value, json};

fn page(n: usize) -> String {
    json!({
        "_type": "page", "url": format!("http://127.0.0.1:9/p{n}.html"),
        "finalUrl": format!("http://127.0.0.1:9/p{n}.html"), "status": 200,
        "contentType": "text/html", "fetchedAt": "2026-12-01T09:00:00Z", "body": "<p>x</p>",
        "depth": 1, "attempt": 0,
    })
    .to_string()
}

fn failure(n: usize) -> String {
    json!({
        "_type": "failure", "url": format!("http://127.0.0.1:9/f{n}.html"), "category": "PERMANENT",
        "retryable": false, "attempt": 1, "phase": "fetch", "depth": 1,
        "errors": [{"code": "httpError.permanent", "message": "HTTP 404", "operation": "rip-fetch"}],
    })
    .to_string()
}

const UPSTREAM_SUMMARY: &str = r#"{"_type":"summary","stage":"rip-fetch","pid":1,"startedAt":"2026-12-01T09:00:00Z","endedAt":"2026-12-01T09:00:01Z","input":{"ref":3},"output":{"page":3},"badLines":0,"status":"complete"}"#;

/// The stage's own summary record (the last line) and its stderr summary line.
fn summary(r: &Ran, stage: &str) -> (Value, String) {
    let last = r.stdout.lines().last().unwrap_or_default();
    let record: Value = serde_json::from_str(last).unwrap();
    assert_eq!(record["stage"], stage, "{}", r.stdout);
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with(&format!("{stage}: ")) && !l.contains("warning"))
        .unwrap_or_else(|| panic!("{stage}: no summary line in {}", r.stderr))
        .to_owned();
    (record, line)
}

#[test]
fn a_second_fetch_round_says_it_fetched_nothing_and_what_passed_through() {
    let mut input: Vec<String> = (0..3).map(page).collect();
    input.push(failure(0));
    input.push(UPSTREAM_SUMMARY.to_owned());
    let input = input.join("\n") + "\n";
    let r = run("rip-fetch", &["--cache", "off"], input.as_bytes());
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (record, line) = summary(&r, "rip-fetch");
    assert!(line.starts_with("rip-fetch: 0 refs: 0 pages"), "{line}");
    assert!(line.contains(", 0 failed"), "{line}");
    assert!(
        line.contains("passed through: failure 1, page 3, summary 1"),
        "{line}"
    );
    // input and output keep their meaning: every record read and written.
    assert_eq!(
        record["input"],
        json!({"page": 3, "failure": 1, "summary": 1})
    );
    assert_eq!(
        record["output"],
        json!({"page": 3, "failure": 1, "summary": 1})
    );
    assert_eq!(
        record["passedThrough"],
        json!({"page": 3, "failure": 1, "summary": 1})
    );
}

#[test]
fn rip_fetch_counts_its_own_failures_apart_from_those_passing_through() {
    let input = [
        failure(0),
        failure(1),
        json!({"_type": "ref", "url": "http://127.0.0.1:1/gone.html", "depth": 0, "attempt": 0})
            .to_string(),
    ]
    .join("\n")
        + "\n";
    let args = [
        "--cache",
        "off",
        "--attempts",
        "1",
        "--ignore-robots",
        "--delay",
        "0",
    ];
    let r = run("rip-fetch", &args, input.as_bytes());
    let (record, line) = summary(&r, "rip-fetch");
    assert!(line.starts_with("rip-fetch: 1 refs: 0 pages"), "{line}");
    assert!(line.contains(", 1 failed"), "{line}");
    assert!(line.contains("passed through: failure 2"), "{line}");
    assert_eq!(record["output"]["failure"], 3);
    assert_eq!(record["passedThrough"], json!({"failure": 2}));
}

#[test]
fn rip_discover_counts_the_failure_records_it_wrote() {
    // Three refs rip-discover cannot start from (each a failure record), two failures of
    // upstream passing through, no page fetched.
    let mut input: Vec<String> = (0..3)
        .map(|n| json!({"_type": "ref", "url": format!("not a url {n}"), "depth": 0}).to_string())
        .collect();
    input.push(failure(0));
    input.push(failure(1));
    let input = input.join("\n") + "\n";
    let r = run(
        "rip-discover",
        &["-i", "-", "--cache", "off", "--delay", "0"],
        input.as_bytes(),
    );
    let (record, line) = summary(&r, "rip-discover");
    assert_eq!(record["output"]["failure"], 5, "{}", r.stdout);
    assert!(line.contains("3 failure records"), "{line}");
    assert!(line.contains("passed through: failure 2"), "{line}");
    assert_eq!(record["passedThrough"], json!({"failure": 2}));
}

#[test]
fn rip_parse_says_what_passed_through() {
    let input = [page(0), failure(0)].join("\n") + "\n";
    let r = run("rip-parse", &[], input.as_bytes());
    let (record, line) = summary(&r, "rip-parse");
    assert!(line.starts_with("rip-parse: 1 pages"), "{line}");
    assert!(line.contains("passed through: failure 1"), "{line}");
    assert_eq!(record["passedThrough"], json!({"failure": 1}));
}
