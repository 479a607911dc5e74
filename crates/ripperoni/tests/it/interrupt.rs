//! Ctrl-C: SIGINT in the middle of a run, then the same command again, ends with the same
//! output as a run that was never interrupted, and the network sees no URL more often.

use crate::support::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// A slow, sequential crawl of the demo site without faults: long enough to be
/// interrupted in the middle, and in a deterministic order.
pub fn slow(v: &mut Value) {
    v["rateLimitMs"] = 120.into();
    v["jitterMs"] = 0.into();
    v["crawler"]["concurrency"] = 1.into();
    v["parallelWorkers"] = 1.into();
}

pub fn plain_server() -> rip_testserver::TestServer {
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
                "waitedMs",
                "latencyMs",
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
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
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

/// Runs a scrape and interrupts it once the server saw `after` more requests, `times`
/// SIGINTs 300 ms apart; returns the exit status.
pub(crate) fn interrupt(
    state: &Path,
    server: &rip_testserver::TestServer,
    after: usize,
    times: usize,
) -> Option<i32> {
    let before = server.total();
    let mut child = ripperoni()
        .args(["run", "-q", state.to_str().unwrap()])
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while server.total() < before + after {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the run does not progress"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    for i in 0..times {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(300));
        }
        rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    }
    child.wait().unwrap().code()
}

#[test]
fn a_second_ctrl_c_stops_every_stage_and_the_next_run_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let server = plain_server();
    // 18 listed pages fetched one at a time, 120 ms apart: the source (rip-check) has
    // long given them all to rip-fetch when the first Ctrl-C comes, so the run drains
    // for about two seconds, and the second Ctrl-C falls in the drain.
    let urls: Vec<String> = (1..=12)
        .map(|i| format!("items/item-{i}.html"))
        .chain(["8", "19", "33", "41", "77", "102"].map(|s| format!("spells/{s}.html")))
        .collect();
    let state = demo_state(dir.path(), &server.origin(), |v| {
        slow(v);
        v.as_object_mut().unwrap().remove("crawler");
        v["urls"] = serde_json::json!(urls);
    });
    assert_eq!(interrupt(&state, &server, 4, 2), Some(130));
    let out = dir.path().join("out/emberfall");
    let first = runs(dir.path());
    assert_eq!(first[0]["interrupted"], true, "{:#}", first[0]);
    assert_eq!(first[0]["status"], "partial", "{:#}", first[0]);
    // The stages after the source were stopped too (each exits 130, or 0 when the stage
    // after it stopped reading first: a broken pipe).
    let stages = first[0]["stages"].as_array().unwrap();
    assert!(
        stages[1..].iter().filter(|s| s["exit"] == 130).count() >= 3,
        "{:#}",
        first[0]
    );
    assert!(
        !out.join(".ripperoni/resume.json").exists(),
        "a hard stop is not resumed"
    );
    // The folder still has its report, which says the run did not finish.
    let h = health(&out, &server.origin());
    assert_eq!(h["complete"], false);
    let done = h["totals"]["concepts"].as_u64().unwrap();
    assert!((1..18).contains(&done), "{done} docs before the stop");

    // The same command starts over and ends as a run never interrupted; the pages fetched
    // before the stop come from the cache.
    let served = server.total();
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let second = &runs(dir.path())[1];
    assert!(second.get("resumed").is_none(), "{second:#}");
    assert_eq!(second["status"], "complete");
    let h = health(&out, &server.origin());
    assert_eq!(h["ledger"]["entered"], 18);
    assert_eq!(h["ledger"]["complete"], true, "{:#}", h["ledger"]);
    assert_eq!(h["totals"]["concepts"], 18);
    assert!(
        server.total() - served <= 18 - done as usize,
        "pages fetched before the stop came from the cache: {} requests again, {done} done",
        server.total() - served
    );
}

#[test]
fn a_changed_state_file_or_restart_starts_over_instead_of_resuming() {
    let dir = tempfile::tempdir().unwrap();
    let server = plain_server();
    let state = demo_state(dir.path(), &server.origin(), slow);
    assert_eq!(interrupt(&state, &server, 12, 1), Some(130));
    let out = dir.path().join("out/emberfall");
    assert!(out.join(".ripperoni/resume.json").is_file(), "resumable");
    // --restart: not resumed, and the marker is gone.
    let o = run(&["run", "-q", "--restart", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(runs(dir.path())[1].get("resumed").is_none());
    assert!(!out.join(".ripperoni/resume.json").exists());

    // Interrupted again (from scratch: no cache), then the state file changes: a resumed
    // run would mix two scrapes.
    std::fs::remove_dir_all(dir.path().join("out")).unwrap();
    assert_eq!(interrupt(&state, &server, 12, 1), Some(130));
    assert!(out.join(".ripperoni/resume.json").is_file(), "resumable");
    let state = demo_state(dir.path(), &server.origin(), |v| {
        slow(v);
        v["rateLimitMs"] = 0.into();
    });
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let r = &runs(dir.path())[1];
    assert!(r.get("resumed").is_none(), "{r:#}");
    assert_eq!(health(&out, &server.origin())["ledger"]["complete"], true);
}

/// Ctrl-C before anything came out (the site's robots.txt takes ten seconds): the run has
/// nothing to put in place of the previous output, which is kept as it was.
#[test]
fn ctrl_c_before_anything_came_out_keeps_the_previous_output() {
    use rip_testserver::{Fault, Rule};
    let dir = tempfile::tempdir().unwrap();
    let server = plain_server();
    let state = demo_state(dir.path(), &server.origin(), |_| {});
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = dir.path().join("out/emberfall");
    let before = std::fs::read(out.join("stream.ndjson")).unwrap();
    let files = std::fs::read_dir(&out).unwrap().count();

    let slow = rip_testserver::TestServer::builder()
        .dir(repo().join("testdata/site"))
        .rule(Rule::path("/robots.txt").always(Fault::serve().delay(Duration::from_secs(10))))
        .start_background()
        .unwrap();
    let child = ripperoni()
        .args(["run", state.to_str().unwrap(), "--base-url"])
        .arg(format!("{}/", slow.origin()))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while slow.total() < 1 {
        assert!(t0.elapsed() < Duration::from_secs(30), "no request");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(
        t0.elapsed() < Duration::from_secs(9),
        "stopped at once: {:?}",
        t0.elapsed()
    );
    assert!(std::fs::read(out.join("stream.ndjson")).unwrap() == before);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), files);
    assert!(
        err.contains(&format!("the previous output in {} is kept", out.display())),
        "{err}"
    );
    let r = runs(dir.path()).pop().unwrap();
    assert_eq!(r["interrupted"], true, "{r:#}");
    assert_eq!(r["kept"], out.display().to_string(), "{r:#}");
}
