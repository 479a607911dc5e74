//! `--warc DIR`: each request sent (retries too) archived as request, response and metadata
//! records, checked by warcio.

use std::io::Read as _;
use std::path::Path;

use rip_testkit::{files_ending, warcio};
use rip_testserver::{Fault, Rule};

use super::{fetch_stage, refs, server};

/// `(type, target)` of each record warcio indexes, for targets ending in `path`.
fn index_for(file: &Path, path: &str) -> Vec<String> {
    warcio(&["index", "-f", "warc-type,warc-target-uri"], file)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .filter(|v| {
            v["warc-target-uri"]
                .as_str()
                .is_some_and(|u| u.ends_with(path))
        })
        .map(|v| v["warc-type"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn every_attempt_is_archived_and_warcio_accepts_the_file() {
    let server = server(1)
        .rule(Rule::path("/flaky").once(Fault::status(500)))
        .file("/flaky", "<p>flaky</p>")
        .rule(Rule::path("/reset").once(Fault::reset()))
        .file("/reset", "<p>reset</p>")
        .start_background()
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let warc = tempfile::tempdir().unwrap();
    let input = refs(&[
        server.url("/p0"),
        server.url("/flaky"),
        server.url("/reset"),
    ]);
    let dir = warc.path().join("archive");
    let out = fetch_stage(&["--warc", dir.to_str().unwrap()], cache.path(), &input).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(files_ending(&dir, ".open").is_empty(), "every file closed");
    let closed = files_ending(&dir, ".warc.gz");
    assert_eq!(closed.len(), 1, "{closed:?}");
    let file = &closed[0];
    let report = warcio(&["check", "-v"], file);
    assert!(!report.contains("fail"), "{report}");
    let trio = ["request", "response", "metadata"];
    assert_eq!(index_for(file, "/p0"), trio);
    assert_eq!(index_for(file, "/flaky"), [trio, trio].concat());
    assert_eq!(
        index_for(file, "/reset"),
        [&["request", "metadata"][..], &trio].concat()
    );
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(file).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    assert!(
        text.contains("HTTP/1.1 500 Internal Server Error\r\n"),
        "the 500 stored"
    );
    assert!(text.contains("failure-category: TRANSIENT\r\n"), "{text}");
    assert!(text.contains("failure-code: network.reset\r\n"), "{text}");
    assert!(text.contains("request: 2\r\n"), "the retry numbered");
    assert!(text.contains("WARC-IP-Address: 127.0.0.1\r\n"));
}

#[test]
fn a_payload_stored_once_then_revisits_identical_and_not_modified() {
    let server = server(2).start_background().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let warc = tempfile::tempdir().unwrap();
    let dir = warc.path().to_str().unwrap();
    let input = refs(&[server.url("/p0"), server.url("/p1")]);
    let args = [
        "--warc",
        dir,
        "--concurrency",
        "1",
        "--ordered",
        "--ttl",
        "1ms",
    ];
    let first = fetch_stage(&args, cache.path(), &input).run();
    assert_eq!(first.code, 0, "{}", first.stderr);
    std::thread::sleep(std::time::Duration::from_millis(50));
    // The cache entries are stale now: the second run revalidates them (a 304 each).
    let second = fetch_stage(&args, cache.path(), &input).run();
    assert_eq!(second.code, 0, "{}", second.stderr);
    let closed = files_ending(warc.path(), ".warc.gz");
    assert_eq!(closed.len(), 2, "a file per process: {closed:?}");
    for f in &closed {
        let report = warcio(&["check", "-v"], f);
        assert!(!report.contains("fail"), "{report}");
    }
    // /p0 and /p1 serve the same page: stored once, then a revisit (whichever of the two
    // was archived first: on a loaded machine /p1's exchange was once written before /p0's).
    let mut first_run = [index_for(&closed[0], "/p0"), index_for(&closed[0], "/p1")];
    first_run.sort();
    assert_eq!(
        first_run,
        [
            ["request", "response", "metadata"],
            ["request", "revisit", "metadata"]
        ]
    );
    assert_eq!(
        index_for(&closed[1], "/p0"),
        ["request", "revisit", "metadata"]
    );
    let mut text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&closed[1]).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    assert!(text.contains("revisit/server-not-modified\r\n"), "{text}");
    assert!(text.contains("HTTP/1.1 304 Not Modified\r\n"), "{text}");
    let mut first_text = String::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&closed[0]).unwrap())
        .read_to_string(&mut first_text)
        .unwrap();
    assert!(first_text.contains("revisit/identical-payload-digest\r\n"));
    assert_eq!(
        first_text.matches("<p>hello</p>").count(),
        1,
        "the body stored once"
    );
}
