//! The stages as child processes joined by pipes: started in one process group, their
//! stderr saved (and echoed with `-v`), the final stream saved, then waited for.

use super::signals::{self, Signals};
use crate::plan::{Plan, Role, Stage};
use crate::progress::{Display, Taps};
use crate::runlog::StageRun;
use crate::tap;
use anyhow::Context as _;
use rip_core::Kind;
use rip_core::Summary;
use std::collections::{BTreeMap, VecDeque};
use std::fs;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

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

/// How the stages ended.
pub(super) struct Ended {
    /// Every stage process, with its exit code and its summary's status.
    pub stages: Vec<StageRun>,
    /// Stages that failed, each with the last line it wrote on stderr.
    pub errors: Vec<String>,
    /// The progress counts: `discovered`, `fetched`, `parsed`, `errorDocs`.
    pub counters: BTreeMap<String, u64>,
    /// Terminal records (`doc`, `error`, `expected`) in the final stream.
    pub terminal: u64,
    /// Stopped by a signal.
    pub interrupted: bool,
    /// Stopped by a second signal (every stage interrupted).
    pub hard_stop: bool,
}

/// The stages started and not yet waited for.
struct Started {
    children: Vec<(String, Child)>,
    threads: Vec<JoinHandle<()>>,
    tails: Vec<Arc<Mutex<VecDeque<String>>>>,
    final_out: ChildStdout,
    pgid: i32,
}

/// Runs the plan's pipeline to its end.
pub(super) fn run(
    plan: &Plan,
    has_input: bool,
    opts: &super::Options,
    bins: &dyn Fn(&str) -> PathBuf,
) -> anyhow::Result<Ended> {
    let signals = Signals::install(&signals::RUN)?;
    let display = Display::new(opts.quiet, plan.rounds);
    let taps = Taps::default();
    let started = start(plan, has_input, opts, bins, &display, &taps)?;
    signals.arm(started.children[0].1.id() as i32, started.pgid);
    let final_counts = taps.final_counts();
    let stream_path = plan.next.stream.clone();
    let final_out = started.final_out;
    let reader = std::thread::spawn(move || save_stream(final_out, &stream_path, &final_counts));
    let ticker = display.start(taps.clone());
    let (mut stages, errors) = wait(started.children, started.threads, &started.tails)?;
    let saved = reader
        .join()
        .map_err(|_| anyhow::anyhow!("the stream reader panicked"))?
        .with_context(|| format!("cannot write {}", plan.next.stream.display()))?;
    let interrupted = signals.count() > 0;
    let hard_stop = signals.count() > 1;
    signals.close();
    display.stop(ticker);
    // Match the summaries in the stream to the stage processes.
    for sr in &mut stages {
        if let Some(s) = saved.summaries.iter().find(|s| s.pid == sr.pid) {
            sr.status = Some(summary_status(s));
        }
    }
    let counts = &saved.counts;
    let counters = BTreeMap::from([
        ("discovered".to_owned(), taps.discovered()),
        ("fetched".to_owned(), taps.fetched()),
        ("parsed".to_owned(), counts.get(&Kind::Doc)),
        ("errorDocs".to_owned(), counts.get(&Kind::Error)),
    ]);
    let terminal = [Kind::Doc, Kind::Error, Kind::Expected]
        .iter()
        .map(|k| counts.get(k))
        .sum();
    Ok(Ended {
        stages,
        errors,
        counters,
        terminal,
        interrupted,
        hard_stop,
    })
}

