//! Round trips of every record kind, through the documented examples and built values.

use chrono::{TimeZone, Utc};
use rip_core::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The one-line JSON examples of docs/records.md (the crate's own rustdoc).
fn doc_examples() -> Vec<String> {
    let text = include_str!("../../../../docs/records.md");
    let mut out = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        match (in_block, line.trim()) {
            (false, "```json") => in_block = true,
            (true, "```") => in_block = false,
            (true, l) if !l.is_empty() => out.push(l.to_owned()),
            _ => {}
        }
    }
    out
}

#[test]
fn every_documented_example_decodes_and_round_trips() {
    let examples = doc_examples();
    let mut kinds = BTreeSet::new();
    for ex in &examples {
        let line = Line::from_text(ex.clone()).unwrap_or_else(|e| panic!("{e}: {ex}"));
        let record = line.decode().unwrap_or_else(|e| panic!("{e}: {ex}"));
        assert_eq!(line.kind(), &record.kind());
        kinds.insert(record.kind().as_str().to_owned());
        let again = serde_json::to_string(&record).unwrap();
        let a: Value = serde_json::from_str(ex).unwrap();
        let b: Value = serde_json::from_str(&again).unwrap();
        assert_eq!(a, b, "example does not round-trip:\n{ex}\n{again}");
        assert!(!again.contains('\n'), "records are one line");
    }
    let all: BTreeSet<String> = [
        "ref", "page", "failure", "doc", "error", "expected", "ledger", "summary",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(kinds, all, "docs/records.md has an example of every kind");
}

fn full_context() -> Context {
    let mut raw = serde_json::Map::new();
    raw.insert("row".into(), json!(["Item 7", "3 gp"]));
    Context {
        depth: 3,
        parent: Some("http://h/list".into()),
        link_text: Some("Item 7".into()),
        raw,
        title: Some("Item_7".into()),
        wiki_api: Some("http://h/api.php".into()),
        resolves: Some("http://h/wrong/7".into()),
        needs_browser: true,
        rendered_because: Some(rip_core::RenderedBecause {
            signal: Some("emptyAppRoot".into()),
            figures: rip_core::PageFigures {
                text_chars: 12,
                scripts: 2,
                app_root_chars: Some(0),
                ..Default::default()
            },
            ..Default::default()
        }),
    }
}

fn entry() -> ErrorEntry {
    ErrorEntry {
        code: "httpError.transient".into(),
        message: "HTTP 503".into(),
        operation: "rip-fetch".into(),
        attempt: Some(1),
    }
}

fn site_fetch() -> SiteFetch {
    SiteFetch {
        fetched_by: "rip-discover".into(),
        http_attempts: 3,
        statuses: vec![Some(503), None, Some(200)],
        faults: vec!["httpError.transient".into(), "network.reset".into()],
        waited_ms: 1004,
        latency_ms: 302,
        elapsed_ms: 1320,
    }
}

fn extra() -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("futureField".into(), json!({"nested": [1, 2, {"x": null}]}));
    m
}

#[expect(
    clippy::too_many_lines,
    reason = "one record of every kind, one after another"
)]
fn built_records() -> Vec<Record> {
    let at = Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap();
    let mut fields = serde_json::Map::new();
    fields.insert("price".into(), json!(3.5));
    fields.insert("traits".into(), json!(["a", "b"]));
    vec![
        Record::Ref(Ref {
            url: "http://h/item-7".into(),
            context: full_context(),
            attempt: 2,
            not_before: Some(at),
            errors: vec![entry()],
            extra: extra(),
        }),
        Record::Page(Page {
            url: "http://h/item-7".into(),
            final_url: "http://h/items/7".into(),
            status: 200,
            content_type: Some("image/png".into()),
            charset: None,
            charset_source: Some(CharsetSource::Meta),
            fetched_at: at,
            from_cache: true,
            revalidated: true,
            http_attempts: 0,
            elapsed_ms: 4,
            site_fetch: Some(site_fetch()),
            redirects: vec!["http://h/items/7".into()],
            headers: [("etag".to_owned(), "\"x\"".to_owned())].into(),
            body: "iVBORw0KGgo=".into(),
            body_encoding: BodyEncoding::Base64,
            truncated: true,
            pageid: Some(147),
            revid: Some(159),
            wiki_title: Some("Item 7".into()),
            wiki_expansions: [("{{Coin|gp=7}}".to_owned(), "7 gp".to_owned())].into(),
            wiki_expansion_error: None,
            render: None,
            context: full_context(),
            attempt: 1,
            errors: vec![entry()],
            extra: extra(),
        }),
        Record::Failure(Failure {
            status: Some(429),
            retry_after_ms: Some(2000),
            final_url: Some("http://h/x".into()),
            content_type: Some("text/html".into()),
            body: Some("<p>slow down</p>".into()),
            elapsed_ms: Some(10),
            failed_at: Some(at),
            resolving: vec!["http://h/y".into(), "http://h/z".into()],
            http_attempts: 3,
            attempt: 2,
            context: full_context(),
            extra: extra(),
            ..Failure::new(
                "http://h/x",
                ErrorCategory::Throttled,
                Phase::Fetch,
                entry(),
            )
        }),
        Record::Doc(Doc {
            url: "http://h/item-7".into(),
            concept: "item".into(),
            id: Some("7".into()),
            name: Some("Rope".into()),
            context: full_context(),
            attempt: 1,
            http_attempts: Some(2),
            elapsed_ms: Some(31),
            site_fetch: Some(site_fetch()),
            errors: vec![entry()],
            fields,
        }),
        Record::Error(ErrorDoc {
            url: "http://h/classes/77".into(),
            errors: vec![entry(), entry()],
            status: Some(404),
            category: Some(ErrorCategory::Permanent),
            phase: Some(Phase::Fetch),
            attempt: 3,
            context: full_context(),
            resolution: Some(Resolution::Missing {
                candidates: vec!["http://h/a/77".into()],
            }),
            captured_at: Some(at),
            extra: extra(),
        }),
        Record::Error(ErrorDoc {
            url: "http://h/classes/77".into(),
            errors: vec![entry()],
            status: None,
            category: None,
            phase: None,
            attempt: 0,
            context: Context::default(),
            resolution: Some(Resolution::Dead {
                reason: "removed upstream".into(),
            }),
            captured_at: None,
            extra: Default::default(),
        }),
        Record::Expected(Expected {
            url: "http://h/private/x".into(),
            reason: "disallowed by robots.txt".into(),
            source: Some(ExpectedSource::Robots),
            rule: Some("Disallow: /private/".into()),
            phase: Some(Phase::Discover),
            status: Some(410),
            attempt: 1,
            context: full_context(),
            extra: extra(),
        }),
        Record::Ledger(Ledger {
            stage: "rip-fetch".into(),
            entered: vec!["http://h/a".into(), "http://h/b".into()],
            extra: extra(),
        }),
        Record::Summary(Summary {
            stage: "rip-fetch".into(),
            pid: 7,
            started_at: at,
            ended_at: at,
            input: [("ref".to_owned(), 2)].into(),
            output: [("page".to_owned(), 1), ("failure".to_owned(), 1)].into(),
            passed_through: Default::default(),
            bad_lines: 1,
            status: Status::Partial,
            counters: [("retries".to_owned(), 4)].into(),
            notes: vec!["budget exhausted: maxPages".into()],
            peak_rss_bytes: Some(48 << 20),
            extra: extra(),
        }),
    ]
}

