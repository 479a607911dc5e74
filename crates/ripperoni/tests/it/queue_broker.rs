//! A scrape spread over machines when the broker is in the way: a document over the broker's
//! largest message, and a broker killed and started again mid-run. Either way the run ends as
//! a run on one machine does (see `e2e.rs` for the numbers): one URL missing by design,
//! every other accounted for, the books balanced.

use crate::queue::{finish, worker};
use crate::support::*;
use rip_testkit::{NatsServer, Stage, wait_for};
use rip_testserver::{FaultPlan, TestServer};
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::Duration;

/// The demo's books, as a run on one machine ends them; the run ended partial (one URL
/// missing by design) and balanced.
fn assert_demo_books(dir: &Path, o: &Output) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "one URL is missing by design: {err}"
    );
    let health = dir.join("out/emberfall/crawl-health.json");
    assert!(health.is_file(), "no crawl-health.json: {err}");
    assert_eq!(
        read_json(health)["totals"],
        serde_json::json!({"concepts": 46, "failures": 3, "capturedElsewhere": 1, "missing": 1, "dead": 1}),
        "{err}"
    );
    assert!(err.contains("(balanced)"), "{err}");
    assert!(
        !err.contains("tooLarge") && !err.contains("chunkLost"),
        "{err}"
    );
}

/// The demo site with item 1's traits made a list of `n`, so that its document is large.
fn site_with_a_large_item(dir: &Path, n: usize) -> TestServer {
    let site = dir.join("site");
    copy_dir(&repo().join("testdata/site"), &site);
    let page = site.join("items/item-1.html");
    let html = std::fs::read_to_string(&page).unwrap();
    let many: String = (0..n)
        .map(|i| format!("<li>Trait {i} of a long list of traits</li>"))
        .collect();
    let html = html.replacen(
        "<ul class=\"traits\">",
        &format!("<ul class=\"traits\">{many}"),
        1,
    );
    std::fs::write(&page, html).unwrap();
    let plan = FaultPlan::from_file(repo().join("testdata/demo-faults.json")).expect("the plan");
    TestServer::builder()
        .dir(site)
        .plan(plan)
        .start_background()
        .expect("the server starts")
}

#[test]
fn a_document_over_the_brokers_largest_message_reaches_the_output_whole() {
    let nats = NatsServer::start_with("max_payload: 64KB");
    let dir = tempfile::tempdir().unwrap();
    let server = site_with_a_large_item(dir.path(), 4000);
    let state = demo_state(dir.path(), &server.origin(), |v| {
        v["queue"] = serde_json::json!({"broker": nats.url(), "prefix": "big", "partitions": 4});
    });
    let workers: Vec<Child> = (0..2).map(|_| worker(&state)).collect();
    let o = run(&["run", state.to_str().unwrap()]);
    finish(workers);
    assert_demo_books(dir.path(), &o);
    // The item's document, over 64 KB, is there with every trait.
    let written = find_file_containing(&dir.path().join("out"), "Trait 3999 of a long list");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.len() > 64 << 10, "{} bytes", text.len());
    assert!(
        text.contains("Trait 0 of a long list"),
        "{}",
        written.display()
    );
}

/// The first file under `dir` holding `needle`.
fn find_file_containing(dir: &Path, needle: &str) -> std::path::PathBuf {
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for e in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                folders.push(path);
            } else if std::fs::read_to_string(&path).is_ok_and(|t| t.contains(needle)) {
                return path;
            }
        }
    }
    panic!("no file under {} holds {needle:?}", dir.display());
}

#[test]
fn a_broker_restarted_mid_run_leaves_the_books_as_a_run_on_one_machine() {
    let mut nats = NatsServer::start();
    let server = demo_server();
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), &server.origin(), |v| {
        v["queue"] = serde_json::json!({"broker": nats.url(), "prefix": "bumpy", "partitions": 4});
    });
    let workers: Vec<Child> = (0..2).map(|_| worker(&state)).collect();
    let coordinator = ripperoni()
        .args(["run", state.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The workers' first documents are stored, the coordinator's relay reading them: the
    // broker dies, and comes back on its store.
    wait_for("documents coming back", Duration::from_secs(60), || {
        docs_stored(&nats, "bumpy") >= 3
    });
    nats.kill();
    let mut coordinator = coordinator;
    assert!(
        coordinator.try_wait().unwrap().is_none(),
        "the run ended before the broker died"
    );
    std::thread::sleep(Duration::from_millis(1500));
    nats.restart();
    let o = coordinator.wait_with_output().unwrap();
    finish(workers);
    assert_demo_books(dir.path(), &o);
}

/// The records stored in the scrape's docs stream under `prefix` (0 before it exists).
fn docs_stored(nats: &NatsServer, prefix: &str) -> usize {
    let pulled = Stage::new("rip-queue")
        .args(["--broker", &nats.url(), "--prefix", prefix, "-q"])
        .args(["pull", "emberfall-docs"])
        .run();
    pulled.stdout.lines().count()
}

#[test]
fn the_coordinator_routes_what_comes_back_as_a_run_on_one_machine_routes_it_last() {
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), "http://127.0.0.1:1", |v| {
        v["queue"] = serde_json::json!({"broker": "nats://127.0.0.1:1", "prefix": "p"});
    });
    let printed = run(&["pipeline", state.to_str().unwrap()]);
    let printed = String::from_utf8_lossy(&printed.stdout).into_owned();
    let lines: Vec<&str> = printed.lines().collect();
    let relay = lines
        .iter()
        .position(|l| l.contains(" relay emberfall-refs emberfall-docs"))
        .unwrap_or_else(|| panic!("{printed}"));
    // A failure the queue made (a record a worker gave up) is routed like any other.
    assert!(
        lines[relay + 1].contains("| rip-route ") && lines[relay + 1].contains(" --final"),
        "{printed}"
    );
    assert!(lines[relay + 2].contains("| rip-write "), "{printed}");
}
