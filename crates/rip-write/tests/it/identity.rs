//! One URL, one outcome, one file: a second terminal record for a URL is a conflict, file
//! names do not depend on the order records arrive in, and records that reach `rip-write`
//! without an outcome (unrouted failures, unfetched refs) are reported, not just listed.

use crate::support::*;
use rip_core::{ErrorCategory, Phase, Record, Status};
use std::collections::BTreeMap;
use std::path::Path;

/// Asserts that `stderr` says every one of `parts`.
fn says(stderr: &str, parts: &[&str]) {
    for part in parts {
        assert!(stderr.contains(part), "{part}: {stderr}");
    }
}

#[test]
fn a_second_terminal_record_for_a_url_is_a_conflict_the_first_stays() {
    let dir = tempfile::tempdir().unwrap();
    let later = DOC.replace("3 gp", "4 gp");
    let error = ERROR.replace("item-99", "item-7");
    let input = format!("{DOC}\n{later}\n{error}\n");
    let r = write(&["--out", dir.path().to_str().unwrap()], &input);
    assert_eq!(r.code, 2, "a conflict makes the run partial: {}", r.stderr);
    assert_eq!(r.summary().status, Status::Partial);
    assert_eq!(
        read_json(dir.path().join("items-item-7.html.json"))["price"],
        "3 gp",
        "the first record stays"
    );
    // Every record still flows on; each later one is followed by its conflict annotation.
    let kinds: Vec<String> = r
        .records()
        .iter()
        .map(|rec| match rec {
            Record::Failure(f) => format!("failure:{}", f.errors.last().unwrap().code),
            other => other.kind().as_str().to_owned(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "doc",
            "doc",
            "failure:write.conflict",
            "error",
            "failure:write.conflict"
        ]
    );
    let Record::Failure(f) = &r.records()[2] else {
        unreachable!()
    };
    assert_eq!(
        (f.phase, f.category),
        (Phase::Write, ErrorCategory::Validation)
    );
    assert_eq!(f.url, "http://h/items/item-7.html");
    let message = &f.errors.last().unwrap().message;
    assert!(
        message.contains("second terminal record")
            && message.contains("line 1")
            && message.contains("items-item-7.html.json"),
        "{message}"
    );
    let failures = read_json(dir.path().join("failures.json"));
    let np = failures["notPersisted"].as_array().unwrap();
    assert_eq!(np.len(), 2, "{failures}");
    assert_eq!(np[1]["record"], "error");
    assert!(
        np[0]["error"].as_str().unwrap().contains("conflict"),
        "{failures}"
    );
    assert_eq!(
        failures["captured"].as_array().unwrap().len(),
        0,
        "the conflicting error document is not captured: the URL has its doc: {failures}"
    );
    says(&r.stderr, &["conflict", "line 2"]);
    assert_eq!(r.summary().counters.get("conflicts"), Some(&2));
}

#[test]
fn the_same_url_twice_in_jsonl_mode_is_a_conflict_too() {
    let dir = tempfile::tempdir().unwrap();
    let r = write(
        &["--out", dir.path().to_str().unwrap(), "--jsonl"],
        &format!("{DOC}\n{DOC}\n"),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let docs = std::fs::read_to_string(dir.path().join("docs.jsonl")).unwrap();
    assert_eq!(docs, format!("{DOC}\n"), "written once");
}

/// The files `rip-write` leaves in `dir`, each with the URL it accounts for (`raw/` and
/// Markdown files by name only).
fn owners(dir: &Path) -> BTreeMap<String, String> {
    files_below(dir)
        .into_iter()
        .map(|f| {
            let owner = if f.ends_with(".json") && f != "failures.json" {
                read_json(dir.join(&f))["url"].as_str().unwrap().to_owned()
            } else {
                String::new()
            };
            (f, owner)
        })
        .collect()
}

#[test]
fn file_names_do_not_depend_on_the_order_records_arrive_in() {
    let doc = |url: &str| format!(r#"{{"_type":"doc","url":"{url}","concept":"x","name":"N"}}"#);
    let page = |url: &str| {
        format!(
            r#"{{"_type":"page","url":"{url}","finalUrl":"{url}","status":200,"contentType":"text/html","fetchedAt":"2026-12-01T09:00:00Z","body":"<p>{url}</p>","truncated":false,"attempt":0}}"#
        )
    };
    // Three URLs share the readable name `a-b`; `/c` shares it with nobody.
    let urls = SHARING;
    let run = |order: &[usize]| {
        let dir = tempfile::tempdir().unwrap();
        let mut input = String::new();
        for &i in order {
            input.push_str(&format!("{}\n{}\n", page(urls[i]), doc(urls[i])));
        }
        let args = ["--out", dir.path().to_str().unwrap(), "--markdown", "--raw"];
        let r = write(&args, &input);
        assert_eq!(r.code, 0, "{}", r.stderr);
        (owners(dir.path()), dir)
    };
    let (forward, _a) = run(&[0, 1, 2, 3]);
    let (backward, _b) = run(&[3, 2, 1, 0]);
    let (mixed, _c) = run(&[1, 3, 0, 2]);
    assert_eq!(forward, backward);
    assert_eq!(forward, mixed);
    let json: Vec<&String> = forward.keys().filter(|f| f.ends_with(".json")).collect();
    assert_eq!(
        json.len(),
        5,
        "one file per URL and failures.json: {forward:?}"
    );
    assert_eq!(
        forward["c.json"], "http://h/c",
        "a name nobody shares stays plain"
    );
    assert!(
        !forward.contains_key("a-b.json"),
        "a shared name belongs to none of its URLs: {forward:?}"
    );
    assert_eq!(
        forward.len(),
        5 + 4 + 4,
        "json, md and raw per URL: {forward:?}"
    );
    // A URL alone keeps the plain name.
    let dir = tempfile::tempdir().unwrap();
    write(
        &["--out", dir.path().to_str().unwrap()],
        &(doc(urls[1]) + "\n"),
    );
    assert_eq!(files_below(dir.path()), ["a-b.json", "failures.json"]);
}

#[test]
fn a_url_that_comes_to_share_its_name_leaves_no_stale_file_behind() {
    // The last run wrote `a-b.json` for http://h/a-b; this one also sees http://h/a?b, so
    // both get hashed names, and http://h/a-b's old file goes (one file per URL).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let a = r#"{"_type":"doc","url":"http://h/a-b","concept":"x"}"#;
    let b = r#"{"_type":"doc","url":"http://h/a?b","concept":"x"}"#;
    write(&["--out", out], &format!("{a}\n"));
    assert_eq!(files_below(dir.path()), ["a-b.json", "failures.json"]);
    for input in [format!("{b}\n{a}\n"), format!("{a}\n{b}\n")] {
        let r = write(&["--out", out], &input);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let files = owners(dir.path());
        assert_eq!(files.len(), 3, "{files:?}");
        assert!(!files.contains_key("a-b.json"), "{files:?}");
        let mut urls: Vec<&String> = files.values().filter(|u| !u.is_empty()).collect();
        urls.sort();
        assert_eq!(urls, ["http://h/a-b", "http://h/a?b"]);
    }
}

#[test]
fn a_ref_that_reaches_rip_write_was_never_fetched_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let retry = r#"{"_type":"ref","url":"http://h/items/item-7.html","depth":2,"attempt":2,"errors":[{"code":"httpError.transient","message":"HTTP 503","operation":"rip-fetch","attempt":2}]}"#;
    let r = write(
        &["--out", dir.path().to_str().unwrap()],
        &format!("{retry}\n"),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.lines(), [retry], "passed on unchanged");
    says(
        &r.stderr,
        &["1 ref reached rip-write unfetched", "item-7.html", "hint"],
    );
    let failures = read_json(dir.path().join("failures.json"));
    assert_eq!(
        failures["unfetched"][0]["url"],
        "http://h/items/item-7.html"
    );
    assert_eq!(failures["unfetched"][0]["attempt"], 2);
    assert_eq!(r.summary().counters.get("unfetchedRefs"), Some(&1));
}

#[test]
fn an_unrouted_failure_is_reported_and_makes_the_run_partial() {
    let dir = tempfile::tempdir().unwrap();
    let r = write(
        &["--out", dir.path().to_str().unwrap()],
        &format!("{UNROUTED}\n"),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    says(
        &r.stderr,
        &[
            "1 failure reached rip-write unrouted",
            "slow.html",
            "rip-route",
        ],
    );
    assert_eq!(r.summary().counters.get("unrouted"), Some(&1));
}
