//! The stage loop: read lines, parse pages on a rayon pool, write outcomes.
//!
//! Pages are parsed in parallel. By default outcomes are written in input order: a
//! queue holds every line from the oldest page still being parsed onwards, and is
//! written out from its front as results arrive. With `unordered`, each outcome is
//! written as soon as it is ready and other records pass straight through. Either way
//! at most `window` pages (and `window_bytes` of page records) are in flight, so memory
//! does not grow with the length of the input.
//!
//! While input lines are at hand, pages go to the workers in batches (see
//! [`BATCH_PAGES`]) and their outcomes come back together; a batch is sent as it is
//! whenever the loop would otherwise wait (idle input, a full window, the end).

use rip_core::{Kind, Line, Pipe, PipeError, PipeOptions, Polled, Record, Status, Summary};
use std::collections::{BTreeMap, VecDeque};
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::{Duration, Instant};

use crate::output::{doc_line, serialised};
use crate::process::{self, ExtractOptions, Outcome, ParsePaths};
use std::sync::atomic::Ordering;

/// The most bytes of input read ahead of the pages in flight.
pub const READ_AHEAD_BYTES: usize = 8 << 20;

/// Counts kept while running, for the progress display and the closing line.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Page records read.
    pub pages: u64,
    /// Docs written, by concept.
    pub docs: BTreeMap<String, u64>,
    /// Failures written.
    pub failures: u64,
    /// Docs let through with schema violations (`onSchemaError = "warn"`).
    pub schema_warnings: u64,
    /// Time since the start.
    pub elapsed: Duration,
}

impl Stats {
    /// Docs written, all concepts.
    pub fn doc_count(&self) -> u64 {
        self.docs.values().sum()
    }

    /// Pages per second so far.
    pub fn pages_per_sec(&self) -> f64 {
        self.pages as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// One line for people: pages, docs by concept, failures, speed.
    pub fn line(&self) -> String {
        let by: Vec<String> = self.docs.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let mut s = format!(
            "{} pages in {:.1}s ({:.0} pages/s): {} docs",
            self.pages,
            self.elapsed.as_secs_f64(),
            self.pages_per_sec(),
            self.doc_count()
        );
        if !by.is_empty() {
            s.push_str(&format!(" ({})", by.join(", ")));
        }
        s.push_str(&format!(", {} failures", self.failures));
        if self.schema_warnings > 0 {
            s.push_str(&format!(
                ", {} docs with schema warnings",
                self.schema_warnings
            ));
        }
        s
    }
}

/// A progress callback, called from the stage loop at most a few times a second.
pub type OnProgress = Arc<dyn Fn(&Stats) + Send + Sync>;

/// Everything `rip-parse` needs to run.
#[derive(Clone)]
pub struct Config {
    /// Pipe options (stage name, input name, strictness, stop flag).
    pub pipe: PipeOptions,
    /// How pages become docs.
    pub extract: ExtractOptions,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    /// Write outcomes as they are ready instead of in input order.
    pub unordered: bool,
    /// Most pages in flight (read but not yet written); 0 means 64 per thread (a slow page at the head of the queue
    /// does not stall the others; `window_bytes` bounds the memory).
    pub window: usize,
    /// Most bytes of page records being parsed: a page that would go over waits until
    /// others are done (a single larger page is still admitted alone). Parsing
    /// takes about ten times a page's size, so this bounds memory even when a few
    /// pages are huge.
    pub window_bytes: usize,
    /// Called with the running counts.
    pub progress: Option<OnProgress>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            pipe: PipeOptions::new("rip-parse"),
            extract: ExtractOptions::default(),
            threads: 0,
            unordered: false,
            window: 0,
            window_bytes: 16 << 20,
            progress: None,
        }
    }
}

/// How a run ended.
#[derive(Debug)]
pub struct Report {
    /// The `summary` record written last.
    pub summary: Summary,
    /// The counts.
    pub stats: Stats,
}

/// What can stop the stage (per-page problems never do).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Reading input or writing output failed.
    #[error(transparent)]
    Pipe(#[from] PipeError),
    /// The worker threads could not be started.
    #[error("cannot start {threads} worker threads: {source}")]
    Pool {
        /// How many were asked for.
        threads: usize,
        /// Why.
        #[source]
        source: rayon::ThreadPoolBuildError,
    },
}

struct Done {
    seq: u64,
    bytes: usize,
    result: Written,
}

