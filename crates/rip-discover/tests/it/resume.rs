//! `--state DIR`: killed with SIGKILL mid-run, the same command continues; together the
//! two runs write the target set of an uninterrupted run, and the server's request log
//! shows no URL fetched twice across both.
//!
//! Two kills: one at a known moment (the crawl parked at its breadth-first barrier behind
//! one held page, everything before it answered and committed), where the claim is exact
//! (every URL answered once; nothing written twice); and one at an arbitrary moment, where
//! only requests in flight at the kill may be asked again (their answers never reached the
//! crawler, nor the cache) and refs of the last uncommitted batch may be written again.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rip_core::{Line, Record};
use rip_testkit::Stage;
use rip_testserver::{Fault, LinkGraph, Rule, TestServer};

use crate::*;

const PAGES: u32 = 3000;
const CONCURRENCY: usize = 8;

fn slow_graph() -> (LinkGraph, TestServer) {
    let g = LinkGraph::new(PAGES).seed(21).fan_out(3);
    let server = TestServer::builder()
        .graph(g.clone())
        .rule(Rule::prefix("/item-").always(Fault::serve().delay(Duration::from_millis(2))))
        .start_background()
        .unwrap();
    (g, server)
}

fn command(url: &str, state: &Path, cache: &Path, extra: &[&str], out: &Path) -> Command {
    let mut cmd = Stage::new("rip-discover")
        .args(["--delay", "0", "--jitter", "0", "-q", url])
        .args(["-c", &CONCURRENCY.to_string()])
        .arg("--state")
        .arg(state)
        .arg("--cache-dir")
        .arg(cache)
        .args(extra)
        .command();
    cmd.stdout(File::create(out).unwrap());
    cmd
}

/// The refs in an output file; a torn last line (the kill) is ignored.
fn refs_in(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| Line::from_text(l).ok()?.decode().ok())
        .filter_map(|r| match r {
            Record::Ref(r) => Some(path_of(&r.url)),
            _ => None,
        })
        .collect()
}

/// Starts the crawl, waits until it is well under way, kills it with SIGKILL; returns
/// how many requests the server had logged by then.
fn start_and_kill(cmd: &mut Command, server: &TestServer) -> usize {
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.total() < (PAGES / 3) as usize {
        assert!(Instant::now() < deadline, "the crawl did not get going");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("finished before the kill ({status}): make the graph slower");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    // Requests the crawler sent just before the kill may reach the server's log a little
    // later: wait until it stops growing, so they count as the first run's.
    let mut n = server.total();
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = server.total();
        if now == n {
            return n;
        }
        n = now;
    }
}

/// No URL fetched twice across both runs, except requests in flight at the kill: their
/// answers never reached the crawler (nor the cache), so the second run must ask again.
/// At most `CONCURRENCY` of them, all asked before the kill, and none whose ref the first
/// run had already written (a written ref means its page was fetched and cached).
fn check_log(server: &TestServer, killed_at: usize, written_first: &[String]) {
    let mut first_seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut twice = Vec::new();
    for (i, r) in server.requests().into_iter().enumerate() {
        if let Some(first) = first_seen.get(&r.target) {
            twice.push((r.target.clone(), *first));
        } else {
            first_seen.insert(r.target, i);
        }
    }
    assert!(twice.len() <= CONCURRENCY, "fetched twice: {twice:?}");
    for (target, first) in &twice {
        assert!(
            *first < killed_at,
            "{target} was fetched twice, first as request #{first} of {killed_at}, after the kill"
        );
        assert!(
            !written_first.contains(target),
            "{target} was fetched again although the first run had written its ref"
        );
    }
    assert_eq!(
        first_seen.len(),
        PAGES as usize + 1,
        "every page and robots.txt"
    );
}

