//! Real stages on the fault-injecting server serving the demo site, then rip-reconcile
//! and rip-health, as a user types it. Needs the other stages built in the same target
//! folder (`make test` does; alone: `cargo build --workspace --bins`).

use rip_health::Report;
use rip_testserver::{Fault, Rule, TestServer};

use crate::testdata;

/// rip-fetch for tests: two HTTP attempts per round, short backoff, no politeness gap,
/// no cache (as rip-route's pipeline tests).
const FETCH: &str = "rip-fetch --attempts 2 --retry-base 10ms --retry-max 50ms \
    --give-up-after 500ms --delay 0ms --jitter 0ms --cache off --no-shared-politeness -q";

const PAGES: &[&str] = &[
    "/",
    "/classes/",
    "/ancestries/",
    "/spells/",
    "/classes/12.html",
    "/ancestries/12.html",
    "/ancestries/77.html",
    "/spells/77.html",
    "/items/item-5.html",
    "/private/secret.html",
];

/// The links a crawler would have followed to reach the failures, with their texts.
const BROKEN: &[(&str, &str, &str)] = &[
    ("/classes/77.html", "/classes/", "Catfolk"),
    (
        "/items/item-99.html",
        "/blog/patch-notes-2-1.html",
        "Dragonbone Lute",
    ),
    ("/old.html", "/", "Old page"),
];

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn a_real_pipeline_is_reconciled_and_its_books_balance() {
    for b in [
        "rip-fetch",
        "rip-route",
        "rip-parse",
        "rip-write",
        "rip-reconcile",
    ] {
        rip_testkit::bin(b);
    }
    let server = TestServer::builder()
        .dir(testdata("site"))
        .rule(Rule::path("/items/item-5.html").times(2, Fault::status(503)))
        .rule(Rule::path("/old.html").always(Fault::status(410)))
        .start_background()
        .expect("the test server starts");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut refs = String::new();
    for p in PAGES {
        let mut r = rip_core::Ref::new(server.url(p));
        r.context.depth = 1;
        refs += &(serde_json::to_string(&rip_core::Record::Ref(r)).unwrap() + "\n");
    }
    for (p, parent, text) in BROKEN {
        let mut r = rip_core::Ref::new(server.url(p));
        r.context.depth = 2;
        r.context.parent = Some(server.url(parent));
        r.context.link_text = Some((*text).into());
        refs += &(serde_json::to_string(&rip_core::Record::Ref(r)).unwrap() + "\n");
    }
    std::fs::write(dir.join("refs.ndjson"), refs).unwrap();
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(testdata("reconcile/site.json")).unwrap())
            .unwrap();
    config["dead"] = serde_json::json!([{"status": [410], "reason": "removed upstream"}]);
    std::fs::write(dir.join("reconciler.json"), config.to_string()).unwrap();

    let route = "rip-route --max-retries 1 -q";
    let script = format!(
        "{FETCH} < refs.ndjson | {route} | {FETCH} | {route} | rip-parse -q \
         | rip-write -q --out out --name site > stream.ndjson; \
         rip-reconcile -q --config reconciler.json < stream.ndjson \
         | rip-health -q --html report.html > crawl-health.json; echo \"${{PIPESTATUS[@]}}\""
    );
    let out = rip_testkit::run_shell(&script, Some(dir));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0 2",
        "{stderr}"
    );

    let report: Report =
        serde_json::from_str(&std::fs::read_to_string(dir.join("crawl-health.json")).unwrap())
            .unwrap();
    assert!(report.complete, "{:?}\n{stderr}", report.ledger.problems);
    let l = &report.ledger;
    assert_eq!((l.entered, l.accounted), (13, 13));
    let stages: Vec<&str> = l.stages.iter().map(|s| s.stage.as_str()).collect();
    assert_eq!(
        stages,
        [
            "rip-fetch",
            "rip-route",
            "rip-fetch",
            "rip-route",
            "rip-parse",
            "rip-write",
            "rip-reconcile"
        ]
    );
    let t = &report.totals;
    assert_eq!(
        (
            t.concepts,
            t.failures,
            t.captured_elsewhere,
            t.missing,
            t.dead
        ),
        (9, 3, 1, 1, 1),
        "{report:#?}"
    );
    assert_eq!(
        report.captured_elsewhere[0].url,
        server.url("/classes/77.html")
    );
    assert_eq!(
        report.captured_elsewhere[0].at,
        server.url("/ancestries/77.html")
    );
    assert_eq!(report.missing[0].url, server.url("/items/item-99.html"));
    assert_eq!(report.dead[0].reason, "removed upstream");
    assert_eq!(
        report.expected.by_source.get("robots"),
        Some(&1),
        "/private/ is disallowed"
    );
    assert_eq!(report.outcomes.recovered, 1, "item-5 after two 503s");
    assert_eq!(report.outcomes.first_attempt, 8);
    assert_eq!(report.counters.persisted, 9);
    assert!(report.counters.invariant_holds);

    // The folder rip-write filled, reconciled in place and reported on.
    let site = dir.join("out/site");
    let script = format!(
        "rip-reconcile -q --config reconciler.json --dir {s} > /dev/null && rip-health -q --dir {s} --no-ledger; echo $?",
        s = site.display()
    );
    let out = rip_testkit::run_shell(&script, Some(dir));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2");
    let report: Report =
        serde_json::from_str(&std::fs::read_to_string(site.join("crawl-health.json")).unwrap())
            .unwrap();
    assert_eq!(report.target, "site");
    let t = &report.totals;
    assert_eq!(
        (
            t.concepts,
            t.failures,
            t.captured_elsewhere,
            t.missing,
            t.dead
        ),
        (9, 3, 1, 1, 1)
    );
    assert_eq!(
        report.unreconciled, 0,
        "every error file carries its verdict"
    );
}

#[test]
fn refs_never_fetched_are_in_flight_and_not_complete() {
    // `rip-discover URL --max-depth 0 | rip-health`: refs, nothing fetched. It passed.
    rip_testkit::bin("rip-discover");
    let server = TestServer::builder()
        .dir(testdata("site"))
        .start_background()
        .expect("the test server starts");
    let tmp = tempfile::tempdir().unwrap();
    let script = format!(
        "rip-discover -q --delay 0ms --jitter 0ms --cache off {} --max-depth 0 \
         | rip-health --html report.html > crawl-health.json; echo \"${{PIPESTATUS[@]}}\"",
        server.url("/")
    );
    let out = rip_testkit::run_shell(&script, Some(tmp.path()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0 2",
        "{stderr}"
    );
    let json = std::fs::read_to_string(tmp.path().join("crawl-health.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["complete"], false);
    let in_flight = v["ledger"]["inFlight"].as_array().expect("inFlight listed");
    assert!(!in_flight.is_empty(), "{json}");
    assert!(
        in_flight
            .iter()
            .all(|u| u["lastSeen"] == "ref"
                && u["url"].as_str().unwrap().starts_with(&server.url("/"))),
        "{json}"
    );
    assert!(stderr.contains("INCOMPLETE"), "{stderr}");
    assert!(stderr.contains("(last seen as ref)"), "{stderr}");
    assert!(stderr.contains("no ledger records"), "{stderr}");
    let page = std::fs::read_to_string(tmp.path().join("report.html")).unwrap();
    assert!(page.contains("In flight"), "the HTML report lists them");
}
