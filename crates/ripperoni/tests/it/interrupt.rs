//! Ctrl-C: SIGINT in the middle of a run, then the same command again, ends with the same
//! output as a run that was never interrupted, and the network sees no URL more often.

use crate::support::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// A slow, sequential crawl of the demo site without faults: long enough to be
/// interrupted in the middle, and in a deterministic order.
fn slow(v: &mut Value) {
    v["rateLimitMs"] = 120.into();
    v["jitterMs"] = 0.into();
    v["crawler"]["concurrency"] = 1.into();
    v["parallelWorkers"] = 1.into();
}

fn plain_server() -> rip_testserver::TestServer {
    rip_testserver::TestServer::builder()
        .dir(repo().join("testdata/site"))
        .start_background()
        .unwrap()
}

/// Every record file of an output folder, the origin replaced and the times dropped.
fn folder(dir: &Path, origin: &str) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") || name == "crawl-health.json" {
            continue;
        }
        let text = std::fs::read_to_string(e.path())
            .unwrap()
            .replace(origin, "ORIGIN");
        let mut v: Value = serde_json::from_str(&text).unwrap();
        strip(&mut v);
        out.insert(name, v);
    }
    out
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for k in [
                "capturedAt",
                "failedAt",
                "fetchedAt",
                "elapsedMs",
                "generatedAt",
            ] {
                m.remove(k);
            }
            m.values_mut().for_each(strip);
        }
        Value::Array(a) => a.iter_mut().for_each(strip),
        _ => {}
    }
}

fn health(dir: &Path, origin: &str) -> Value {
    let text = std::fs::read_to_string(dir.join("crawl-health.json"))
        .unwrap()
        .replace(origin, "ORIGIN");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn ctrl_c_then_resume_ends_as_an_uninterrupted_run_with_no_url_fetched_twice() {
    // The reference: a run never interrupted.
    let ref_dir = tempfile::tempdir().unwrap();
    let ref_server = plain_server();
    let state = demo_state(ref_dir.path(), &ref_server.origin(), slow);
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let ref_out = ref_dir.path().join("out/emberfall");

    // Interrupted after about a third of the site, then resumed.
    let dir = tempfile::tempdir().unwrap();
    let server = plain_server();
    let origin = server.origin();
    let state = demo_state(dir.path(), &origin, slow);
    let mut child = ripperoni()
        .args(["run", "-q", state.to_str().unwrap()])
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while server.total() < 18 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run does not progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "an interrupted run exits 130");
    let out = dir.path().join("out/emberfall");
    let first = runs(dir.path());
    assert_eq!(first.len(), 1);
    assert_eq!(first[0]["interrupted"], true);
    assert_eq!(first[0]["status"], "partial");
    assert!(out.join(".ripperoni/resume.json").is_file(), "resumable");
    // The folder is consistent: what was discovered before the stop is all there, and
    // the report says the run did not finish.
    let h1 = health(&out, &origin);
    assert_eq!(
        h1["ledger"]["unaccounted"],
        serde_json::json!([]),
        "{:#}",
        h1["ledger"]
    );
    assert_eq!(h1["complete"], false);
    let entered_before = h1["ledger"]["entered"].as_u64().unwrap();
    assert!(
        (1..50).contains(&entered_before),
        "interrupted in the middle: {entered_before} URLs had entered"
    );

    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let second = runs(dir.path());
    assert_eq!(second.len(), 2);
    assert_eq!(second[1]["resumed"], first[0]["id"]);

    // The same output as the uninterrupted run.
    let (want, have) = (
        health(&ref_out, &ref_server.origin()),
        health(&out, &origin),
    );
    for k in [
        "totals",
        "capturedElsewhere",
        "missing",
        "dead",
        "complete",
        "counters",
        "outcomes",
        "expected",
    ] {
        assert_eq!(have[k], want[k], "crawl-health `{k}`");
    }
    assert_eq!(have["ledger"]["entered"], 50);
    assert_eq!(have["ledger"]["complete"], true, "{:#}", have["ledger"]);
    let (want_files, have_files) = (
        folder(&ref_out, &ref_server.origin()),
        folder(&out, &origin),
    );
    assert_eq!(
        have_files.keys().collect::<Vec<_>>(),
        want_files.keys().collect::<Vec<_>>()
    );
    for (name, v) in &want_files {
        assert_eq!(&have_files[name], v, "{name}");
    }

    // No URL fetched more often than without the interruption: every page the site has
    // was requested once across the two runs; only the two broken links were requested
    // twice, as in the uninterrupted run (rip-discover's 404 is not cached, so rip-fetch
    // asks again before classifying it).
    let counts = requests_per_path(&server);
    assert_eq!(counts, requests_per_path(&ref_server));
    let twice: Vec<&str> = counts
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(p, _)| p.as_str())
        .collect();
    assert_eq!(
        twice,
        ["/classes/77.html", "/items/item-99.html"],
        "{counts:#?}"
    );
    assert!(counts.values().all(|n| *n <= 2), "{counts:#?}");
}
