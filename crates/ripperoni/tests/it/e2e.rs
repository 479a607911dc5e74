//! Whole runs on the fault-injecting server with the demo fault plan
//! (testdata/demo-faults.json), every number derived from the plan and the site's README.
//!
//! The site: crawl A reaches 47 pages, the logo and two broken links (50 URLs, each a
//! target, so 50 enter), and one robots-disallowed link (an `expected` record). The logo
//! is not HTML: rip-parse makes it a `parse.notHtml` failure, which the demo policy routes
//! to `expected` (a known gap). The plan:
//!
//! - `/items/item-7.html`: 503 six times. rip-discover tries it 3 times, round 1's
//!   rip-fetch 3 times, all 503; round 2 gets it: recovered, 7 requests.
//! - `/ancestries/23.html`: a reset six times: the same, recovered in round 2.
//! - `/blog/spell-roundup.html`: one 429 with Retry-After 1: rip-discover waits and gets
//!   it on its second request; rip-fetch finds it in the cache.
//! - `/classes/9.html`: 410 always: captured (policy), then `dead` (reconciler rule).
//! - `/classes/77.html` (the mis-link): 404, captured, `capturedElsewhere` at
//!   `/ancestries/77.html` (key 77 and the link text `Catfolk` both match; the spell 77
//!   is a decoy).
//! - `/items/item-99.html`: 404, captured, `missing`.
//!
//! So 46 docs (the pages), 3 error documents, 2 expected (the robots-disallowed link and
//! the logo); 44 first-try docs and 2 recovered.

use crate::support::*;
use serde_json::Value;

