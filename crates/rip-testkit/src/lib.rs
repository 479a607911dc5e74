//! Test support for the workspace's integration tests: find the binaries, run one stage
//! with [`Stage`] and read its output back as records, run real shell pipelines of them
//! exactly as a user types them, find the repository's `testdata/`, set up folders
//! ([`files_below`], [`make_read_only`], [`jsonl_folder`]), and read the cases of the
//! conformance suites kept there ([`html5lib`]); start real brokers ([`nats`]) and a network
//! of hosts of our own with slow, lossy or cut links ([`netlab`]).
//!
//! The binaries live in one package, `rip-bin` (the top-level `bin/`), not in the stages'
//! library packages: `cargo test --workspace` (and `make test`) builds them all before any
//! test runs (`rip-bin` has tests of its own, which need them). A single package's tests
//! (`cargo test -p rip-route`) rebuild its library but not the programs, so every binary
//! handed out ([`bin`], [`bin_dir`], [`path_with_bins`]) is first checked against the
//! sources it was built from, and a stale one fails the test with the command to run,
//! `cargo build -p rip-bin --bins` (see [`check_fresh`]). Binaries are looked up next to the
//! running test executable (`target/<profile>/`), so the profile and target directory
//! always match the test's own.

#![deny(missing_docs)]

mod folders;
mod fresh;
pub mod html5lib;
pub mod nats;
pub mod netlab;
mod stage;
mod wait;
mod warcio;

pub use folders::{files_below, jsonl_folder, make_read_only, read_json, unprivileged_prefix};
pub use fresh::{Stale, check_all_fresh, check_fresh};
pub use nats::cluster::NatsCluster;
pub use nats::{NatsServer, absent_broker, assert_broker_absent, free_port};
pub use stage::{Ran, Stage, interrupt, record, stream};
pub use wait::wait_for;
pub use warcio::{checked_records, warcio, warcio_index, warcio_payload};

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository's root folder (the workspace's).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// testdata/demo/emberfall.state.json, pointed at `origin`, its companions by absolute
/// path, output under `dir/out`; `edit` changes it further. Returns the state file
/// (`dir/emberfall.state.json`).
pub fn demo_state(dir: &Path, origin: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let demo = testdata("demo");
    let text = std::fs::read_to_string(demo.join("emberfall.state.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["baseUrl"] = format!("{origin}/").into();
    for f in ["rules", "policy", "reconciler"] {
        let p = demo.join(v[f].as_str().unwrap());
        v[f] = p.canonicalize().unwrap().display().to_string().into();
    }
    v.as_object_mut().unwrap().remove("$schema");
    v["output"]["basePath"] = dir.join("out").display().to_string().into();
    edit(&mut v);
    let path = dir.join("emberfall.state.json");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    path
}

/// A path under the repository's `testdata/`, e.g. `testdata("site")`.
pub fn testdata(rel: &str) -> PathBuf {
    repo().join("testdata").join(rel)
}

/// A tool from PyPI that `scripts/setup test` installs into `target/test-tools/venv/bin/`
/// (warcio, cdxj-indexer, the venv's python): its path. Panics, naming the command that
/// installs it, when it is missing.
pub fn test_tool(name: &str) -> PathBuf {
    let p = repo().join("target/test-tools/venv/bin").join(name);
    assert!(
        p.exists(),
        "{} is missing (hint: run `scripts/setup test`, which installs it from PyPI)",
        p.display()
    );
    p
}

/// The files in `dir` whose names end in `ending`, sorted.
pub fn files_ending(dir: &Path, ending: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(ending))
        .collect();
    v.sort();
    v
}

/// The directory holding the workspace binaries of the running test's profile. Panics,
/// naming the command to run, when one of [`programs`] is missing or older than its sources
/// (see [`check_all_fresh`]): a program run from here runs other programs from here.
pub fn bin_dir() -> PathBuf {
    let dir = profile_dir();
    fresh::assert_all_fresh(&dir, programs());
    dir
}

/// The workspace's programs: the `[[bin]]` targets of `bin/Cargo.toml` (package `rip-bin`),
/// read once per test process.
pub fn programs() -> &'static [String] {
    static PROGRAMS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    PROGRAMS.get_or_init(|| {
        fresh::programs_in(&repo().join("bin/Cargo.toml")).unwrap_or_else(|e| panic!("{e}"))
    })
}

/// `target/<profile>/` of the running test executable.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    // target/<profile>/deps/<test>-<hash>
    let deps = exe.parent().expect("deps dir");
    let dir = if deps.ends_with("deps") {
        deps.parent().expect("profile dir")
    } else {
        deps
    };
    dir.to_path_buf()
}

/// The path of a workspace binary, e.g. `bin("rip-fetch")`. Panics with the command
/// to run when it has not been built, or not from the sources as they are now (see
/// [`check_fresh`]).
pub fn bin(name: &str) -> PathBuf {
    let dir = profile_dir();
    fresh::assert_fresh(&dir, name, programs());
    dir.join(name)
}

/// A `PATH` with the workspace binaries first, each checked as [`bin_dir`] does.
pub fn path_with_bins() -> std::ffi::OsString {
    let mut paths = vec![bin_dir()];
    if let Some(old) = std::env::var_os("PATH") {
        paths.extend(std::env::split_paths(&old));
    }
    std::env::join_paths(paths).expect("a valid PATH")
}

/// A `bash -c` command running `script` with the workspace binaries on `PATH`,
/// `set -o pipefail` off (so each stage's exit code can be read with `PIPESTATUS`),
/// in `dir` when given.
pub fn shell(script: &str, dir: Option<&Path>) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg("-c").arg(script).env("PATH", path_with_bins());
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// Runs `script` (see [`shell`]) to completion and returns its output.
pub fn run_shell(script: &str, dir: Option<&Path>) -> Output {
    shell(script, dir).output().expect("bash runs")
}
