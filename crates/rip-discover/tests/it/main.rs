//! Integration tests: the `rip-discover` binary against rip-testserver (the demo site and
//! generated link graphs), its output read back with rip-core types.

mod demo;
mod explain;
mod failures;
mod graph;
mod hosts;
mod network;
mod progress;
mod render;
mod resume;
mod shared;
mod sitemaps;
mod streaming;
mod warc;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use rip_core::{Expected, Failure, Record, Ref, Status, Summary};
pub use rip_testkit::Ran;
use rip_testkit::Stage;
use rip_testserver::{LinkGraph, TestServer};

/// What a crawl wrote, by kind.
pub trait Crawled {
    /// The `ref` records.
    fn refs(&self) -> Vec<&Ref>;
    /// The `expected` records.
    fn expected(&self) -> Vec<&Expected>;
    /// The `failure` records.
    fn failures(&self) -> Vec<&Failure>;
    /// The paths of the refs, origin removed.
    fn paths(&self) -> BTreeSet<String>;
    /// The closing summary's status.
    fn status(&self) -> Status;
}

impl Crawled for Ran {
    fn refs(&self) -> Vec<&Ref> {
        self.records()
            .iter()
            .filter_map(|r| match r {
                Record::Ref(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    fn expected(&self) -> Vec<&Expected> {
        self.records()
            .iter()
            .filter_map(|r| match r {
                Record::Expected(e) => Some(e),
                _ => None,
            })
            .collect()
    }

    fn failures(&self) -> Vec<&Failure> {
        self.records()
            .iter()
            .filter_map(|r| match r {
                Record::Failure(f) => Some(f),
                _ => None,
            })
            .collect()
    }

    fn paths(&self) -> BTreeSet<String> {
        self.refs().iter().map(|r| path_of(&r.url)).collect()
    }

    fn status(&self) -> Status {
        self.summary().status
    }
}

/// `http://127.0.0.1:PORT/a?b` → `/a?b`.
pub fn path_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    match rest.find('/') {
        Some(i) => rest[i..].to_owned(),
        None => "/".into(),
    }
}

/// Decodes an output file: every line a record, the last one the summary.
pub fn record(stdout: &str) -> (Vec<Record>, Summary) {
    rip_testkit::stream(stdout)
}

/// Runs the binary with `args` (plus no politeness delay and a private cache unless the
/// caller passes `--cache-dir`), feeding `stdin` when given. Every line of its output
/// must decode, the last one as the summary.
pub fn run_with(args: &[&str], cache: &Path, stdin: Option<&str>) -> Ran {
    let r = Stage::new("rip-discover")
        .args([
            "--delay",
            "0",
            "--jitter",
            "0",
            "--retry-base",
            "10ms",
            "-q",
        ])
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .maybe_stdin(stdin)
        .run();
    assert_eq!(
        r.records().len(),
        r.lines().len(),
        "every line a record of a known kind: {}",
        r.stdout
    );
    r
}

/// `rip-discover` run with `args` and a cache folder of its own, removed afterwards.
pub fn run(args: &[&str]) -> Ran {
    let cache = tempfile::tempdir().unwrap();
    run_with(args, cache.path(), None)
}

/// The demo site on a fresh server.
pub fn demo_server() -> TestServer {
    TestServer::builder()
        .dir(rip_testkit::testdata("site"))
        .start_background()
        .unwrap()
}

/// Requests per path (query included) in the server's log.
pub fn requests(server: &TestServer) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in server.requests() {
        *m.entry(r.target.clone()).or_insert(0) += 1;
    }
    m
}

/// The reference walk over a generated graph: breadth first from the home page, links
/// traversed when `follow(path)`, never through `blocked(path)` pages (robots.txt), up to
/// `max_depth`. Returns every traversed page with its BFS depth.
pub fn bfs(
    g: &LinkGraph,
    follow: impl Fn(&str) -> bool,
    blocked: impl Fn(&str) -> bool,
    max_depth: u32,
) -> BTreeMap<String, u32> {
    let mut depth = BTreeMap::new();
    let mut queue = VecDeque::from([(0u32, 0u32)]);
    depth.insert(g.path(0), 0);
    while let Some((i, d)) = queue.pop_front() {
        if d >= max_depth {
            continue;
        }
        for j in g.links(i) {
            let p = g.path(j);
            if depth.contains_key(&p) || !follow(&p) || blocked(&p) {
                continue;
            }
            depth.insert(p, d + 1);
            queue.push_back((j, d + 1));
        }
    }
    depth
}
