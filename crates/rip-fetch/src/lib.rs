#![deny(missing_docs)]
//! `rip-fetch`: turns `ref` records into `page`, `failure` or `expected` records.
//!
//! Reads NDJSON; for each `ref` writes exactly one `page` (2xx, from the network or the
//! cache), `failure` (classified, after retries) or `expected` (robots.txt disallows it, or
//! a redirect left the scope); passes every other line through byte for byte; records
//! first-round refs in `ledger` records; ends with a `summary` whose counters say what the
//! HTTP stack did (`requests`, `cacheHits`, `revalidated`, `retries`, `robotsDenied`,
//! `failed.<CATEGORY>`). All HTTP is [`rip_http::Fetcher`]'s.
//!
//! Fetches run concurrently; a record is written as soon as its fetch ends, or in input
//! order with [`Config::ordered`]. At most [`Config::window`] refs are read ahead of what
//! has been written, so memory stays flat however many refs arrive: the input is read only
//! as fast as fetches finish.
//!
//! # MediaWiki refs
//!
//! A ref carrying `title` and `wikiApi` (written by `rip-discover --mediawiki`) is not
//! fetched by its URL: it waits, grouped with refs of the same API, until 50 are there or
//! the input has been quiet for 50 ms (or ended), and the group's current wikitext is asked
//! in one API request. Cache hits (per ref URL) and `notBefore` waits are dealt with first,
//! so only what the cache lacks is asked. See [`wiki`] for the records each title becomes
//! (`page` with the wikitext, `wiki.missing`, `wiki.invalid`, API errors by code).
//!
//! # Refs scheduled for later
//!
//! A ref's `notBefore` is waited for, at most as long as the longest Retry-After honoured
//! (`--max-retry-after`); a ref scheduled further away becomes a `THROTTLED` failure
//! (`fetch.notBefore`) at once, and waits of a second or more are said on stderr. See
//! [`not_before`].

pub mod not_before;
mod summary;
pub mod wiki;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use chrono::Utc;
use rip_core::PipeOptions;
use rip_core::stream::{LEDGER_BATCH, spawn_reader};
use rip_core::{Kind, Ledger, Line, NdjsonWriter, Phase, ReadError, Record, Ref, Status, Summary};
use rip_http::{FetchOptions, Fetcher, HttpConfig, StatsSnapshot, records};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

pub use summary::summary_line;

/// The stage name in records.
pub const STAGE: &str = "rip-fetch";

/// What `rip-fetch` does.
#[derive(Clone)]
pub struct Config {
    /// The HTTP stack.
    pub http: HttpConfig,
    /// Refs read ahead of what has been written, at most (in flight or waiting for order).
    pub window: usize,
    /// Write records in input order instead of as fetches end.
    pub ordered: bool,
    /// What every stage is told about its input: its name in messages (`-` for stdin),
    /// `strict` (stop at the first malformed line) and `stop` (set by a signal handler:
    /// stop reading, write what is done, end `interrupted`). Its `read_ahead_bytes` is not
    /// read: [`Config::window`] bounds what is read ahead, in refs.
    pub pipe: PipeOptions,
    /// Called about ten times a second with the counters so far (for a progress bar).
    pub on_progress: Option<ProgressFn>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("http", &self.http)
            .field("window", &self.window)
            .field("ordered", &self.ordered)
            .finish_non_exhaustive()
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            http: HttpConfig::default(),
            window: 256,
            ordered: false,
            pipe: PipeOptions::new(STAGE),
            on_progress: None,
        }
    }
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Counters for a progress display.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Refs read.
    pub refs: u64,
    /// Refs done (a record written or waiting for its turn).
    pub done: u64,
    /// The HTTP stack's counters.
    pub http: StatsSnapshot,
    /// Time since the start.
    pub elapsed: Duration,
}