#[test]
fn sigkill_then_resume_loses_nothing_and_fetches_nothing_twice() {
    let (g, server) = slow_graph();
    let dir = tempfile::tempdir().unwrap();
    let (state, cache) = (dir.path().join("state"), dir.path().join("cache"));
    let (out1, out2) = (dir.path().join("1.ndjson"), dir.path().join("2.ndjson"));
    let url = server.url("/");

    let killed_at = start_and_kill(&mut command(&url, &state, &cache, &[], &out1), &server);
    let first = refs_in(&out1);
    assert!(
        !first.is_empty() && first.len() < PAGES as usize,
        "{}",
        first.len()
    );

    let second = command(&url, &state, &cache, &[], &out2).output().unwrap();
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let (_, summary) = record(&std::fs::read_to_string(&out2).unwrap());
    assert!(summary.counters.get("resumed").copied().unwrap_or(0) > 0);
    let then = refs_in(&out2);

    // Together: exactly the uninterrupted run's set (every page of the graph).
    let all: BTreeSet<String> = first.iter().chain(&then).cloned().collect();
    let want: BTreeSet<String> = g.paths().collect();
    assert_eq!(all, want);
    // Written twice only if the kill fell between an output flush and the journal commit
    // right after it: at most one commit's batch (128 records).
    let dups = first.len() + then.len() - all.len();
    assert!(dups <= 128, "{dups} refs written by both runs");
    check_log(&server, killed_at, &first);

    // A third run of a finished crawl has nothing left to do.
    let out3 = dir.path().join("3.ndjson");
    let before = server.total();
    let third = command(&url, &state, &cache, &[], &out3).output().unwrap();
    assert_eq!(third.status.code(), Some(0));
    assert_eq!(refs_in(&out3).len(), 0);
    assert_eq!(server.total(), before, "nothing fetched by the third run");
}

#[test]
fn sorted_resume_writes_the_whole_set_once() {
    let (g, server) = slow_graph();
    let dir = tempfile::tempdir().unwrap();
    let (state, cache) = (dir.path().join("state"), dir.path().join("cache"));
    let (out1, out2) = (dir.path().join("1.ndjson"), dir.path().join("2.ndjson"));
    let url = server.url("/");
    let killed_at = start_and_kill(
        &mut command(&url, &state, &cache, &["--sorted"], &out1),
        &server,
    );
    assert!(
        refs_in(&out1).is_empty(),
        "--sorted writes refs only at the end"
    );
    let second = command(&url, &state, &cache, &["--sorted"], &out2)
        .output()
        .unwrap();
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let then = refs_in(&out2);
    let mut want: Vec<String> = g.paths().collect();
    want.sort_by(|a, b| rip_url::natural_cmp(a, b));
    assert_eq!(then, want);
    check_log(&server, killed_at, &[]);
}

#[test]
fn a_state_folder_of_another_crawl_is_refused() {
    let (_, server) = slow_graph();
    let dir = tempfile::tempdir().unwrap();
    let (state, cache) = (dir.path().join("state"), dir.path().join("cache"));
    let out = dir.path().join("o.ndjson");
    let url = server.url("/");
    let r = command(&url, &state, &cache, &["--max-depth", "1"], &out)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0));
    let r = command(&url, &state, &cache, &["--max-depth", "2"], &out)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("different crawl"));
}

#[test]
fn max_pages_holds_across_resumed_runs() {
    // The budget is the crawl's, not each run's: a rerun of a crawl that spent it writes
    // nothing more, with or without --sorted.
    let (_, server) = slow_graph();
    for sorted in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (state, cache) = (dir.path().join("state"), dir.path().join("cache"));
        let out = dir.path().join("o.ndjson");
        let mut extra = vec!["--max-pages", "10"];
        if sorted {
            extra.push("--sorted");
        }
        let url = server.url("/");
        let run = || {
            let r = command(&url, &state, &cache, &extra, &out)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&r.stderr);
            assert_eq!(r.status.code(), Some(0), "{err}");
            refs_in(&out)
        };
        let first = run();
        assert_eq!(first.len(), 10, "sorted={sorted}: {first:?}");
        let second = run();
        let expected: Vec<String> = if sorted { first.clone() } else { Vec::new() };
        assert_eq!(
            second, expected,
            "sorted={sorted}: the rerun went past the budget"
        );
    }
}

/// The refs of an output file with their depth; a torn last line (the kill) is ignored.
fn refs_with_depth(path: &Path) -> Vec<(String, u32)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| Line::from_text(l).ok()?.decode().ok())
        .filter_map(|r| match r {
            Record::Ref(r) => Some((path_of(&r.url), r.context.depth)),
            _ => None,
        })
        .collect()
}

