//! The previous output survives a run that cannot replace it: a run writes beside the
//! output folder and is put in its place only when it is complete or partial; a run that
//! is not ready, fails, or is stopped before anything came out leaves it as it was, and
//! says so on stderr and in `runs.ndjson`.

use crate::support::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn plain_server() -> rip_testserver::TestServer {
    rip_testserver::TestServer::builder()
        .dir(repo().join("testdata/site"))
        .start_background()
        .unwrap()
}

/// Every file below `dir` (its path relative to `dir`) with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    rip_testkit::files_below(dir)
        .into_iter()
        .map(|rel| {
            let bytes = std::fs::read(dir.join(&rel)).unwrap();
            (PathBuf::from(rel), bytes)
        })
        .collect()
}

/// The reproduction: `ripperoni scaffold dl` pointed at the demo site, with a
/// cache that is stale at once (`cache.ttlMs: 1`), so that a second run must ask the site.
fn scaffolded(dir: &Path, origin: &str) -> PathBuf {
    let base = format!("{origin}/");
    let o = run(&[
        "scaffold",
        "dl",
        "--dir",
        dir.to_str().unwrap(),
        "--base-url",
        &base,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let state = dir.join("dl.state.json");
    let mut v = read_json(&state);
    v["cache"] = serde_json::json!({"ttlMs": 1});
    v["retryBaseDelayMs"] = 10.into();
    std::fs::write(&state, v.to_string()).unwrap();
    state
}

/// A first run fills `out/dl`; returns the state file, the folder and what it holds.
fn a_good_run(dir: &Path, server: &rip_testserver::TestServer) -> (PathBuf, PathBuf) {
    let state = scaffolded(dir, &server.origin());
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = dir.join("out/dl");
    let docs = std::fs::read_dir(&out).unwrap().count();
    assert!(docs > 50, "{docs} entries in {}", out.display());
    (state, out)
}

/// `ripperoni run STATE ARGS…` is not ready, keeps `out` as it was, says so, and says
/// where its own report and logs are.
fn not_ready_keeps(dir: &Path, state: &Path, args: &[&str], out: &Path) {
    let before = snapshot(out);
    let o = run(&[&["run", state.to_str().unwrap()], args].concat());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let after = snapshot(out);
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "{err}"
    );
    assert!(after == before, "a file of the previous output changed");
    assert!(
        err.contains(&format!("the previous output in {} is kept", out.display())),
        "{err}"
    );
    let r = runs(dir).pop().unwrap();
    assert_eq!(r["status"], "not-ready", "{r:#}");
    assert_eq!(r["kept"], out.display().to_string(), "{r:#}");
    let logs = PathBuf::from(
        r["logs"]
            .as_str()
            .expect("the record says where the logs are"),
    );
    assert!(
        !logs.starts_with(out),
        "this attempt's logs are not in the kept output: {}",
        logs.display()
    );
    assert!(
        logs.join("00-rip-discover.log").is_file(),
        "{}",
        logs.display()
    );
    assert!(err.contains(&logs.display().to_string()), "{err}");
    let attempt = PathBuf::from(r["attempt"].as_str().unwrap());
    assert!(attempt.join("crawl-health.json").is_file(), "{r:#}");
}

#[test]
fn a_run_whose_site_is_down_keeps_the_last_good_output() {
    let dir = tempfile::tempdir().unwrap();
    let server = plain_server();
    let (state, out) = a_good_run(dir.path(), &server);
    drop(server);
    not_ready_keeps(dir.path(), &state, &[], &out);
}

#[test]
fn a_run_against_a_base_url_that_is_not_there_keeps_the_last_good_output() {
    let dir = tempfile::tempdir().unwrap();
    let server = plain_server();
    let (state, out) = a_good_run(dir.path(), &server);
    let port_1 = ["--base-url", "http://127.0.0.1:1/"];
    not_ready_keeps(dir.path(), &state, &port_1, &out);
    // The site is back: the next run replaces the output, and no attempt is left behind.
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        runs(dir.path()).pop().unwrap()["kept"],
        serde_json::Value::Null
    );
    assert_eq!(leftovers(&dir.path().join("out")), Vec::<String>::new());
}