/// What stops `rip-fetch`.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The HTTP stack could not be built (bad header, proxy, cache folder).
    #[error(transparent)]
    Build(#[from] rip_http::BuildError),
    /// A malformed line under `--strict`.
    #[error("{0} (stopping: --strict)")]
    Strict(String),
    /// The input could not be read.
    #[error(transparent)]
    Read(ReadError),
    /// The output could not be written (a broken pipe among others).
    #[error("cannot write output: {0}")]
    Write(#[from] std::io::Error),
}

/// Fetches one ref and returns its record.
pub async fn fetch_one(fetcher: &Fetcher, r: &Ref) -> Record {
    let opts = FetchOptions {
        not_before: r.not_before,
        ignore_robots: false,
    };
    let fetched = fetcher.fetch_with(&r.url, &opts).await;
    records::record_for(r, &fetched, Phase::Fetch, STAGE)
}

enum Out {
    Line(Line),
    Record(Box<Record>),
}

/// What a task hands back to the stage loop.
enum Done {
    /// Records for refs, with their sequence numbers.
    Records(Vec<(u64, Record)>),
    /// A wiki ref past its `notBefore` and not in the cache: it joins a batch.
    Ready(u64, Box<Ref>),
}

struct State<W: Write> {
    out: NdjsonWriter<W>,
    ordered: bool,
    next_seq: u64,
    next_write: u64,
    pending: BTreeMap<u64, Out>,
    ledger: Vec<String>,
    failed: u64,
    /// Refs read whose record is not written yet (in flight, batched or reordered).
    open: usize,
}

impl<W: Write> State<W> {
    fn emit(&mut self, seq: u64, item: Out) -> std::io::Result<()> {
        if let Out::Record(r) = &item
            && let Record::Failure(_) = r.as_ref()
        {
            self.failed += 1;
        }
        if !self.ordered {
            return self.write(item);
        }
        self.pending.insert(seq, item);
        while let Some(item) = self.pending.remove(&self.next_write) {
            self.next_write += 1;
            self.write(item)?;
        }
        Ok(())
    }

    fn write(&mut self, item: Out) -> std::io::Result<()> {
        match item {
            Out::Line(l) => self.out.pass(&l),
            Out::Record(r) => self.out.write(&r),
        }
    }

    fn flush_ledger(&mut self) -> std::io::Result<()> {
        if self.ledger.is_empty() {
            return Ok(());
        }
        let rec = Record::Ledger(Ledger {
            stage: STAGE.into(),
            entered: std::mem::take(&mut self.ledger),
            extra: Default::default(),
        });
        self.out.write(&rec)
    }

    /// Refs read but not yet written.
    fn outstanding(&self) -> usize {
        if self.ordered {
            (self.next_seq - self.next_write) as usize
        } else {
            self.open
        }
    }
}

/// Runs the stage: reads `input`, writes `output`, returns the closing summary (also
/// written as the last record).
pub async fn run<R, W>(config: Config, input: R, output: W) -> Result<Summary, FetchError>
where
    R: Read + Send + 'static,
    W: Write,
{
    let started_at = Utc::now();
    let start = tokio::time::Instant::now();
    let fetcher = Fetcher::new(HttpConfig {
        stage: STAGE.into(),
        ..config.http.clone()
    })?;
    let window = config.window.max(1);
    let (tx, mut rx) = mpsc::channel::<Result<Line, ReadError>>(window.min(1024));
    spawn_reader(input, config.pipe.input_name.as_str().into(), move |item| {
        tx.blocking_send(item).is_ok()
    })
    .map_err(|e| {
        FetchError::Read(ReadError::Io {
            input: "reader".into(),
            source: e,
        })
    })?;

    let mut st = State {
        out: NdjsonWriter::new(output),
        ordered: config.ordered,
        next_seq: 0,
        next_write: 0,
        pending: BTreeMap::new(),
        ledger: Vec::new(),
        failed: 0,
        open: 0,
    };
    let wiki_state = Arc::new(wiki::WikiState::default());
    let mut batcher = wiki::Batcher::default();
    let mut preparing = 0usize;
    let mut last_activity = tokio::time::Instant::now();
    let mut input_counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut bad_lines = 0u64;
    let mut refs = 0u64;
    let mut done = 0u64;
    let mut interrupted = false;
    let mut input_open = true;
    let mut tasks: JoinSet<Done> = JoinSet::new();
    let bound = not_before::Bound::of(&config.http);
    let mut waiting = not_before::Waiting::default();
    let mut too_far = 0u64;
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stopped = || {
        config
            .pipe
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
    };

    let spawn_batch = |tasks: &mut JoinSet<Done>, api: String, batch: Vec<(u64, Ref)>| {
        let f = fetcher.clone();
        let state = wiki_state.clone();
        tasks.spawn(async move { Done::Records(wiki::fetch_batch(&f, &state, &api, batch).await) });
    };

    loop {
        let room = st.outstanding() < window;
        // Partial batches go when nothing more can come for them soon: the input ended
        // (and no cache lookup is still running), or the read-ahead window is full with
        // nothing in flight that could free it.
        if batcher.waiting() > 0 && ((!input_open && preparing == 0) || (!room && tasks.is_empty()))
        {
            for (api, batch) in batcher.drain() {
                spawn_batch(&mut tasks, api, batch);
            }
        }
        if !input_open && tasks.is_empty() && batcher.waiting() == 0 {
            break;
        }
        tokio::select! {
            item = rx.recv(), if input_open && room => {
                let Some(item) = item else {
                    input_open = false;
                    continue;
                };
                last_activity = tokio::time::Instant::now();
                let line = match item {
                    Ok(line) => line,
                    Err(ReadError::Malformed(m)) => {
                        bad_lines += 1;
                        rip_core::ndjson::report_bad_line(&m);
                        if config.pipe.strict {
                            return Err(FetchError::Strict(m.to_string()));
                        }
                        continue;
                    }
                    Err(e @ ReadError::Io { .. }) => return Err(FetchError::Read(e)),
                };
                *input_counts.entry(line.kind().as_str().to_owned()).or_default() += 1;
                let seq = st.next_seq;
                st.next_seq += 1;
                if line.kind() != &Kind::Ref {
                    st.emit(seq, Out::Line(line))?;
                    continue;
                }
                let r = match line.decode() {
                    Ok(Record::Ref(r)) => r,
                    Ok(_) => unreachable!("a line of kind ref decodes to a ref"),
                    Err(message) => {
                        bad_lines += 1;
                        let m = format!("{}:{}: {message}", config.pipe.input_name, line.number());
                        rip_core::ndjson::report_bad_line(&m);
                        if config.pipe.strict {
                            return Err(FetchError::Strict(m));
                        }
                        // Keep the numbering dense for --ordered.
                        st.next_seq -= 1;
                        continue;
                    }
                };
                refs += 1;
                st.open += 1;
                if r.is_entry() {
                    st.ledger.push(r.url.clone());
                    if st.ledger.len() >= LEDGER_BATCH {
                        st.flush_ledger()?;
                    }
                }
                match not_before::schedule(&r, bound, Utc::now(), STAGE) {
                    not_before::Schedule::Now => {}
                    not_before::Schedule::Wait(at) => waiting.add(at),
                    not_before::Schedule::TooFar(failure) => {
                        too_far += 1;
                        done += 1;
                        st.open -= 1;
                        st.emit(seq, Out::Record(Box::new(Record::Failure(*failure))))?;
                        continue;
                    }
                }
                let f = fetcher.clone();
                if !wiki::is_wiki(&r) {
                    tasks.spawn(async move { Done::Records(vec![(seq, fetch_one(&f, &r).await)]) });
                } else if wiki::needs_prepare(&f, &r) {
                    preparing += 1;
                    tasks.spawn(async move {
                        match wiki::prepare(&f, r).await {
                            Ok(r) => Done::Ready(seq, Box::new(r)),
                            Err(record) => Done::Records(vec![(seq, record)]),
                        }
                    });
                } else if let Some((api, batch)) = batcher.push(seq, r) {
                    spawn_batch(&mut tasks, api, batch);
                }
            }
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                match joined {
                    Ok(Done::Records(records)) => {
                        for (seq, record) in records {
                            done += 1;
                            st.open -= 1;
                            st.emit(seq, Out::Record(Box::new(record)))?;
                        }
                    }
                    Ok(Done::Ready(seq, r)) => {
                        preparing -= 1;
                        last_activity = tokio::time::Instant::now();
                        if let Some((api, batch)) = batcher.push(seq, *r) {
                            spawn_batch(&mut tasks, api, batch);
                        }
                    }
                    Err(e) => {
                        // A fetch task never panics by design; if one did, say so loudly
                        // rather than lose the URL silently.
                        eprintln!("{STAGE}: internal error in a fetch task: {e}");
                        st.failed += 1;
                    }
                }
            }
            _ = tick.tick() => {
                if stopped() {
                    interrupted = true;
                    break;
                }
                // Idle: ready to read, and nothing came for a while.
                let room = st.outstanding() < window;
                if batcher.waiting() > 0 && room && last_activity.elapsed() >= wiki::IDLE {
                    for (api, batch) in batcher.drain() {
                        spawn_batch(&mut tasks, api, batch);
                    }
                }
                if let Some(line) = waiting.tick(Utc::now()) {
                    tracing::warn!("{line}");
                }
                st.flush_ledger()?;
                st.out.flush()?;
                if let Some(cb) = &config.on_progress {
                    cb(&Progress { refs, done, http: fetcher.stats(), elapsed: start.elapsed() });
                }
            }
        }
    }
    tasks.abort_all();

    st.flush_ledger()?;
    rip_core::ndjson::report_unshown_bad_lines(STAGE);
    let http = fetcher.stats();
    let mut counters: BTreeMap<String, u64> = http.counters().into_iter().collect();
    let wiki_counters = wiki_state.stats.counters();
    let wiki_used = wiki_counters
        .iter()
        .any(|(k, v)| k == "wikiTitles" && *v > 0);
    for (k, v) in wiki_counters {
        if k.starts_with("failed.") || wiki_used {
            *counters.entry(k).or_default() += v;
        }
    }
    if too_far > 0 {
        counters.insert("notBeforeTooFar".into(), too_far);
        tracing::warn!(
            "{too_far} {} scheduled (notBefore) further away than rip-fetch waits \
             (--max-retry-after {}): written as THROTTLED failures (fetch.notBefore), not fetched",
            if too_far == 1 { "ref was" } else { "refs were" },
            not_before::short(bound.wait)
        );
    }
    counters.retain(|k, v| *v > 0 || matches!(k.as_str(), "cacheHits" | "retries" | "requests"));
    let status = if interrupted {
        Status::Interrupted
    } else if st.failed > 0 || bad_lines > 0 {
        Status::Partial
    } else {
        Status::Complete
    };
    let summary = Summary {
        stage: STAGE.into(),
        pid: std::process::id(),
        started_at,
        ended_at: Utc::now(),
        input: input_counts,
        output: st.out.counts().clone(),
        passed_through: st.out.passed().clone(),
        bad_lines,
        status,
        counters,
        notes: Vec::new(),
        extra: Default::default(),
    };
    st.out.write(&Record::Summary(summary.clone()))?;
    st.out.flush()?;
    if let Some(cb) = &config.on_progress {
        cb(&Progress {
            refs,
            done,
            http,
            elapsed: start.elapsed(),
        });
    }
    Ok(summary)
}
