//! rip-render as a binary, driving Debian's Chromium against rip-testserver over loopback;
//! its stdout read back with rip-core's types. Few tests, each one browser, each many
//! cases: a browser start is the costly part.

mod demo;
mod fast;
mod faults;
mod plain_urls;
mod session;
mod warc;

use std::path::Path;

use rip_core::Record;
use rip_testkit::{Ran, Stage};

/// A ref line for each URL.
fn refs(urls: &[String]) -> String {
    urls.iter()
        .map(|u| format!("{{\"_type\":\"ref\",\"url\":\"{u}\",\"depth\":1}}\n"))
        .collect()
}

/// A stage with no politeness gap and short retries, its cache in `dir`, run in `dir`.
fn stage(program: &str, dir: &Path, args: &[&str], input: &str) -> Stage {
    Stage::new(program)
        .args([
            "--delay",
            "0ms",
            "--jitter",
            "0ms",
            "--retry-base",
            "20ms",
            "--retry-max",
            "50ms",
            "-q",
        ])
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .args(args)
        .current_dir(dir)
        .stdin(input)
}

/// The one terminal record of each URL (`page`, `failure` or `expected`), asserting there
/// is exactly one per URL asked.
fn one_each<'a>(ran: &'a Ran, urls: &[String]) -> Vec<&'a Record> {
    urls.iter()
        .map(|u| {
            let mine: Vec<&Record> = ran
                .records()
                .iter()
                .filter(|r| match r {
                    Record::Page(p) => &p.url == u,
                    Record::Failure(f) => &f.url == u,
                    Record::Expected(e) => &e.url == u,
                    _ => false,
                })
                .collect();
            assert_eq!(mine.len(), 1, "{u}: {mine:#?}\nstderr: {}", ran.stderr);
            mine[0]
        })
        .collect()
}

#[test]
fn bad_arguments_are_named_and_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let ran = stage("rip-render", dir.path(), &["--wait", "idle"], "").run();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(
        ran.stderr.contains("unknown wait rule `idle`"),
        "{}",
        ran.stderr
    );
    let ran = stage("rip-render", dir.path(), &["--wait", "selector:ul["], "").run();
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr.contains("is not a CSS selector"),
        "{}",
        ran.stderr
    );
    let ran = stage(
        "rip-render",
        dir.path(),
        &["--chromium", "/nowhere/chromium"],
        "",
    )
    .run();
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr.contains("no Chromium at /nowhere/chromium"),
        "{}",
        ran.stderr
    );
}

#[test]
fn the_usage_line_shows_the_cache_folder_as_optional() {
    // `--cache-dir` has a default and RIP_CACHE_DIR: a usage error after it was given (as
    // `stage` gives it) shows the usage of --help, not the flags given as if required.
    let usage = "Usage: rip-render [OPTIONS] [URL]...";
    let dir = tempfile::tempdir().unwrap();
    let args = ["http://127.0.0.1:9/", "--no-such-flag"];
    let ran = stage("rip-render", dir.path(), &args, "").run();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    let line = ran.stderr.lines().find(|l| l.starts_with("Usage:"));
    assert_eq!(line, Some(usage), "{}", ran.stderr);
    let help = Stage::new("rip-render").arg("--help").run();
    assert_eq!(help.code, 0, "{}", help.stderr);
    let line = help.stdout.lines().find(|l| l.starts_with("Usage:"));
    assert_eq!(line, Some(usage), "{}", help.stdout);
}
