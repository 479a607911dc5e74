//! The stage loop of [`crate::run`]: read lines as room allows, start a fetch (or a wiki
//! batch) per ref, write each record as its fetch ends (or in input order), and end with
//! the summary.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use rip_core::{
    Books, DecodeError, Kind, Line, NdjsonWriter, PipeError, ReadError, Record, Ref, Summary,
};
use rip_http::{Fetcher, StatsSnapshot};
use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinSet};
use tokio::time::Instant;

use crate::hosts::{Hosts, Ready};
use crate::{
    Config, FetchError, Progress, STAGE, fetch_one, fetch_ref, not_before, record_of, wiki,
};

/// Lines read in one turn of the loop at most (see `Stage::read_more`).
const READ_BATCH: usize = 256;

/// What the reader thread hands the loop: a line, or why there is none.
pub(crate) type Input = mpsc::Receiver<Result<InputLine, ReadError>>;

/// A line of the input as the reader thread hands it over, a `ref` already decoded and its
/// host found there. On the loop's one thread, decoding every ref of the input (and parsing
/// its URL) came before the first requests: 20,000 refs took it ~260 ms, and the hosts at the
/// end of the input waited for that.
pub(crate) struct InputLine {
    line: Line,
    /// A ref's decoding and the host it queues under (`None`: not queued).
    decoded: Option<(Result<Record, DecodeError>, Option<String>)>,
}

impl InputLine {
    /// `line`, with its ref decoded when it is one (on the reader's thread).
    pub(crate) fn of(line: Line) -> Self {
        let decoded = (line.kind() == &Kind::Ref).then(|| decode_ref(&line));
        Self { line, decoded }
    }
}

fn decode_ref(line: &Line) -> (Result<Record, DecodeError>, Option<String>) {
    let record = line.decode();
    let host = match &record {
        Ok(Record::Ref(r)) if !wiki::is_wiki(r) => Hosts::host_of(r),
        _ => None,
    };
    (record, host)
}

enum Out {
    Line(Line),
    Record(Box<Record>),
}

/// What a task hands back to the stage loop.
enum Done {
    /// Records for refs, with their sequence numbers.
    Records(Vec<(u64, Record)>),
    /// The record of a ref from a host's queue; `answered`: when its fetch ended, if it
    /// sent a request.
    Fetched {
        seq: u64,
        host: String,
        answered: Option<Instant>,
        record: Box<Record>,
    },
    /// A wiki ref past its `notBefore` and not in the cache: it joins a batch.
    Ready(u64, Box<Ref>),
}

/// The writing side: input order when asked, and the stage's [`Books`] (what was read
/// and written, the ledger of first-round refs, the status).
struct Output<W: Write> {
    books: Books<W>,
    ordered: bool,
    next_seq: u64,
    next_write: u64,
    pending: BTreeMap<u64, Out>,
    /// Refs read whose record is not written yet (in flight, batched or reordered).
    open: usize,
}

impl<W: Write> Output<W> {
    fn new(books: Books<W>, ordered: bool) -> Self {
        Self {
            books,
            ordered,
            next_seq: 0,
            next_write: 0,
            pending: BTreeMap::new(),
            open: 0,
        }
    }

