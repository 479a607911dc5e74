//! rip-render as a binary, driving Debian's Chromium against rip-testserver over loopback;
//! its stdout read back with rip-core's types. Few tests, each one browser, each many
//! cases: a browser start is the costly part.

mod demo;
mod faults;
mod plain_urls;
mod session;

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