/// The kill at a known moment: one page at depth `d` is held by the server, so the crawl
/// parks at its breadth-first barrier with every other page of depth ≤ `d` fetched, written
/// and committed, and nothing deeper started. Killed there (SIGKILL) and run again with the
/// same `--state`, the two runs together write exactly the refs of an uninterrupted run
/// (same URLs, same depths), none twice, and the server answered every URL exactly once:
/// the only URL asked twice is the held page, whose first request was never answered.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn sigkill_at_the_barrier_then_resume_fetches_every_url_exactly_once() {
    const N: u32 = 1500;
    let g = LinkGraph::new(N).seed(33).fan_out(3);
    let depths = bfs(&g, |_| true, |_| false, u32::MAX);
    // The gate's depth: the shallowest level by which a quarter of the site is reached.
    let d = (1..)
        .find(|d| depths.values().filter(|x| *x <= d).count() >= N as usize / 4)
        .unwrap();
    assert!(
        depths.values().any(|x| *x > d + 1),
        "pages left to do after the kill"
    );
    let gate = depths
        .iter()
        .filter(|(_, x)| **x == d)
        .map(|(p, _)| p.clone())
        .next_back()
        .unwrap();
    let before: BTreeSet<String> = depths
        .iter()
        .filter(|(p, x)| **x <= d && **p != gate)
        .map(|(p, _)| p.clone())
        .collect();

    // The uninterrupted run, on a server of its own.
    let plain = TestServer::builder()
        .graph(g.clone())
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.ndjson");
    let r = command(
        &plain.url("/"),
        &dir.path().join("state0"),
        &dir.path().join("cache0"),
        &[],
        &whole,
    )
    .output()
    .unwrap();
    assert_eq!(
        r.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let want: BTreeSet<(String, u32)> = refs_with_depth(&whole).into_iter().collect();
    assert_eq!(want.len(), N as usize);

    // The interrupted one: the gate is held (far longer than the test) the first time only.
    let server = TestServer::builder()
        .graph(g.clone())
        .rule(Rule::path(gate.as_str()).once(Fault::serve().delay(Duration::from_secs(600))))
        .start_background()
        .unwrap();
    let (state, cache) = (dir.path().join("state"), dir.path().join("cache"));
    let (out1, out2) = (dir.path().join("1.ndjson"), dir.path().join("2.ndjson"));
    let url = server.url("/");
    let mut child = command(&url, &state, &cache, &[], &out1).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(
            Instant::now() < deadline,
            "the crawl did not reach the held page"
        );
        assert!(child.try_wait().unwrap().is_none(), "the crawl ended early");
        let written: BTreeSet<String> = refs_in(&out1).into_iter().collect();
        if server.count(&gate) == 1 && written == before {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Parked: the journal commit follows the output flush at once; leave it ample time.
    std::thread::sleep(Duration::from_millis(500));
    let log1 = server.requests();
    child.kill().unwrap(); // SIGKILL on Unix
    child.wait().unwrap();
    assert_eq!(
        server.total(),
        log1.len(),
        "nothing was started while parked"
    );
    assert!(
        log1.iter()
            .all(|r| r.target == "/robots.txt" || depths[&r.target] <= d),
        "nothing deeper than the held page's level was started"
    );
    let first = refs_with_depth(&out1);

    let second = command(&url, &state, &cache, &[], &out2).output().unwrap();
    assert_eq!(
        second.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let then = refs_with_depth(&out2);
    let all: BTreeSet<(String, u32)> = first.iter().chain(&then).cloned().collect();
    assert_eq!(
        all, want,
        "the targets of the uninterrupted run, at the same depths"
    );
    assert_eq!(
        first.len() + then.len(),
        want.len(),
        "no ref written by both runs"
    );

    // The server's log: every URL asked once, but the held page, whose first request (the
    // one held) never got an answer.
    let mut asked: BTreeMap<String, usize> = BTreeMap::new();
    for r in server.requests() {
        *asked.entry(r.target).or_default() += 1;
    }
    assert_eq!(asked.len(), N as usize + 1, "every page and robots.txt");
    let twice: Vec<_> = asked.iter().filter(|(_, n)| **n > 1).collect();
    assert_eq!(twice, vec![(&gate, &2)], "asked more than once");
}