/// An outcome, serialised on the worker that made it (so that serialising, and
/// freeing the doc's many small allocations, happen in parallel and on the thread that
/// allocated them), with what the stage loop needs to count it.
enum Written {
    Doc {
        line: Line,
        concept: String,
        warnings: Vec<String>,
    },
    Failure {
        line: Line,
        /// Set when the run must stop here: why.
        halt: Option<String>,
    },
    /// The input line, to be reported as bad.
    Bad { line: Line, message: String },
}

impl Written {
    fn from(outcome: Outcome, input: Line) -> Self {
        // The page's line is needed only to report it as bad: free it before a doc or a
        // failure is serialised, so a large page is not held twice (its record and its
        // doc's line) at the stage's peak.
        let input = matches!(outcome, Outcome::BadRecord(_)).then_some(input);
        match outcome {
            Outcome::Doc {
                doc,
                typed,
                warnings,
            } => {
                let concept = doc.concept.clone();
                let line = doc_line(*doc, &typed);
                if let Some(links) = typed.links {
                    links.recycle();
                }
                Self::Doc {
                    line,
                    concept,
                    warnings,
                }
            }
            Outcome::Failure { failure, halt } => {
                let halt = halt.then(|| {
                    format!(
                        "halted at {} (onSchemaError = \"halt\"): {}",
                        failure.url,
                        failure.errors.last().map_or("", |e| e.message.as_str())
                    )
                });
                Self::Failure {
                    line: serialised(&Record::Failure(*failure)),
                    halt,
                }
            }
            Outcome::BadRecord(message) => Self::Bad {
                line: input.expect("kept for a bad record"),
                message,
            },
        }
    }
}

enum Slot {
    Waiting,
    Pass(Line),
    Ready(Box<Done>),
}

struct Stage<W: Write> {
    pipe: Pipe<W>,
    stats: Stats,
    started: Instant,
    last_progress: Instant,
    progress: Option<OnProgress>,
    /// Outcomes in input order (else as they are ready).
    ordered: bool,
    /// Most pages in flight.
    window: usize,
    /// Most bytes of page records being parsed.
    window_bytes: usize,
    /// Ordered mode: the lines from the oldest unwritten page on; `queue[0]` is `head`.
    queue: VecDeque<Slot>,
    head: u64,
    next_seq: u64,
    in_flight: usize,
    bytes_in_flight: usize,
    halted: Option<String>,
}

/// Most pages handed to a worker at once: while input lines are at hand, pages go to
/// the workers in batches, and their outcomes come back together, so that the stage
/// loop and the workers wake each other once a batch instead of once a page. An idle
/// input, a full window or the end of input sends a batch off as it is.
const BATCH_PAGES: usize = 8;

/// Most bytes of page records in one batch.
const BATCH_BYTES: usize = 1 << 20;

/// The worker threads, the batch of pages being gathered for them, and the channel
/// their outcomes come back on.
struct Workers {
    pool: rayon::ThreadPool,
    opts: Arc<ExtractOptions>,
    tx: Sender<Vec<Done>>,
    rx: Receiver<Vec<Done>>,
    batch: Vec<(u64, Line)>,
    batch_bytes: usize,
    /// Pages a batch holds at most: [`BATCH_PAGES`], fewer when the window is small, so
    /// that every thread still gets pages.
    batch_pages: usize,
}

impl Workers {
    /// A pool of `threads` workers (0: one per core), and the page budget it implies
    /// (`window`, 0: 64 per thread).
    fn new(threads: usize, window: usize, opts: ExtractOptions) -> Result<(Self, usize), RunError> {
        let threads = if threads == 0 {
            std::thread::available_parallelism().map_or(1, usize::from)
        } else {
            threads
        };
        let window = if window == 0 { threads * 64 } else { window };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("rip-parse-{i}"))
            .build()
            .map_err(|source| RunError::Pool { threads, source })?;
        let (tx, rx) = channel();
        let opts = Arc::new(opts);
        let workers = Self {
            pool,
            opts,
            tx,
            rx,
            batch: Vec::new(),
            batch_bytes: 0,
            batch_pages: (window / (4 * threads)).clamp(1, BATCH_PAGES),
        };
        Ok((workers, window))
    }

    /// Adds the page on `line` to the batch; its outcome comes back as `seq`.
    fn queue(&mut self, seq: u64, line: Line) {
        self.batch_bytes += line.text().len();
        self.batch.push((seq, line));
        if self.batch.len() >= self.batch_pages || self.batch_bytes >= BATCH_BYTES {
            self.send_batch();
        }
    }

    /// Parses the pages of the batch on a worker, one after the other.
    fn send_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let tx = self.tx.clone();
        let opts = self.opts.clone();
        self.pool.spawn(move || {
            let done = batch
                .into_iter()
                .map(|(seq, line)| parse_one(&opts, seq, line))
                .collect();
            let _ = tx.send(done);
        });
    }

    /// Outcomes, once some are ready (the batch sent first: they may be its).
    fn recv(&mut self) -> Option<Vec<Done>> {
        self.send_batch();
        self.rx.recv().ok()
    }

    /// Outcomes, if some are ready within `wait` (the batch sent first).
    fn recv_timeout(&mut self, wait: Duration) -> Option<Vec<Done>> {
        self.send_batch();
        self.rx.recv_timeout(wait).ok()
    }
}

