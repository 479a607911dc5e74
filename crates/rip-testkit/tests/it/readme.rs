//! Every shell command the README and the guide print, run as printed.
//!
//! The commands are read from the ```` ```sh ```` blocks of the README and of the guide's
//! pages (`docs/guide/`, in the order its index, `docs/guide/README.md`, links them) when the
//! test runs, so the documents cannot drift from what is tested: a command added to them is
//! run, a command changed is run changed. They run in order, like a reader following the
//! README and then the guide, in one
//! folder (with `testdata` linked into it, as in a checkout), against the fault-injecting
//! server serving `testdata/site` with [`PLAN`]: `/items/item-7.html` answers 503 for good,
//! and `/images/logo.png`, which `/` links, is a page that is not HTML.
//!
//! What differs from a reader's terminal, each listed below and each required to still
//! match the documents (a stale entry fails the test):
//!
//! - [`SUBSTITUTIONS`]: the server binds port 0, so `http://127.0.0.1:8080` becomes its
//!   address; one machine-wide path becomes a path of the test's folder.
//! - [`FIXTURES`]: files the documents name as the reader's own (`site.toml`, …) are copies of
//!   the demo's.
//! - [`SKIPPED`]: commands that cannot run here, each with the reason.
//! - `$API` is the test wiki's `api.php` (started with `rip-testwiki`) for the MediaWiki
//!   commands.
//!
//! Every stage of every command must exit 0 or 2 (partial: the plan's faults make scrapes
//! partial), none may panic, and every report `rip-health` writes must name exactly the
//! planned gaps: the 503 page, the site's two broken links (`/items/item-99.html`, and
//! `/classes/77.html`, which the demo's reconciler finds captured elsewhere), the logo (not
//! HTML: an expected gap by the policies) and `/private/secret.html` (robots.txt), with every
//! URL that entered accounted for.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rip_testserver::{FaultPlan, TestServer};
use serde_json::Value;

/// The fault plan (rip-testserver's JSON format): one page that answers 503 for good.
const PLAN: &str = r#"{"rules": [
  {"path": "/items/item-7.html", "then": {"status": 503}}
]}"#;

/// Text replaced in commands before they run: (what, by what, why). `{origin}` is the
/// server's `http://127.0.0.1:PORT` (`{js_origin}` the script-built demo's), `{dir}` the
/// test's folder, `{broker}` the test's broker.
const SUBSTITUTIONS: &[(&str, &str, &str)] = &[
    (
        "http://127.0.0.1:8080",
        "{origin}",
        "the README's server address; the test's server binds port 0",
    ),
    (
        "http://127.0.0.1:8090",
        "{js_origin}",
        "the script-built demo's address; the test's server for it binds port 0",
    ),
    (
        "ripperoni scaffold mysite",
        "ripperoni scaffold mysite --base-url {origin}/",
        "scaffold writes the demo's address, http://127.0.0.1:8080/, into the state file",
    ),
    (
        "export RIP_BROKER=nats://127.0.0.1:4222",
        "export RIP_BROKER={broker}",
        "the README's broker address; the test's broker binds a free port",
    ),
    (
        "RIP_CACHE_DIR=/tmp/cache",
        "RIP_CACHE_DIR={dir}/.rip-cache",
        "a machine-wide folder; the replay reads the cache the commands before it filled",
    ),
];

/// Files the documents name as the reader's own, copied from `testdata/`: (name, source).
const FIXTURES: &[(&str, &str)] = &[
    ("site.toml", "demo/emberfall.rules.toml"),
    ("site.reconciler.json", "demo/emberfall.reconciler.json"),
    ("doc.schema.json", "parse/rules/schemas/spell.schema.json"),
];

/// Commands not run: (how the command starts, why).
const SKIPPED: &[(&str, &str)] = &[
    (
        "make demo",
        "builds every binary in release mode (minutes); what it runs, `ripperoni run` on the \
         demo, is run below",
    ),
    ("make test", "runs the whole test suite, this test included"),
    (
        "nats-server -js -sd /tmp/nats &",
        "the test's own broker (on a free port, its store in a temporary folder) stands in \
         for it; RIP_BROKER names it",
    ),
    (
        "rip-testserver --dir testdata/site --bind 127.0.0.1:8080 &",
        "the test's own server (the same site, with the fault plan, on port 0) stands in for it",
    ),
    (
        "rip-testserver --dir testdata/site-js --bind 127.0.0.1:8090 &",
        "the test's own server for the script-built demo (on port 0) stands in for it",
    ),
];

