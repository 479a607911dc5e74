//! `rip-health --follow` from the broker: a crawl whose records are on a JetStream stream
//! (the workers' `docs`, anywhere) is watched by piping the stream in, as the README's
//! "Watching a run" says: `rip-queue pull --follow docs | rip-health --follow --html …`.
//! Nothing in rip-health knows of the broker: the pipe is the whole of it.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use rip_testkit::Stage;

/// A reconciled stream of 11 URLs (9 docs), the one rip-health's own live test follows.
fn golden() -> String {
    std::fs::read_to_string(rip_testkit::testdata("health/site.reconciled.ndjson")).unwrap()
}

fn push(broker: &str, lines: &[&str]) {
    let pushed = Stage::new("rip-queue")
        .args(["--broker", broker, "push", "docs"])
        .stdin(lines.join("\n") + "\n")
        .run();
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
}

/// Records pushed in two parts, the report's terminal line read between them: the books
/// fill in as the stream grows on the broker; once the reader stops, the final
/// crawl-health.json has the whole stream's counts, as a plain `rip-health` makes them.
#[test]
fn rip_health_follows_a_stream_on_the_broker_through_a_pipe() {
    let nats = rip_testkit::NatsServer::start();
    let broker = nats.url();
    let stream = golden();
    let lines: Vec<&str> = stream.lines().collect();
    let dir = tempfile::tempdir().unwrap();
    let (html, json) = (dir.path().join("report.html"), dir.path().join("h.json"));
    push(&broker, &lines[..5]);
    let mut pull = Command::new(rip_testkit::bin("rip-queue"))
        .args(["--broker", &broker, "pull", "--follow", "docs"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut health = Command::new(rip_testkit::bin("rip-health"))
        .args(["--follow", "--every", "300ms", "--name", "site", "--html"])
        .arg(&html)
        .arg("--json")
        .arg(&json)
        .stdin(pull.stdout.take().unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let err = BufReader::new(health.stderr.take().unwrap());
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        for line in err.lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            text += &line;
            text.push('\n');
        }
        text
    });
    let patience = Duration::from_secs(120);
    let wait_line = |want: &str| loop {
        match rx.recv_timeout(patience) {
            Ok(line) if line.contains(want) => return line,
            Ok(_) => {}
            Err(_) => panic!("rip-health never said `{want}`"),
        }
    };
    wait_line("docs 4 ·");
    assert!(
        html.is_file(),
        "the report is written while the run goes on"
    );
    push(&broker, &lines[5..]);
    wait_line("entered 11 · docs 9 ·");
    // The crawl is over: the reader stops (Ctrl-C, or a `--until` of the workers' input).
    pull.kill().unwrap();
    pull.wait().unwrap();
    let code = health.wait().unwrap().code();
    let said = stderr.join().unwrap();
    let plain = dir.path().join("plain.json");
    Stage::new("rip-health")
        .args(["--name", "site", "--json", plain.to_str().unwrap()])
        .stdin(stream.clone())
        .run();
    let (followed, plain) = (read_json(&json), read_json(&plain));
    // The counts are the whole stream's. Not yet the ledger's check: `rip-queue push` stores
    // a ledger of N URLs as N ledgers of one (each its own identity, stored once), and
    // rip-health then finds more ledger records than the stage wrote ("it wrote 1 `ledger`,
    // rip-health read 11"), so the followed books say `complete: false`. Said in the
    // README; not mended here.
    for key in [
        "totals",
        "counters",
        "outcomes",
        "missing",
        "capturedElsewhere",
    ] {
        assert_eq!(followed[key], plain[key], "{key}: {said}");
    }
    let problems = followed["ledger"]["problems"].to_string();
    assert!(problems.contains("rip-health read 11"), "{problems}");
    assert!(code.is_some(), "{said}");
}

fn read_json(p: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}
