//! Write errors. A folder that cannot be created or written stops the run before it reads
//! a record. Later errors (a subfolder that cannot be written, a full disk) do not: every
//! record is passed on, and each one that could not be written is followed by a `failure`
//! annotation.

use crate::support::*;
use rip_core::{ErrorCategory, Phase, Record, Status};
use std::process::Command;

/// Says that `r` stopped at once on `folder`: exit 1, nothing passed on, the folder and
/// the cause named.
fn stopped_at_once(r: &Ran, folder: &std::path::Path, cause: &str) {
    assert_eq!(r.code, 1, "fatal: {}", r.stderr);
    assert!(r.stdout.is_empty(), "nothing read: {}", r.stdout);
    let said = format!(
        "rip-write: error: cannot write to the output folder {}: {cause}",
        folder.display()
    );
    assert!(r.stderr.contains(&said), "{}", r.stderr);
}

#[test]
fn an_output_folder_that_cannot_be_written_stops_the_run_at_once() {
    let prefix = unprivileged_prefix();
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    make_read_only(&site);
    let out = dir.path().to_str().unwrap();
    for mode in [&[][..], &["--jsonl"]] {
        let args = [&["--out", out, "--name", "site"][..], mode].concat();
        let r = write_with(&prefix, &args, &all_kinds());
        stopped_at_once(&r, &site, "Permission denied");
        assert!(files_below(&site).is_empty());
    }
}

#[test]
fn an_output_folder_that_cannot_be_created_stops_the_run_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let out = file.join("out");
    let r = write(&["--out", out.to_str().unwrap()], &all_kinds());
    stopped_at_once(&r, &out, "Not a directory");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a folder");
}

#[test]
fn a_record_that_cannot_be_written_is_followed_by_a_failure_annotation() {
    // The folder is writable, its raw/ subfolder is not: the docs are written, each page's
    // body is not, and the run goes on.
    let prefix = unprivileged_prefix();
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    make_read_only(&site.join("raw"));
    let input = all_kinds();
    let r = write_with(
        &prefix,
        &[
            "--out",
            dir.path().to_str().unwrap(),
            "--name",
            "site",
            "--raw",
        ],
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
            annotated.push(f.url.clone());
        }
    }
    assert_eq!(
        annotated,
        ["http://h/items/item-7.html", "http://h/images/logo.png"],
        "{}",
        r.stdout
    );
    assert_eq!(r.summary().counters.get("notPersisted"), Some(&2));
    assert_eq!(r.summary().counters.get("written"), Some(&4));
    assert_eq!(r.summary().status, Status::Partial);
    let report = read_json(site.join("failures.json"));
    assert_eq!(report["notPersisted"].as_array().map(Vec::len), Some(2));
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