/// What the base folder holds beside the outputs, the cache, the lock files and the run
/// history: staging folders a run left behind.
fn leftovers(base: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(base)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n != ".rip-cache" && !n.ends_with(".lock"))
        .collect();
    v.sort();
    v
}

fn listed(dir: &Path, origin: &str, urls: &[&str]) -> PathBuf {
    demo_state(dir, origin, |v| {
        v.as_object_mut().unwrap().remove("crawler");
        v["urls"] = serde_json::json!(urls);
    })
}

/// `ripperoni run` on a list of pages; its exit code must be `code`. Returns its stderr.
fn run_list(dir: &Path, origin: &str, urls: &[&str], code: i32) -> String {
    let state = listed(dir, origin, urls);
    let o = run(&["run", state.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    err
}

/// Whether the folder holds a file of this name.
fn has(dir: &Path, name: &str) -> bool {
    dir.join(name).is_file()
}

#[test]
fn a_complete_run_replaces_the_previous_output_as_a_whole() {
    let dir = tempfile::tempdir().unwrap();
    let server = plain_server();
    let out = dir.path().join("out/emberfall");
    let (one, two, three) = (
        "items/item-1.html",
        "items/item-2.html",
        "items/item-3.html",
    );
    run_list(dir.path(), &server.origin(), &[one, two], 0);
    assert!(has(&out, "items-item-2.html.json"));

    run_list(dir.path(), &server.origin(), &[one, three], 0);
    // The second run's output, whole: nothing of the first is left in it.
    assert!(has(&out, "items-item-3.html.json"));
    assert!(!has(&out, "items-item-2.html.json"));
    let h = read_json(out.join("crawl-health.json"));
    assert_eq!(h["ledger"]["entered"], 2);
    assert_eq!(h["complete"], true);
    let stream = std::fs::read_to_string(out.join("stream.ndjson")).unwrap();
    assert!(stream.contains("item-3.html") && !stream.contains("item-2.html"));
    let r = runs(dir.path()).pop().unwrap();
    assert_eq!(r["status"], "complete");
    assert!(r.get("kept").is_none(), "{r:#}");
    assert_eq!(
        r["logs"],
        out.join(".ripperoni/logs").display().to_string(),
        "{r:#}"
    );
    assert!(has(&out, ".ripperoni/logs/00-rip-check.log"));
    assert_eq!(leftovers(&dir.path().join("out")), Vec::<String>::new());
}

#[test]
fn a_partial_run_replaces_the_previous_output_and_says_it_is_partial() {
    let dir = tempfile::tempdir().unwrap();
    let server = plain_server();
    let out = dir.path().join("out/emberfall");
    let (one, two) = ("items/item-1.html", "items/item-2.html");
    run_list(dir.path(), &server.origin(), &[one, two], 0);

    // One page of the new list does not exist: a partial run, explicitly so, put in place.
    let err = run_list(dir.path(), &server.origin(), &[one, "nowhere.html"], 2);
    assert!(!err.contains("is kept"), "{err}");
    assert!(has(&out, "nowhere.html.json"));
    assert!(!has(&out, "items-item-2.html.json"));
    let h = read_json(out.join("crawl-health.json"));
    assert_eq!(h["totals"]["missing"], 1);
    let r = runs(dir.path()).pop().unwrap();
    assert_eq!(r["status"], "partial");
    assert!(r.get("kept").is_none(), "{r:#}");
    assert!(
        err.contains(&format!("report: {}", out.join("report.html").display())),
        "{err}"
    );
    assert_eq!(leftovers(&dir.path().join("out")), Vec::<String>::new());
}

/// A folder ripperoni did not write is never emptied nor replaced.
#[test]
fn a_folder_ripperoni_did_not_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = listed(dir.path(), "http://127.0.0.1:1", &["items/item-1.html"]);
    let out = dir.path().join("out/emberfall");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("was not written by ripperoni"), "{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
}
