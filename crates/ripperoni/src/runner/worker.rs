//! `ripperoni worker STATE`: one worker of a scrape spread over machines (the state file's
//! `queue`): `rip-queue work` on the scrape's refs, running the fetch rounds, parse and route
//! on each batch, until stopped.

use super::bins::{check, find_bin};
use crate::plan::Plan;
use crate::validate::Loaded;
use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the worker until it ends (Ctrl-C, or `idle_exit` with nothing to do); returns its
/// exit code.
pub fn worker(l: &Loaded, bin_dir: Option<&Path>, idle_exit: Option<&str>) -> anyhow::Result<u8> {
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
    command.args(after);
    // `sh -c 'rip-fetch … | rip-parse …'` finds the same binaries as ripperoni does.
    if let Some(dir) = program.parent().filter(|d| !d.as_os_str().is_empty()) {
        command.env("PATH", path_with(dir));
    }
    let status = command
        .status()
        .with_context(|| format!("cannot start {}", program.display()))?;
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