fn file_names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    v.sort();
    v
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn a_run_on_the_fault_server_accounts_for_every_url_number_for_number() {
    let server = demo_server();
    let origin = server.origin();
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), &origin, |_| {});
    let o = run(&["run", state.to_str().unwrap()]);
    let err = stderr(&o);
    // Partial: one URL is missing.
    assert_eq!(o.status.code(), Some(2), "{err}");
    let out = dir.path().join("out/emberfall");
    let h = read_json(out.join("crawl-health.json"));
    assert_eq!(
        h["totals"],
        serde_json::json!({"concepts": 46, "failures": 3, "capturedElsewhere": 1, "missing": 1, "dead": 1})
    );
    assert_eq!(
        h["capturedElsewhere"],
        serde_json::json!([{"url": format!("{origin}/classes/77.html"), "at": format!("{origin}/ancestries/77.html")}])
    );
    assert_eq!(
        h["missing"][0]["url"],
        format!("{origin}/items/item-99.html")
    );
    assert_eq!(h["missing"].as_array().unwrap().len(), 1);
    assert_eq!(h["dead"][0]["url"], format!("{origin}/classes/9.html"));
    assert_eq!(h["dead"][0]["reason"], "removed from the compendium");
    // The books: 50 URLs entered, each came out exactly once, every stage accounted.
    let ledger = &h["ledger"];
    assert_eq!(ledger["entered"], 50, "{ledger:#}");
    assert_eq!(ledger["accounted"], 50, "{ledger:#}");
    assert_eq!(ledger["complete"], true, "{ledger:#}");
    assert_eq!(ledger["stages"].as_array().unwrap().len(), 10, "{ledger:#}");
    // Each stage process said how much memory it held at most (VmHWM): a few MB at least,
    // less than a gigabyte on the demo site.
    for st in ledger["stages"].as_array().unwrap() {
        let peak = st["peakRssBytes"].as_u64().unwrap_or(0);
        assert!((1 << 20..1 << 30).contains(&peak), "{st:#}");
    }
    assert_eq!(
        h["counters"],
        serde_json::json!({"consumed": 46, "persisted": 46, "failed": 3, "expected": 2, "entered": 50, "notEntered": 1, "invariantHolds": true}),
    );
    assert_eq!(h["expected"]["total"], 2);
    // The logo: not HTML, a known gap by the demo policy's `parse.notHtml` rule.
    assert_eq!(
        h["expected"]["byReason"]["not HTML: images and downloads are not scraped"], 1,
        "{:#}",
        h["expected"]
    );
    assert_eq!(
        h["expected"]["bySource"]["policy"], 1,
        "{:#}",
        h["expected"]
    );
    // Transient faults recovered, in round 2.
    let outcomes = &h["outcomes"];
    assert_eq!(outcomes["recovered"], 2, "{outcomes:#}");
    assert_eq!(outcomes["firstAttempt"], 44, "{outcomes:#}");
    assert_eq!(outcomes["failedFirstRound"], 3, "{outcomes:#}");
    let names = file_names(&out);
    for name in ["items-item-7.html.json", "ancestries-23.html.json"] {
        assert!(names.iter().any(|n| n == name), "no {name} in {names:?}");
        let doc = read_json(out.join(name));
        assert_eq!(doc["_type"], "doc", "{doc:#}");
        assert_eq!(doc["attempt"], 1, "recovered on the second round: {doc:#}");
    }
    // Permanent failures captured and classified, the verdict in each error document.
    let failures = read_json(out.join("failures.json"));
    let captured: Vec<&Value> = failures["captured"].as_array().unwrap().iter().collect();
    assert_eq!(captured.len(), 3, "{failures:#}");
    for (path, status, resolution) in [
        ("/classes/9.html", 410, "dead"),
        ("/classes/77.html", 404, "capturedElsewhere"),
        ("/items/item-99.html", 404, "missing"),
    ] {
        let url = format!("{origin}{path}");
        let c = captured
            .iter()
            .find(|c| c["url"] == url.as_str())
            .unwrap_or_else(|| panic!("{url} not captured: {failures:#}"));
        assert_eq!(c["status"], status, "{c:#}");
        assert_eq!(c["category"], "PERMANENT", "{c:#}");
        assert_eq!(c["errors"][0]["code"], "httpError.permanent", "{c:#}");
        // Its error document, classified by the reconciler.
        let doc = read_json(out.join(c["file"].as_str().unwrap()));
        assert_eq!(doc["_type"], "error", "{doc:#}");
        assert_eq!(doc["resolution"]["status"], resolution, "{doc:#}");
    }
    assert_eq!(failures["unrouted"], serde_json::json!([]));
    assert_eq!(failures["notPersisted"], serde_json::json!([]));
    // The network saw what the plan implies, and every other URL once.
    let counts = requests_per_path(&server);
    assert_eq!(counts["/items/item-7.html"], 7);
    assert_eq!(counts["/ancestries/23.html"], 7);
    assert_eq!(counts["/blog/spell-roundup.html"], 2);
    // Every other URL once, but the three permanent failures: rip-discover's request and
    // round 1's (a 404 or 410 is not cached), then captured without a retry.
    for (path, n) in &counts {
        let want = match path.as_str() {
            "/items/item-7.html" | "/ancestries/23.html" => 7,
            "/blog/spell-roundup.html" => 2,
            "/classes/9.html" | "/classes/77.html" | "/items/item-99.html" => 2,
            _ => 1,
        };
        assert_eq!(*n, want, "{path}: {counts:#?}");
    }
    assert_eq!(counts.len(), 51, "50 URLs and robots.txt: {counts:#?}");
    // The report, the stream, the run record.
    assert!(out.join("report.html").is_file());
    assert!(out.join("stream.ndjson").is_file());
    let runs = runs(dir.path());
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert_eq!(r["status"], "partial");
    assert_eq!(r["exitCode"], 2);
    assert_eq!(r["counters"]["consumed"], 46);
    assert_eq!(r["counters"]["failed"], 3);
    assert_eq!(r["counters"]["discovered"], 50);
    assert!(
        r["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e.as_str().unwrap().contains("item-99")),
        "{r:#}"
    );
    assert_eq!(r["stages"].as_array().unwrap().len(), 10);
    // The end of the output: Ladon's summary and the report's path.
    assert!(err.contains("consumed 46, persisted 46, failed 3"), "{err}");
    assert!(
        err.contains("report: ") && err.contains("report.html"),
        "{err}"
    );
}

#[test]
fn the_printed_pipeline_run_by_hand_gives_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let server = demo_server();
    let state = demo_state(dir.path(), &server.origin(), |v| {
        v["output"]["basePath"] = dir.path().join("by-hand").display().to_string().into();
    });
    let o = run(&["pipeline", state.to_str().unwrap()]);
    let script = String::from_utf8(o.stdout).unwrap();
    // Under `set -e`, as scripts are run: the partial steps (rip-write's and rip-health's
    // exit 2) go on, so the script ends with its moves into place, then exits 2 (partial)
    // as `ripperoni run` does below, for a scheduled script to gate on.
    let sh = rip_testkit::shell(&format!("set -e\n{script}"), None)
        .output()
        .unwrap();
    assert_eq!(
        sh.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&sh.stderr)
    );
    let by_hand = read_json(dir.path().join("by-hand/emberfall/crawl-health.json"));
    assert!(
        !dir.path().join("by-hand/.emberfall.staging").exists(),
        "the staging folder is gone: the script ran to its end"
    );

    let server = demo_server();
    let state = demo_state(dir.path(), &server.origin(), |_| {});
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let wrapped = read_json(dir.path().join("out/emberfall/crawl-health.json"));
    for k in ["totals", "counters", "outcomes"] {
        assert_eq!(by_hand[k], wrapped[k], "{k}");
    }
    assert_eq!(by_hand["ledger"]["complete"], true);
}

