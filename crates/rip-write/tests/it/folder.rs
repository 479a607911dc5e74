//! Write errors: a read-only folder, a full disk. The run goes on, every record is passed
//! on, and each record that could not be written is followed by a `failure` annotation.

use crate::support::*;
use rip_core::{ErrorCategory, Phase, Record, Status};
use std::process::Command;

#[test]
fn a_read_only_folder_turns_each_write_into_a_failure_annotation() {
    let prefix = unprivileged_prefix();
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    make_read_only(&site);
    let input = all_kinds();
    let r = write_with(
        &prefix,
        &["--out", dir.path().to_str().unwrap(), "--name", "site"],
        &input,
    );
    assert_eq!(r.code, 2, "partial: {}", r.stderr);
    assert!(r.stderr.contains("Permission denied"), "{}", r.stderr);
    // Every input line still comes out, in order; an annotation follows each unwritten one.
    let passed: Vec<&str> = r
        .lines()
        .iter()
        .map(String::as_str)
        .filter(|l| !l.contains("\"phase\":\"write\""))
        .collect();
    assert_eq!(passed, input.lines().collect::<Vec<_>>());
    let mut annotated = Vec::new();
    for (i, rec) in r.records().iter().enumerate() {
        if let Record::Failure(f) = rec
            && f.phase == Phase::Write
        {
            assert_eq!(f.category, ErrorCategory::Resource);
            assert!(!f.retryable);
            let last = f.errors.last().unwrap();
            assert_eq!(last.code, "write.io");
            assert!(
                last.message.contains("Permission denied"),
                "{}",
                last.message
            );
            assert_eq!(
                r.records()[i - 1].url(),
                Some(f.url.as_str()),
                "right after its record"
            );
            annotated.push((f.url.clone(), f.context.resolves.clone()));
        }
    }
    assert_eq!(
        annotated,
        [
            ("http://h/items/item-7.html".to_owned(), None),
            (
                "http://h/ancestries/77.html".to_owned(),
                Some("http://h/classes/77.html".to_owned())
            ),
            ("http://h/items/item-99.html".to_owned(), None),
            ("http://h/private/secret.html".to_owned(), None),
        ]
    );
    assert_eq!(r.summary().counters.get("notPersisted"), Some(&4));
    assert!(
        r.summary()
            .notes
            .iter()
            .any(|n| n.contains("failures.json")),
        "{:?}",
        r.summary().notes
    );
    assert_eq!(r.summary().status, Status::Partial);
    assert!(files_below(&site).is_empty());
}

#[test]
fn a_full_disk_is_a_resource_failure_too() {
    // A 64 KiB tmpfs in a private mount namespace (no root needed where user namespaces
    // are allowed). Skipped with a message where they are not.
    let probe = Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "true"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no user+mount namespaces on this machine");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    let big = "x".repeat(20_000);
    let mut input = String::new();
    for i in 0..8 {
        input.push_str(&serde_json::json!({"_type":"doc","url":format!("http://h/{i}"),"concept":"x","text":big}).to_string());
        input.push('\n');
    }
    let script = format!(
        "mount -t tmpfs -o size=64k tmpfs {mnt} && {bin} --out {mnt} --no-failures-file",
        mnt = mnt.display(),
        bin = rip_testkit::bin("rip-write").display()
    );
    let out = {
        use std::io::Write;
        use std::process::Stdio;
        let mut c = Command::new("unshare")
            .args(["--user", "--map-root-user", "--mount", "sh", "-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        c.wait_with_output().unwrap()
    };
    let stdout = String::from_utf8(out.stdout).unwrap();
    let records: Vec<Record> = stdout.lines().map(record).collect();
    let docs = records
        .iter()
        .filter(|r| matches!(r, Record::Doc(_)))
        .count();
    let full: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::Failure(f) if f.phase == Phase::Write => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(docs, 8, "every doc passed on");
    assert!(
        !full.is_empty() && full.len() < 8,
        "some fit, the rest did not: {}",
        full.len()
    );
    assert!(
        full.iter()
            .all(|f| f.errors.last().unwrap().message.contains("No space left")),
        "{stdout}"
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn jsonl_mode_into_a_read_only_folder_annotates_every_record() {
    let prefix = unprivileged_prefix();
    let dir = tempfile::tempdir().unwrap();
    make_read_only(dir.path());
    let input = format!("{DOC}\n{ERROR}\n{DOC}\n");
    let r = write_with(
        &prefix,
        &["--out", dir.path().to_str().unwrap(), "--jsonl"],
        &input,
    );
    assert_eq!(r.code, 2);
    let kinds: Vec<String> = r
        .records()
        .iter()
        .map(|r| r.kind().as_str().to_owned())
        .collect();
    assert_eq!(
        kinds,
        ["doc", "failure", "error", "failure", "doc", "failure"]
    );
    assert!(files_below(dir.path()).is_empty());
}
