//! `rip-health --follow`: the live report, looked at in headless Chromium while the stream
//! is still coming, and the report at the end equal to `rip-health` on the whole stream.
//!
//! The test plays the run: it writes the demo site's reconciled stream into rip-health's
//! stdin in two parts, and keeps stdin open between them, as a pipeline's last stage does
//! while the crawl goes on. The screenshots of both moments are kept under
//! `target/test-artifacts/rip-health-live/`.

use crate::chromium::headless;
use crate::{golden, run};
use rip_testkit::{Ran, wait_for};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// What a person waits for at most (a loaded machine: the report is made every 2 s).
const PATIENCE: Duration = Duration::from_secs(90);

/// Headless Chromium on `page` with `what` (`--dump-dom`, `--screenshot=…`): its stdout.
fn look(page: &Path, what: &str) -> String {
    let out = headless(page, &[what, "--window-size=1200,900"]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The outcome tiles of a page's DOM: label → number (`<div class="tile"><b>9</b>docs</div>`).
fn tiles(dom: &str) -> Vec<(String, u64)> {
    dom.split("<div class=\"tile\"><b>")
        .skip(1)
        .map(|t| {
            let (n, rest) = t.split_once("</b>").unwrap();
            let label = rest.split_once("</div>").unwrap().0;
            (label.to_owned(), n.parse().unwrap())
        })
        .collect()
}

fn tile(dom: &str, label: &str) -> u64 {
    tiles(dom)
        .into_iter()
        .find(|(l, _)| l == label)
        .unwrap_or_else(|| panic!("no `{label}` tile in the page"))
        .1
}

/// Waits for the report file to show `docs` docs, then gives Chromium's DOM of it and
/// keeps its screenshot as `shot`.
fn page_with_docs(html: &Path, docs: u64, shot: &Path) -> String {
    let want = format!("<b>{docs}</b>docs");
    wait_for(&format!("a live report with {docs} docs"), PATIENCE, || {
        std::fs::read_to_string(html).is_ok_and(|p| p.contains(&want))
    });
    let dom = look(html, "--dump-dom");
    look(html, &format!("--screenshot={}", shot.display()));
    assert!(shot.is_file(), "no screenshot {}", shot.display());
    dom
}

fn artifacts() -> PathBuf {
    let dir = rip_testkit::repo().join("target/test-artifacts/rip-health-live");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The report less its time (`generatedAt`, and `generated …` in the page).
fn timeless_json(path: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("generatedAt");
    v
}

fn timeless_html(path: &Path) -> String {
    let page = std::fs::read_to_string(path).unwrap();
    let (head, rest) = page.split_once(" · generated ").unwrap();
    format!("{head}{}", &rest[rest.find("</p>").unwrap()..])
}

#[test]
fn follow_shows_the_books_filling_in_and_ends_with_the_whole_streams_report() {
    let stream = golden("site.reconciled.ndjson");
    let lines: Vec<&str> = stream.lines().collect();
    let tmp = tempfile::tempdir().unwrap();
    let (html, json) = (
        tmp.path().join("report.html"),
        tmp.path().join("health.json"),
    );
    let mut child = Command::new(rip_testkit::bin("rip-health"))
        .args(["--follow", "--every", "2s", "--name", "site", "--html"])
        .arg(&html)
        .arg("--json")
        .arg(&json)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The ledger and the first four docs: the crawl under way.
    stdin
        .write_all((lines[..5].join("\n") + "\n").as_bytes())
        .unwrap();
    stdin.flush().unwrap();
    let shots = artifacts();
    let first = page_with_docs(&html, 4, &shots.join("1-under-way.png"));
    assert!(first.contains("id=\"live\""), "it says the run goes on");
    // The rest of the stream, stdin still open: the run not over.
    stdin
        .write_all((lines[5..].join("\n") + "\n").as_bytes())
        .unwrap();
    stdin.flush().unwrap();
    let second = page_with_docs(&html, 9, &shots.join("2-later.png"));
    for label in ["docs", "failures"] {
        assert!(
            tile(&second, label) > tile(&first, label),
            "`{label}` grew: {:?} then {:?}",
            tiles(&first),
            tiles(&second)
        );
    }
    drop(stdin);
    let ran = Ran::wait("rip-health", child);
    assert!(
        ran.stderr.contains("so far: entered 11 · docs 9"),
        "the terminal line: {}",
        ran.stderr
    );

    let plain = tmp.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let whole = run(
        &[
            "--name",
            "site",
            "--html",
            plain.join("report.html").to_str().unwrap(),
            "--json",
            plain.join("health.json").to_str().unwrap(),
        ],
        Some(&stream),
    );
    assert_eq!(ran.code, whole.code, "{}", ran.stderr);
    assert_eq!(
        timeless_json(&json),
        timeless_json(&plain.join("health.json")),
        "the final crawl-health.json is the whole stream's"
    );
    assert_eq!(
        timeless_html(&html),
        timeless_html(&plain.join("report.html")),
        "the final page is the whole stream's: no refresh, no live line"
    );
    assert_page_shows(&html, &json);
}

/// The numbers `html` shows in Chromium are those of `json` (crawl-health.json).
fn assert_page_shows(html: &Path, json: &Path) {
    let report: rip_health::Report =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let end = look(html, "--dump-dom");
    let t = &report.totals;
    assert_eq!(
        tiles(&end),
        [
            ("entered", report.counters.entered),
            ("docs", t.concepts),
            ("failures", t.failures),
            ("captured elsewhere", t.captured_elsewhere),
            ("missing", t.missing),
            ("dead", t.dead),
            // Known gaps that entered: robots.txt's never did (said apart on the page).
            (
                "expected",
                report.expected.total - report.ledger.not_entered_expected
            ),
            ("unaccounted", report.outcomes.unaccounted),
        ]
        .map(|(l, n)| (l.to_owned(), n))
    );
}

#[test]
fn follow_reads_a_file_as_it_grows_and_ends_when_it_stops_growing() {
    let stream = golden("site.reconciled.ndjson");
    let lines: Vec<&str> = stream.lines().collect();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("stream.ndjson");
    std::fs::write(&file, lines[..5].join("\n") + "\n").unwrap();
    let html = tmp.path().join("report.html");
    let child = Command::new(rip_testkit::bin("rip-health"))
        .args([
            "--follow", "--every", "1s", "--idle", "3s", "--name", "site",
        ])
        .arg("--input")
        .arg(&file)
        .arg("--html")
        .arg(&html)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the first live report", PATIENCE, || {
        std::fs::read_to_string(&html).is_ok_and(|p| p.contains("<b>4</b>docs"))
    });
    // The rest, appended the way a pipeline's `>>` would: a line cut in two on the way.
    let rest = lines[5..].join("\n") + "\n";
    let (a, b) = rest.split_at(40);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    f.write_all(a.as_bytes()).unwrap();
    f.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    f.write_all(b.as_bytes()).unwrap();
    drop(f);
    let ran = Ran::wait("rip-health", child);
    let whole = run(&["--name", "site"], Some(&stream));
    let mut got: serde_json::Value = serde_json::from_str(&ran.stdout).unwrap();
    let mut want: serde_json::Value = serde_json::from_str(&whole.stdout).unwrap();
    got.as_object_mut().unwrap().remove("generatedAt");
    want.as_object_mut().unwrap().remove("generatedAt");
    assert_eq!(got, want, "{}", ran.stderr);
    assert!(
        !std::fs::read_to_string(&html)
            .unwrap()
            .contains("http-equiv")
    );
}
