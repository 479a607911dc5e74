//! `--warc DIR`: every request the crawl sends (pages, robots.txt, sitemaps) archived as
//! WARC records, checked by warcio and read back by `rip-warc read`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use rip_core::Record;
use rip_testkit::{Stage, files_ending};

use crate::*;

fn warcio(args: &[&str], file: &Path) -> String {
    let out = Command::new(rip_testkit::test_tool("warcio"))
        .args(args)
        .arg(file)
        .output()
        .expect("warcio runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "warcio {args:?} {}: {text}{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `(WARC-Type, WARC-Target-URI)` → how many records, over `files`.
fn records_by_target(files: &[std::path::PathBuf]) -> BTreeMap<(String, String), usize> {
    let mut m = BTreeMap::new();
    for f in files {
        for l in warcio(&["index", "-f", "warc-type,warc-target-uri"], f).lines() {
            let v: serde_json::Value = serde_json::from_str(l).expect("json");
            let kind = v["warc-type"].as_str().unwrap_or_default().to_owned();
            let uri = v["warc-target-uri"].as_str().unwrap_or_default().to_owned();
            *m.entry((kind, uri)).or_insert(0) += 1;
        }
    }
    m
}

#[test]
fn every_request_of_the_crawl_is_archived_once_and_reads_back_as_pages() {
    let server = demo_server();
    let cache = tempfile::tempdir().unwrap();
    let warc = tempfile::tempdir().unwrap();
    let dir = warc.path().join("crawl");
    let args = [
        &server.url("/"),
        "--sitemaps",
        "--warc",
        dir.to_str().unwrap(),
    ];
    let first = run_with(&args, cache.path(), None);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(first.refs().len() >= 47, "{}", first.stdout);
    // The same crawl again, on the same cache: its pages are cache hits, not archived.
    let second = run_with(&args, cache.path(), None);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(files_ending(&dir, ".open").is_empty(), "every file closed");
    let files = files_ending(&dir, ".warc.gz");
    assert_eq!(files.len(), 2, "a file per run: {files:?}");
    for f in &files {
        let report = warcio(&["check", "-v"], f);
        assert!(!report.contains("fail"), "{report}");
    }

    // Across both runs, each request the server saw has one request and one response
    // record, and nothing else was archived.
    let archived = records_by_target(&files);
    let sent = requests(&server);
    assert!(sent.contains_key("/robots.txt") && sent.contains_key("/sitemap.xml"));
    for (target, n) in &sent {
        let url = server.url(target);
        for kind in ["request", "response", "metadata"] {
            let got = archived.get(&(kind.to_owned(), url.clone()));
            assert_eq!(got, Some(n), "{kind} records of {url}: {archived:?}");
        }
    }
    let responses: usize = (archived.iter())
        .filter(|((k, _), _)| k == "response")
        .map(|(_, n)| n)
        .sum();
    assert_eq!(responses, server.total(), "{archived:?}");

    // `rip-warc read` gives a page for every target the server had (the two broken links
    // are failures: 404s).
    let mut read = Stage::new("rip-warc").arg("read");
    for f in &files {
        read = read.arg(f);
    }
    let read = read.run();
    let pages: BTreeSet<String> = (read.records().iter())
        .filter_map(|r| match r {
            Record::Page(p) => Some(path_of(&p.url)),
            _ => None,
        })
        .collect();
    for r in first.refs() {
        let path = path_of(&r.url);
        if path == "/classes/77.html" || path == "/items/item-99.html" {
            continue;
        }
        assert!(pages.contains(&path), "{path} read back: {pages:?}");
    }
}
