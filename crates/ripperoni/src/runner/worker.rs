//! `ripperoni worker STATE`: one worker of a scrape spread over machines (the state file's
//! `queue`): `rip-queue work` on the scrape's refs, running the fetch rounds, parse and route
//! on each batch, until stopped.
//!
//! `rip-queue work` and everything it starts (a shell pipeline of stages per batch) run in a
//! process group of their own, as `ripperoni run`'s stages do: a Ctrl-C or SIGTERM reaches
//! the worker, which stops them in order (`signals`: first `rip-queue`, which takes no more
//! records and lets its runs finish; then every process; then SIGKILL). The group dies with
//! the worker however it dies (`rip_cli::die_with_wrapper`, in `rip-queue`): a worker killed
//! with `kill -9` leaves no process taking records or fetching for it. Whatever is left of
//! the group when `rip-queue` has ended (its runs' stages, after it failed) is killed.

use super::bins::{check, find_bin};
use super::signals::{self, Said, Signals};
use crate::plan::Plan;
use crate::validate::Loaded;
use anyhow::{Context as _, bail};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the first and the second signal say they do.
const SAID: Said = Said {
    first: "ripperoni worker: stopping: no more pages are taken, the runs in flight finish \
            (Ctrl-C again to stop them now)",
    second: "ripperoni worker: stopping every run (their pages go to other workers; Ctrl-C \
             again to kill them)",
};

/// Runs the worker until it ends (Ctrl-C, or `idle_exit` with nothing to do); returns its
/// exit code.
/// `queue_args` go to `rip-queue work` as they are (`--metrics ADDR`: it serves the
/// worker's metrics).
pub fn worker(
    l: &Loaded,
    bin_dir: Option<&Path>,
    idle_exit: Option<&str>,
    queue_args: &[String],
) -> anyhow::Result<u8> {
    let plan = Plan::new(l);
    let Some(stage) = &plan.worker else {
        bail!(
            "{}: no `queue` in the state file: `ripperoni run` does the whole scrape on this \
             machine (add a `queue` section to spread it over workers)",
            l.path.display()
        );
    };
    let bins = |name: &str| find_bin(name, bin_dir);
    check(&plan, l, &bins)?;
    let program = bins(&stage.program);
    let mut command = Command::new(&program);
    let (before, after) = split_at_command(&stage.args);
    command.args(before);
    if let Some(idle) = idle_exit {
        command.args(["--idle-exit", idle]);
    }
    command.args(queue_args);
    command.args(after);
    // `sh -c 'rip-fetch … | rip-parse …'` finds the same binaries as ripperoni does.
    if let Some(dir) = program.parent().filter(|d| !d.as_os_str().is_empty()) {
        command.env("PATH", path_with(dir));
    }
    // Its own process group, led by `rip-queue`, which dies with this process.
    command.process_group(0).env(
        rip_core::exit::WRAPPER_PID_ENV,
        std::process::id().to_string(),
    );
    let signals = Signals::install(&SAID)?;
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let group = child.id() as i32;
    signals.arm(group, group);
    let status = child.wait();
    signals.close();
    signals::kill_group(group);
    let status = status.with_context(|| format!("waiting for {}", program.display()))?;
    Ok(status
        .code()
        .map_or(rip_core::exit::INTERRUPTED, |c| c as u8))
}

/// `rip-queue`'s arguments before and from the `--` that starts the command.
fn split_at_command(args: &[String]) -> (&[String], &[String]) {
    let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
    args.split_at(at)
}

/// `PATH` with `dir` first.
fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> = vec![dir.to_owned()];
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    std::env::join_paths(dirs).unwrap_or_default()
}
