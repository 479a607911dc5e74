//! A state file's `render`: the pages whose URL matches go through headless Chromium
//! (`rip-render --only`), the rest through rip-fetch, in one run whose books balance.

use crate::support::*;
use rip_testkit::testdata;
use rip_testserver::TestServer;
use serde_json::{Value, json};

#[test]
fn a_state_file_with_render_renders_the_matching_pages_and_fetches_the_rest() {
    let server = TestServer::builder()
        .dir(testdata("site-js"))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = json!({
        "baseUrl": format!("{}/", server.origin()),
        "urls": ["/market/", "/app/?view=guilds", "/index.html"],
        "rateLimitMs": 0,
        "jitterMs": 0,
        "rules": testdata("render/market.rules.toml").display().to_string(),
        "output": {"basePath": dir.path().join("out").display().to_string()},
        "render": {"urls": "/(market|app)/", "tabs": 2, "wait": "network-idle"},
    });
    let path = dir.path().join("market.state.json");
    std::fs::write(&path, serde_json::to_string_pretty(&state).unwrap()).unwrap();

    let o = run(&["pipeline", path.to_str().unwrap()]);
    let script = String::from_utf8_lossy(&o.stdout);
    assert!(
        script.contains("rip-render --only '/(market|app)/' --wait network-idle -c 2"),
        "{script}"
    );
    assert!(script.contains("| rip-fetch "), "the other pages: {script}");

    let o = run(&["run", "-q", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = dir.path().join("out/market");
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
