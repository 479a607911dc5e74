//! Integration tests: the `rip-discover` binary against rip-testserver (the demo site and
//! generated link graphs), its output read back with rip-core types.

mod demo;
mod failures;
mod graph;
mod progress;
mod resume;
mod sitemaps;
mod streaming;
mod wiki;
mod wiki_pipeline;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use rip_core::{Expected, Failure, Line, Record, Ref, Status, Summary};
use rip_testserver::{LinkGraph, TestServer};

/// The `rip-discover` binary (build it first: `cargo build --workspace --bins`; `make test` does).
pub fn bin() -> std::path::PathBuf {
    rip_testkit::bin("rip-discover")
}
pub const SITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/site");

/// A finished run, its stdout decoded.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub records: Vec<Record>,
    pub summary: Summary,
}

impl Run {
    pub fn refs(&self) -> Vec<&Ref> {
        self.records
            .iter()
            .filter_map(|r| match r {
                Record::Ref(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    pub fn expected(&self) -> Vec<&Expected> {
        self.records
            .iter()
            .filter_map(|r| match r {
                Record::Expected(e) => Some(e),
                _ => None,
            })
            .collect()
    }

    pub fn failures(&self) -> Vec<&Failure> {
        self.records
            .iter()
            .filter_map(|r| match r {
                Record::Failure(f) => Some(f),
                _ => None,
            })
            .collect()
    }

    /// The paths of the refs, origin removed.
    pub fn paths(&self) -> BTreeSet<String> {
        self.refs().iter().map(|r| path_of(&r.url)).collect()
    }

    pub fn counter(&self, k: &str) -> u64 {
        self.summary.counters.get(k).copied().unwrap_or(0)
    }

    pub fn status(&self) -> Status {
        self.summary.status
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

/// Decodes stdout: every line a record, the last one the summary.
pub fn decode(stdout: &str) -> (Vec<Record>, Summary) {
    let mut records: Vec<Record> = stdout
        .lines()
        .map(|l| {
            Line::from_text(l)
                .and_then(|l| l.decode())
                .unwrap_or_else(|e| panic!("bad output line {l}: {e}"))
        })
        .collect();
    match records.pop() {
        Some(Record::Summary(s)) => (records, s),
        other => panic!("the last line is not a summary: {other:?}\n{stdout}"),
    }
}

/// Runs the binary with `args` (plus no politeness delay and a private cache unless the
/// caller passes `--cache-dir`), feeding `stdin` when given.
pub fn run_with(args: &[&str], cache: &Path, stdin: Option<&str>) -> Run {
    let mut cmd = Command::new(bin());
    cmd.args([
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
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    let mut child = cmd.spawn().expect("rip-discover starts");
    if let Some(input) = stdin {
        let mut w = child.stdin.take().unwrap();
        let input = input.to_owned();
        std::thread::spawn(move || {
            let _ = w.write_all(input.as_bytes());
        });
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let (records, summary) = decode(&stdout);
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout,
        stderr,
        records,
        summary,
    }
}

pub fn run(args: &[&str]) -> Run {
    let cache = tempfile::tempdir().unwrap();
    run_with(args, cache.path(), None)
}

/// The demo site on a fresh server.
pub fn demo_server() -> TestServer {
    TestServer::builder().dir(SITE).start_background().unwrap()
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