    /// Writes `item` (in input order with `--ordered`); a failure made here makes the run
    /// partial.
    fn emit(&mut self, seq: u64, item: Out) -> Result<(), PipeError> {
        if let Out::Record(r) = &item
            && let Record::Failure(_) = r.as_ref()
        {
            self.books.mark_partial();
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

    /// The record made for a ref read: it is no longer open.
    fn emit_record(&mut self, seq: u64, record: Record) -> Result<(), PipeError> {
        self.open -= 1;
        self.emit(seq, Out::Record(Box::new(record)))
    }

    fn write(&mut self, item: Out) -> Result<(), PipeError> {
        match item {
            Out::Line(l) => self.books.pass(&l),
            Out::Record(r) => self.books.emit(&r),
        }
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

/// The stage between reading and writing: fetches in flight, wiki refs waiting for
/// their batch, refs waiting for their `notBefore`, and the counters of the summary.
pub(crate) struct Stage<'c, W: Write> {
    config: &'c Config,
    fetcher: Fetcher,
    output: Output<W>,
    /// Fetch tasks at once, at most; with `--ordered`, also refs read ahead of what has
    /// been written.
    window: usize,
    tasks: JoinSet<Done>,
    /// Refs waiting for their host's turn.
    hosts: Hosts,
    wiki_state: Arc<wiki::WikiState>,
    batcher: wiki::Batcher,
    /// Wiki refs in their cache-or-wait step.
    preparing: usize,
    /// When a line was read or a wiki ref got ready, last.
    last_activity: Instant,
    bound: not_before::Bound,
    waiting: not_before::Waiting,
    input_open: bool,
    refs: u64,
    done: u64,
    too_far: u64,
    /// Refs marked `needsBrowser`, passed on to a rip-render unfetched.
    for_browser: u64,
    start: Instant,
    /// `--metrics`' reader of the HTTP stack's counters, removed with the stage (it holds
    /// a clone of the fetcher, whose drop writes the hosts' schedules).
    _live_reader: rip_core::live::ReaderGuard,
}

impl<'c, W: Write> Stage<'c, W> {
    /// The stage of a run that started at `started_at` (`start` on the runtime's clock).
    pub(crate) fn new(
        config: &'c Config,
        fetcher: Fetcher,
        output: W,
        (started_at, start): (DateTime<Utc>, Instant),
    ) -> Self {
        let books = Books::new(&config.pipe, NdjsonWriter::new(output)).starting_at(started_at);
        // `--metrics`: the HTTP stack's counters, as the summary reads them at the end.
        let http = fetcher.clone();
        let live_reader = rip_core::live::stage(&config.pipe.stage).add_reader("http", move |r| {
            for (name, n) in http.stats().counters() {
                r.counter(name, n);
            }
            r.gauge("breakersOpen", http.circuits_open() as i64);
        });
        Self {
            fetcher,
            output: Output::new(books, config.ordered),
            window: config.read_ahead(),
            tasks: JoinSet::new(),
            hosts: Hosts::new(
                config.http.politeness.per_host_concurrency,
                config.queue_memory,
            ),
            wiki_state: Arc::new(wiki::WikiState::new(config.wiki_expand)),
            batcher: wiki::Batcher::default(),
            preparing: 0,
            last_activity: Instant::now(),
            bound: not_before::Bound::of(&config.http),
            waiting: not_before::Waiting::default(),
            input_open: true,
            refs: 0,
            done: 0,
            too_far: 0,
            for_browser: 0,
            start,
            _live_reader: live_reader,
            config,
        }
    }

    /// Runs until the input is done and every record written, or a stop is asked; true
    /// when stopped.
    pub(crate) async fn pump(&mut self, input: &mut Input) -> Result<bool, FetchError> {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            self.dispatch()?;
            let room = self.room();
            // Partial batches go when nothing more can come for them soon: the input ended
            // (and no cache lookup is still running), or the read-ahead window is full with
            // nothing in flight that could free it.
            if self.batcher.waiting() > 0
                && ((!self.input_open && self.preparing == 0) || (!room && self.tasks.is_empty()))
            {
                self.send_partial_batches();
            }
            if !self.input_open
                && self.tasks.is_empty()
                && self.batcher.waiting() == 0
                && self.hosts.queued() == 0
            {
                return Ok(false);
            }
            let due = self
                .hosts
                .next_due()
                .filter(|_| self.tasks.len() < self.window);
            tokio::select! {
                item = input.recv(), if self.input_open && room => {
                    self.read(item)?;
                    self.read_more(input)?;
                }
                _ = tokio::time::sleep_until(due.unwrap_or_else(Instant::now)), if due.is_some() => {}
                Some(joined) = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    self.joined(joined)?;
                }
                _ = tick.tick() => {
                    if self.output.books.stop_asked() {
                        return Ok(true);
                    }
                    self.tick()?;
                }
            }
        }
    }

    /// Lines already waiting, up to [`READ_BATCH`], while there is room: the input is
    /// taken in faster than one line per turn of the loop, so that the hosts at the end of
    /// a grouped input get their first request soon.
    fn read_more(&mut self, input: &mut Input) -> Result<(), FetchError> {
        for _ in 0..READ_BATCH {
            if !self.input_open || !self.room() {
                break;
            }
            match input.try_recv() {
                Ok(item) => self.read(Some(item))?,
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => self.read(None)?,
            }
        }
        Ok(())
    }

    /// Room to read: with `--ordered`, fewer refs outstanding than the window (the
    /// reorder buffer stays bounded); else always, queued refs past the memory budget
    /// going to disk (unless spilling failed).
    fn room(&self) -> bool {
        if self.config.ordered {
            self.output.outstanding() < self.window
        } else {
            self.hosts.accepting() || self.output.outstanding() < self.window
        }
    }

    /// Starts the refs whose host may be asked now, while fewer tasks than the window run.
    fn dispatch(&mut self) -> Result<(), FetchError> {
        while self.tasks.len() < self.window {
            let Some(Ready { host, seq, r }) = self
                .hosts
                .next_ready(&self.fetcher)
                .map_err(FetchError::Spill)?
            else {
                return Ok(());
            };
            let f = self.fetcher.clone();
            self.tasks.spawn(async move {
                let fetched = fetch_ref(&f, &r).await;
                let ended = Instant::now();
                Done::Fetched {
                    seq,
                    host,
                    answered: (fetched.stats.http_attempts > 0).then_some(ended),
                    record: Box::new(record_of(&r, &fetched)),
                }
            });
        }
        Ok(())
    }

    /// A line from the reader (`None`: the input ended): passed through, or a ref taken on.
    fn read(&mut self, item: Option<Result<InputLine, ReadError>>) -> Result<(), FetchError> {
        let Some(item) = item else {
            self.input_open = false;
            return Ok(());
        };
        self.last_activity = Instant::now();
        let (item, decoded) = match item {
            Ok(InputLine { line, decoded }) => (Ok(line), decoded),
            Err(e) => (Err(e), None),
        };
        let Some(line) = self.output.books.read(item)? else {
            return Ok(());
        };
        let seq = self.output.next_seq;
        self.output.next_seq += 1;
        if line.kind() != &Kind::Ref {
            return Ok(self.output.emit(seq, Out::Line(line))?);
        }
        let (record, host) = decoded.unwrap_or_else(|| decode_ref(&line));
        match record {
            // A page a rip-route render rule sent to the browser: for the rip-render after.
            Ok(Record::Ref(r)) if r.context.needs_browser => {
                self.for_browser += 1;
                Ok(self.output.emit(seq, Out::Line(line))?)
            }
            Ok(Record::Ref(r)) => self.take(seq, r, line.text().len(), host),
            Ok(_) => unreachable!("a line of kind ref decodes to a ref"),
            Err(message) => {
                // Keep the numbering dense for --ordered.
                self.output.next_seq -= 1;
                Ok(self.output.books.bad_record(&line, message)?)
            }
        }
    }

    /// A ref read (from a line `line_len` bytes long): into the ledger when it enters
    /// here, then scheduled by its `notBefore` (a failure at once when too far), and queued
    /// under its host (a wiki ref, or one refused without a request, starts at once).
    fn take(
        &mut self,
        seq: u64,
        r: Ref,
        line_len: usize,
        host: Option<String>,
    ) -> Result<(), FetchError> {
        self.refs += 1;
        self.output.open += 1;
        // The network policy's start URLs: a ref without a parent, or a link's page.
        self.fetcher.admit_ref(&r);
        if r.is_entry() {
            self.output.books.enter(&r.url)?;
        }
        let mut at = None;
        match not_before::schedule(&r, self.bound, Utc::now(), STAGE) {
            not_before::Schedule::Now => {}
            not_before::Schedule::Wait(t) => {
                self.waiting.add(t);
                at = Some(not_before::instant(t));
            }
            not_before::Schedule::TooFar(failure) => {
                self.too_far += 1;
                self.done += 1;
                return Ok(self.output.emit_record(seq, Record::Failure(*failure))?);
            }
        }
        match host {
            Some(host) => self.hosts.push(host, seq, r, line_len, at),
            None => self.start_fetch(seq, r),
        }
        Ok(())
    }

    /// Starts what a ref needs: a fetch, a wiki ref's cache-or-wait step, or its place in
    /// a wiki batch (the batch starts when full).
    fn start_fetch(&mut self, seq: u64, r: Ref) {
        let f = self.fetcher.clone();
        if !wiki::is_wiki(&r) {
            self.tasks
                .spawn(async move { Done::Records(vec![(seq, fetch_one(&f, &r).await)]) });
        } else if wiki::needs_prepare(&f, &r) {
            self.preparing += 1;
            let state = self.wiki_state.clone();
            self.tasks.spawn(async move {
                match wiki::prepare(&f, &state, r).await {
                    Ok(r) => Done::Ready(seq, Box::new(r)),
                    Err(record) => Done::Records(vec![(seq, record)]),
                }
            });
        } else if let Some((api, batch)) = self.batcher.push(seq, r) {
            self.spawn_batch(api, batch);
        }
    }

    fn spawn_batch(&mut self, api: String, batch: Vec<(u64, Ref)>) {
        let f = self.fetcher.clone();
        let state = self.wiki_state.clone();
        self.tasks
            .spawn(async move { Done::Records(wiki::fetch_batch(&f, &state, &api, batch).await) });
    }

    /// Every wiki batch waiting, however small.
    fn send_partial_batches(&mut self) {
        for (api, batch) in self.batcher.drain() {
            self.spawn_batch(api, batch);
        }
    }

    /// A task ended: its records written, or its wiki ref put in a batch.
    fn joined(&mut self, joined: Result<Done, JoinError>) -> Result<(), FetchError> {
        match joined {
            Ok(Done::Fetched {
                seq,
                host,
                answered,
                record,
            }) => {
                self.hosts.done(&host, answered, &self.fetcher);
                self.done += 1;
                self.output.emit_record(seq, *record)?;
            }
            Ok(Done::Records(records)) => {
                for (seq, record) in records {
                    self.done += 1;
                    self.output.emit_record(seq, record)?;
                }
            }
            Ok(Done::Ready(seq, r)) => {
                self.preparing -= 1;
                self.last_activity = Instant::now();
                if let Some((api, batch)) = self.batcher.push(seq, *r) {
                    self.spawn_batch(api, batch);
                }
            }
            // A fetch task never panics by design; if one did, say so loudly rather than
            // lose the URL silently.
            Err(e) => self.output.books.internal_error("a fetch task", e),
        }
        Ok(())
    }

    /// Ten times a second: partial batches of an idle input go, waits are said, output
    /// and ledger are flushed, progress is told.
    fn tick(&mut self) -> Result<(), FetchError> {
        // Idle: ready to read, and nothing came for a while.
        if self.batcher.waiting() > 0 && self.room() && self.last_activity.elapsed() >= wiki::IDLE {
            self.send_partial_batches();
        }
        if let Some(line) = self.waiting.tick(Utc::now()) {
            tracing::warn!("{line}");
        }
        self.output.books.flush()?;
        self.progress(self.fetcher.stats());
        if rip_core::live::enabled() {
            let live = rip_core::live::stage(&self.config.pipe.stage);
            live.set_gauge("hostsWaiting", self.hosts.hosts_waiting() as i64);
            live.set_gauge("hostsBacklog", self.hosts.queued() as i64);
            live.set_host_backlog(self.hosts.backlog_by_host());
        }
        Ok(())
    }

    fn progress(&self, http: StatsSnapshot) {
        if let Some(cb) = &self.config.on_progress {
            cb(&Progress {
                refs: self.refs,
                done: self.done,
                http,
                elapsed: self.start.elapsed(),
            });
        }
    }

    /// Ends the stage: what is in flight is dropped, and the books closed (the ledger
    /// flushed, the summary written last).
    pub(crate) fn finish(mut self) -> Result<Summary, FetchError> {
        self.tasks.abort_all();
        let http = self.fetcher.stats();
        for (k, v) in self.counters(&http) {
            self.output.books.count(&k, v);
        }
        let summary = self.output.books.finish(None)?;
        self.say_too_far();
        self.progress(http);
        Ok(summary)
    }

    /// The summary's counters: the HTTP stack's, the wiki path's (when it was used; its
    /// failures always), the template expansion's, `notBeforeTooFar`; zeros dropped but the three always shown.
    fn counters(&self, http: &StatsSnapshot) -> BTreeMap<String, u64> {
        let mut counters: BTreeMap<String, u64> = http.counters().into_iter().collect();
        let wiki_counters = self.wiki_state.stats.counters();
        let wiki_used = wiki_counters
            .iter()
            .any(|(k, v)| k == "wikiTitles" && *v > 0);
        for (k, v) in wiki_counters {
            if k.starts_with("failed.") || wiki_used {
                *counters.entry(k).or_default() += v;
            }
        }
        for (k, v) in self.wiki_state.expand_stats().counters() {
            counters.insert(k.into(), v);
        }
        if self.too_far > 0 {
            counters.insert("notBeforeTooFar".into(), self.too_far);
        }
        if self.for_browser > 0 {
            counters.insert("passedToBrowser".into(), self.for_browser);
        }
        let queue = self.hosts.stats();
        counters.insert("queuedPeak".into(), queue.peak_queued as u64);
        counters.insert("queueMemoryPeak".into(), queue.peak_memory as u64);
        counters.insert("queueSpilled".into(), queue.spilled);
        counters
            .retain(|k, v| *v > 0 || matches!(k.as_str(), "cacheHits" | "retries" | "requests"));
        counters
    }

    /// Says how many refs were scheduled too far away to wait for, if any.
    fn say_too_far(&self) {
        let too_far = self.too_far;
        if too_far > 0 {
            tracing::warn!(
                "{too_far} {} scheduled (notBefore) further away than rip-fetch waits \
                 (--max-retry-after {}): written as THROTTLED failures (fetch.notBefore), not fetched",
                if too_far == 1 { "ref was" } else { "refs were" },
                not_before::short(self.bound.wait)
            );
        }
    }
}
