//! Running a plan: the stages as child processes joined by pipes, their exit codes and
//! stderr collected, the final stream saved, then reconciliation and the health report,
//! a run record, and what an interrupted run needs to resume.
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
//! After an interruption whose stages all finished cleanly (only the source was
//! interrupted), `.ripperoni/resume.json` is left in the output folder. The same command
//! then resumes: `rip-discover` continues its crawl state (`--state`; nothing it wrote
//! before is written again, and the pages it had fetched come from the cache), and the
//! records the interrupted run finished (its stream, less its `summary` records) are
//! given to the source as input, so that they pass through the new pipeline and its
//! stream, `failures.json` and books cover the whole scrape. Any other end (a hard stop,
//! a stage that failed, a changed state file, `--restart`) starts over: the output
//! folder is emptied, the cache makes the pages it holds cost no request.

use crate::account;
use crate::plan::{Plan, Role, Stage};
use crate::progress::{Display, Taps};
use crate::runlog::{RunRecord, RunStatus, StageRun};
use crate::tap::{self, Kind};
use crate::validate::Loaded;
use anyhow::{Context as _, bail};
use chrono::Utc;
use rip_core::Summary;
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::fs;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

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
}

/// What a run did.
#[derive(Debug)]
pub struct Outcome {
    /// The record appended to `runs.ndjson`.
    pub record: RunRecord,
    /// The wrapper's exit code.
    pub exit_code: u8,
    /// What rip-health printed: the one-screen health summary.
    pub health_text: String,
    /// The HTML report.
    pub report: PathBuf,
}

