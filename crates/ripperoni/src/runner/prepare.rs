//! Before the stages start: the run lock, a swap a kill left half done, a fresh staging
//! folder, and what a resumed run carries over from the interrupted one. The output
//! folder itself is only read.

use super::swap::Swap;
use crate::plan::{Folder, PREVIOUS, Plan};
use crate::tap;
use crate::validate::Loaded;
use anyhow::{Context as _, bail};
use rip_core::Kind;
use std::collections::HashSet;
use std::fs;
use std::io::{BufRead, BufReader, Read as _, Seek as _, Write as _};
use std::path::Path;

/// `<base>/.<target>.lock`, held for the whole run: one run of a target at a time (a
/// second would clear the staging folder under the first, or swap under it). The file
/// holds the holder's pid and is never removed: removing a lock file races with the next
/// run that opens it.
pub(super) struct RunLock {
    _file: fs::File,
}

impl RunLock {
    pub(super) fn take(plan: &Plan) -> anyhow::Result<Self> {
        fs::create_dir_all(&plan.base)
            .with_context(|| format!("cannot create {}", plan.base.display()))?;
        let path = plan.base.join(format!(".{}.lock", plan.target));
        let mut file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = file.read_to_string(&mut pid);
                let pid = pid.trim();
                let by = if pid.is_empty() {
                    String::new()
                } else {
                    format!(" (pid {pid})")
                };
                bail!(
                    "another ripperoni run of `{}`{by} holds {} (hint: wait for it to end)",
                    plan.target,
                    path.display()
                );
            }
            Err(fs::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        file.set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| write!(file, "{}", std::process::id()))
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(Self { _file: file })
    }
}

/// What the run starts from.
pub(super) struct Prepared {
    /// The id of the interrupted run this one resumes.
    pub resumed: Option<String>,
    /// The source reads [`Folder::input_file`] of the staging folder.
    pub has_input: bool,
    /// The state file as loaded: what a resume marker must match.
    pub state: serde_json::Value,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResumeMarker {
    run_id: String,
    state: serde_json::Value,
}

/// Makes the staging folder afresh and fills what the source reads.
pub(super) fn prepare(plan: &Plan, l: &Loaded, restart: bool) -> anyhow::Result<Prepared> {
    let swap = Swap::of(plan);
    let recovered = swap.recover().with_context(|| {
        format!(
            "cannot finish the swap of {} an earlier run began",
            plan.staging.display()
        )
    })?;
    if let Some(note) = recovered {
        rip_core::stderr::say(format_args!("ripperoni: {note}"));
    }
    refuse_foreign(plan)?;
    clear_staging(plan)?;
    let state = serde_json::to_value(&l.state)?;
    let marker = (!restart)
        .then(|| read_marker(&plan.output.resume_marker()))
        .flatten();
    let resumed = marker.and_then(|m| (m.state == state).then_some(m.run_id));
    let mut input_lines = plan.url_refs.clone();
    if resumed.is_some() {
        carry(plan, &mut input_lines)?;
    }
    let has_input = !input_lines.is_empty();
    if has_input {
        write_atomic(&plan.next.input_file(), &(input_lines.join("\n") + "\n"))?;
    }
    let logs = plan.next.logs();
    fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    Ok(Prepared {
        resumed,
        has_input,
        state,
    })
}

/// Leaves the resume marker in the run's folder: the same command resumes it.
pub(super) fn write_marker(
    folder: &Folder,
    run_id: &str,
    state: serde_json::Value,
) -> anyhow::Result<()> {
    let m = ResumeMarker {
        run_id: run_id.to_owned(),
        state,
    };
    write_atomic(&folder.resume_marker(), &serde_json::to_string_pretty(&m)?)
}

fn read_marker(path: &Path) -> Option<ResumeMarker> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// Ripperoni wrote a folder when it holds `.ripperoni/`; an empty folder is fair game too.
fn written_by_ripperoni(f: &Folder) -> bool {
    f.work.is_dir() || fs::read_dir(&f.dir).is_ok_and(|mut d| d.next().is_none())
}

/// An output folder ripperoni did not write is never replaced (nor emptied).
fn refuse_foreign(plan: &Plan) -> anyhow::Result<()> {
    if plan.output.dir.exists() && !written_by_ripperoni(&plan.output) {
        bail!(
            "{} exists and was not written by ripperoni (no .ripperoni folder in it): \
             refusing to replace it (hint: move it away, or change output.basePath)",
            plan.output.dir.display()
        );
    }
    Ok(())
}

/// Removes what an earlier attempt left in the staging folder, then makes it afresh.
fn clear_staging(plan: &Plan) -> anyhow::Result<()> {
    if plan.staging.exists() {
        let entries = fs::read_dir(&plan.staging)
            .with_context(|| format!("cannot read {}", plan.staging.display()))?;
        let foreign: Vec<String> = entries
            .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
            .filter(|n| *n != plan.target && n != PREVIOUS)
            .collect();
        if !foreign.is_empty() {
            bail!(
                "{} holds what ripperoni did not put there ({}): refusing to empty it \
                 (hint: move it away)",
                plan.staging.display(),
                foreign.join(", ")
            );
        }
        fs::remove_dir_all(&plan.staging)
            .with_context(|| format!("cannot empty {}", plan.staging.display()))?;
    }
    fs::create_dir_all(&plan.next.work)
        .with_context(|| format!("cannot create {}", plan.next.work.display()))
}

/// A resumed run: the records the interrupted run finished ride along the new pipeline
/// (listed URLs that entered it are not given again), and rip-discover continues a copy
/// of its crawl state (the interrupted run's output stays as it was until this run is
/// put in its place).
fn carry(plan: &Plan, input_lines: &mut Vec<String>) -> anyhow::Result<()> {
    let (lines, entered) = carried(&plan.output.stream)?;
    input_lines.retain(|r| {
        serde_json::from_str::<serde_json::Value>(r)
            .ok()
            .and_then(|v| v.get("url")?.as_str().map(|u| !entered.contains(u)))
            .unwrap_or(true)
    });
    input_lines.extend(lines);
    let crawl = plan.output.crawl_state();
    if crawl.is_dir() {
        copy_dir(&crawl, &plan.next.crawl_state())
            .with_context(|| format!("cannot copy the crawl state {}", crawl.display()))?;
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    fs::create_dir_all(to)?;
    for e in fs::read_dir(from)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()))?;
        } else {
            fs::copy(e.path(), to.join(e.file_name()))?;
        }
    }
    Ok(())
}

/// The lines of the interrupted run's stream to carry into the resumed one: everything
/// but its `summary` records (its stages' accounts; the new run's stages give theirs),
/// and the URLs its ledgers say entered.
fn carried(stream: &Path) -> anyhow::Result<(Vec<String>, HashSet<String>)> {
    let mut entered = HashSet::new();
    let f = match fs::File::open(stream) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), entered)),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", stream.display())),
    };
    let mut out = Vec::new();
    for line in BufReader::new(f).lines() {
        let line = line.with_context(|| format!("cannot read {}", stream.display()))?;
        let kind = tap::line_kind(line.as_bytes());
        if kind == Kind::Ledger
            && let Ok(l) = serde_json::from_str::<rip_core::Ledger>(&line)
        {
            entered.extend(l.entered);
        }
        if kind != Kind::Summary && !line.trim().is_empty() {
            out.push(line);
        }
    }
    Ok((out, entered))
}

fn write_atomic(path: &Path, text: &str) -> anyhow::Result<()> {
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}
