//! Targets are written as they are found, not at the end: the first ref reaches a reader
//! of stdout while most of the site is still to be crawled (so `rip-discover | rip-fetch`
//! overlaps crawling and fetching).

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rip_core::{Line, Record};
use rip_testserver::{Fault, LinkGraph, Rule, TestServer};

#[test]
fn the_first_target_arrives_while_the_crawl_goes_on() {
    const N: u32 = 200;
    let server = TestServer::builder()
        .graph(LinkGraph::new(N).seed(8))
        .rule(Rule::prefix("/item-").always(Fault::serve().delay(Duration::from_millis(40))))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut child = rip_testkit::Stage::new("rip-discover")
        .args([
            &server.url("/"),
            "--delay",
            "0",
            "--jitter",
            "0",
            "-q",
            "-c",
            "2",
        ])
        .arg("--per-host")
        .arg("2")
        .arg("--cache-dir")
        .arg(dir.path())
        .command()
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let at_first = (server.total(), started.elapsed());
    assert!(
        matches!(
            Line::from_text(&first).unwrap().decode(),
            Ok(Record::Ref(_))
        ),
        "{first}"
    );
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(child.wait().unwrap().success());
    let total = started.elapsed();
    // 200 pages, 40 ms each, 2 at a time: about 4 s of crawl; the first ref came out
    // within its first quarter, before a quarter of the pages were even requested.
    assert!(
        at_first.0 < N as usize / 4,
        "{} of {N} pages requested before the first ref was read",
        at_first.0
    );
    assert!(
        at_first.1 * 4 < total,
        "first ref at {:?} of {total:?}",
        at_first.1
    );
    assert_eq!(rest.len(), N as usize, "the other refs and the summary");
}
