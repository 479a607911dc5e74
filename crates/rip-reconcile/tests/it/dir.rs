//! `--dir`: a folder as rip-write leaves it, one record per `*.json` file.

use rip_core::{Record, Resolution};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::{run, testdata};

/// Writes each doc and error document of a golden stream to its own file: errors
/// pretty-printed, docs compact, the first doc without `_type` (as in the reference).
fn folder_from_stream(stream: &str, dir: &Path) {
    let text = std::fs::read_to_string(testdata(stream)).unwrap();
    let mut n = 0;
    for line in text.lines() {
        let record = rip_testkit::record(line);
        n += 1;
        let name = format!("{n:02}.json");
        match &record {
            Record::Error(_) => {
                let pretty = serde_json::to_string_pretty(&record).unwrap() + "\n";
                std::fs::write(dir.join(name), pretty).unwrap();
            }
            Record::Doc(_) if n == 1 => {
                let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
                v.as_object_mut().unwrap().remove("_type");
                std::fs::write(dir.join(name), v.to_string()).unwrap();
            }
            Record::Doc(_) => std::fs::write(dir.join(name), line).unwrap(),
            _ => {}
        }
    }
}

fn resolution_in(path: &Path) -> Option<Resolution> {
    match serde_json::from_str::<Record>(&std::fs::read_to_string(path).unwrap()).unwrap() {
        Record::Error(e) => e.resolution,
        _ => None,
    }
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn verdicts_are_written_into_each_error_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    folder_from_stream("health/site.ndjson", dir);
    std::fs::write(dir.join("crawl-health.json"), "{\"totals\":{}}").unwrap();
    std::fs::write(dir.join("failures.json"), "[]").unwrap();
    std::fs::create_dir(dir.join("raw")).unwrap();
    std::fs::write(dir.join("raw/zz.json"), "not even json").unwrap();
    let errors: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains("\"_type\": \"error\"")))
        .collect();
    assert_eq!(errors.len(), 2);
    std::fs::set_permissions(&errors[0], std::fs::Permissions::from_mode(0o640)).unwrap();
    let docs_before: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| !errors.contains(&e.path()) && e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();

    let config = testdata("reconcile/site.json");
    let r = run(
        &[
            "--config",
            config.to_str().unwrap(),
            "--dir",
            dir.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("2 failures: 1 captured elsewhere, 1 missing"),
        "{}",
        r.stderr
    );
    let summary = match rip_testkit::record(r.stdout.trim()) {
        Record::Summary(s) => s,
        other => panic!("{other:?}"),
    };
    assert_eq!(summary.input.get("error"), Some(&2));
    assert_eq!(
        summary.input.get("doc"),
        Some(&9),
        "the doc without `_type` counts"
    );
    assert_eq!(summary.counters.get("filesWritten"), Some(&2));

    let mut seen = Vec::new();
    for path in &errors {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("\n  \"url\""), "still pretty-printed: {text}");
        assert!(text.ends_with("}\n"));
        seen.push(resolution_in(path).unwrap());
    }
    assert!(seen.contains(&Resolution::CapturedElsewhere {
        at: "http://127.0.0.1:8080/ancestries/77.html".into()
    }));
    assert!(seen.contains(&Resolution::Missing { candidates: vec![] }));
    let mode = std::fs::metadata(&errors[0]).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640, "permissions kept across the atomic rename");
    for (name, bytes) in docs_before {
        assert_eq!(
            std::fs::read(dir.join(&name)).unwrap(),
            bytes,
            "{name} untouched"
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files left");

    // A second run changes nothing.
    let r = run(
        &[
            "--config",
            config.to_str().unwrap(),
            "--dir",
            dir.to_str().unwrap(),
        ],
        None,
    );
    assert!(r.stdout.contains("\"filesWritten\":0"), "{}", r.stdout);
}

#[test]
fn a_bad_file_is_reported_and_the_rest_reconciled() {
    let tmp = tempfile::tempdir().unwrap();
    folder_from_stream("health/aon.ndjson", tmp.path());
    std::fs::write(tmp.path().join("broken.json"), "{\"_type\":\"error\",").unwrap();
    let r = run(&["--dir", tmp.path().to_str().unwrap()], None);
    assert_eq!(r.code, 2, "partial");
    assert!(r.stderr.contains("broken.json: not JSON"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("4 failures: 0 captured elsewhere, 4 missing"),
        "{}",
        r.stderr
    );
}

#[test]
fn pointing_at_the_parent_folder_gives_a_hint() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("site");
    std::fs::create_dir(&target).unwrap();
    folder_from_stream("health/site.ndjson", &target);
    let r = run(&["--dir", tmp.path().to_str().unwrap()], None);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("point --dir at the target folder"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_jsonl_folder_gets_its_errors_file_rewritten() {
    // rip-write --jsonl: docs.jsonl, errors.jsonl, expected.jsonl.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let text = std::fs::read_to_string(testdata("health/site.ndjson")).unwrap();
    rip_testkit::jsonl_folder(&text, dir);
    let docs = std::fs::read_to_string(dir.join("docs.jsonl")).unwrap();
    let config = testdata("reconcile/site.json");
    let r = run(
        &[
            "--config",
            config.to_str().unwrap(),
            "--dir",
            dir.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("2 failures: 1 captured elsewhere, 1 missing"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("docs.jsonl")).unwrap(),
        docs,
        "docs.jsonl is left as it was"
    );
    let errors = std::fs::read_to_string(dir.join("errors.jsonl")).unwrap();
    let verdicts: Vec<Resolution> = errors
        .lines()
        .map(|l| match rip_testkit::record(l) {
            Record::Error(e) => e.resolution.unwrap(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            Resolution::CapturedElsewhere {
                at: "http://127.0.0.1:8080/ancestries/77.html".into()
            },
            Resolution::Missing { candidates: vec![] }
        ]
    );
}
