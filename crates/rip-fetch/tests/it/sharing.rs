//! Host schedules of a process alone in its cache folder (kept in memory) and of one that
//! joins it, ends, or is killed: the site's own log is the judge of every gap.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

use rip_testkit::{Ran, Stage};
use rip_testserver::{RequestRecord, TestServer, min_gap};

use super::{CpuLoad, refs, server};

/// rip-fetch with a `gap` between requests to a host, `urls` on its stdin, sharing `cache`.
fn polite(cache: &Path, gap: Duration, urls: &[String]) -> Child {
    let delay = format!("{}ms", gap.as_millis());
    Stage::new("rip-fetch")
        .args(["--delay", &delay, "--jitter", "0ms", "-q"])
        .args(["--cache", "off", "--ignore-robots", "--cache-dir"])
        .arg(cache)
        .stdin(refs(urls))
        .spawn()
}

fn urls(server: &TestServer, from: usize, n: usize) -> Vec<String> {
    (from..from + n)
        .map(|i| server.url(&format!("/p{i}")))
        .collect()
}

/// Waits until `server` has logged `n` requests (at most 10 s).
fn wait_for_requests(server: &TestServer, n: usize) {
    let t0 = Instant::now();
    while server.requests().len() < n {
        assert!(t0.elapsed() < Duration::from_secs(10), "no request {n}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The host files in the folder (its dot files are the users' bookkeeping).
fn host_files(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache.join("hosts"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

fn finish(child: Child) {
    let out = Ran::wait("rip-fetch", child);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

/// The first request of `urls` at the server after the last one of the others.
fn handover_gap(reqs: &[RequestRecord], second: &[String]) -> Duration {
    let is_second = |r: &RequestRecord| second.iter().any(|u| u.ends_with(&r.path));
    let last_first = reqs
        .iter()
        .filter(|r| !is_second(r))
        .map(|r| r.elapsed)
        .max();
    let first_second = reqs
        .iter()
        .filter(|r| is_second(r))
        .map(|r| r.elapsed)
        .min();
    first_second.unwrap() - last_first.unwrap()
}

#[test]
fn a_process_alone_keeps_its_host_schedules_in_memory_and_leaves_them_to_the_next() {
    let server = server(8).start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gap = Duration::from_millis(200);
    let first = polite(dir.path(), gap, &urls(&server, 0, 4));
    wait_for_requests(&server, 2);
    assert_eq!(
        host_files(dir.path()),
        Vec::<String>::new(),
        "a host file while alone"
    );
    finish(first);
    assert_eq!(
        host_files(dir.path()).len(),
        1,
        "the schedule written at the end"
    );
    let second_urls = urls(&server, 4, 2);
    finish(polite(dir.path(), gap, &second_urls));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 6);
    let g = handover_gap(&reqs, &second_urls);
    assert!(
        g >= gap - Duration::from_millis(1),
        "the next came {g:?} after"
    );
}

#[test]
fn a_process_joining_one_alone_shares_each_hosts_gap_under_load() {
    let server = server(16).start_background().unwrap();
    let gap = Duration::from_millis(250);
    let _load = CpuLoad::start(4);
    for round in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let before = server.requests().len();
        let first = polite(dir.path(), gap, &urls(&server, 0, 8));
        // The newcomer arrives while the first has the host's schedule in its memory.
        wait_for_requests(&server, before + 2);
        let second = polite(dir.path(), gap, &urls(&server, 8, 8));
        finish(first);
        finish(second);
        let reqs = server.requests().split_off(before);
        assert_eq!(reqs.len(), 16);
        let g = min_gap(&reqs).unwrap();
        assert!(
            g >= gap - Duration::from_millis(1),
            "round {round}: {g:?} apart"
        );
        assert_eq!(host_files(dir.path()).len(), 1);
    }
}

#[test]
fn a_process_killed_while_alone_makes_the_next_wait_a_gap() {
    let server = server(24).start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gap = Duration::from_millis(300);
    let mut first = polite(dir.path(), gap, &urls(&server, 0, 20));
    wait_for_requests(&server, 2);
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(
        host_files(dir.path()),
        Vec::<String>::new(),
        "killed before writing"
    );
    let second_urls = urls(&server, 20, 2);
    finish(polite(dir.path(), gap, &second_urls));
    let reqs = server.requests();
    let g = handover_gap(&reqs, &second_urls);
    assert!(
        g >= gap - Duration::from_millis(1),
        "the next came {g:?} after"
    );
}
