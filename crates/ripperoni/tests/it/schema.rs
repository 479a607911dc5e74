//! `outputSchema` / `onSchemaError`: the wrapper passes them to `rip-parse`
//! (`--output-schema`, `--on-schema-error`), the path relative to the state file, and
//! checks the schema before anything starts.

use crate::support::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

fn plain_server() -> rip_testserver::TestServer {
    rip_testserver::TestServer::builder()
        .dir(repo().join("testdata/site"))
        .start_background()
        .unwrap()
}

/// Three demo items (levels 0, 1, 0) and a schema, next to the state file, that wants
/// level 0: item 2 breaks it.
fn state(dir: &Path, origin: &str, on: Option<&str>) -> PathBuf {
    std::fs::write(
        dir.join("level0.schema.json"),
        r#"{"properties": {"level": {"maximum": 0}}}"#,
    )
    .unwrap();
    demo_state(dir, origin, |v| {
        v.as_object_mut().unwrap().remove("crawler");
        v["urls"] = json!([
            "items/item-1.html",
            "items/item-2.html",
            "items/item-3.html"
        ]);
        v["outputSchema"] = "level0.schema.json".into();
        if let Some(on) = on {
            v["onSchemaError"] = on.into();
        }
    })
}

#[test]
fn pipeline_passes_output_schema_to_rip_parse_relative_to_the_state_file() {
    let dir = tempfile::tempdir().unwrap();
    let st = state(dir.path(), "http://127.0.0.1:9", Some("warn"));
    let o = run(&["pipeline", st.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let schema = dir.path().join("level0.schema.json");
    let want = format!(
        "--output-schema {} --on-schema-error warn",
        schema.display()
    );
    let parse = text
        .lines()
        .find(|l| l.contains("rip-parse"))
        .expect("a rip-parse stage");
    assert!(parse.contains(&want), "{parse}");
}

#[test]
fn a_doc_that_breaks_the_output_schema_is_a_validation_error_by_default() {
    let server = plain_server();
    let dir = tempfile::tempdir().unwrap();
    let st = state(dir.path(), &server.origin(), None);
    let o = run(&["run", "-q", st.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "partial: {}", stderr(&o));
    let out = dir.path().join("out/emberfall");
    let h = read_json(out.join("crawl-health.json"));
    assert_eq!(h["ledger"]["entered"], 3, "{:#}", h["ledger"]);
    assert_eq!(h["ledger"]["complete"], true, "{:#}", h["ledger"]);
    assert_eq!(h["totals"]["concepts"], 2, "{:#}", h["totals"]);
    let failures = read_json(out.join("failures.json"));
    let captured = failures["captured"].as_array().unwrap();
    assert_eq!(captured.len(), 1, "{failures:#}");
    let c = &captured[0];
    assert_eq!(c["url"], format!("{}/items/item-2.html", server.origin()));
    assert_eq!(c["category"], "VALIDATION", "{c:#}");
    assert_eq!(c["errors"][0]["code"], "parse.schema", "{c:#}");
    let message = c["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("/level") && message.contains("level0.schema.json"),
        "{message}"
    );
}

#[test]
fn warn_keeps_every_doc_and_halt_fails_the_run() {
    let server = plain_server();
    let dir = tempfile::tempdir().unwrap();
    let st = state(dir.path(), &server.origin(), Some("warn"));
    let o = run(&["run", "-q", st.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = dir.path().join("out/emberfall");
    let doc: Value = read_json(out.join("items-item-2.html.json"));
    assert_eq!(doc["_type"], "doc", "{doc:#}");
    assert_eq!(doc["errors"][0]["code"], "parse.schema", "{doc:#}");

    let dir = tempfile::tempdir().unwrap();
    let st = state(dir.path(), &server.origin(), Some("halt"));
    let o = run(&["run", "-q", st.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let r = &runs(dir.path())[0];
    assert_eq!(r["status"], "failed", "{r:#}");
    assert!(
        r["errors"].to_string().contains("halted at"),
        "the run record says why: {r:#}"
    );
}

#[test]
fn a_bad_output_schema_is_refused_before_anything_starts() {
    let server = plain_server();
    let dir = tempfile::tempdir().unwrap();
    let st = state(dir.path(), &server.origin(), None);
    std::fs::write(dir.path().join("level0.schema.json"), r#"{"type": 5}"#).unwrap();
    let o = run(&["run", "-q", st.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("level0.schema.json") && err.contains("is not a valid JSON Schema"),
        "{err}"
    );
    assert!(server.requests().is_empty(), "nothing fetched");

    std::fs::remove_file(dir.path().join("level0.schema.json")).unwrap();
    let o = run(&["pipeline", st.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`outputSchema`: expected a readable file"),
        "{err}"
    );
}
