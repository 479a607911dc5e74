//! A state file's `render`: the pages whose URL matches go through headless Chromium
//! (`rip-render --only`), the rest through rip-fetch, in one run whose books balance.

use crate::support::*;
use rip_testkit::testdata;
use rip_testserver::TestServer;
use serde_json::{Value, json};

/// Runs the state file at `path`; asserts the run exits 0 and its health report says
/// complete; returns the docs of its output folder `out` (three of them).
fn run_complete(path: &std::path::Path, out: &std::path::Path) -> Vec<Value> {
    let o = run(&["run", "-q", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let health: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("crawl-health.json")).unwrap())
            .unwrap();
    assert_eq!(health["complete"], true, "{health:#}");
    let stream = std::fs::read_to_string(out.join("stream.ndjson")).unwrap();
    let docs: Vec<Value> = stream
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["_type"] == "doc")
        .collect();
    assert_eq!(docs.len(), 3, "{stream}");
    docs
}

/// The script-built site (testdata/site-js) served, and a state file for its three pages
/// (`market.state.json` in `dir`, output under `dir/out`) with `extra`'s fields added.
fn market_site(dir: &std::path::Path, extra: Value) -> (TestServer, std::path::PathBuf) {
    let server = TestServer::builder()
        .dir(testdata("site-js"))
        .start_background()
        .unwrap();
    let mut state = json!({
        "baseUrl": format!("{}/", server.origin()),
        "urls": ["/market/", "/app/?view=guilds", "/index.html"],
        "rateLimitMs": 0,
        "jitterMs": 0,
        "rules": testdata("render/market.rules.toml").display().to_string(),
        "output": {"basePath": dir.join("out").display().to_string()},
    });
    for (k, v) in extra.as_object().unwrap() {
        state[k] = v.clone();
    }
    let path = dir.join("market.state.json");
    std::fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    (server, path)
}

#[test]
fn a_state_file_with_render_renders_the_matching_pages_and_fetches_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (server, path) = market_site(
        dir.path(),
        json!({
            "render": {"urls": "/(market|app)/", "tabs": 2, "wait": "network-idle", "session": true},
        }),
    );

    let o = run(&["pipeline", path.to_str().unwrap()]);
    let script = String::from_utf8_lossy(&o.stdout);
    assert!(
        script.contains("rip-render --only '/(market|app)/' --wait network-idle -c 2 --session"),
        "{script}"
    );
    assert!(script.contains("| rip-fetch "), "the other pages: {script}");

    let docs = run_complete(&path, &dir.path().join("out/market"));
    let market = docs.iter().find(|d| d["concept"] == "market").unwrap();
    assert_eq!(
        market["products"].as_array().map_or(0, Vec::len),
        12,
        "{market}"
    );
    let board = docs.iter().find(|d| d["concept"] == "board").unwrap();
    assert!(!board["entries"].as_array().unwrap().is_empty(), "{board}");
    assert_eq!(server.count("/index.html"), 1);
    assert_eq!(server.count("/api/products.json"), 1, "rendered once");
}

/// A policy with render rules and no `render` section: every page is fetched, and the
/// fetched pages that are empty shells go on to the browser (`rip-render --only-marked`
/// at the start of each round and after the last), the books still balancing.
#[test]
fn a_policy_with_render_rules_sends_the_empty_shells_to_the_browser() {
    let dir = tempfile::tempdir().unwrap();
    let (server, path) = market_site(
        dir.path(),
        json!({
            "maxRetries": 1,
            "policy": testdata("render/shells.policy.toml").display().to_string(),
        }),
    );

    let o = run(&["pipeline", path.to_str().unwrap()]);
    let script = String::from_utf8_lossy(&o.stdout);
    let renders = script.matches("rip-render --only-marked").count();
    assert_eq!(renders, 3, "one per round and one after the last: {script}");

    let docs = run_complete(&path, &dir.path().join("out/market"));
    let market = docs.iter().find(|d| d["concept"] == "market").unwrap();
    assert_eq!(market["products"].as_array().map_or(0, Vec::len), 12);
    let board = docs.iter().find(|d| d["concept"] == "board").unwrap();
    assert!(!board["entries"].as_array().unwrap().is_empty(), "{board}");
    assert_eq!(
        server.count("/market/"),
        1,
        "the browser read rip-fetch's cache"
    );
    assert_eq!(server.count("/api/products.json"), 1, "rendered once");
}

/// `"render": "auto"`: every page is fetched; rip-discover (in a crawl) and each round's
/// rip-route judge it (`--render auto`) and a `rip-render --only-marked` renders the ones
/// whose content needs script, whose docs say why.
#[test]
fn render_auto_renders_the_shells_and_keeps_the_index_from_the_browser() {
    let dir = tempfile::tempdir().unwrap();
    let (server, path) = market_site(
        dir.path(),
        json!({
            "maxRetries": 1,
            "render": "auto",
        }),
    );

    let o = run(&["pipeline", path.to_str().unwrap()]);
    let script = String::from_utf8_lossy(&o.stdout);
    assert_eq!(script.matches("--render auto").count(), 2, "{script}");
    assert_eq!(
        script.matches("rip-render --only-marked").count(),
        3,
        "{script}"
    );
    assert_eq!(script.matches("rip-fetch").count(), 2, "{script}");

    let docs = run_complete(&path, &dir.path().join("out/market"));
    let market = docs.iter().find(|d| d["concept"] == "market").unwrap();
    assert_eq!(market["products"].as_array().map_or(0, Vec::len), 12);
    assert_eq!(
        market["renderedBecause"]["signal"], "emptyContainer",
        "{market}"
    );
    let board = docs.iter().find(|d| d["concept"] == "board").unwrap();
    assert!(!board["entries"].as_array().unwrap().is_empty(), "{board}");
    let kept: Vec<_> = docs
        .iter()
        .filter(|d| d.get("renderedBecause").is_none())
        .collect();
    assert_eq!(kept.len(), 1, "the index: {kept:?}");
    assert_eq!(
        server.count("/market/"),
        1,
        "the browser read rip-fetch's cache"
    );
    // The run's record counts them (and `ripperoni run` says so on stderr).
    let runs = std::fs::read_to_string(dir.path().join("out/runs.ndjson")).unwrap();
    let run: Value = serde_json::from_str(runs.lines().last().unwrap()).unwrap();
    let counter = |k: &str| run["counters"][format!("renderAuto.{k}")].as_u64();
    assert_eq!(counter("fetched"), Some(3), "{run}");
    assert_eq!(counter("rendered"), Some(2), "{run}");
    // The index, kept from the browser, is judged again by the second round's rip-route.
    assert_eq!(counter("autoChecked"), Some(4), "{run}");
}
