//! Running a plan: the stages as child processes joined by pipes, their exit codes and
//! stderr collected, the final stream saved, then reconciliation and the health report,
//! the run put in place of the previous output (or not), and a run record.
//!
//! The steps, one module each: `bins` (the stages are there, the rules valid),
//! `prepare` (the run lock, a fresh staging folder, what a resumed run carries over),
//! `pipeline` (the stages, started and waited for; `signals` for Ctrl-C),
//! [`crate::account`] (reconcile, report), `verdict` (how it ended), `swap` (put in
//! place).
//!
//! # The output folder is replaced whole, or not at all
//!
//! A run writes beside the output folder `<basePath>/<target>`, in
//! `<basePath>/.<target>.staging/<target>`. When it ends complete or partial with
//! something in it, it is put in the output folder's place at once (`swap`: one
//! `renameat2(RENAME_EXCHANGE)`, or two renames that a kill between cannot make lose
//! both); until then the previous output is only read. A run that is not ready, fails,
//! or is stopped before anything came out leaves the previous output as it was, says so
//! on stderr and in its run record (`kept`, `attempt`, `logs`), and stays in the staging
//! folder for a look until the next run of the target. A folder ripperoni did not write
//! (no `.ripperoni/` in it) is never replaced.
//!
//! # Processes
//!
//! Every stage runs in one process group of its own, so the terminal's Ctrl-C reaches
//! the wrapper alone, which then stops the stages in order: the first Ctrl-C (or SIGTERM)
//! interrupts the source (`rip-discover`): it stops discovering, writes what it has and
//! its summary, and exits; every later stage sees its input end and finishes what is in
//! flight, exactly as after a normal end, so nothing that was discovered is lost and the
//! folder is consistent. A second Ctrl-C interrupts every stage (each flushes and exits
//! 130); a third kills them.
//!
//! Between some stages the wrapper relays the stream itself ([`crate::tap`]) to count
//! records for the progress display; the bytes pass unchanged.
//!
//! # Resuming
//!
//! An interrupted run with something in it is partial: it is put in place like any
//! other. When its stages all finished cleanly (only the source was interrupted),
//! `.ripperoni/resume.json` is left in it. The same command then resumes: `rip-discover`
//! continues a copy of its crawl state (`--state`; nothing it wrote before is written
//! again, and the pages it had fetched come from the cache), and the records the
//! interrupted run finished (its stream, less its `summary` records) are given to the
//! source as input, so that they pass through the new pipeline and its stream,
//! `failures.json` and books cover the whole scrape. Any other end (a hard stop, a stage
//! that failed, a changed state file, `--restart`) starts over, the cache making the
//! pages it holds cost no request.

mod bins;
mod pipeline;
mod prepare;
mod signals;
mod swap;
mod verdict;
mod worker;

pub use bins::find_bin;
pub use worker::worker;

use crate::account;
use crate::plan::Plan;
use crate::runlog::{RunRecord, RunStatus, StageRun};
use crate::validate::Loaded;
use anyhow::Context as _;
use chrono::Utc;
use std::path::PathBuf;
use swap::Swap;
use verdict::Verdict;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// No progress display, no summary (errors only).
    pub quiet: bool,
    /// Echo the stages' stderr.
    pub verbose: bool,
    /// Start over even when an interrupted run could be resumed.
    pub restart: bool,
    /// Where the stage binaries are (default: beside this executable, else `PATH`).
    pub bin_dir: Option<PathBuf>,
    /// `--metrics`: the stages that serve metrics are started with `--metrics
    /// 127.0.0.1:0`, and each one's stderr line saying its address is handed to this hook.
    pub metrics: Option<MetricsHook>,
}

/// Told, for each stage serving metrics, its step (`02-rip-fetch`, as its log is named)
/// and its stderr line `<program>: metrics on http://ADDR/metrics`.
#[derive(Clone)]
pub struct MetricsHook(pub std::sync::Arc<MetricsTold>);

/// What a [`MetricsHook`] calls: `(step, line)`.
pub type MetricsTold = dyn Fn(&str, &str) + Send + Sync;

impl std::fmt::Debug for MetricsHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MetricsHook")
    }
}

/// The stages that serve metrics when asked (`--metrics`): the long-running ones.
pub const METRICS_PROGRAMS: [&str; 4] = ["rip-discover", "rip-fetch", "rip-render", "rip-parse"];

/// What a run did.
#[derive(Debug)]
pub struct Outcome {
    /// The record appended to `runs.ndjson`.
    pub record: RunRecord,
    /// The wrapper's exit code.
    pub exit_code: u8,
    /// What rip-health printed: the one-screen health summary.
    pub health_text: String,
    /// The HTML report: in the output folder, or in the staging folder when the run was
    /// not put in place.
    pub report: PathBuf,
    /// When the run was not put in place: why, what was kept, and where the run is.
    pub kept_note: Option<String>,
}

