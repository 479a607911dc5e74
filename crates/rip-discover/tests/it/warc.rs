//! `--warc DIR`: every request the crawl sends (pages, robots.txt, sitemaps) archived as
//! WARC records, checked by warcio and read back by `rip-warc read`.

use std::collections::BTreeSet;

use rip_core::Record;
use rip_testkit::{Stage, checked_records, files_ending};

use crate::*;

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
    // warcio checks both files; across both runs, each request the server saw has one
    // request and one response record, and nothing else was archived.
    let archived = checked_records(&files);
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

#[test]
fn an_archived_crawls_one_gap_is_the_page_robots_kept_it_from() {
    let server = demo_server();
    let cache = tempfile::tempdir().unwrap();
    let warc = tempfile::tempdir().unwrap();
    let dir = warc.path().to_str().unwrap();
    let crawl = run_with(&[&server.url("/"), "--warc", dir], cache.path(), None);
    assert_eq!(crawl.code, 0, "{}", crawl.stderr);
    let files = files_ending(warc.path(), ".warc.gz");
    let read = Stage::new("rip-warc").arg("read").args(&files).run();
    assert_eq!(read.code, 2, "the two 404s are failures: {}", read.stderr);

    // `rip-warc read crawl.warc.gz | rip-discover --from-pages`: every record passes
    // through; the links of the archived pages are the crawl's targets and the page
    // robots.txt disallows, and only that one is not in the archive (nothing is fetched).
    let gaps = run_with(&["--from-pages"], cache.path(), Some(&read.stdout));
    assert_eq!(gaps.code, 0, "{}", gaps.stderr);
    let robots: BTreeSet<String> = crawl.expected().iter().map(|e| path_of(&e.url)).collect();
    assert_eq!(robots.len(), 1, "{robots:?}");
    assert_eq!(gaps.paths(), robots);
    assert_eq!(gaps.refs().len(), 1, "each URL once");
    let r = gaps.refs()[0];
    assert_eq!(r.context.depth, 1);
    assert!(
        r.context
            .parent
            .as_deref()
            .is_some_and(|p| p.starts_with(&server.url("/")))
    );
    assert_eq!(
        gaps.counter("carried"),
        crawl.refs().len() as u64,
        "the 50 targets"
    );
    let mut passed = gaps.summary().passed_through.clone();
    assert_eq!(
        passed.remove("summary"),
        Some(1),
        "rip-warc's summary passed through"
    );
    assert_eq!(passed, read.summary().output.clone(), "{}", gaps.stdout);
    assert_eq!(gaps.counter("htmlPages"), 47);
    assert_eq!(
        server.total(),
        crawl.counter("requests") as usize,
        "no request since"
    );

    // The whole pipeline after it fetches the gap only, and every URL ends once.
    let folder = tempfile::tempdir().unwrap();
    let script = format!(
        "rip-warc read -q {files} | rip-discover -q --from-pages \\
           | rip-fetch -q --delay 0 --cache-dir {cache} | rip-parse -q \\
           | rip-route -q -p {policy} --final | rip-write -q --out out > stream.ndjson
         rip-health -q < stream.ndjson > health.json",
        files = (files.iter())
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(" "),
        cache = cache.path().display(),
        policy = rip_testkit::testdata("demo/emberfall.policy.toml").display(),
    );
    let before = server.total();
    let sh = rip_testkit::run_shell(&script, Some(folder.path()));
    let stderr = String::from_utf8_lossy(&sh.stderr);
    let health = rip_testkit::read_json(folder.path().join("health.json"));
    let ledger = &health["ledger"];
    assert_eq!(ledger["complete"], true, "{ledger:#}\n{stderr}");
    let archived = read.summary().output["page"] + read.summary().output["failure"];
    assert_eq!(archived, 51, "robots.txt, 48 pages, the two 404s");
    assert_eq!(ledger["entered"], archived + 1, "and the gap: {ledger:#}");
    assert_eq!(ledger["duplicated"], serde_json::json!([]), "{ledger:#}");
    assert_eq!(
        server.total() - before,
        0,
        "the gap is robots-disallowed: not fetched"
    );
}

#[test]
fn from_pages_reads_html_text_only_and_keeps_going_past_a_bad_record() {
    let page = |url: &str, ct: &str, body: &str, extra: &str| {
        serde_json::json!({"_type": "page", "url": url, "finalUrl": url, "status": 200,
            "contentType": ct, "fetchedAt": "2026-12-01T00:00:00Z", "body": body})
        .to_string()
            + extra
    };
    let html = r#"<base href="/docs/"><a href="a.html">A</a> <a href="/x#top">X</a>
        <a href="/x">again</a> <a rel="nofollow" href="/n">N</a>
        <a href="https://elsewhere.example/">out</a> <a href="/gone">gone</a>"#;
    let input = [
        page("http://site.test/docs/index.html", "text/html", html, ""),
        r#"{"_type":"page","url":"http://site.test/broken"}"#.to_owned(),
        page("http://site.test/img.png", "image/png", "<a href=/png>", ""),
        r#"{"_type":"failure","url":"http://site.test/gone","category":"PERMANENT","retryable":false,"attempt":0,"phase":"fetch","errors":[],"failedAt":"2026-12-01T00:00:00Z"}"#.to_owned(),
    ]
    .join("\n");
    let cache = tempfile::tempdir().unwrap();
    let r = run_with(&["--from-pages"], cache.path(), Some(&input));
    assert_eq!(r.code, 2, "a bad line makes the run partial: {}", r.stderr);
    assert!(
        r.stderr.contains("-:2:"),
        "the bad record named: {}",
        r.stderr
    );
    let urls: Vec<&str> = r.refs().iter().map(|r| r.url.as_str()).collect();
    assert_eq!(urls, ["http://site.test/docs/a.html", "http://site.test/x"]);
    assert_eq!(r.refs()[0].context.link_text.as_deref(), Some("A"));
    assert_eq!(r.failures().len(), 1, "the failure passed through");
    assert_eq!(r.of("page").len(), 2, "the pages passed through");
    for (counter, n) in [
        ("htmlPages", 1),
        ("duplicates", 1),
        ("nofollowSkipped", 1),
        ("outOfDomain", 1),
        ("carried", 1),
        ("targets", 2),
    ] {
        assert_eq!(r.counter(counter), n, "{counter}");
    }
}

#[test]
fn warc_with_a_mode_that_cannot_archive_is_refused_naming_it() {
    let warc = tempfile::tempdir().unwrap();
    let dir = warc.path().join("never");
    let wiki = Stage::new("rip-discover")
        .args(["--mediawiki", "http://127.0.0.1:9/api.php", "--warc"])
        .arg(&dir)
        .run();
    assert_eq!(wiki.code, 1, "{}", wiki.stderr);
    assert!(
        wiki.stderr
            .contains("--warc is not written in MediaWiki mode"),
        "{}",
        wiki.stderr
    );
    let pages = Stage::new("rip-discover")
        .args(["--from-pages", "--warc", dir.to_str().unwrap()])
        .stdin("")
        .run();
    assert_eq!(pages.code, 1, "a usage error: {}", pages.stderr);
    assert!(
        pages.stderr.contains("cannot be used with '--warc"),
        "{}",
        pages.stderr
    );
    let explain = Stage::new("rip-discover")
        .args(["http://127.0.0.1:9/", "--warc", dir.to_str().unwrap()])
        .args(["--explain", "http://127.0.0.1:9/a"])
        .run();
    assert_eq!(explain.code, 1, "a usage error: {}", explain.stderr);
    assert!(!dir.exists(), "nothing written");
}
