//! Shared helpers: the repository's paths, a demo state file pointed at a test server,
//! running the binary, reading the output folder.

use rip_testserver::{FaultPlan, TestServer};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

pub use rip_testkit::{demo_state, read_json, repo};

pub fn ripperoni() -> Command {
    let mut c = Command::new(rip_testkit::bin("ripperoni"));
    c.env("RIP_BIN_DIR", rip_testkit::bin_dir())
        .stdin(Stdio::null());
    c
}

pub fn run(args: &[&str]) -> Output {
    ripperoni().args(args).output().expect("ripperoni runs")
}

/// The demo site served with the demo fault plan (testdata/demo-faults.json).
pub fn demo_server() -> TestServer {
    let plan = FaultPlan::from_file(repo().join("testdata/demo-faults.json")).expect("the plan");
    TestServer::builder()
        .dir(repo().join("testdata/site"))
        .plan(plan)
        .start_background()
        .expect("the server starts")
}

/// The lines of `runs.ndjson`.
pub fn runs(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("out/runs.ndjson"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Requests per path in a server's log.
pub fn requests_per_path(server: &TestServer) -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for r in server.requests() {
        *m.entry(r.path.clone()).or_default() += 1;
    }
    m
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Copies the folder `from` to `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}
