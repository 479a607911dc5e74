//! Files, JSONL, Markdown and raw modes.

use crate::support::*;
use rip_core::Status;

#[test]
fn files_mode_writes_one_json_per_terminal_record_and_passes_everything_through() {
    let dir = tempfile::tempdir().unwrap();
    let input = all_kinds();
    let r = write(
        &["--out", dir.path().to_str().unwrap(), "--name", "site"],
        &input,
    );
    assert_eq!(
        r.code, 2,
        "the unrouted failure makes it partial: {}",
        r.stderr
    );
    assert_eq!(
        r.lines(),
        input.lines().collect::<Vec<_>>(),
        "byte for byte"
    );
    let site = dir.path().join("site");
    assert_eq!(
        files_below(&site),
        [
            "classes-77.html.json",
            "failures.json",
            "items-item-7.html.json",
            "items-item-99.html.json",
            "private-secret.html.json",
        ]
    );
    let doc = read_json(site.join("items-item-7.html.json"));
    assert_eq!(doc, serde_json::from_str::<serde_json::Value>(DOC).unwrap());
    let text = std::fs::read_to_string(site.join("items-item-7.html.json")).unwrap();
    assert!(
        text.starts_with("{\n  \"_type\": \"doc\",\n  \"url\""),
        "pretty, in record order: {text}"
    );
    let resolved = read_json(site.join("classes-77.html.json"));
    assert_eq!(
        resolved["url"], "http://h/ancestries/77.html",
        "filed under the URL it resolves"
    );

    let failures = read_json(site.join("failures.json"));
    assert_eq!(failures["captured"].as_array().unwrap().len(), 1);
    assert_eq!(
        failures["captured"][0]["url"],
        "http://h/items/item-99.html"
    );
    assert_eq!(failures["captured"][0]["file"], "items-item-99.html.json");
    assert_eq!(
        failures["captured"][0]["errors"][0]["code"],
        "httpError.permanent"
    );
    assert_eq!(failures["unrouted"][0]["url"], "http://h/slow.html");
    assert_eq!(failures["notPersisted"].as_array().unwrap().len(), 0);
    assert_eq!(r.summary().counters.get("written"), Some(&4));
    assert_eq!(r.summary().status, Status::Partial);
}

#[test]
fn a_second_run_overwrites_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    write(&["--out", out], &format!("{DOC}\n"));
    let changed = DOC.replace("3 gp", "4 gp");
    write(&["--out", out], &format!("{changed}\n"));
    assert_eq!(
        files_below(dir.path()),
        ["failures.json", "items-item-7.html.json"]
    );
    assert_eq!(
        read_json(dir.path().join("items-item-7.html.json"))["price"],
        "4 gp"
    );
}

#[test]
fn urls_sharing_a_readable_name_get_distinct_files_stable_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let a = r#"{"_type":"doc","url":"http://h/a?b","concept":"x"}"#;
    let b = r#"{"_type":"doc","url":"http://h/a-b","concept":"x"}"#;
    let c = r#"{"_type":"doc","url":"http://other/a-b","concept":"x"}"#;
    write(&["--out", out], &format!("{a}\n{b}\n{c}\n"));
    let first = files_below(dir.path());
    assert_eq!(first.len(), 4, "{first:?}");
    assert!(
        !first.contains(&"a-b.json".to_owned()),
        "a shared name is nobody's: {first:?}"
    );
    let owner = |f: &String| read_json(dir.path().join(f))["url"].clone();
    let owners: Vec<_> = first
        .iter()
        .filter(|f| *f != "failures.json")
        .map(owner)
        .collect();
    // The other order next time: every URL keeps its file.
    write(&["--out", out], &format!("{c}\n{b}\n{a}\n"));
    assert_eq!(files_below(dir.path()), first);
    let again: Vec<_> = first
        .iter()
        .filter(|f| *f != "failures.json")
        .map(owner)
        .collect();
    assert_eq!(again, owners);
}

#[test]
fn hostile_urls_never_leave_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let urls = [
        "http://h/../../escape",
        "../../escape2",
        "/etc/passwd",
        "http://h/..%2f..%2fescape3",
        "http://h/a\u{0}b",
        "http://h/ünï/名前",
        "http://h/.",
        "",
    ];
    let long = format!("http://h/{}", "x/".repeat(3000));
    let mut input = String::new();
    for u in urls.iter().copied().chain([long.as_str()]) {
        input.push_str(&serde_json::json!({"_type":"doc","url":u,"concept":"x"}).to_string());
        input.push('\n');
    }
    let r = write(&["--out", out.to_str().unwrap()], &input);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let files = files_below(&out);
    assert_eq!(
        files.len(),
        urls.len() + 2,
        "one file per URL, plus failures.json: {files:?}"
    );
    for f in &files {
        assert!(!f.contains('/') && f.len() < 160, "{f}");
    }
    let outside: Vec<_> = files_below(dir.path())
        .into_iter()
        .filter(|f| !f.starts_with("out/"))
        .collect();
    assert!(outside.is_empty(), "{outside:?}");
}

#[test]
fn jsonl_mode_writes_one_line_per_record_per_kind() {
    let dir = tempfile::tempdir().unwrap();
    let r = write(
        &["--out", dir.path().to_str().unwrap(), "--jsonl"],
        &all_kinds(),
    );
    assert_eq!(r.code, 2, "the unrouted failure: {}", r.stderr);
    assert_eq!(
        files_below(dir.path()),
        [
            "docs.jsonl",
            "errors.jsonl",
            "expected.jsonl",
            "failures.json"
        ]
    );
    let docs = std::fs::read_to_string(dir.path().join("docs.jsonl")).unwrap();
    assert_eq!(docs, format!("{DOC}\n{RESOLVED_DOC}\n"));
    let errors = std::fs::read_to_string(dir.path().join("errors.jsonl")).unwrap();
    assert_eq!(errors, format!("{ERROR}\n"));
}

#[test]
fn markdown_and_raw_modes() {
    let dir = tempfile::tempdir().unwrap();
    let r = write(
        &["--out", dir.path().to_str().unwrap(), "--markdown", "--raw"],
        &all_kinds(),
    );
    assert_eq!(r.code, 2, "the unrouted failure: {}", r.stderr);
    let files = files_below(dir.path());
    for f in [
        "items-item-7.html.md",
        "items-item-99.html.md",
        "raw/items-item-7.html.html",
        "raw/images-logo.png.png",
    ] {
        assert!(files.contains(&f.to_owned()), "{f} in {files:?}");
    }
    let md = std::fs::read_to_string(dir.path().join("items-item-7.html.md")).unwrap();
    assert!(
        md.starts_with("# Rope\n") && md.contains("- **price:** 3 gp\n"),
        "{md}"
    );
    let html = std::fs::read_to_string(dir.path().join("raw/items-item-7.html.html")).unwrap();
    assert_eq!(html, "<h1>Rope é</h1>");
    let png = std::fs::read(dir.path().join("raw/images-logo.png.png")).unwrap();
    assert_eq!(
        png, b"\x89PNG\r\n\x1a\n",
        "base64 bodies are written as bytes"
    );
    assert_eq!(r.summary().counters.get("rawWritten"), Some(&2));
}

#[test]
fn a_target_that_is_not_a_plain_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for bad in ["..", "a/b", ""] {
        let r = rip_testkit::Stage::new("rip-write")
            .args(["--out", dir.path().to_str().unwrap(), "--name", bad])
            .run();
        assert_eq!(r.code, 1, "{bad}");
        assert!(r.stderr.contains("is not a plain folder name"));
    }
}