/// The URLs the plan and the site make gaps of, by path: failures (error documents) and
/// expected records.
const FAILED: &[&str] = &[
    "/items/item-7.html",
    "/items/item-99.html",
    "/classes/77.html",
];
const EXPECTED: &[&str] = &["/images/logo.png", "/private/secret.html"];

/// The whole run may take this long at most: a guard against a command that hangs or has
/// become minutes slower, not a benchmark. It took 118 s alone and 133 s with the rest of a
/// fresh clone's suite beside it on 2 cores (2026-12-04), 14 s of that headless Chromium
/// rendering the script-built demo (`rip-discover --render`, 16 pages, debug); later the
/// same day 125 s alone and 188–193 s beside the suite, on a machine after a day of
/// benchmarks.
const BUDGET: Duration = Duration::from_secs(300);

/// One command of the README or the guide: its first line's number and its text
/// (continuation lines joined), and the document it is in.
#[derive(Debug, Clone)]
struct Cmd {
    file: String,
    line: usize,
    text: String,
}

/// The documents whose commands run, in a reader's order: the README, then each page the
/// guide's index links, in the order it links them. Every page of the guide must be linked
/// (a page left out would go untested).
fn documents() -> Vec<PathBuf> {
    let repo = rip_testkit::repo();
    let guide = repo.join("docs/guide");
    let index = std::fs::read_to_string(guide.join("README.md")).expect("docs/guide/README.md");
    let mut pages: Vec<String> = Vec::new();
    for link in index.split("](").skip(1) {
        let target = link.split(')').next().unwrap_or_default();
        let page = target.split('#').next().unwrap_or_default();
        if page.ends_with(".md") && !page.contains('/') && !pages.iter().any(|p| p == page) {
            pages.push(page.to_owned());
        }
    }
    for entry in std::fs::read_dir(&guide).expect("docs/guide/") {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            name == "README.md" || !name.ends_with(".md") || pages.contains(&name),
            "docs/guide/{name} is not linked from docs/guide/README.md, so its commands would \
             not run: link it where a reader should meet it"
        );
    }
    let mut out = vec![repo.join("README.md")];
    out.extend(pages.iter().map(|p| guide.join(p)));
    out
}

/// Every command of `documents`, in order, each naming its document relative to the
/// repository.
fn all_commands(documents: &[PathBuf]) -> Vec<Cmd> {
    let repo = rip_testkit::repo();
    let mut out = Vec::new();
    for path in documents {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let file = path
            .strip_prefix(&repo)
            .unwrap_or(path)
            .display()
            .to_string();
        out.extend(commands(&text).into_iter().map(|c| Cmd {
            file: file.clone(),
            ..c
        }));
    }
    out
}

/// Every command of a document's `sh` blocks, in order, as written. A line ending in `\`
/// continues on the next one; blank and comment-only lines are not commands.
fn commands(readme: &str) -> Vec<Cmd> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut current: Option<Cmd> = None;
    for (i, line) in readme.lines().enumerate() {
        let fence = line.trim_start();
        if fence.starts_with("```") {
            in_sh = !in_sh && fence == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let cmd = current.get_or_insert_with(|| Cmd {
            file: String::new(),
            line: i + 1,
            text: String::new(),
        });
        cmd.text.push_str(line);
        if line.trim_end().ends_with('\\') {
            cmd.text.push('\n');
            continue;
        }
        let cmd = current.take().expect("just set");
        let first = cmd.text.trim_start();
        if !first.is_empty() && !first.starts_with('#') {
            out.push(cmd);
        }
    }
    out
}

fn testdata() -> PathBuf {
    rip_testkit::testdata("")
}

/// What a command did.
struct Ran {
    statuses: Vec<i32>,
    stderr: String,
    took: Duration,
}

