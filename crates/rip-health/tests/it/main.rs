//! `rip-health` run as a binary on the golden streams of `testdata/health/` (see
//! `make_streams.py`; the `*.reconciled.ndjson` files are rip-reconcile's output, kept
//! current by a rip-reconcile test), its report read back with the library's types.

mod chromium;
mod html;
mod layouts;
mod live;
mod many;
mod network;
mod pipeline;
mod special;

use rip_health::Report;
use rip_testkit::Stage;
pub use rip_testkit::{Ran, testdata};
use std::path::Path;

/// `rip-health args…`, with `stdin` on its stdin when given (else none).
pub fn run(args: &[&str], stdin: Option<&str>) -> Ran {
    Stage::new("rip-health").args(args).maybe_stdin(stdin).run()
}

/// A run's report, read back from its stdout with the library's types.
pub trait Reported {
    /// The report on stdout.
    fn report(&self) -> Report;
}

impl Reported for Ran {
    fn report(&self) -> Report {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(testdata(&format!("health/{name}"))).unwrap()
}

/// Asserts that one of the report's ledger problems starts with `start`.
#[track_caller]
pub fn assert_problem(report: &Report, start: &str) {
    let problems = &report.ledger.problems;
    assert!(
        problems.iter().any(|p| p.starts_with(start)),
        "no problem starting `{start}`: {problems:?}"
    );
}

#[test]
fn the_worked_example_has_exactly_the_references_shape_and_numbers() {
    let r = run(
        &["--name", "aonprd"],
        Some(&golden("aon.reconciled.ndjson")),
    );
    assert_eq!(r.code, 2, "two pages are missing: {}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys[..6],
        [
            "generatedAt",
            "target",
            "totals",
            "capturedElsewhere",
            "missing",
            "dead"
        ],
        "the reference's fields come first, in its order"
    );
    assert_eq!(v["target"], "aonprd");
    assert!(chrono::DateTime::parse_from_rfc3339(v["generatedAt"].as_str().unwrap()).is_ok());
    let aon = "https://2e.aonprd.com/";
    assert_eq!(
        v["totals"],
        serde_json::json!({"concepts": 3, "failures": 4, "capturedElsewhere": 1, "missing": 2, "dead": 1})
    );
    assert_eq!(
        v["capturedElsewhere"],
        serde_json::json!([{"url": format!("{aon}Classes.aspx?ID=77"), "at": format!("{aon}Ancestries.aspx?ID=77")}])
    );
    assert_eq!(
        v["missing"],
        serde_json::json!([
            {"url": format!("{aon}Equipment.aspx?ID=3611"), "errors": [{"code": "httpError.permanent", "message": "HTTP 404"}],
             "parent": format!("{aon}Equipment.aspx"), "linkText": "Dragonbone Lute"},
            {"url": format!("{aon}Monsters.aspx?ID=3542"), "errors": [{"code": "httpError.permanent", "message": "HTTP 404"}],
             "parent": format!("{aon}Monsters.aspx"), "linkText": "Ember Wyrm"}
        ]),
        "the reference's url and errors, then where the page was linked from"
    );
    assert_eq!(
        v["dead"],
        serde_json::json!([{"url": format!("{aon}Ancestries.aspx?ID=9"), "reason": "content removed from AON"}])
    );
    let report = r.report();
    assert!(report.complete, "{:?}", report.ledger.problems);
    assert_eq!(
        report.outcomes.recovered, 1,
        "Feats.aspx?ID=750 after a 503"
    );
    assert_eq!(report.retries.docs_by_rounds.get(&1), Some(&1));
}

#[test]
fn a_stream_that_balances_is_complete() {
    let r = run(&[], Some(&golden("site.reconciled.ndjson")));
    let report = r.report();
    let l = &report.ledger;
    assert!(
        report.complete && l.checked && l.complete,
        "{:?}",
        l.problems
    );
    assert_eq!((l.entered, l.accounted), (11, 11));
    assert!(l.unaccounted.is_empty() && l.duplicated.is_empty());
    assert_eq!(
        l.not_entered, 1,
        "the robots gap found by discovery never entered"
    );
    assert_eq!(l.stages.len(), 8);
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    let c = &report.counters;
    assert_eq!(
        (c.consumed, c.persisted, c.failed, c.expected, c.entered),
        (9, 9, 2, 1, 11)
    );
    assert!(c.invariant_holds);
    assert_eq!(report.expected.by_source.get("robots"), Some(&1));
    assert_eq!(report.outcomes.first_attempt, 8);
    assert_eq!(report.failures_by.host.get("127.0.0.1:8080"), Some(&2));
    let lat = report.latency.as_ref().expect("docs carry elapsedMs");
    assert_eq!((lat.samples, lat.p50, lat.max), (9, 13, 140));
    // Complete, but /items/item-99.html is missing: exit 2.
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("MISSING"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("missing     http://127.0.0.1:8080/items/item-99.html"),
        "{}",
        r.stderr
    );
}

#[test]
fn nothing_missing_and_books_balanced_exits_zero() {
    // The same stream, with the one missing page ruled dead by the reconciler.
    let text = golden("site.reconciled.ndjson").replace(
        r#""resolution":{"status":"missing"}"#,
        r#""resolution":{"status":"dead","reason":"never published"}"#,
    );
    let r = run(&[], Some(&text));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("OK"), "{}", r.stderr);
    assert_eq!(r.report().totals.dead, 1);
}