#[test]
fn a_url_list_skips_discovery() {
    let server = demo_server();
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), &server.origin(), |v| {
        v.as_object_mut().unwrap().remove("crawler");
        v["urls"] = serde_json::json!([
            "items/item-1.html",
            "/items/item-7.html",
            format!("{}/classes/9.html", server.origin()),
            "/nowhere.html"
        ]);
        v["output"]["format"] = "jsonl".into();
        v["includeRawContent"] = true.into();
    });
    let o = run(&["pipeline", state.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("rip-check -i ") && !text.contains("rip-discover"),
        "{text}"
    );
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = dir.path().join("out/emberfall");
    let h = read_json(out.join("crawl-health.json"));
    assert_eq!(h["ledger"]["entered"], 4, "{:#}", h["ledger"]);
    assert_eq!(h["ledger"]["complete"], true, "{:#}", h["ledger"]);
    assert_eq!(
        h["totals"]["concepts"], 2,
        "item-1, and item-7 recovered in round 3"
    );
    assert_eq!(h["totals"]["dead"], 1);
    assert_eq!(h["totals"]["missing"], 1);
    let docs = std::fs::read_to_string(out.join("docs.jsonl")).unwrap();
    assert_eq!(docs.lines().count(), 2);
    let errors = std::fs::read_to_string(out.join("errors.jsonl")).unwrap();
    assert_eq!(errors.lines().count(), 2, "{errors}");
    // includeRawContent: the bodies of the two pages, as fetched.
    let raw: Vec<String> = std::fs::read_dir(out.join("raw"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(raw.len(), 2, "{raw:?}");
    assert!(raw.iter().any(|n| n.contains("item-7")), "{raw:?}");
    // Without rip-discover, item-7's six 503s fall on the rounds: 3 + 3, then served.
    assert_eq!(server.count("/items/item-7.html"), 7);
    assert!(
        !server.requests().iter().any(|r| r.path == "/items/"),
        "no link followed"
    );
}

#[test]
fn a_url_lists_printed_pipeline_runs_by_hand_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let list = |origin: &str, base: &str| {
        let base = dir.path().join(base);
        demo_state(dir.path(), origin, |v| {
            v.as_object_mut().unwrap().remove("crawler");
            v["urls"] =
                serde_json::json!(["items/item-1.html", "/items/item-7.html", "nowhere.html"]);
            v["output"]["basePath"] = base.display().to_string().into();
        })
    };
    let server = demo_server();
    let state = list(&server.origin(), "by-hand");
    let o = run(&["pipeline", state.to_str().unwrap()]);
    let script = String::from_utf8(o.stdout).unwrap();
    assert!(
        script.contains("<<'URLS'"),
        "the list is in the script: {script}"
    );
    let sh = rip_testkit::shell(&script, None).output().unwrap();
    assert!(
        matches!(sh.status.code(), Some(0 | 2)),
        "{}",
        String::from_utf8_lossy(&sh.stderr)
    );
    let by_hand = read_json(dir.path().join("by-hand/emberfall/crawl-health.json"));

    let server = demo_server();
    let state = list(&server.origin(), "out");
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let wrapped = read_json(dir.path().join("out/emberfall/crawl-health.json"));
    assert_eq!(wrapped["ledger"]["entered"], 3);
    assert_eq!(wrapped["totals"]["concepts"], 2);
    for k in ["totals", "counters", "outcomes"] {
        assert_eq!(by_hand[k], wrapped[k], "{k}");
    }
}

#[test]
fn a_site_that_is_not_there_yet_is_not_ready() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on port 1: the start URL cannot be fetched.
    let state = demo_state(dir.path(), "http://127.0.0.1:1", |v| {
        v["retryBaseDelayMs"] = 10.into();
    });
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "{err}");
    let runs = runs(dir.path());
    assert_eq!(runs[0]["status"], "not-ready");
    assert_eq!(runs[0]["exitCode"], 3);
    // Hints for someone who ran `ripperoni run`, not for a hand-made pipeline.
    assert!(
        err.contains("(hint: is the site at http://127.0.0.1:1/ up? run the same command again"),
        "{err}"
    );
    assert!(err.contains("was not ready"), "{err}");
    assert!(!err.contains("--no-ledger"), "{err}");
    assert!(
        !runs[0]["errors"].to_string().contains("--no-ledger"),
        "{:#}",
        runs[0]
    );
}

