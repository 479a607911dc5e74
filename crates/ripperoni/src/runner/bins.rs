//! Before anything starts: the stage binaries are there, and the rules file and output
//! schema are valid (`rip-parse --check-rules`).

use crate::plan::Plan;
use crate::validate::Loaded;
use anyhow::{Context as _, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Finds a stage binary: `bin_dir`, else beside this executable, else on `PATH`.
pub fn find_bin(name: &str, bin_dir: Option<&Path>) -> PathBuf {
    if let Some(d) = bin_dir {
        return d.join(name);
    }
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
        && dir.join(name).is_file()
    {
        return dir.join(name);
    }
    PathBuf::from(name)
}

/// Every stage is found, and the rules and output schema the state file names are valid.
pub(super) fn check(plan: &Plan, l: &Loaded, bins: &dyn Fn(&str) -> PathBuf) -> anyhow::Result<()> {
    check_bins(plan, bins)?;
    if l.state.rules.is_some() || l.state.output_schema.is_some() {
        check_rules(
            &bins("rip-parse"),
            l.state.rules.as_deref(),
            l.state.output_schema.as_deref(),
        )?;
    }
    Ok(())
}

fn check_bins(plan: &Plan, bins: &dyn Fn(&str) -> PathBuf) -> anyhow::Result<()> {
    for stage in plan.stages.iter().map(|(_, s)| s).chain(&plan.finish) {
        let p = bins(&stage.program);
        let found = if p.components().count() > 1 {
            p.is_file()
        } else {
            std::env::var_os("PATH")
                .map(|path| std::env::split_paths(&path).any(|d| d.join(&p).is_file()))
                .unwrap_or(false)
        };
        if !found {
            bail!(
                "stage `{}` not found (looked at {}; hint: `cargo build --release --workspace \
                 --bins`, or put the rip-* binaries on PATH)",
                stage.program,
                p.display()
            );
        }
    }
    Ok(())
}

/// `rip-parse --check-rules`: a bad rules file or output schema stops the run before
/// anything starts.
fn check_rules(
    rip_parse: &Path,
    rules: Option<&Path>,
    output_schema: Option<&Path>,
) -> anyhow::Result<()> {
    let mut cmd = Command::new(rip_parse);
    let mut what = Vec::new();
    if let Some(r) = rules {
        cmd.arg("--rules").arg(r);
        what.push(format!("the rules file {}", r.display()));
    }
    if let Some(s) = output_schema {
        cmd.arg("--output-schema").arg(s);
        what.push(format!("the output schema {}", s.display()));
    }
    let out = cmd
        .arg("--check-rules")
        .stdin(Stdio::null())
        .output()
        .context("cannot run rip-parse --check-rules")?;
    if !out.status.success() {
        bail!(
            "{} is not valid:\n{}",
            what.join(" or "),
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    Ok(())
}