/// The outcome of the page on `line`, serialised.
fn parse_one(opts: &ExtractOptions, seq: u64, line: Line) -> Done {
    let bytes = line.text().len();
    let outcome = catch_unwind(AssertUnwindSafe(|| process::page_line(opts, line.text())))
        .unwrap_or_else(|panic| process::panicked(line.text(), &panic));
    Done {
        seq,
        bytes,
        result: Written::from(outcome, line),
    }
}

/// Runs the stage: reads `input`, writes `output`, returns the closing summary.
pub fn run<R: Read + Send + 'static, W: Write>(
    config: Config,
    input: R,
    output: W,
) -> Result<Report, RunError> {
    let paths = config.extract.paths.clone();
    let (mut workers, window) = Workers::new(config.threads, config.window, config.extract)?;
    // Lines read ahead of the stage are bounded in bytes too: pages can be megabytes.
    let mut pipe_opts = config.pipe;
    pipe_opts.read_ahead_bytes = pipe_opts.read_ahead_bytes.min(READ_AHEAD_BYTES);
    let now = Instant::now();
    let mut stage = Stage {
        pipe: Pipe::new(pipe_opts, input, output)?,
        stats: Stats::default(),
        started: now,
        last_progress: now,
        progress: config.progress,
        ordered: !config.unordered,
        window,
        window_bytes: config.window_bytes,
        queue: VecDeque::new(),
        head: 0,
        next_seq: 0,
        in_flight: 0,
        bytes_in_flight: 0,
        halted: None,
    };
    stage.read_all(&mut workers)?;
    while stage.in_flight > 0 {
        match workers.recv() {
            Some(done) => stage.complete_all(done)?,
            None => break,
        }
    }
    stage.finish(&paths)
}

impl<W: Write> Stage<W> {
    /// Reads the input to its end (or a halt), handing pages to the workers and writing
    /// outcomes as they come back.
    fn read_all(&mut self, workers: &mut Workers) -> Result<(), PipeError> {
        loop {
            while let Ok(done) = workers.rx.try_recv() {
                self.complete_all(done)?;
            }
            if self.halted.is_some() {
                return Ok(());
            }
            if self.is_full() {
                if let Some(done) = workers.recv() {
                    self.complete_all(done)?;
                }
                continue;
            }
            let line = match self.next_input(workers)? {
                Polled::Line(line) => line,
                Polled::Idle => continue,
                Polled::End => return Ok(()),
            };
            if line.kind() == &Kind::Page {
                self.dispatch(workers, line)?;
            } else {
                self.pass_through(line)?;
            }
        }
    }

    /// True when no more pages may be in flight: the window's count or bytes are used up.
    fn is_full(&self) -> bool {
        self.in_flight > 0
            && (self.pending_len() >= self.window || self.bytes_in_flight >= self.window_bytes)
    }

    /// The next input line. While pages are in flight the input is only polled, and an
    /// idle input is time to write an outcome (`Idle`: ask again).
    fn next_input(&mut self, workers: &mut Workers) -> Result<Polled, PipeError> {
        if self.in_flight == 0 {
            return Ok(match self.pipe.next_line()? {
                Some(line) => Polled::Line(line),
                None => Polled::End,
            });
        }
        match self.pipe.poll_line(Duration::ZERO)? {
            Polled::Idle => {
                if let Some(done) = workers.recv_timeout(Duration::from_millis(5)) {
                    self.complete_all(done)?;
                }
                Ok(Polled::Idle)
            }
            other => Ok(other),
        }
    }