/// `make demo`'s script, on a copy of what it reads (so that the checkout's out/ is not
/// touched): it succeeds, says why the run is partial before it starts, and ends with
/// the health summary, Ladon's counters and the report's path.
#[test]
fn the_demo_script_ends_with_the_summary_and_the_reports_path() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    std::fs::create_dir_all(r.join("scripts")).unwrap();
    std::fs::copy(repo().join("scripts/demo"), r.join("scripts/demo")).unwrap();
    for d in ["site", "demo"] {
        copy_dir(
            &repo().join("testdata").join(d),
            &r.join("testdata").join(d),
        );
    }
    std::fs::copy(
        repo().join("testdata/demo-faults.json"),
        r.join("testdata/demo-faults.json"),
    )
    .unwrap();
    let o = std::process::Command::new("bash")
        .arg(r.join("scripts/demo"))
        .env("RIP_BIN_DIR", rip_testkit::bin_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("demo: expect partial (exit 2) for one reason only"),
        "{err}"
    );
    let lines: Vec<&str> = err.trim_end().lines().collect();
    let n = lines.len();
    assert!(
        lines[n - 3].contains("consumed 46, persisted 46, failed 3, errors 1"),
        "{err}"
    );
    assert!(lines[n - 2].contains("missing: http://"), "{err}");
    assert!(lines[n - 2].ends_with("/items/item-99.html"), "{err}");
    let report = r.join("out/emberfall/report.html");
    assert_eq!(
        lines[n - 1],
        format!("report: {}", report.display()),
        "{err}"
    );
    assert!(report.is_file());
    assert!(err.contains("crawl health · emberfall"), "{err}");

    // A fault the retry rounds cannot recover: partial for another reason, and the demo
    // says so and fails.
    std::fs::write(
        r.join("testdata/demo-faults.json"),
        r#"{"rules": [{"path": "/items/item-7.html", "then": {"status": 503}}]}"#,
    )
    .unwrap();
    let o = std::process::Command::new("bash")
        .arg(r.join("scripts/demo"))
        .env("RIP_BIN_DIR", rip_testkit::bin_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("demo: partial for another reason than the plan's"),
        "{err}"
    );
}

/// The printed pipeline run a second time is a whole run again: its stream and report are
/// those of the first (rip-discover's crawl state made the second write nothing), and the
/// previous output stays in place until the new one is done.
#[test]
fn the_printed_pipeline_run_twice_gives_the_same_stream_and_report() {
    let dir = tempfile::tempdir().unwrap();
    let server = rip_testserver::TestServer::builder()
        .dir(repo().join("testdata/site"))
        .start_background()
        .unwrap();
    let state = demo_state(dir.path(), &server.origin(), |_| {});
    let o = run(&["pipeline", state.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = String::from_utf8(o.stdout).unwrap();
    let out = dir.path().join("out/emberfall");
    // The records of the stream by kind (ledgers are batched as time goes: not counted).
    let kinds = |stream: &str| {
        let mut m = std::collections::BTreeMap::<String, usize>::new();
        for l in stream.lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            let kind = v["_type"].as_str().unwrap().to_owned();
            if kind != "ledger" {
                *m.entry(kind).or_default() += 1;
            }
        }
        m
    };
    let mut seen = Vec::new();
    for _ in 0..2 {
        let sh = rip_testkit::shell(&script, None).output().unwrap();
        assert!(
            matches!(sh.status.code(), Some(0 | 2)),
            "{}",
            String::from_utf8_lossy(&sh.stderr)
        );
        let stream = std::fs::read_to_string(out.join("stream.ndjson")).unwrap();
        let h = read_json(out.join("crawl-health.json"));
        assert_eq!(h["ledger"]["entered"], 50, "{:#}", h["ledger"]);
        assert_eq!(h["ledger"]["complete"], true, "{:#}", h["ledger"]);
        seen.push((kinds(&stream), h["totals"].clone(), h["counters"].clone()));
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0].0["doc"], 47, "{:?}", seen[0].0);
}
