//! Real pipelines of real binaries on the fault-injecting server serving the demo site:
//! `rip-fetch | rip-route | rip-fetch | rip-route`, and the ledger through `rip-write`.
//!
//! They need `rip-fetch`, `rip-parse` and `rip-write` built in the same target folder
//! (`cargo build -p rip-fetch -p rip-parse -p rip-write --bins`; `make test` builds
//! everything).

use crate::support::*;
use rip_core::{Record, Summary};
use rip_testserver::{Fault, RetryAfter, Rule, TestServer};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// rip-fetch for tests: two HTTP attempts per round (so a 503-twice page fails round 1),
/// short backoff, no politeness gap, no cache, and a Retry-After over 500 ms handed to
/// rip-route instead of waited for. Politeness is not shared between the two rip-fetch
/// processes, so the wait between rounds can only come from rip-route's `notBefore`.
const FETCH: &str = "rip-fetch --attempts 2 --retry-base 10ms --retry-max 50ms \
    --give-up-after 500ms --delay 0ms --jitter 0ms --cache off --no-shared-politeness -q";

fn demo_server() -> TestServer {
    TestServer::builder()
        .dir(testdata("site"))
        .rule(Rule::path("/items/item-5.html").times(2, Fault::status(503)))
        .rule(Rule::path("/blog/").once(Fault::retry_after(429, RetryAfter::Seconds(2))))
        .rule(Rule::path("/old.html").always(Fault::status(410)))
        .start_background()
        .expect("the test server starts")
}

const PATHS: &[&str] = &[
    "/items/item-1.html",
    "/items/item-5.html",
    "/items/item-99.html",
    "/blog/",
    "/classes/77.html",
    "/old.html",
    "/spells/999.html",
];

fn refs(server: &TestServer) -> String {
    PATHS
        .iter()
        .map(|p| {
            let mut r = rip_core::Ref::new(server.url(p));
            r.context.depth = 1;
            r.context.link_text = Some(
                if *p == "/classes/77.html" {
                    "Catfolk"
                } else {
                    "x"
                }
                .into(),
            );
            serde_json::to_string(&Record::Ref(r)).unwrap() + "\n"
        })
        .collect()
}

struct Piped {
    records: Vec<Record>,
    stderr: String,
    codes: String,
}