/// Runs the scrape a loaded state file describes.
pub fn run(l: &Loaded, opts: &Options) -> anyhow::Result<Outcome> {
    let plan = Plan::new(l);
    let start = Utc::now();
    let id = format!(
        "{}-{}",
        start.format("%Y%m%dT%H%M%S%.3fZ"),
        std::process::id()
    );
    let bins = |name: &str| find_bin(name, opts.bin_dir.as_deref());
    bins::check(&plan, l, &bins)?;
    let _lock = prepare::RunLock::take(&plan)?;
    let prepared = prepare::prepare(&plan, l, opts.restart)?;
    let mut ended = pipeline::run(&plan, prepared.has_input, opts, &bins)?;

    // Reconcile and report, on whatever the run's folder holds.
    let health = account::finish(&plan, &bins, &mut ended.errors)?;
    account::from_report(
        &plan.next.dir.join("crawl-health.json"),
        &mut ended.counters,
        &mut ended.errors,
    );
    if l.state.render.as_ref().is_some_and(|r| r.auto) {
        account::render_auto(&plan.next.dir.join("stream.ndjson"), &mut ended.counters);
    }
    let verdict = verdict::judge(&ended, health.exit);
    if verdict.resumable {
        prepare::write_marker(&plan.next, &id, prepared.state)?;
    }
    let placed = place(&plan, &verdict, &mut ended.errors);
    let hint = match verdict.status {
        RunStatus::NotReady => Some(not_ready_hint(l)),
        _ => broker_hint(l, &ended.stages),
    };
    let record = RunRecord {
        id,
        target: plan.target.clone(),
        state_file: l.path.display().to_string(),
        start,
        end: Utc::now(),
        status: verdict.status,
        exit_code: verdict.exit_code,
        interrupted: ended.interrupted,
        resumed: prepared.resumed,
        counters: ended.counters,
        errors: ended.errors,
        stages: ended.stages,
        output: plan.output.dir.display().to_string(),
        kept: placed.kept.map(|p| p.display().to_string()),
        attempt: placed.attempt.map(|p| p.display().to_string()),
        logs: Some(placed.logs.display().to_string()),
    };
    record
        .append(&plan.runs)
        .with_context(|| format!("cannot append to {}", plan.runs.display()))?;
    // rip-health named the files it wrote where it wrote them.
    let health_text = match placed.why_not {
        None => health.text.replace(
            &plan.next.dir.display().to_string(),
            &plan.output.dir.display().to_string(),
        ),
        Some(_) => health.text,
    };
    Ok(Outcome {
        kept_note: placed
            .why_not
            .map(|why| kept_note(&plan, &record, why, hint.as_deref())),
        record,
        exit_code: verdict.exit_code,
        health_text,
        report: placed.report,
    })
}

/// Where the run ended up.
struct Placed {
    /// Why it is not in the output folder; `None`: it is.
    why_not: Option<&'static str>,
    report: PathBuf,
    logs: PathBuf,
    kept: Option<PathBuf>,
    attempt: Option<PathBuf>,
}

/// Puts the run in place of the previous output when the verdict says so; a swap that
/// fails leaves it in the staging folder, and the previous output as it was.
fn place(plan: &Plan, verdict: &Verdict, errors: &mut Vec<String>) -> Placed {
    let swap = Swap::of(plan);
    let mut why_not = verdict.not_in_place;
    if why_not.is_none() {
        if let Err(e) = swap.put_in_place() {
            errors.push(format!(
                "cannot put {} in place of {}: {e}",
                plan.next.dir.display(),
                plan.output.dir.display()
            ));
            why_not = Some("could not be put in place");
        } else if let Err(e) = swap.clear() {
            errors.push(format!(
                "cannot remove {} (the previous output; the next run removes it): {e}",
                plan.staging.display()
            ));
        }
    }
    match why_not {
        None => Placed {
            why_not,
            report: plan.output.report.clone(),
            logs: plan.output.logs(),
            kept: None,
            attempt: None,
        },
        Some(_) => Placed {
            why_not,
            report: plan.next.report.clone(),
            logs: plan.next.logs(),
            kept: plan.output.dir.exists().then(|| plan.output.dir.clone()),
            attempt: Some(plan.next.dir.clone()),
        },
    }
}

/// The line that says a run was not put in place, what was kept, where the run is, and
/// what to do (`hint`).
fn kept_note(plan: &Plan, r: &RunRecord, why: &str, hint: Option<&str>) -> String {
    let kept = match &r.kept {
        Some(k) => format!("the previous output in {k} is kept as it was"),
        None => format!("nothing was put in {} (there was no output)", r.output),
    };
    let hint = hint.map(|h| format!(" (hint: {h})")).unwrap_or_default();
    format!(
        "ripperoni: this run {why}: {kept}; this attempt's report is {}, its logs are in {}{hint}",
        plan.next.report.display(),
        plan.next.logs().display()
    )
}

/// What to do after a queue run whose `rip-queue` stopped with an error (the broker away,
/// or refusing this run): check the broker the state file names, not the pipeline.
fn broker_hint(l: &Loaded, stages: &[StageRun]) -> Option<String> {
    let queue = l.state.queue.as_ref()?;
    let fatal = i32::from(rip_core::exit::FATAL);
    stages
        .iter()
        .any(|s| s.stage == "rip-queue" && s.exit == Some(fatal))
        .then(|| {
            format!(
                "is the broker at {} up, with JetStream (`nats-server -js`), and does it take \
                 this run's credentials (`queue.credentialsFile`)? rip-queue's error above says \
                 which; the workers need the same broker; run the same command again once it \
                 answers",
                queue.broker
            )
        })
}

/// What to do after a run that was not ready: its site did not answer.
fn not_ready_hint(l: &Loaded) -> String {
    let site = l
        .state
        .base_url
        .as_deref()
        .map_or_else(|| "the site".to_owned(), |u| format!("the site at {u}"));
    format!(
        "is {site} up? run the same command again once it answers; `--base-url URL` runs \
         this scrape against another host"
    )
}
