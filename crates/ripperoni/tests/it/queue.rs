//! A scrape spread over machines (the state file's `queue`): `ripperoni run` coordinates
//! against a real nats-server, `ripperoni worker` processes fetch, parse and route, and the
//! books come out as they do for a run on one machine (see `e2e.rs` for the numbers).

use crate::support::*;
use rip_testkit::{NatsServer, Stage, wait_for};
use rip_testserver::{Fault, Rule, TestServer};
use std::process::{Child, Stdio};
use std::time::Duration;

/// `ripperoni worker` on `state`, leaving when idle for 3 s.
pub(crate) fn worker(state: &std::path::Path) -> Child {
    ripperoni()
        .args(["worker", state.to_str().unwrap(), "--idle-exit", "3s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for each worker, which must end well (`--idle-exit`); its stderr otherwise.
pub(crate) fn finish(workers: Vec<Child>) {
    for w in workers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn a_run_with_two_workers_balances_its_books_as_a_run_on_one_machine() {
    let nats = NatsServer::start();
    let server = demo_server();
    let origin = server.origin();
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), &origin, |v| {
        v["queue"] =
            serde_json::json!({"broker": nats.url(), "prefix": "wrapper", "partitions": 4});
    });
    let printed = run(&["pipeline", state.to_str().unwrap()]);
    let printed = String::from_utf8_lossy(&printed.stdout).into_owned();
    assert!(printed.contains("rip-queue --broker"), "{printed}");
    assert!(
        printed.contains(" relay emberfall-refs emberfall-docs"),
        "{printed}"
    );
    assert!(
        printed.contains(" work emberfall-refs emberfall-docs"),
        "{printed}"
    );

    let workers: Vec<Child> = (0..2).map(|_| worker(&state)).collect();
    let o = run(&["run", state.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "one URL is missing, as on one machine: {err}"
    );
    finish(workers);
    let health = dir.path().join("out/emberfall/crawl-health.json");
    assert!(health.is_file(), "no crawl-health.json: {err}");
    let h = read_json(health);
    assert_eq!(
        h["totals"],
        serde_json::json!({"concepts": 46, "failures": 3, "capturedElsewhere": 1, "missing": 1, "dead": 1}),
        "{err}"
    );
    assert!(err.contains("(balanced)"), "{err}");
    // The pages the workers fetched are counted, as a run on one machine counts them
    // (e2e.rs: the same state file and site, 47 pages out of the last round).
    let runs = runs(dir.path());
    let counters = &runs.last().expect("a run record")["counters"];
    assert_eq!(counters["fetched"], 47, "{counters}");
    assert_eq!(counters["parsed"], 46, "{counters}");
}

#[test]
fn a_worker_without_a_queue_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), "http://127.0.0.1:1", |_| {});
    let o = run(&["worker", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no `queue` in the state file"),
        "{}",
        stderr(&o)
    );
}

/// A site of `n` pages `/p0…` answered after `delay` each, and their refs.
fn slow_site(n: usize, delay: Duration) -> (TestServer, String) {
    let mut builder = TestServer::builder()
        .file("/robots.txt", "User-agent: *\nAllow: /\n")
        .rule(Rule::prefix("/p").always(Fault::serve().delay(delay)));
    for i in 0..n {
        builder = builder.file(
            format!("/p{i}"),
            "<!doctype html><title>t</title><h1>Item</h1><p>hello</p>",
        );
    }
    let server = builder.start_background().unwrap();
    let refs = (0..n)
        .map(|i| {
            let url = server.url(&format!("/p{i}"));
            format!("{{\"_type\":\"ref\",\"url\":\"{url}\",\"depth\":1}}\n")
        })
        .collect();
    (server, refs)
}

/// Pushes `refs` to the scrape's refs stream, as `ripperoni run` (the coordinator) does.
fn push_refs(nats: &NatsServer, prefix: &str, refs: &str) {
    let pushed = Stage::new("rip-queue")
        .args(["--broker", &nats.url(), "--prefix", prefix])
        .args(["push", "emberfall-refs", "--partitions", "4"])
        .stdin(refs)
        .run();
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
}

#[test]
fn a_worker_killed_with_sigkill_leaves_no_process_of_its_tree_working() {
    let nats = NatsServer::start();
    let (server, refs) = slow_site(60, Duration::from_millis(300));
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), &server.origin(), |v| {
        v["queue"] = serde_json::json!({"broker": nats.url(), "prefix": "doomed", "partitions": 4});
    });
    push_refs(&nats, "doomed", &refs);
    let mut worker = ripperoni()
        .args(["worker", state.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let root = worker.id() as i32;
    // Its tree down to the stages of a batch: rip-queue work, the shell, rip-fetch.
    let mut tree = Vec::new();
    wait_for("a batch being fetched", Duration::from_secs(60), || {
        tree = procs::tree_of(root);
        tree.iter().any(|p| p.name == "rip-fetch") && server.total() >= 3
    });
    assert!(tree.iter().any(|p| p.name == "rip-queue"), "{tree:?}");
    worker.kill().unwrap(); // SIGKILL
    worker.wait().unwrap();
    let alive = || tree.iter().filter(|p| p.alive()).collect::<Vec<_>>();
    wait_for(
        "the worker's processes to die with it",
        Duration::from_secs(10),
        || alive().is_empty(),
    );
    // Nothing takes records or fetches for the dead worker any more.
    let after = server.total();
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(server.total(), after, "requests after the worker died");
}

/// Processes, from /proc.
mod procs {
    /// One process: its pid, its start time (pids are reused) and its name.
    #[derive(Debug, Clone)]
    pub struct Proc {
        pid: i32,
        start: u64,
        pub name: String,
    }

    impl Proc {
        /// Whether it still runs (not gone, not a zombie left for its new parent to reap).
        pub fn alive(&self) -> bool {
            stat(self.pid).is_some_and(|s| s.start == self.start && s.state != 'Z')
        }
    }

    struct Stat {
        name: String,
        state: char,
        ppid: i32,
        start: u64,
    }

    fn stat(pid: i32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let fields: Vec<&str> = text[close + 2..].split(' ').collect();
        Some(Stat {
            name: text[open + 1..close].to_owned(),
            state: fields.first()?.chars().next()?,
            ppid: fields.get(1)?.parse().ok()?,
            start: fields.get(19)?.parse().ok()?,
        })
    }

    /// `root`'s live descendants (not `root`).
    pub fn tree_of(root: i32) -> Vec<Proc> {
        let all: Vec<(i32, Stat)> = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|pid| Some((pid, stat(pid)?)))
            .filter(|(_, s)| s.state != 'Z')
            .collect();
        let mut tree: Vec<i32> = vec![root];
        let mut found = Vec::new();
        while let Some(parent) = tree.pop() {
            for (pid, s) in all.iter().filter(|(_, s)| s.ppid == parent) {
                tree.push(*pid);
                found.push(Proc {
                    pid: *pid,
                    start: s.start,
                    name: s.name.clone(),
                });
            }
        }
        found
    }
}

#[test]
fn a_run_whose_broker_is_away_says_to_check_the_broker() {
    // A port nothing listens on: the broker is away.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let broker = format!("nats://127.0.0.1:{port}");
    let server = demo_server();
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), &server.origin(), |v| {
        v["queue"] = serde_json::json!({"broker": broker, "prefix": "away"});
    });
    let o = run(&["run", state.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        !err.contains("--no-ledger"),
        "a hint for hand-made pipelines: {err}"
    );
    assert!(
        err.contains(&format!("is the broker at {broker} up")),
        "{err}"
    );
}