    /// A record that is not a page: written now, or queued behind the pages before it.
    fn pass_through(&mut self, line: Line) -> Result<(), PipeError> {
        if self.ordered && !self.queue.is_empty() {
            self.queue.push_back(Slot::Pass(line));
            self.next_seq += 1;
            Ok(())
        } else {
            self.pipe.pass(&line)
        }
    }

    /// A page: handed to a worker once the bytes in flight leave room for it (parsing a
    /// page takes many times its size in memory), its place kept in the queue.
    fn dispatch(&mut self, workers: &mut Workers, line: Line) -> Result<(), PipeError> {
        self.stats.pages += 1;
        let bytes = line.text().len();
        while self.in_flight > 0 && self.bytes_in_flight + bytes > self.window_bytes {
            match workers.recv() {
                Some(done) => self.complete_all(done)?,
                None => break,
            }
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.ordered {
            if self.queue.is_empty() {
                self.head = seq;
            }
            self.queue.push_back(Slot::Waiting);
        }
        self.in_flight += 1;
        self.bytes_in_flight += bytes;
        workers.queue(seq, line);
        Ok(())
    }

    fn pending_len(&self) -> usize {
        if self.ordered {
            self.queue.len()
        } else {
            self.in_flight
        }
    }

    fn complete_all(&mut self, done: Vec<Done>) -> Result<(), PipeError> {
        done.into_iter().try_for_each(|d| self.complete(d))
    }

    fn complete(&mut self, done: Done) -> Result<(), PipeError> {
        // The bytes budget is for pages being parsed (a DOM is many times its page);
        // finished outcomes waiting for their turn are bounded by the window's count.
        self.in_flight -= 1;
        self.bytes_in_flight -= done.bytes;
        if !self.ordered {
            return self.write(done);
        }
        let at = (done.seq - self.head) as usize;
        self.queue[at] = Slot::Ready(Box::new(done));
        while matches!(self.queue.front(), Some(Slot::Pass(_) | Slot::Ready(_))) {
            match self.queue.pop_front() {
                Some(Slot::Pass(line)) => self.pipe.pass(&line)?,
                Some(Slot::Ready(done)) => self.write(*done)?,
                _ => unreachable!("front checked"),
            }
            self.head += 1;
        }
        Ok(())
    }

    fn write(&mut self, done: Done) -> Result<(), PipeError> {
        match done.result {
            Written::Doc {
                line,
                concept,
                warnings,
            } => {
                if !warnings.is_empty() {
                    self.stats.schema_warnings += 1;
                    for w in &warnings {
                        tracing::warn!("{w}");
                    }
                }
                *self.stats.docs.entry(concept).or_default() += 1;
                self.pipe.emit_line(&line)?;
            }
            Written::Failure { line, halt } => {
                self.stats.failures += 1;
                self.pipe.mark_partial();
                if halt.is_some() && self.halted.is_none() {
                    self.halted = halt;
                }
                self.pipe.emit_line(&line)?;
            }
            Written::Bad { line, message } => self.pipe.bad_record(&line, message)?,
        }
        self.tick();
        Ok(())
    }

    fn tick(&mut self) {
        if let Some(p) = &self.progress
            && self.last_progress.elapsed() >= Duration::from_millis(200)
        {
            self.last_progress = Instant::now();
            self.stats.elapsed = self.started.elapsed();
            p(&self.stats);
        }
    }

    fn finish(mut self, paths: &ParsePaths) -> Result<Report, RunError> {
        self.stats.elapsed = self.started.elapsed();
        self.pipe.count("pages", self.stats.pages);
        self.pipe
            .count("streamedPages", paths.streamed.load(Ordering::Relaxed));
        self.pipe
            .count("treePages", paths.tree.load(Ordering::Relaxed));
        self.pipe.count("docs", self.stats.doc_count());
        self.pipe.count("failures", self.stats.failures);
        if self.stats.schema_warnings > 0 {
            self.pipe
                .count("schemaWarnings", self.stats.schema_warnings);
        }
        for (concept, n) in &self.stats.docs {
            self.pipe.count(&format!("concept.{concept}"), *n);
        }
        let status = match self.halted.take() {
            Some(note) => {
                // The binary prints it last on stderr, where a wrapper reads why a stage failed.
                self.pipe.note(note);
                Some(Status::Failed)
            }
            None => None,
        };
        let summary = self.pipe.finish(status)?;
        Ok(Report {
            summary,
            stats: self.stats,
        })
    }
}
