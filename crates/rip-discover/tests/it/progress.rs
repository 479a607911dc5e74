//! What a person sees on stderr: a progress line (depth, pages, queued, pages/s) redrawn
//! while stderr is a terminal, and a one-line summary at the end; neither when stderr is a
//! file or a pipe and `-q` is given, and never anything but records on stdout.

use std::process::Command;
use std::time::Duration;

use rip_testkit::Stage;
use rip_testserver::{Fault, LinkGraph, Rule, TestServer};

use crate::*;

fn slow_site() -> TestServer {
    TestServer::builder()
        .graph(LinkGraph::new(30).seed(4))
        .rule(Rule::prefix("/item-").always(Fault::serve().delay(Duration::from_millis(150))))
        .start_background()
        .unwrap()
}

/// Under a pseudo-terminal (util-linux `script`), stderr gets progress frames and the
/// summary line; stdout (a file) gets only records.
#[test]
fn progress_on_a_terminal_and_a_summary_line() {
    let server = slow_site();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.ndjson");
    let cmd = format!(
        "{} {} --delay 0 --jitter 0 -c 4 --cache-dir {} > {}",
        rip_testkit::bin("rip-discover").display(),
        server.url("/"),
        dir.path().join("cache").display(),
        out.display()
    );
    let r = Command::new("script")
        .args(["-q", "-e", "-c", &cmd, "/dev/null"])
        .output()
        .expect("util-linux script runs");
    let tty = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{tty}");
    // Progress frames: the stage, the depth, the frontier and the rate.
    assert!(tty.contains("rip-discover"), "{tty}");
    assert!(tty.contains("depth "), "{tty}");
    assert!(tty.contains(" queued"), "{tty}");
    assert!(tty.contains("pages/s"), "{tty}");
    // The summary line at the end.
    assert!(
        tty.contains("rip-discover: 30 targets from 30 pages fetched"),
        "{tty}"
    );
    let (records, summary) = record(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(records.len(), 30);
    assert_eq!(summary.counters["targets"], 30);
}

/// Stderr a pipe: no progress frames, only the summary line; `-q` silences that too.
#[test]
fn no_progress_off_a_terminal_and_quiet_is_quiet() {
    let server = slow_site();
    let dir = tempfile::tempdir().unwrap();
    let base = [
        server.url("/"),
        "--delay".into(),
        "0".into(),
        "-c".into(),
        "4".into(),
    ];
    let r = Stage::new("rip-discover")
        .args(&base)
        .arg("--cache-dir")
        .arg(dir.path().join("c1"))
        .run();
    assert_eq!(r.code, 0);
    let err = &r.stderr;
    assert!(!err.contains(" queued"), "{err}");
    assert!(
        err.starts_with("rip-discover: 30 targets from 30 pages fetched"),
        "{err}"
    );
    assert!(err.contains("pages/s"), "{err}");

    let r = Stage::new("rip-discover")
        .args(&base)
        .arg("-q")
        .arg("--cache-dir")
        .arg(dir.path().join("c2"))
        .run();
    assert_eq!(r.code, 0);
    assert_eq!(r.stderr, "");
    assert_eq!(record(&r.stdout).0.len(), 30);
}
