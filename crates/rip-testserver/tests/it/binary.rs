//! The `rip-testserver` binary: a plan file, the first stdout line, the control endpoint,
//! the NDJSON log file, and a clean stop on SIGTERM.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rip_testserver::RequestRecord;

use crate::support::{client, io_kind};

/// The `rip-testserver` binary (build it first: `cargo build --workspace --bins`; `make test` does).
fn bin() -> std::path::PathBuf {
    rip_testkit::bin("rip-testserver")
}

/// Kills the child if a test fails before stopping it.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_with_timeout(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[tokio::test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
async fn the_binary_serves_a_plan_and_exposes_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"rules": [
            {"path": "/item-1", "sequence": [{"status": 503, "retry_after": 1}]},
            {"path": "/item-2", "then": {"reset": true}}
        ]}"#,
    )
    .unwrap();
    let log_path = dir.path().join("log.ndjson");
    let child = Command::new(bin())
        .args(["--graph", "20", "--sections", "2", "--faults"])
        .arg(&plan)
        .arg("--log")
        .arg(&log_path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut child = Running(child);
    let stdout = child.0.stdout.take().unwrap();
    let first_line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    })
    .await
    .unwrap()
    .unwrap();
    let origin = first_line
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line: {first_line:?}"))
        .to_owned();
    assert!(origin.starts_with("http://127.0.0.1:"), "{origin}");

    let client = client();
    let url = |path: &str| format!("{origin}{path}");
    let statuses = [
        client
            .get(url("/item-1"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        client
            .get(url("/item-1"))
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
        client
            .get(url("/section-1/item-3"))
            .header("user-agent", "two-processes/1")
            .send()
            .await
            .unwrap()
            .status()
            .as_u16(),
    ];
    assert_eq!(statuses, [503, 404, 200], "item-1 lives in section 1");
    let error = client.get(url("/item-2")).send().await.unwrap_err();
    assert_eq!(io_kind(&error), Some(std::io::ErrorKind::ConnectionReset));

    let log: Vec<RequestRecord> = client
        .get(url("/__rip/log"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let seen: Vec<(&str, Option<u16>)> = log.iter().map(|r| (r.path.as_str(), r.status)).collect();
    assert_eq!(
        seen,
        [
            ("/item-1", Some(503)),
            ("/item-1", Some(404)),
            ("/section-1/item-3", Some(200)),
            ("/item-2", None),
        ]
    );
    assert_eq!(log[2].header("user-agent"), Some("two-processes/1"));

    let file: Vec<RequestRecord> = std::fs::read_to_string(&log_path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(file, log);

    let pid = child.0.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    let status = wait_with_timeout(&mut child.0, Duration::from_secs(5)).expect("stops on SIGTERM");
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_bad_plan_is_reported_with_its_location() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    std::fs::write(
        &plan,
        r#"{"rules": [{"path": "/a", "then": {"delay": "soon"}}]}"#,
    )
    .unwrap();
    let output = Command::new(bin())
        .arg("--faults")
        .arg(&plan)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("rules[0].then") && stderr.contains("soon"),
        "{stderr}"
    );
}

#[test]
fn the_example_plan_is_printed_and_valid() {
    let output = Command::new(bin()).arg("--example-plan").output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text, rip_testserver::EXAMPLE_PLAN);
    rip_testserver::FaultPlan::from_json(&text).unwrap();
}