#[test]
fn a_stream_that_lost_a_record_is_incomplete_and_names_it() {
    let r = run(&[], Some(&golden("lost.reconciled.ndjson")));
    assert_eq!(r.code, 2);
    let report = r.report();
    assert!(!report.complete);
    let l = &report.ledger;
    assert_eq!(l.unaccounted.len(), 1);
    assert_eq!(
        l.unaccounted[0].url,
        "http://127.0.0.1:8080/ancestries/12.html"
    );
    assert!(
        l.problems
            .iter()
            .any(|p| p == "between rip-parse (pid 105) and rip-write (pid 106): rip-parse wrote 9 `doc`, rip-write read 8"),
        "{:?}",
        l.problems
    );
    assert!(!report.counters.invariant_holds);
    assert!(r.stderr.contains("INCOMPLETE"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("unaccounted http://127.0.0.1:8080/ancestries/12.html"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_stage_killed_mid_stream_is_caught_and_the_lost_urls_named() {
    // As if a stage was killed after writing its first records: the ledger (flushed
    // early) and five docs got through; the rest, the summaries included, did not.
    let text = golden("site.reconciled.ndjson");
    let cut: String = text.lines().take(6).map(|l| format!("{l}\n")).collect();
    let r = run(&[], Some(&cut));
    assert_eq!(r.code, 2);
    let report = r.report();
    assert!(!report.complete);
    let lost: Vec<&str> = report
        .ledger
        .unaccounted
        .iter()
        .map(|u| u.url.as_str())
        .collect();
    assert_eq!(
        lost,
        [
            "http://127.0.0.1:8080/ancestries/12.html",
            "http://127.0.0.1:8080/ancestries/77.html",
            "http://127.0.0.1:8080/classes/77.html",
            "http://127.0.0.1:8080/items/item-7.html",
            "http://127.0.0.1:8080/items/item-99.html",
            "http://127.0.0.1:8080/spells/77.html",
        ]
    );
    assert_problem(&report, "rip-fetch wrote ledger records but no summary");
    assert!(r.stderr.contains("… and 2 more"), "{}", r.stderr);
}

#[test]
fn a_record_that_came_out_twice_is_named() {
    let text = golden("site.reconciled.ndjson");
    let doc = text
        .lines()
        .find(|l| l.contains("\"_type\":\"doc\"") && l.contains("/spells/77.html"))
        .unwrap();
    let twice = format!("{doc}\n{text}");
    let report = run(&[], Some(&twice)).report();
    assert!(!report.complete);
    assert_eq!(report.ledger.duplicated.len(), 1);
    assert_eq!(
        report.ledger.duplicated[0].url,
        "http://127.0.0.1:8080/spells/77.html"
    );
    assert_eq!(report.ledger.duplicated[0].records, ["doc", "doc"]);
}

#[test]
fn empty_input_is_not_complete_and_says_nothing_was_scraped() {
    // `rip-health < /dev/null` passed with "OK" and exit 0: a scheduled scrape gated on it
    // would ship an empty result.
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("report.html");
    let r = run(&["--name", "empty", "--html", html.to_str().unwrap()], None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["totals"],
        serde_json::json!({"concepts": 0, "failures": 0, "capturedElsewhere": 0, "missing": 0, "dead": 0})
    );
    assert_eq!(v["capturedElsewhere"], serde_json::json!([]));
    assert_eq!(v["complete"], false);
    let report = r.report();
    assert_problem(&report, "no records in the input: nothing was scraped");
    assert!(!r.stderr.contains("OK"), "{}", r.stderr);
    assert!(r.stderr.contains("INCOMPLETE"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was scraped"), "{}", r.stderr);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("Everything captured"), "{page}");
    assert!(page.contains("nothing was scraped"), "{page}");
}

#[test]
fn stages_that_received_nothing_are_named_instead_of_the_ledger_hint() {
    // What fed rip-route failed (a queue's broker away): its summary and rip-write's say
    // they received nothing; --no-ledger would not help.
    let summary = |stage: &str, input: &str| {
        format!(
            r#"{{"_type":"summary","stage":"{stage}","pid":7,"startedAt":"2026-12-01T09:00:00Z","endedAt":"2026-12-01T09:00:01Z","input":{input},"output":{{"summary":1}},"passedThrough":{{}},"badLines":0,"status":"complete","counters":{{}}}}"#
        )
    };
    let input = format!(
        "{}\n{}\n",
        summary("rip-route", "{}"),
        summary("rip-write", r#"{"summary":1}"#)
    );
    let r = run(&[], Some(&input));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_problem(
        &r.report(),
        "no ledger records in the input: nothing entered, as no stage received a record \
         (hint: what feeds rip-route failed or gave nothing; its error says why)",
    );
    assert!(!r.stderr.contains("--no-ledger"), "{}", r.stderr);
}

#[test]
fn a_source_that_was_not_ready_is_named_instead_of_the_ledger_hint() {
    // rip-discover could not fetch its start URL (exit 3): nothing entered, so there is no
    // ledger; --no-ledger (a hint for hand-made pipelines missing a stage) does not fit.
    let failure = r#"{"_type":"failure","url":"http://h/","category":"NETWORK","retryable":true,"attempt":0,"phase":"discover","errors":[{"code":"net.connect","message":"connection refused","operation":"rip-discover"}]}"#;
    let summary = r#"{"_type":"summary","stage":"rip-discover","pid":7,"startedAt":"2026-12-01T09:00:00Z","endedAt":"2026-12-01T09:00:01Z","input":{},"output":{"failure":1,"summary":1},"passedThrough":{},"badLines":0,"status":"not-ready","counters":{}}"#;
    let r = run(&[], Some(&format!("{failure}\n{summary}\n")));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_problem(
        &r.report(),
        "no ledger records in the input: nothing entered, as the source, rip-discover \
         (pid 7), was not ready (hint: is the site up?",
    );
    assert!(!r.stderr.contains("--no-ledger"), "{}", r.stderr);
}

#[test]
fn an_empty_folder_is_not_complete_even_without_the_ledger() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("emptydir");
    std::fs::create_dir(&dir).unwrap();
    for extra in [&[][..], &["--no-ledger"][..]] {
        let mut args = vec!["--dir", dir.to_str().unwrap(), "--json", "-"];
        args.extend_from_slice(extra);
        let r = run(&args, None);
        assert_eq!(r.code, 2, "{extra:?}: {}", r.stderr);
        let report = r.report();
        assert!(!report.complete, "{extra:?}");
        assert_problem(&report, "no records in the input: nothing was scraped");
        assert!(r.stderr.contains("INCOMPLETE"), "{}", r.stderr);
    }
}

#[test]
fn without_the_ledger_urls_left_in_flight_or_no_outcome_are_not_complete() {
    // --no-ledger: the books are not checked URL by URL, but a URL whose last record is
    // a `failure` (no rip-route captured it) or a `ref` (nobody fetched it) is unfinished.
    let doc = r#"{"_type":"doc","url":"http://h/a","concept":"page","attempt":0}"#;
    let failure = r#"{"_type":"failure","url":"http://h/b","category":"TRANSIENT","retryable":true,"attempt":1,"phase":"fetch","errors":[{"code":"httpError.transient","message":"HTTP 503","operation":"rip-fetch"}]}"#;
    let retry = r#"{"_type":"ref","url":"http://h/c","attempt":1}"#;
    let r = run(
        &["--no-ledger"],
        Some(&format!("{doc}\n{failure}\n{retry}\n")),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["complete"], false);
    assert_eq!(
        v["ledger"]["inFlight"],
        serde_json::json!([
            {"url": "http://h/b", "lastSeen": "failure"},
            {"url": "http://h/c", "lastSeen": "ref"}
        ])
    );
    assert!(
        r.stderr
            .contains("in flight   http://h/b (last seen as failure)"),
        "{}",
        r.stderr
    );
    // The ref nobody fetched comes with the way to fix the pipeline.
    assert!(
        r.stderr.contains("1 URL(s) last seen as a `ref`") && r.stderr.contains("--final"),
        "{}",
        r.stderr
    );
    // One doc alone, without the ledger, is complete: every URL seen has its outcome.
    let r = run(&["--no-ledger"], Some(&format!("{doc}\n")));
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Records, but no outcome at all (only bookkeeping): nothing was captured.
    let summary = r#"{"_type":"summary","stage":"rip-fetch","pid":1,"startedAt":"2026-12-01T09:00:00Z","endedAt":"2026-12-01T09:00:01Z","input":{},"output":{"summary":1},"badLines":0,"status":"complete"}"#;
    let r = run(&["--no-ledger"], Some(&format!("{summary}\n")));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_problem(&r.report(), "no outcome in the input");
}

#[test]
fn strict_stops_at_the_first_bad_line_with_exit_one_as_every_stage() {
    let text = golden("site.reconciled.ndjson");
    let with_bad = text.replacen('\n', "\n{broken\n", 1);
    let r = run(&["--strict"], Some(&with_bad));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("-:2: not JSON") && r.stderr.contains("(stopping: --strict)"),
        "{}",
        r.stderr
    );
    assert_eq!(r.stdout, "", "no report from a stream read in part");
    // A record of a known kind that does not decode stops it too, naming the line.
    let bad_doc = text.replacen('\n', "\n{\"_type\":\"error\",\"url\":7}\n", 1);
    let r = run(&["--strict"], Some(&bad_doc));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("-:2: bad `error` record") && r.stderr.contains("--strict"),
        "{}",
        r.stderr
    );
    // In folder mode, the first bad file.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.json"), "{not json").unwrap();
    let r = run(&["--strict", "--dir", tmp.path().to_str().unwrap()], None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("a.json: not JSON"), "{}", r.stderr);
    assert!(!tmp.path().join("crawl-health.json").exists());
    // Without --strict the same input is reported on, incomplete (exit 2).
    assert_eq!(run(&[], Some(&with_bad)).code, 2);
}

#[cfg(unix)]
#[test]
fn the_report_files_get_the_mode_of_every_other_file() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("site");
    std::fs::create_dir(&dir).unwrap();
    let text = golden("site.reconciled.ndjson");
    std::fs::write(dir.join("docs.jsonl"), &text).unwrap();
    let html = dir.join("report.html");
    run(
        &[
            "--dir",
            dir.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ],
        None,
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    // rip-write's files: 0644 less the umask (as a plain `fs::write` gives, less write
    // for others).
    let other = mode(&dir.join("docs.jsonl")) & 0o644;
    assert_eq!(
        other & 0o444,
        0o444,
        "the test expects a umask that lets all read"
    );
    assert_eq!(mode(&dir.join("crawl-health.json")), other);
    assert_eq!(mode(&html), other);
}

#[test]
fn unreconciled_errors_count_as_missing_and_bad_lines_make_it_incomplete() {
    let text = golden("site.ndjson");
    let with_bad = text.replacen('\n', "\n{broken\n", 1);
    let r = run(&[], Some(&with_bad));
    assert!(r.stderr.contains("-:2: not JSON"), "{}", r.stderr);
    let report = r.report();
    assert_eq!(report.unreconciled, 2);
    assert_eq!(report.totals.missing, 2);
    assert_eq!(report.input.bad_lines, 1);
    assert!(!report.complete);
    assert!(
        report
            .ledger
            .problems
            .iter()
            .any(|p| p.contains("rip-health skipped 1 bad input line"))
    );
}

#[test]
fn the_summary_fits_one_screen_with_many_failures() {
    // 300 failures: the stderr summary stays short; the report lists them all.
    let mut text = String::from(r#"{"_type":"ledger","stage":"rip-fetch","entered":["#);
    let urls: Vec<String> = (0..300)
        .map(|i| format!("\"http://h{}/p/{i}\"", i % 7))
        .collect();
    text.push_str(&urls.join(","));
    text.push_str("]}\n");
    for i in 0..300 {
        text.push_str(&format!(
            r#"{{"_type":"error","url":"http://h{}/p/{i}","errors":[{{"code":"network.reset","message":"reset","operation":"rip-fetch"}}],"category":"NETWORK","attempt":3}}"#,
            i % 7
        ));
        text.push('\n');
    }
    let r = run(&[], Some(&text));
    assert_eq!(r.code, 2);
    assert!(r.stderr.lines().count() <= 24, "{}", r.stderr);
    assert!(r.stderr.contains("… and 296 more"), "{}", r.stderr);
    let report = r.report();
    assert_eq!(report.missing.len(), 300);
    assert_eq!(report.outcomes.failed_after_retry, 300);
    assert_eq!(report.retries.failures_by_rounds.get(&2), Some(&300));
    assert_eq!(report.failures_by.host.len(), 7);
}

#[test]
fn folder_mode_reads_record_files_and_bookkeeping() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("site");
    std::fs::create_dir(&dir).unwrap();
    let text = golden("site.reconciled.ndjson");
    let mut bookkeeping = String::new();
    for (i, line) in text.lines().enumerate() {
        if line.contains("\"_type\":\"ledger\"") || line.contains("\"_type\":\"summary\"") {
            bookkeeping.push_str(line);
            bookkeeping.push('\n');
        } else {
            std::fs::write(dir.join(format!("{i:02}.json")), line).unwrap();
        }
    }
    std::fs::write(dir.join("failures.json"), "[]").unwrap();

    // Without bookkeeping the books cannot be checked.
    let r = run(&["--dir", dir.to_str().unwrap(), "--json", "-"], None);
    let report = r.report();
    assert_eq!(report.target, "site");
    assert_eq!(report.totals.concepts, 9);
    assert_eq!(report.totals.captured_elsewhere, 1);
    assert!(!report.ledger.checked && !report.complete);
    let r = run(
        &["--dir", dir.to_str().unwrap(), "--json", "-", "--no-ledger"],
        None,
    );
    assert!(
        r.report()
            .ledger
            .problems
            .iter()
            .all(|p| !p.contains("no ledger"))
    );

    // With the stream's bookkeeping saved beside the files: checked, and it balances
    // (stage counts are not compared with files, so only URL accounting decides).
    std::fs::write(dir.join("bookkeeping.ndjson"), bookkeeping).unwrap();
    let r = run(&["--dir", dir.to_str().unwrap()], None);
    assert_eq!(r.stdout, "", "the report goes into the folder");
    let written = std::fs::read_to_string(dir.join("crawl-health.json")).unwrap();
    let report: Report = serde_json::from_str(&written).unwrap();
    assert!(report.ledger.checked);
    assert!(report.ledger.unaccounted.is_empty());
    assert_eq!(report.counters.persisted, 9);
    assert!(r.stderr.contains("crawl-health.json"), "{}", r.stderr);
}

#[test]
fn the_pipeline_as_a_user_types_it() {
    let tmp = tempfile::tempdir().unwrap();
    let script = format!(
        "rip-reconcile -q --config {config} < {input} | rip-health --html {dir}/report.html > {dir}/crawl-health.json; \
         echo \"${{PIPESTATUS[@]}}\"",
        config = testdata("reconcile/site.json").display(),
        input = testdata("health/site.ndjson").display(),
        dir = tmp.path().display(),
    );
    let out = rip_testkit::run_shell(&script, None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        "0 2",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Report = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("crawl-health.json")).unwrap(),
    )
    .unwrap();
    assert!(report.complete, "{:?}", report.ledger.problems);
    assert_eq!(report.totals.captured_elsewhere, 1);
    assert_eq!(report.ledger.stages.last().unwrap().stage, "rip-reconcile");
    assert!(tmp.path().join("report.html").is_file());
}

#[test]
fn a_doc_rip_write_could_not_persist_is_accounted_but_not_persisted() {
    let r = run(&[], Some(&golden("unwritten.reconciled.ndjson")));
    assert_eq!(r.code, 2);
    let report = r.report();
    // The stream still accounts for the URL: nothing is unaccounted...
    assert!(report.ledger.unaccounted.is_empty());
    assert!(report.ledger.duplicated.is_empty());
    // ...but its file is missing, and the report says so.
    assert_eq!(report.not_persisted.len(), 1);
    assert_eq!(
        report.not_persisted[0].url,
        "http://127.0.0.1:8080/spells/77.html"
    );
    assert!(
        report.not_persisted[0]
            .message
            .contains("Permission denied")
    );
    assert_eq!(
        (report.counters.consumed, report.counters.persisted),
        (9, 8)
    );
    assert!(!report.complete);
    assert_problem(&report, "rip-write could not persist 1 record");
}

#[test]
fn folder_mode_reads_jsonl_files_as_records() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    rip_testkit::jsonl_folder(&golden("site.reconciled.ndjson"), dir);
    let r = run(
        &["--dir", dir.to_str().unwrap(), "--json", "-", "--no-ledger"],
        None,
    );
    let report = r.report();
    assert_eq!(report.totals.concepts, 9);
    assert_eq!(report.totals.failures, 2);
    assert_eq!(report.totals.captured_elsewhere, 1);
    assert_eq!(report.expected.total, 1);
    assert_eq!(report.counters.persisted, 9);
}

#[test]
fn each_stages_peak_memory_is_shown_the_largest_process_of_a_stage_for_it() {
    let summary = |stage: &str, pid: u32, peak: Option<u64>| {
        let peak = peak.map_or(String::new(), |p| format!(",\"peakRssBytes\":{p}"));
        format!(
            "{{\"_type\":\"summary\",\"stage\":\"{stage}\",\"pid\":{pid},\"startedAt\":\"2026-12-01T09:00:00Z\",\"endedAt\":\"2026-12-01T09:00:01Z\",\"input\":{{}},\"output\":{{\"summary\":1}},\"badLines\":0,\"status\":\"complete\"{peak}}}\n"
        )
    };
    let doc = r#"{"_type":"doc","url":"http://h/a","fields":{}}"#;
    let input = [
        summary("rip-fetch", 1, Some(26_400_000)),
        summary("rip-fetch", 2, Some(31_000_000)),
        summary("rip-parse", 3, Some(12_000_000)),
        // A summary of an earlier version: no peak, nothing made up for it.
        summary("rip-route", 4, None),
        format!("{doc}\n"),
    ]
    .concat();
    let r = run(&["--no-ledger"], Some(&input));
    assert!(
        r.stderr
            .contains("peak memory: rip-fetch 31.0 MB (largest of 2) · rip-parse 12.0 MB\n"),
        "{}",
        r.stderr
    );
    let stages = r.report().ledger.stages;
    let peaks: Vec<Option<u64>> = stages.iter().map(|s| s.peak_rss_bytes).collect();
    assert_eq!(
        peaks,
        [Some(26_400_000), Some(31_000_000), Some(12_000_000), None]
    );
    assert!(
        !r.stdout.contains("\"peakRssBytes\":null"),
        "absent, not null"
    );
}