#[test]
fn every_kind_round_trips_with_every_field_set() {
    for record in built_records() {
        let text = serde_json::to_string(&record).unwrap();
        let line = Line::from_text(text.clone()).unwrap();
        assert_eq!(line.kind(), &record.kind());
        let back = line.decode().unwrap();
        assert_eq!(back, record, "{text}");
        // Byte-stable: encoding the decoded record gives the same line.
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
    }
}

#[test]
fn unknown_fields_survive_decoding_and_encoding() {
    let text = r#"{"_type":"failure","url":"u","category":"NETWORK","retryable":true,"attempt":1,"phase":"fetch","errors":[],"zNew":{"a":[1,"b"]},"aNew":7}"#;
    let record = Line::from_text(text).unwrap().decode().unwrap();
    let again: Value = serde_json::to_value(&record).unwrap();
    assert_eq!(again["zNew"], json!({"a": [1, "b"]}));
    assert_eq!(again["aNew"], json!(7));
}

#[test]
fn a_known_kind_with_a_bad_field_names_the_field() {
    let line = Line::from_text(
        r#"{"_type":"page","url":"u","finalUrl":"u","fetchedAt":"2026-01-01T00:00:00Z","body":""}"#,
    )
    .unwrap();
    let err = line.decode().unwrap_err();
    assert_eq!(err.to_string(), "bad `page` record: missing field `status`");
    assert!(
        matches!(&err, DecodeError::Record { kind: Kind::Page, reason } if reason.contains("status")),
        "{err:?}"
    );
    let line = Line::from_text(r#"{"_type":"failure","url":"u","category":"BROKEN","retryable":true,"attempt":1,"phase":"fetch","errors":[]}"#).unwrap();
    let err = line.decode().unwrap_err();
    assert!(err.to_string().contains("BROKEN"), "{err}");
    assert!(
        matches!(&err, DecodeError::Field { kind: Kind::Failure, field, value, .. }
            if field == "category" && value == "\"BROKEN\""),
        "{err:?}"
    );
}

#[test]
fn category_names_parse_case_insensitively() {
    for c in ErrorCategory::ALL {
        assert_eq!(
            c.as_str().to_lowercase().parse::<ErrorCategory>().unwrap(),
            c
        );
        assert_eq!(
            c.retryable_by_default(),
            matches!(
                c,
                ErrorCategory::Network
                    | ErrorCategory::Timeout
                    | ErrorCategory::Throttled
                    | ErrorCategory::Transient
            )
        );
    }
    assert!(
        "nope"
            .parse::<ErrorCategory>()
            .unwrap_err()
            .contains("nope")
    );
}

#[test]
fn retry_refs_carry_context_round_and_history() {
    let mut f = Failure::new(
        "http://h/x",
        ErrorCategory::Transient,
        Phase::Fetch,
        entry(),
    );
    f.context = full_context();
    f.attempt = 1;
    let r = f.to_retry_ref();
    assert_eq!((r.url.as_str(), r.attempt), ("http://h/x", 1));
    assert_eq!(r.context, full_context());
    assert_eq!(r.errors, vec![entry()]);
    assert!(!r.is_entry());
    assert!(Ref::new("http://h/y").is_entry());
}
