//! `--output-schema FILE` and `--on-schema-error`: a JSON Schema every doc must
//! satisfy, whatever its concept.

use serde_json::Value;
use std::path::PathBuf;

use crate::support::*;

/// A schema that wants every doc in English (a doc's fields are top-level keys), written to a temporary file.
fn english_only(dir: &tempfile::TempDir) -> PathBuf {
    let path = dir.path().join("docs.schema.json");
    std::fs::write(
        &path,
        r#"{
  "type": "object",
  "required": ["url", "concept", "lang"],
  "properties": { "lang": { "const": "en" } }
}"#,
    )
    .unwrap();
    path
}

/// Three pages, the second in French.
fn pages() -> Vec<u8> {
    let p = |i: usize, lang: &str| {
        page(
            &format!("http://h/p/{i}"),
            "text/html",
            format!("<html lang={lang}><title>P{i}</title><p>x</p>").as_bytes(),
            false,
        )
    };
    ndjson(&[p(1, "en"), p(2, "fr"), p(3, "en")])
}

fn types(out: &[Value]) -> Vec<&str> {
    out.iter().map(|v| v["_type"].as_str().unwrap()).collect()
}

#[test]
fn a_bad_output_schema_file_is_refused_before_input_is_read_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "broken.json",
            "{\n  \"type\": \"object\",\n}",
            "broken.json:3:1: not JSON",
        ),
        (
            "not-a-schema.json",
            r#"{"type": 5}"#,
            "is not a valid JSON Schema",
        ),
        ("array.json", "[1, 2]", "a schema is an object or a boolean"),
    ];
    for (name, text, expect) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let r = run(
            &[
                "--output-schema",
                path.to_str().unwrap(),
                "--input",
                "/nonexistent/input.ndjson",
            ],
            b"",
        );
        assert_eq!(r.code, 1, "{name}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{name}: nothing written, not even a summary");
        let first = r.stderr.lines().next().unwrap_or("");
        assert!(
            first.contains(&format!("output schema file {}", path.display())),
            "{name}: the error names the file: {first}"
        );
        assert!(first.contains(expect), "{name}: {expect}\n{}", r.stderr);
        assert!(
            !r.stderr.contains("nonexistent"),
            "input not opened: {}",
            r.stderr
        );
    }
    let r = run(&["--output-schema", "/nonexistent/s.json"], b"");
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("cannot read output schema file /nonexistent/s.json"),
        "{}",
        r.stderr
    );
}

#[test]
fn on_schema_error_needs_an_output_schema() {
    let r = run(&["--on-schema-error", "warn"], b"");
    assert_eq!(r.code, 1, "a usage error is fatal: {}", r.stderr);
    assert!(r.stderr.contains("--output-schema"), "{}", r.stderr);
}

#[test]
fn skip_is_the_default_a_validation_failure_naming_the_field_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let schema = english_only(&dir);
    let r = run(&["--output-schema", schema.to_str().unwrap()], &pages());
    assert_eq!(r.code, 2, "partial: {}", r.stderr);
    let out = r.values();
    assert_eq!(types(&out), ["doc", "failure", "doc"]);
    let f = &out[1];
    assert_eq!(
        (
            f["url"].as_str(),
            f["category"].as_str(),
            f["phase"].as_str()
        ),
        (Some("http://h/p/2"), Some("VALIDATION"), Some("parse"))
    );
    assert_eq!(f["retryable"], false);
    assert_eq!(f["errors"][0]["code"], "parse.schema");
    let message = f["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("/lang"), "names the field: {message}");
    assert!(
        message.contains(&schema.display().to_string()),
        "names the file: {message}"
    );
    assert_eq!(f["finalUrl"], "http://h/p/2", "keeps the page's context");
}

#[test]
fn warn_keeps_the_doc_and_says_so_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let schema = english_only(&dir);
    let r = run(
        &[
            "--output-schema",
            schema.to_str().unwrap(),
            "--on-schema-error",
            "warn",
        ],
        &pages(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (records, summary) = (r.records(), r.summary());
    let out: Vec<Value> = records
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(types(&out), ["doc", "doc", "doc"]);
    assert_eq!(out[1]["errors"][0]["code"], "parse.schema");
    assert!(
        out[0]
            .get("errors")
            .is_none_or(|e| e == &Value::Array(vec![]))
    );
    assert!(
        r.stderr
            .lines()
            .any(|l| l.contains("http://h/p/2") && l.contains("/lang")),
        "{}",
        r.stderr
    );
    assert_eq!(summary.counters.get("schemaWarnings"), Some(&1));
}

#[test]
fn halt_writes_what_was_done_then_stops_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let schema = english_only(&dir);
    let r = run(
        &[
            "--output-schema",
            schema.to_str().unwrap(),
            "--on-schema-error",
            "halt",
            "--threads",
            "1",
            "--window",
            "1",
        ],
        &pages(),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("halted at http://h/p/2"), "{}", r.stderr);
    let (records, summary) = (r.records(), r.summary());
    let urls: Vec<&str> = records.iter().filter_map(|r| r.url()).collect();
    assert_eq!(
        urls,
        ["http://h/p/1", "http://h/p/2"],
        "nothing after the halt"
    );
    assert_eq!(summary.status, rip_core::Status::Failed);
}

#[test]
fn the_output_schema_applies_to_every_concept_after_the_concept_schema() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("named.schema.json");
    std::fs::write(&schema, r#"{"required": ["name"]}"#).unwrap();
    let rules = dir.path().join("r.toml");
    std::fs::write(
        &rules,
        "[[concept]]\nname = \"thing\"\nmatch.url = '/t/'\nfields.n = { selector = \"p.n\" }\n",
    )
    .unwrap();
    let input = ndjson(&[
        page(
            "http://h/t/1",
            "text/html",
            b"<title>T</title><p class=n>1</p>",
            false,
        ),
        page("http://h/other", "text/html", b"<p>no title</p>", false),
    ]);
    let r = run(
        &[
            "--rules",
            rules.to_str().unwrap(),
            "--output-schema",
            schema.to_str().unwrap(),
        ],
        &input,
    );
    let out = r.values();
    assert_eq!(types(&out), ["failure", "failure"], "{}", r.stdout);
    for (f, concept) in out.iter().zip(["thing", "unknown"]) {
        let m = f["errors"][0]["message"].as_str().unwrap();
        assert!(
            m.contains(&format!("concept `{concept}`")) && m.contains("\"name\""),
            "{m}"
        );
    }
}

#[test]
fn check_rules_checks_the_output_schema_alone_and_reads_no_input() {
    let dir = tempfile::tempdir().unwrap();
    let schema = english_only(&dir);
    let r = run(
        &["--output-schema", schema.to_str().unwrap(), "--check-rules"],
        &pages(),
    );
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
    assert!(r.stderr.contains("a valid JSON Schema"), "{}", r.stderr);
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"type": 5}"#).unwrap();
    let r = run(
        &["--output-schema", bad.to_str().unwrap(), "--check-rules"],
        b"",
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("bad.json"), "{}", r.stderr);
    let r = run(&["--check-rules"], b"");
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("needs --rules or --output-schema"),
        "{}",
        r.stderr
    );
}