/// Runs `script` with bash in `dir`, the workspace binaries first on PATH, no `RIP_*`
/// variable of the caller's but `RIP_BROKER` (the test's broker), `API` set when given.
fn run(script: &str, dir: &Path, api: Option<&str>, broker: &str) -> Ran {
    let status_file = dir.join(".readme-statuses");
    let full = format!(
        "{script}\nprintf '%s ' \"${{PIPESTATUS[@]}}\" > {}",
        status_file.display()
    );
    let mut cmd = Command::new("timeout");
    cmd.args(["--kill-after=5", "120", "bash", "-c", &full])
        .current_dir(dir)
        .env("PATH", rip_testkit::path_with_bins())
        .stdin(std::process::Stdio::null());
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("RIP_") {
            cmd.env_remove(k);
        }
    }
    if let Some(api) = api {
        cmd.env("API", api);
    }
    cmd.env("RIP_BROKER", broker);
    let t0 = Instant::now();
    let out = cmd.output().expect("bash runs");
    let statuses = std::fs::read_to_string(&status_file)
        .unwrap_or_default()
        .split_whitespace()
        .map(|s| s.parse().expect("a status"))
        .collect::<Vec<i32>>();
    let _ = std::fs::remove_file(&status_file);
    let statuses = if statuses.is_empty() {
        vec![out.status.code().unwrap_or(-1)]
    } else {
        statuses
    };
    Ran {
        statuses,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: t0.elapsed(),
    }
}

/// The `crawl-health.json` files a command writes: `> FILE` after `rip-health`, `--dir D`
/// of `rip-health` (`D/crawl-health.json`), and `ripperoni run`'s.
fn health_reports(text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    if let Some(at) = text.find("rip-health") {
        let rest = &text[at..];
        let ledger = !rest.contains("--no-ledger");
        let words: Vec<&str> = rest.split_whitespace().collect();
        if let Some(i) = words.iter().position(|w| *w == ">") {
            out.push((words[i + 1].to_owned(), ledger));
        } else if let Some(i) = words.iter().position(|w| *w == "--dir") {
            out.push((format!("{}/crawl-health.json", words[i + 1]), ledger));
        }
    }
    if let Some(rest) = text.trim_start().strip_prefix("ripperoni run ") {
        let state = rest.split_whitespace().next().unwrap_or_default();
        let target = state.trim_end_matches(".state.json");
        out.push((format!("out/{target}/crawl-health.json"), true));
    }
    out
}

/// URLs (as paths) of a report's list `key` (`missing`, …) or of `expected.items`.
fn paths(report: &Value, pointer: &str, origin: &str) -> BTreeSet<String> {
    report
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| e["url"].as_str())
        .map(|u| u.strip_prefix(origin).unwrap_or(u).to_owned())
        .collect()
}