/// Starts every stage, each reading the one before; on failure the ones started are
/// killed.
fn start(
    plan: &Plan,
    has_input: bool,
    opts: &super::Options,
    bins: &dyn Fn(&str) -> PathBuf,
    display: &Display,
    taps: &Taps,
) -> anyhow::Result<Started> {
    let logs = plan.next.logs();
    let mut children: Vec<(String, Child)> = Vec::new();
    let mut threads = Vec::new();
    let mut tails = Vec::new();
    let mut next_stdin = Stdio::null();
    let mut pgid: Option<i32> = None;
    let mut final_out = None;
    for (i, (role, stage)) in plan.stages.iter().enumerate() {
        let mut cmd = Command::new(bins(&stage.program));
        cmd.args(&stage.args);
        let step = format!("{i:02}-{}", stage.program);
        let metrics = opts
            .metrics
            .clone()
            .filter(|_| super::METRICS_PROGRAMS.contains(&stage.program.as_str()));
        if metrics.is_some() {
            // Until the wrapper's scrape after its end has read its last numbers.
            cmd.args(["--metrics", "127.0.0.1:0", "--metrics-linger", "30s"]);
        }
        if i == 0 && has_input {
            cmd.arg("-i").arg(plan.next.input_file());
        }
        for v in CLEARED_ENV {
            cmd.env_remove(v);
        }
        cmd.stdin(std::mem::replace(&mut next_stdin, Stdio::null()))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(pgid.unwrap_or(0));
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                if let Some(group) = pgid {
                    signals::kill_group(group);
                }
                for (_, c) in &mut children {
                    let _ = c.wait();
                }
                return Err(e).with_context(|| format!("cannot start {}", stage.program));
            }
        };
        pgid.get_or_insert(child.id() as i32);
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        tails.push(tail.clone());
        let log = logs.join(format!("{step}.log"));
        let stderr = child.stderr.take().expect("piped");
        let told = StderrTold {
            tail,
            display: display.clone(),
            echo: opts.verbose,
            metrics: metrics.map(|hook| (step, hook)),
        };
        threads.push(stderr_thread(stderr, log, told));
        let stdout = child.stdout.take().expect("piped");
        children.push((label(*role, stage), child));
        if i + 1 == plan.stages.len() {
            final_out = Some(stdout);
        } else if let Some(counts) = taps.after(*role, plan.rounds) {
            let (r, w) = std::io::pipe().context("cannot make a pipe")?;
            let pages = taps.worker_pages(*role);
            threads.push(std::thread::spawn(move || match pages {
                Some(pages) => tap::relay_workers(stdout, w, counts, pages),
                None => tap::relay(stdout, w, counts),
            }));
            next_stdin = Stdio::from(r);
        } else {
            next_stdin = Stdio::from(stdout);
        }
    }
    Ok(Started {
        children,
        threads,
        tails,
        final_out: final_out.context("a plan has stages")?,
        pgid: pgid.context("a plan has stages")?,
    })
}

/// Waits for every stage; a stage that failed is an error naming the last line it wrote
/// on stderr (read to the end once the relay threads are done).
fn wait(
    mut children: Vec<(String, Child)>,
    threads: Vec<JoinHandle<()>>,
    tails: &[Arc<Mutex<VecDeque<String>>>],
) -> anyhow::Result<(Vec<StageRun>, Vec<String>)> {
    let mut stages = Vec::new();
    let mut failed = Vec::new();
    for (i, (label, child)) in children.iter_mut().enumerate() {
        let status = child
            .wait()
            .with_context(|| format!("waiting for {label}"))?;
        let code = status.code();
        if code.is_none() || code == Some(1) {
            failed.push((i, label.clone(), code, status.signal()));
        }
        stages.push(StageRun {
            stage: label.clone(),
            pid: child.id(),
            exit: code,
            status: None,
        });
    }
    for t in threads {
        let _ = t.join();
    }
    let errors = failed
        .into_iter()
        .map(|(i, label, code, signal)| {
            let sig = signal.map(|s| format!(" (signal {s})")).unwrap_or_default();
            let tail = tails[i].lock().ok().and_then(|t| t.back().cloned());
            format!(
                "{label} exited {}{sig}{}",
                code.map_or("abnormally".to_owned(), |c| c.to_string()),
                tail.map(|t| format!(": {t}")).unwrap_or_default()
            )
        })
        .collect();
    Ok((stages, errors))
}

fn summary_status(s: &Summary) -> String {
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
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let kind = tap::line_kind(&line);
        counts.add(&kind);
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

/// Who is told a stage's stderr lines, besides its log.
struct StderrTold {
    tail: Arc<Mutex<VecDeque<String>>>,
    display: Display,
    echo: bool,
    /// The stage's step and the hook told where its metrics are.
    metrics: Option<(String, super::MetricsHook)>,
}

fn stderr_thread(
    stderr: impl Read + Send + 'static,
    log: PathBuf,
    told: StderrTold,
) -> JoinHandle<()> {
    let StderrTold {
        tail,
        display,
        echo,
        metrics,
    } = told;
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
            if let Some((step, hook)) = &metrics
                && line.contains(": metrics on http://")
            {
                (hook.0)(step, &line);
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