/// Runs `script` with `refs.ndjson` in `dir` and the workspace binaries on PATH.
fn pipeline(dir: &Path, script: &str) -> Piped {
    for b in ["rip-fetch", "rip-route", "rip-parse", "rip-write"] {
        rip_testkit::bin(b);
    }
    let full = format!("{script} > out.ndjson; echo \"${{PIPESTATUS[@]}}\"");
    let out = rip_testkit::run_shell(&full, Some(dir));
    let text = std::fs::read_to_string(dir.join("out.ndjson")).unwrap();
    Piped {
        records: text.lines().map(record).collect(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        codes: String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    }
}

fn policy_args() -> String {
    format!("-p {} --max-retries 1", testdata("policy/emberfall.toml"))
}

/// Entered URLs (from ledgers) and, per URL, the terminal records accounting for it.
fn books(records: &[Record], terminal: &[&str]) -> (Vec<String>, BTreeMap<String, Vec<Record>>) {
    let mut entered = Vec::new();
    let mut accounts: BTreeMap<String, Vec<Record>> = BTreeMap::new();
    for r in records {
        match r {
            Record::Ledger(l) => entered.extend(l.entered.iter().cloned()),
            r if terminal.contains(&r.kind().as_str()) => {
                let url = accounts_for(r).unwrap();
                accounts.entry(url).or_default().push(r.clone());
            }
            _ => {}
        }
    }
    entered.sort();
    (entered, accounts)
}

fn assert_balanced(records: &[Record], terminal: &[&str]) -> BTreeMap<String, Record> {
    let (entered, accounts) = books(records, terminal);
    let mut dedup = entered.clone();
    dedup.dedup();
    assert_eq!(entered, dedup, "every URL entered once");
    assert_eq!(
        accounts.keys().cloned().collect::<Vec<_>>(),
        entered,
        "every URL that entered came out, and nothing else did"
    );
    accounts
        .into_iter()
        .map(|(url, mut rs)| {
            assert_eq!(rs.len(), 1, "{url} came out {} times: {rs:?}", rs.len());
            (url, rs.pop().unwrap())
        })
        .collect()
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn two_rounds_recover_capture_resolve_and_honour_retry_after() {
    let server = demo_server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("refs.ndjson"), refs(&server)).unwrap();
    let route = format!("rip-route {}", policy_args());
    let p = pipeline(
        dir.path(),
        &format!("{FETCH} < refs.ndjson | {route} | {FETCH} | {route}"),
    );
    assert_eq!(
        p.codes, "2 2 2 2",
        "partial: something was captured\n{}",
        p.stderr
    );
    let out = assert_balanced(&p.records, &["page", "doc", "error", "expected"]);
    let u = |path: &str| server.url(path);

    // A first-attempt success.
    let Record::Page(first) = &out[&u("/items/item-1.html")] else {
        panic!()
    };
    assert_eq!((first.attempt, first.errors.len()), (0, 0));

    // 503 twice: round 1 spends both HTTP attempts, round 2 gets the page.
    let Record::Page(recovered) = &out[&u("/items/item-5.html")] else {
        panic!("{:?}", out[&u("/items/item-5.html")])
    };
    assert_eq!(recovered.attempt, 1, "recovered on the second round");
    assert_eq!(recovered.errors[0].code, "httpError.transient");
    assert_eq!(server.count("/items/item-5.html"), 3);

    // A permanent 404 is captured on the first round: one request, never retried.
    let Record::Error(gone) = &out[&u("/items/item-99.html")] else {
        panic!()
    };
    assert_eq!((gone.attempt, gone.status), (1, Some(404)));
    assert_eq!(server.count("/items/item-99.html"), 1);

    // 429 with Retry-After: 2, handed to rip-route, honoured by the next rip-fetch.
    let Record::Page(blog) = &out[&u("/blog/")] else {
        panic!("{:?}", out[&u("/blog/")])
    };
    assert_eq!(blog.attempt, 1);
    let times: Vec<_> = server
        .requests_for("/blog/")
        .iter()
        .map(|r| r.elapsed)
        .collect();
    assert_eq!(times.len(), 2);
    let gap = times[1] - times[0];
    assert!(
        gap >= Duration::from_millis(1950),
        "second round came after {gap:?}"
    );

    // The mis-link resolves to the ancestry (preferred over the spell with the same id).
    let Record::Page(catfolk) = &out[&u("/classes/77.html")] else {
        panic!()
    };
    assert_eq!(catfolk.url, u("/ancestries/77.html"));
    assert_eq!(
        catfolk.context.resolves.as_deref(),
        Some(u("/classes/77.html").as_str())
    );
    assert!(catfolk.body.contains("Catfolk"));

    // A policy rule: 410 is expected.
    let Record::Expected(old) = &out[&u("/old.html")] else {
        panic!()
    };
    assert_eq!(old.reason, "removed upstream");

    // Both candidates of /spells/999.html fail: the original 404 is captured with theirs.
    let Record::Error(spell) = &out[&u("/spells/999.html")] else {
        panic!()
    };
    assert_eq!(spell.url, u("/spells/999.html"));
    let candidates: Vec<_> = spell
        .errors
        .iter()
        .filter(|e| e.message.contains("resolve candidate"))
        .collect();
    assert_eq!(candidates.len(), 2, "{:?}", spell.errors);

    // Nothing left in flight at the end: no refs, no failures, no held groups.
    assert!(
        p.records
            .iter()
            .all(|r| !matches!(r, Record::Ref(_) | Record::Failure(_)))
    );
    let summaries: Vec<&Summary> = p
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Summary(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(summaries.len(), 4, "one per stage");
}

/// rip-parse in generic mode, then a rip-route to capture what parsing failed.
fn parse() -> String {
    format!("rip-parse -q | rip-route {}", policy_args())
}

#[test]
fn the_ledger_balances_through_rip_write_whatever_the_disk_does() {
    let server = demo_server();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("refs.ndjson"), refs(&server)).unwrap();
    let route = format!("rip-route {}", policy_args());
    let head = format!(
        "{FETCH} < refs.ndjson | {route} | {FETCH} | {route} | {}",
        parse()
    );

    // A writable folder: one file per URL that entered, and failures.json.
    let p = pipeline(
        dir.path(),
        &format!("{head} | rip-write --out out --name site"),
    );
    let out = assert_balanced(&p.records, &["doc", "error", "expected"]);
    let mut files: Vec<String> = std::fs::read_dir(dir.path().join("out/site"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files.len(), PATHS.len() + 1, "{files:?}");
    assert!(
        files.contains(&"classes-77.html.json".to_owned()),
        "filed under the failed URL"
    );
    assert_eq!(out.len(), PATHS.len());

    // A folder rip-write cannot write stops it before it reads a record (exit 1, the
    // folder named): every record would fail alike.
    let wrap = rip_testkit::unprivileged_prefix().join(" ");
    rip_testkit::make_read_only(&dir.path().join("ro"));
    let fresh = demo_server(); // fault sequences start again
    std::fs::write(dir.path().join("refs.ndjson"), refs(&fresh)).unwrap();
    let p = pipeline(
        dir.path(),
        &format!("{head} | {wrap} rip-write --out ro --name site"),
    );
    assert!(p.codes.ends_with(" 1"), "{} {}", p.codes, p.stderr);
    assert!(
        p.stderr
            .contains("cannot write to the output folder ro/site"),
        "{}",
        p.stderr
    );

    // Records that cannot be written once the run is going (each file's name is taken by
    // a folder): the same records come out, each followed by a write failure.
    for name in &files {
        if name != "failures.json" {
            std::fs::create_dir_all(dir.path().join("taken/site").join(name)).unwrap();
        }
    }
    let fresh = demo_server();
    std::fs::write(dir.path().join("refs.ndjson"), refs(&fresh)).unwrap();
    let p = pipeline(
        dir.path(),
        &format!("{head} | rip-write --out taken --name site"),
    );
    assert!(
        p.codes.ends_with(" 2"),
        "rip-write exits partial: {} {}",
        p.codes,
        p.stderr
    );
    let out = assert_balanced(&p.records, &["doc", "error", "expected"]);
    assert_eq!(out.len(), PATHS.len());
    let annotations: Vec<_> = p
        .records
        .iter()
        .filter_map(|r| match r {
            Record::Failure(f) if f.phase == rip_core::Phase::Write => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(
        annotations.len(),
        PATHS.len(),
        "one write failure per record not persisted"
    );
    assert!(
        annotations
            .iter()
            .all(|f| f.category == rip_core::ErrorCategory::Resource)
    );
}

#[test]
fn a_page_that_answers_503_for_good_ends_as_an_error_document_in_the_final_round() {
    // rip-route's default --max-retries (2) with two fetch rounds: the second rip-route
    // would retry once more, for a rip-fetch that never comes.
    let server = TestServer::builder()
        .dir(testdata("site"))
        .rule(Rule::path("/items/item-5.html").always(Fault::status(503)))
        .start_background()
        .expect("the test server starts");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("refs.ndjson"), refs(&server)).unwrap();
    let head = format!("{FETCH} < refs.ndjson | rip-route | {FETCH}");

    let p = pipeline(dir.path(), &format!("{head} | rip-route --final"));
    let out = assert_balanced(&p.records, &["page", "error", "expected"]);
    let Record::Error(e) = &out[&server.url("/items/item-5.html")] else {
        panic!("{:?}", out[&server.url("/items/item-5.html")])
    };
    assert_eq!(
        (e.attempt, e.errors.len()),
        (2, 2),
        "two rounds, both in the history"
    );
    assert!(!p.records.iter().any(|r| matches!(r, Record::Ref(_))));

    // Without --final, the retry it writes is never fetched: rip-write says so, exit 2.
    let p = pipeline(
        dir.path(),
        &format!("{head} | rip-route | rip-write --out out --name site"),
    );
    assert!(p.codes.ends_with(" 2"), "{} {}", p.codes, p.stderr);
    assert!(
        p.stderr.contains("1 ref reached rip-write unfetched")
            && p.stderr.contains(&server.url("/items/item-5.html")),
        "{}",
        p.stderr
    );
}