/// Checks that `report` names exactly the planned gaps (and, with the ledger, that every
/// URL that entered is accounted for).
fn check_report(path: &Path, ledger: bool, origin: &str, cmd: &Cmd) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}:{}: no report {}: {e}\n{}",
            cmd.file,
            cmd.line,
            path.display(),
            cmd.text
        )
    });
    let report: Value = serde_json::from_str(&text).unwrap();
    let mut failed = paths(&report, "/missing", origin);
    failed.extend(paths(&report, "/capturedElsewhere", origin));
    failed.extend(paths(&report, "/dead", origin));
    let want = |list: &[&str]| {
        list.iter()
            .map(|p| (*p).to_owned())
            .collect::<BTreeSet<_>>()
    };
    let context = format!(
        "{}:{}: {}\n{}",
        cmd.file,
        cmd.line,
        path.display(),
        cmd.text
    );
    assert_eq!(failed, want(FAILED), "failures named: {context}");
    assert_eq!(
        paths(&report, "/expected/items", origin),
        want(EXPECTED),
        "expected gaps named: {context}"
    );
    if ledger {
        assert_eq!(
            report.pointer("/ledger/complete"),
            Some(&Value::Bool(true)),
            "every URL that entered is accounted for: {context}\n{:#}",
            report["ledger"]
        );
    }
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn every_command_in_the_readme_runs_and_the_health_reports_name_exactly_the_planned_gaps() {
    let started = Instant::now();
    // README_UNDER_TEST=FILE runs another document's commands alone (an older README, a draft).
    let documents = std::env::var_os("README_UNDER_TEST")
        .map(|f| vec![PathBuf::from(f)])
        .unwrap_or_else(documents);
    let cmds = all_commands(&documents);
    assert!(cmds.len() > 20, "found {} commands", cmds.len());
    for bin in ["rip-discover", "rip-fetch", "ripperoni", "rip-health"] {
        rip_testkit::bin(bin);
    }

    // Every skip, substitution and fixture must still be needed.
    for (start, why) in SKIPPED {
        assert!(
            cmds.iter().any(|c| c.text.trim_start().starts_with(start)),
            "a skipped command is no longer in the README or the guide: `{start}` ({why})"
        );
    }
    for (from, _, why) in SUBSTITUTIONS {
        assert!(
            cmds.iter().any(|c| c.text.contains(from)),
            "a substitution is no longer needed: `{from}` ({why})"
        );
    }
    for (name, _) in FIXTURES {
        assert!(
            cmds.iter().any(|c| c.text.contains(name)),
            "a fixture is no longer named by the README or the guide: {name}"
        );
    }

    let server = TestServer::builder()
        .dir(testdata().join("site"))
        .plan(FaultPlan::from_json(PLAN).expect("the plan parses"))
        .start_background()
        .expect("the test server starts");
    let origin = server.origin();
    let js_server = TestServer::builder()
        .dir(testdata().join("site-js"))
        .start_background()
        .expect("the script-built demo's server starts");
    let js_origin = js_server.origin();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::os::unix::fs::symlink(testdata().canonicalize().unwrap(), dir.join("testdata")).unwrap();
    for (name, source) in FIXTURES {
        std::fs::copy(testdata().join(source), dir.join(name)).unwrap();
    }

    let mut wiki = None;
    let broker = rip_testkit::NatsServer::start();
    let mut timings = Vec::new();
    for cmd in &cmds {
        let start = cmd.text.trim_start();
        if let Some((_, why)) = SKIPPED.iter().find(|(s, _)| start.starts_with(s)) {
            eprintln!("{}:{}: skipped ({why}): {}", cmd.file, cmd.line, cmd.text);
            continue;
        }
        let mut script = cmd.text.clone();
        for (from, to, _) in SUBSTITUTIONS {
            let to = to
                .replace("{origin}", &origin)
                .replace("{js_origin}", &js_origin)
                .replace("{broker}", &broker.url())
                .replace("{dir}", &dir.display().to_string());
            script = script.replace(from, &to);
        }
        if script.contains("$API") && wiki.is_none() {
            wiki = Some(rip_testwiki::Wiki::start().expect("the test wiki starts"));
        }
        let api = wiki.as_ref().map(|w| w.api_url().to_string());
        let ran = run(&script, dir, api.as_deref(), &broker.url());
        timings.push((format!("{}:{}", cmd.file, cmd.line), ran.took));
        assert!(
            ran.statuses.iter().all(|s| *s == 0 || *s == 2) && !ran.stderr.contains("panicked"),
            "{}:{}: exit statuses {:?} (each stage must exit 0, or 2 for partial)\n\
             {script}\nstderr:\n{}",
            cmd.file,
            cmd.line,
            ran.statuses,
            ran.stderr
        );
        for (report, ledger) in health_reports(&cmd.text) {
            check_report(&dir.join(report), ledger, &origin, cmd);
        }
    }
    let took = started.elapsed();
    eprintln!("The commands took {took:?}: {timings:?}");
    assert!(took < BUDGET, "{took:?} (budget {BUDGET:?}): {timings:?}");
}

#[test]
fn commands_are_read_as_bash_reads_them() {
    let text = "x\n```sh\na \\\n  | b   # c\n# only a comment\n\nd\n```\n```toml\ne\n```\n  ```sh\n  f\n  ```\n";
    let cmds = commands(text);
    let texts: Vec<&str> = cmds.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, ["a \\\n  | b   # c", "d", "  f"]);
    assert_eq!(cmds[0].line, 3);
    assert_eq!(
        health_reports("rip-reconcile < s | rip-health --html r.html > out/h.json"),
        [("out/h.json".to_owned(), true)]
    );
    assert_eq!(
        health_reports("rip-health --dir out/site --no-ledger"),
        [("out/site/crawl-health.json".to_owned(), false)]
    );
}
