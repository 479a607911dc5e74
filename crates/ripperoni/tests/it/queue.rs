//! A scrape spread over machines (the state file's `queue`): `ripperoni run` coordinates
//! against a real nats-server, `ripperoni worker` processes fetch, parse and route, and the
//! books come out as they do for a run on one machine (see `e2e.rs` for the numbers).

use crate::support::*;
use rip_testkit::NatsServer;
use std::process::{Child, Stdio};

fn worker(state: &std::path::Path) -> Child {
    ripperoni()
        .args(["worker", state.to_str().unwrap(), "--idle-exit", "3s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
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
    for w in workers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let health = dir.path().join("out/emberfall/crawl-health.json");
    assert!(health.is_file(), "no crawl-health.json: {err}");
    let h = read_json(health);
    assert_eq!(
        h["totals"],
        serde_json::json!({"concepts": 46, "failures": 3, "capturedElsewhere": 1, "missing": 1, "dead": 1}),
        "{err}"
    );
    assert!(err.contains("(balanced)"), "{err}");
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