/// Environment variables the stages read as fallbacks for flags: cleared, so that the
/// state file alone says what runs.
const CLEARED_ENV: &[&str] = &[
    "RIP_RULES",
    "RIP_ROUTE_POLICY",
    "RIP_RECONCILER",
    "RIP_OUT",
    "RIP_CACHE_DIR",
    "RIP_CACHE_MODE",
];

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResumeMarker {
    run_id: String,
    state: serde_json::Value,
}

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
    check_bins(&plan, &bins)?;
    if l.state.rules.is_some() || l.state.output_schema.is_some() {
        check_rules(
            &bins("rip-parse"),
            l.state.rules.as_deref(),
            l.state.output_schema.as_deref(),
        )?;
    }

    // One run per target at a time: a second would empty the folder under the first.
    fs::create_dir_all(&plan.base)
        .with_context(|| format!("cannot create {}", plan.base.display()))?;
    let lock_path = plan.base.join(format!(".{}.lock", plan.target));
    let lock = fs::File::create(&lock_path)
        .with_context(|| format!("cannot create {}", lock_path.display()))?;
    if lock.try_lock().is_err() {
        bail!(
            "another ripperoni run of `{}` holds {} (hint: wait for it to end)",
            plan.target,
            lock_path.display()
        );
    }

    let state_value = serde_json::to_value(&l.state)?;
    let marker_path = plan.work.join("resume.json");
    let resumed = if opts.restart {
        None
    } else {
        read_marker(&marker_path).and_then(|m| (m.state == state_value).then_some(m.run_id))
    };
    let mut input_lines = plan.url_refs.clone();
    if resumed.is_some() {
        // The records the interrupted run finished ride along the new pipeline; listed
        // URLs that entered it are not given again (with a crawl, rip-discover's state
        // knows what it wrote).
        let (lines, entered) = carried(&plan.stream)?;
        input_lines.retain(|r| {
            serde_json::from_str::<serde_json::Value>(r)
                .ok()
                .and_then(|v| v.get("url")?.as_str().map(|u| !entered.contains(u)))
                .unwrap_or(true)
        });
        input_lines.extend(lines);
        fs::remove_file(&marker_path).ok();
    } else {
        start_over(&plan)?;
    }
    let has_input = !input_lines.is_empty();
    if has_input {
        write_atomic(&plan.input_file(), &(input_lines.join("\n") + "\n"))?;
    } else {
        fs::remove_file(plan.input_file()).ok();
    }
    let logs = plan.work.join("logs");
    fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;

    // Spawn the pipeline, the signal handler first.
    let signals = Signals::install()?;
    let display = Display::new(opts.quiet, plan.rounds);
    let taps = Taps::default();
    let mut children: Vec<(String, Child)> = Vec::new();
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut tails: Vec<Arc<Mutex<VecDeque<String>>>> = Vec::new();
    let mut next_stdin: Stdio = Stdio::null();
    let mut pgid: Option<i32> = None;
    let last = plan.stages.len() - 1;
    let mut final_out = None;
    for (i, (role, stage)) in plan.stages.iter().enumerate() {
        let mut cmd = Command::new(bins(&stage.program));
        cmd.args(&stage.args);
        if i == 0 && has_input {
            cmd.arg("-i").arg(plan.input_file());
        }
        for v in CLEARED_ENV {
            cmd.env_remove(v);
        }
        cmd.stdin(std::mem::replace(&mut next_stdin, Stdio::null()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(pgid.unwrap_or(0));
        let mut child = cmd
            .spawn()
            .with_context(|| format!("cannot start {}", stage.program))?;
        let pid = child.id() as i32;
        pgid.get_or_insert(pid);
        let label = label(*role, stage);
        let stderr = child.stderr.take().expect("piped");
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        tails.push(tail.clone());
        let log = logs.join(format!("{i:02}-{}.log", stage.program));
        threads.push(stderr_thread(
            stderr,
            log,
            tail,
            display.clone(),
            opts.verbose,
        ));
        let stdout = child.stdout.take().expect("piped");
        if i == last {
            final_out = Some(stdout);
        } else if let Some(counts) = taps.after(*role, plan.rounds) {
            let (r, w) = std::io::pipe().context("cannot make a pipe")?;
            threads.push(std::thread::spawn(move || tap::relay(stdout, w, counts)));
            next_stdin = Stdio::from(r);
        } else {
            next_stdin = Stdio::from(stdout);
        }
        children.push((label, child));
    }
    let pgid = pgid.expect("at least one stage");
    let source_pid = children[0].1.id() as i32;

    signals.arm(source_pid, pgid);
    let final_counts = taps.final_counts();
    let stream_path = plan.stream.clone();
    let reader = std::thread::spawn({
        let out = final_out.expect("a last stage");
        move || save_stream(out, &stream_path, &final_counts)
    });
    let ticker = display.start(taps.clone());

    let mut stage_runs = Vec::new();
    let mut errors = Vec::new();
    let mut failed = Vec::new();
    for (i, (label, child)) in children.iter_mut().enumerate() {
        let status = child
            .wait()
            .with_context(|| format!("waiting for {label}"))?;
        let code = status.code();
        if code.is_none() || code == Some(1) {
            failed.push((i, label.clone(), code, status.signal()));
        }
        stage_runs.push(StageRun {
            stage: label.clone(),
            pid: child.id(),
            exit: code,
            status: None,
        });
    }
    let saved = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the stream reader panicked"))?
        .with_context(|| format!("cannot write {}", plan.stream.display()))?;
    for t in threads {
        let _ = t.join();
    }
    // A failed stage, with the last line it wrote to stderr (read to the end by now).
    for (i, label, code, signal) in failed {
        let sig = signal.map(|s| format!(" (signal {s})")).unwrap_or_default();
        let tail = tails[i]
            .lock()
            .map(|t| t.back().cloned())
            .unwrap_or_default();
        errors.push(format!(
            "{label} exited {}{sig}{}",
            code.map_or("abnormally".to_owned(), |c| c.to_string()),
            tail.map(|t| format!(": {t}")).unwrap_or_default()
        ));
    }
    let interrupted = signals.count() > 0;
    let hard_stop = signals.count() > 1;
    signals.close();
    display.stop(ticker);

    // Match the summaries in the stream to the stage processes.
    for sr in &mut stage_runs {
        if let Some(s) = saved.summaries.iter().find(|s| s.pid == sr.pid) {
            sr.status = Some(rip_health_status(s));
        }
    }

    // Reconcile and report, on whatever the folder holds.
    let health = account::finish(&plan, &bins, &mut errors)?;
    let mut counters = BTreeMap::new();
    counters.insert("discovered".into(), taps.discovered());
    counters.insert("fetched".into(), taps.fetched());
    counters.insert("parsed".into(), saved.counts.get(Kind::Doc));
    counters.insert("errorDocs".into(), saved.counts.get(Kind::Error));
    account::from_report(
        &plan.dir.join("crawl-health.json"),
        &mut counters,
        &mut errors,
    );
    let (health_text, health_exit) = (health.text, health.exit);

    let source_exit = stage_runs[0].exit;
    let fatal = stage_runs
        .iter()
        .skip(usize::from(interrupted))
        .any(|s| s.exit.is_none() || s.exit == Some(1));
    let status = if fatal && !hard_stop {
        RunStatus::Failed
    } else if source_exit == Some(i32::from(rip_core::exit::NOT_READY)) {
        RunStatus::NotReady
    } else if interrupted || health_exit != Some(0) || stage_runs.iter().any(|s| s.exit != Some(0))
    {
        RunStatus::Partial
    } else {
        RunStatus::Complete
    };
    // Resumable: only the source was interrupted, every other stage ended on its own.
    let clean_drain = interrupted
        && !hard_stop
        && stage_runs[1..]
            .iter()
            .all(|s| matches!(s.exit, Some(0 | 2)) && s.status.is_some());
    if clean_drain {
        let m = ResumeMarker {
            run_id: id.clone(),
            state: state_value,
        };
        write_atomic(&marker_path, &serde_json::to_string_pretty(&m)?)?;
    }
    let exit_code = if interrupted {
        rip_core::exit::INTERRUPTED
    } else {
        status.exit_code()
    };
    let record = RunRecord {
        id,
        target: plan.target.clone(),
        state_file: l.path.display().to_string(),
        start,
        end: Utc::now(),
        status,
        exit_code,
        interrupted,
        resumed,
        counters,
        errors,
        stages: stage_runs,
        output: plan.dir.display().to_string(),
    };
    record
        .append(&plan.runs)
        .with_context(|| format!("cannot append to {}", plan.runs.display()))?;
    Ok(Outcome {
        record,
        exit_code,
        health_text,
        report: plan.report.clone(),
    })
}

fn rip_health_status(s: &Summary) -> String {
    serde_json::to_value(s.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn label(role: Role, stage: &Stage) -> String {
    match role {
        Role::Fetch(n) => format!("{}#{n}", stage.program),
        Role::Route(0) => format!("{} (after parse)", stage.program),
        Role::Route(n) => format!("{}#{n}", stage.program),
        _ => stage.program.clone(),
    }
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

fn read_marker(path: &Path) -> Option<ResumeMarker> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// Empties the output folder for a fresh run. A folder that exists but was not written by
/// ripperoni is refused rather than deleted.
fn start_over(plan: &Plan) -> anyhow::Result<()> {
    if plan.dir.exists() {
        let ours = plan.work.is_dir()
            || fs::read_dir(&plan.dir)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
        if !ours {
            bail!(
                "{} exists and was not written by ripperoni (no .ripperoni folder in it): \
                 refusing to empty it (hint: move it away, or change output.basePath)",
                plan.dir.display()
            );
        }
        fs::remove_dir_all(&plan.dir)
            .with_context(|| format!("cannot empty {}", plan.dir.display()))?;
    }
    fs::create_dir_all(&plan.work).with_context(|| format!("cannot create {}", plan.work.display()))
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
        let mut kinds = tap::LineKinds::default();
        let mut kind = Kind::Other;
        kinds.feed(line.as_bytes(), |k| kind = k);
        kinds.feed(b"\n", |k| kind = k);
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

/// What the final stream held.
struct Saved {
    counts: Arc<tap::Counts>,
    summaries: Vec<Summary>,
}

fn save_stream(out: impl Read, path: &Path, counts: &Arc<tap::Counts>) -> std::io::Result<Saved> {
    let mut file = BufWriter::with_capacity(256 * 1024, fs::File::create(path)?);
    let mut reader = BufReader::with_capacity(256 * 1024, out);
    let mut summaries = Vec::new();
    let mut line = Vec::new();
    let mut kinds = tap::LineKinds::default();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let mut kind = Kind::Other;
        kinds.feed(&line, |k| kind = k);
        if !line.ends_with(b"\n") {
            kinds.feed(b"\n", |k| kind = k);
        }
        counts.add(kind);
        if kind == Kind::Summary
            && let Ok(s) = serde_json::from_slice::<Summary>(&line)
        {
            summaries.push(s);
        }
        file.write_all(&line)?;
    }
    file.flush()?;
    file.into_inner().map_err(|e| e.into_error())?.sync_data()?;
    Ok(Saved {
        counts: counts.clone(),
        summaries,
    })
}

fn stderr_thread(
    stderr: impl Read + Send + 'static,
    log: PathBuf,
    tail: Arc<Mutex<VecDeque<String>>>,
    display: Display,
    echo: bool,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut file = fs::File::create(&log).ok().map(BufWriter::new);
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if let Some(f) = &mut file {
                let _ = writeln!(f, "{line}");
            }
            if echo {
                display.println(&line);
            }
            if let Ok(mut t) = tail.lock() {
                if t.len() == 20 {
                    t.pop_front();
                }
                t.push_back(line);
            }
        }
        if let Some(f) = &mut file {
            let _ = f.flush();
        }
    })
}

/// SIGINT and SIGTERM, escalated: the source, then every stage, then SIGKILL.
///
/// Installed before the first stage starts (the stages run in a process group of their
/// own, out of the terminal's reach: a wrapper killed by a Ctrl-C would leave them
/// running), and armed with their pids once they run; a signal that came before is
/// delivered then.
struct Signals {
    handle: signal_hook::iterator::Handle,
    count: Arc<AtomicUsize>,
    /// The source's pid and the stages' process group, 0 until armed.
    pids: Arc<Mutex<(i32, i32)>>,
    thread: JoinHandle<()>,
    done: Arc<AtomicBool>,
}

impl Signals {
    fn install() -> anyhow::Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
            .context("cannot install the signal handler")?;
        let handle = signals.handle();
        let count = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let pids = Arc::new(Mutex::new((0, 0)));
        let thread = std::thread::spawn({
            let count = count.clone();
            let done = done.clone();
            let pids = pids.clone();
            move || {
                for _ in signals.forever() {
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    // Under the lock: `arm` either sees this count or sets the pids first.
                    let Ok(p) = pids.lock() else { break };
                    let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                    if p.0 != 0 {
                        deliver(n, p.0, p.1);
                    }
                }
            }
        });
        Ok(Self {
            handle,
            count,
            pids,
            thread,
            done,
        })
    }

    /// The stages run: signals go to them from now on, and one that came before goes now.
    fn arm(&self, source: i32, pgid: i32) {
        if let Ok(mut p) = self.pids.lock() {
            *p = (source, pgid);
            let n = self.count();
            if n > 0 {
                deliver(n, source, pgid);
            }
        }
    }

    fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    fn close(self) {
        self.done.store(true, Ordering::SeqCst);
        self.handle.close();
        let _ = self.thread.join();
    }
}

/// The `n`th signal's effect: the source, then every stage, then SIGKILL.
fn deliver(n: usize, source: i32, pgid: i32) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    let (Some(src), Some(group)) = (Pid::from_raw(source), Pid::from_raw(pgid)) else {
        return;
    };
    let _ = match n {
        1 => {
            eprintln!(
                "ripperoni: stopping discovery; the stages finish what is in flight (Ctrl-C \
                 again to stop them now)"
            );
            kill_process(src, Signal::INT)
        }
        2 => {
            eprintln!(
                "ripperoni: stopping every stage (the next run starts over; Ctrl-C again to \
                 kill them)"
            );
            kill_process_group(group, Signal::INT)
        }
        _ => kill_process_group(group, Signal::KILL),
    };
}
