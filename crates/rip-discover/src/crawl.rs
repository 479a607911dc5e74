//! The crawl loop: reads start refs, dispatches frontier items to tasks (breadth first,
//! within the budgets), turns their results into records and new frontier items, and
//! keeps the state journal in step with what reached stdout.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use rip_core::stream::spawn_reader;
use rip_core::{
    Books, ErrorCategory, ErrorEntry, Failure, Kind, Line, NdjsonWriter, Phase, PipeError,
    ReadError, Record, Ref, Status, Summary,
};
use rip_http::{Fetcher, HttpConfig};
use rip_url::{Url, natural_cmp};
use tokio::sync::mpsc;
use tokio::task::{JoinError, JoinSet};

use crate::frontier::{Frontier, Item, ItemKind, key, key_in};
use crate::journal::Journal;
use crate::scope::Scope;
use crate::summary::Counters;
use crate::task::{self, Done, Shared};
use crate::{Config, DiscoverError, STAGE};

mod report;
mod results;
mod share;

struct Crawl<W: Write> {
    cfg: Config,
    /// When the run started, for the progress display's elapsed time.
    started: tokio::time::Instant,
    shared: Arc<Shared>,
    scope: Arc<Scope>,
    /// The output and its account: input read, bad lines, records written, the status.
    books: Books<W>,
    journal: Option<Journal>,
    /// This process's part in a crawl shared through the broker (`--broker`).
    share: Option<share::Share>,
    /// The waiting items and the visited set.
    frontier: Frontier,
    tasks: JoinSet<Done>,
    /// In-flight items by depth (the breadth-first barrier).
    inflight: BTreeMap<u32, usize>,
    inflight_targets: u64,
    /// Targets a resumed crawl wrote in its earlier runs and does not write again (with
    /// `--sorted` they are written again, at the end, and counted in this run's): they
    /// count against `--max-pages`, which is the crawl's budget, not each run's.
    targets_before: u64,
    fetches: u64,
    dispatched: u64,
    sitemap_files: usize,
    sorted: Vec<Ref>,
    counters: Counters,
    /// Notes of the crawl (resume, sitemaps): the summary holds the first 20.
    notes: Vec<String>,
    exhausted: Option<String>,
    /// Records written since the last commit.
    uncommitted: usize,
    /// `--warc`: the tap archiving every exchange of the fetcher, closed at the end.
    warc: Option<Arc<rip_warc::write::tap::WarcTap>>,
}

/// Records written between two commits at most. Output reaches stdout only at commits
/// (the writer's own timer is off and this stays well under its 64 KiB buffer), so the
/// journal's `d` lines follow the records they describe within microseconds: a kill
/// duplicates almost nothing on resume.
const COMMIT_EVERY: usize = 128;

impl<W: Write> Crawl<W> {
    fn enqueue(&mut self, item: Item) {
        if let Some(share) = &mut self.share {
            share.publish(item);
            return;
        }
        if let Some(j) = &mut self.journal {
            j.enqueued(&item);
        }
        self.frontier.push(item);
    }

    fn add_scope_start(&mut self, url: &Url) {
        if self.scope.widened_by(url) {
            Arc::make_mut(&mut self.scope).add_start(url);
        }
    }

    /// A start URL from the arguments or a `ref` on the input.
    fn start(&mut self, mut r: Ref) -> Result<(), DiscoverError> {
        // The network policy lets the crawl into the start URL's networks (a ref from
        // another stage, with a parent: that page's).
        self.shared.fetcher.admit_ref(&r);
        let canonical = match self.cfg.canon.parse(&r.url) {
            Ok(u) => u,
            Err(e) => {
                let mut f = Failure::new(
                    r.url.clone(),
                    ErrorCategory::Validation,
                    Phase::Discover,
                    ErrorEntry::new("validation.url", e.to_string(), STAGE),
                );
                f.context = r.context.clone();
                f.retryable = false;
                self.books.mark_partial();
                self.books.raise(Status::NotReady);
                self.books.emit(&Record::Failure(f))?;
                return Ok(());
            }
        };
        self.add_scope_start(&canonical);
        if self.cfg.sitemaps {
            let origin = canonical.origin().ascii_serialization();
            let k = key_in("seed", &origin);
            if self.frontier.visit(k) {
                let mut seed = Ref::new(String::from(canonical.clone()));
                seed.context.depth = 0;
                self.enqueue(Item::new(seed, k, ItemKind::Seed));
            }
        }
        let k = key(canonical.as_str());
        if !self.frontier.visit(k) {
            self.counters.duplicates += 1;
            return Ok(());
        }
        r.context.depth = 0;
        let is_target = self.scope.start_is_target(&canonical);
        self.enqueue(Item {
            is_start: true,
            is_target,
            ..Item::new(r, k, ItemKind::Page)
        });
        Ok(())
    }

    fn min_inflight_depth(&self) -> u32 {
        self.inflight.keys().next().copied().unwrap_or(u32::MAX)
    }

    /// Starts as many tasks as the limits allow.
    fn dispatch(&mut self) {
        let concurrency = self.cfg.concurrency.max(1);
        while self.tasks.len() < concurrency && self.exhausted.is_none() {
            if self.out_of_claimed_requests() {
                break;
            }
            let barrier = self.min_inflight_depth();
            let Some(next_depth) = self.frontier.min_depth() else {
                break;
            };
            if next_depth > barrier {
                break;
            }
            if self.cfg.max_pages.is_some() && self.share.is_some() {
                let room = self.share.as_ref().is_some_and(|s| s.pages_left() > 0);
                let Some(item) = self.frontier.pop_if(barrier, |i| room || !i.is_target) else {
                    break;
                };
                if item.is_target
                    && let Some(share) = &mut self.share
                {
                    share.start_target();
                }
                self.spawn(item);
                continue;
            }
            if let Some(m) = self.cfg.max_pages {
                let written = self.counters.targets + self.targets_before;
                if written >= m {
                    self.exhaust(format!("maxPages ({m} targets written)"));
                    break;
                }
                let room = written + self.inflight_targets < m;
                let Some(item) = self.frontier.pop_if(barrier, |i| room || !i.is_target) else {
                    break;
                };
                self.spawn(item);
                continue;
            }
            let Some(item) = self.frontier.pop_up_to(barrier) else {
                break;
            };
            self.spawn(item);
        }
    }

    /// In a shared crawl with `--max-requests`: nothing of the crawl's budget is claimed
    /// for this process now (the next sync claims more, or finds it spent).
    fn out_of_claimed_requests(&self) -> bool {
        self.cfg.max_requests.is_some()
            && self.share.as_ref().is_some_and(|s| s.requests_left() == 0)
    }

    fn exhaust(&mut self, what: String) {
        if self.exhausted.is_none() {
            self.exhausted = Some(what);
        }
    }

    fn spawn(&mut self, mut item: Item) {
        if item.kind != ItemKind::Seed {
            if let Some(share) = &mut self.share
                && self.cfg.max_requests.is_some()
            {
                share.start_request();
            } else if let Some(m) = self.cfg.max_requests
                && self.fetches >= m
            {
                self.exhaust(format!("maxRequests ({m} fetches)"));
                // Put it back: it is still to do (a resumed run with a larger budget does it).
                self.frontier.push(item);
                return;
            }
            self.fetches += 1;
        }
        self.dispatched += 1;
        item.dispatch_order = self.dispatched;
        *self.inflight.entry(item.depth()).or_default() += 1;
        if item.is_target {
            self.inflight_targets += 1;
        }
        // Boxed first: the task's future is ~8.6 KB, which spawning moved by value into the
        // task and on (callgrind: 82k instructions a page, 3 %, went with it); a box moves
        // as a pointer.
        self.tasks.spawn(Box::pin(task::run(
            self.shared.clone(),
            self.scope.clone(),
            item,
        )));
    }

    fn finish_item(&mut self, item: &Item) {
        if let Some(n) = self.inflight.get_mut(&item.depth()) {
            *n -= 1;
            if *n == 0 {
                self.inflight.remove(&item.depth());
            }
        }
        if item.is_target {
            self.inflight_targets -= 1;
        }
    }

    fn done(&mut self, item: &Item, target: bool) {
        if let Some(j) = &mut self.journal {
            j.done(item.key, target);
        }
    }

    fn emit_target(&mut self, item: &Item) -> Result<(), DiscoverError> {
        self.counters.targets += 1;
        if self.cfg.sorted {
            self.sorted.push(item.record.clone());
        } else {
            self.books.emit(&Record::Ref(item.record.clone()))?;
        }
        self.done(item, true);
        Ok(())
    }

    /// Flushes stdout, then commits the journal lines that describe what was flushed.
    fn commit(&mut self) -> Result<(), DiscoverError> {
        self.uncommitted = 0;
        self.books.flush()?;
        if let Some(j) = &mut self.journal {
            j.commit()?;
        }
        Ok(())
    }
}

/// See [`crate::run`].
pub(crate) async fn run<R, W>(
    cfg: Config,
    input: Option<R>,
    output: W,
) -> Result<Summary, DiscoverError>
where
    R: Read + Send + 'static,
    W: Write,
{
    let mut crawl = Crawl::new(cfg, output)?;
    if let Some(shared) = &crawl.cfg.shared {
        crawl.share = Some(share::Share::join(shared).await?);
    }
    crawl.resume()?;
    for s in crawl.cfg.starts.clone() {
        crawl.start(Ref::new(s))?;
    }
    let input = Input::spawn(input, &crawl.cfg.pipe.input_name)?;
    crawl.crawl(input).await?;
    crawl.finish().await
}

/// The input's lines, read on a thread of their own; `open` until the input ended.
struct Input {
    lines: mpsc::Receiver<Result<Line, ReadError>>,
    open: bool,
}

impl Input {
    fn spawn<R: Read + Send + 'static>(
        input: Option<R>,
        input_name: &str,
    ) -> Result<Self, DiscoverError> {
        let (tx, lines) = mpsc::channel::<Result<Line, ReadError>>(1024);
        let Some(input) = input else {
            return Ok(Self { lines, open: false });
        };
        spawn_reader(input, input_name.into(), move |item| {
            tx.blocking_send(item).is_ok()
        })
        .map_err(PipeError::Spawn)?;
        Ok(Self { lines, open: true })
    }
}

impl<W: Write> Crawl<W> {
    /// A crawl with nothing done yet: the fetcher, what its tasks share, the scope.
    fn new(mut cfg: Config, output: W) -> Result<Self, DiscoverError> {
        let started_at = Utc::now();
        let mut http = HttpConfig {
            stage: STAGE.into(),
            ..cfg.http.clone()
        };
        if let Some(r) = &cfg.render {
            r.make_room(&mut http);
        }
        let fetcher = Fetcher::new(http)?;
        let warc = match &cfg.warc {
            Some(w) => {
                let tap = rip_warc::write::tap::WarcTap::new(w.clone(), STAGE)?;
                // Rendering, each page's DOM is a record tied to the page's response.
                let tap = Arc::new(if cfg.render.is_some() {
                    tap.remembering_responses()
                } else {
                    tap
                });
                fetcher.set_tap(tap.clone());
                Some(tap)
            }
            None => None,
        };
        let max_body = cfg.http.client.max_body;
        let renderer = (cfg.render.as_ref()).map(|r| {
            let renderer = rip_render::Renderer::new(r, fetcher.clone(), max_body);
            match &warc {
                Some(tap) => renderer.with_warc(tap.clone()),
                None => renderer,
            }
        });
        let adaptive = (renderer.is_some() && cfg.render_auto)
            .then(|| rip_adaptive::Adaptive::new(rip_adaptive::Learning::default()));
        let shared = Arc::new(Shared {
            renderer,
            adaptive,
            fetcher,
            canon: cfg.canon.clone(),
            follow_nofollow: cfg.follow_nofollow,
            robots: cfg.http.robots,
            context: cfg.context.take(),
            max_depth: cfg.max_depth,
            sitemap_limits: cfg.sitemap_limits,
            resolutions: Default::default(),
        });
        let scope = Scope::of(&cfg);
        let out = NdjsonWriter::new(output).with_flush_interval(Duration::from_secs(24 * 3600));
        Ok(Self {
            started: tokio::time::Instant::now(),
            shared,
            scope: Arc::new(scope),
            books: Books::new(&cfg.pipe, out).starting_at(started_at),
            journal: None,
            share: None,
            frontier: Frontier::with_memory(cfg.frontier_memory),
            tasks: JoinSet::new(),
            inflight: BTreeMap::new(),
            inflight_targets: 0,
            targets_before: 0,
            fetches: 0,
            dispatched: 0,
            sitemap_files: 0,
            sorted: Vec::new(),
            counters: Counters::default(),
            notes: Vec::new(),
            exhausted: None,
            uncommitted: 0,
            warc,
            cfg,
        })
    }

    /// With `--state`: opens the state folder and takes up what its journal left to do.
    fn resume(&mut self) -> Result<(), DiscoverError> {
        let Some(dir) = self.cfg.state_dir.clone() else {
            return Ok(());
        };
        let params = crate::params_json(&self.cfg, self.shared.context.as_ref());
        let (journal, replay) = Journal::open(&dir, &params, self.cfg.sorted)?;
        self.journal = Some(journal);
        debug_assert!(
            self.frontier.is_empty(),
            "resumed before anything is queued"
        );
        self.frontier = Frontier::with_visited(self.cfg.frontier_memory, replay.visited);
        self.counters.resumed = replay.pending.len() as u64;
        if replay.done > 0 || !replay.pending.is_empty() {
            self.notes.push(format!(
                "resumed from {}: {} items done before, {} to do",
                dir.display(),
                replay.done,
                replay.pending.len()
            ));
        }
        for item in replay.pending {
            // Everything journalled was in scope: with the default domain (start origins),
            // the origins of the waiting items stand for starts read from stdin last time.
            if item.kind == ItemKind::Page
                && let Ok(u) = Url::parse(&item.record.url)
            {
                self.add_scope_start(&u);
            }
            // Their networks, as when they were found (a start's, or their page's).
            if item.kind == ItemKind::Page {
                self.shared.fetcher.admit_ref(&item.record);
            }
            self.frontier.push(item);
        }
        self.sorted = replay.targets.into_iter().map(|i| i.record).collect();
        self.counters.targets = self.sorted.len() as u64;
        if !self.cfg.sorted {
            self.targets_before = replay.targets_done;
        }
        Ok(())
    }

    /// The crawl loop: dispatches work, reads the input, takes finished tasks and commits
    /// on a timer, until nothing is left to do (`false`) or the stop flag is set (`true`).
    async fn crawl(&mut self, mut input: Input) -> Result<bool, DiscoverError> {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut ticked = true;
        loop {
            self.sync_share(std::mem::take(&mut ticked)).await?;
            self.dispatch();
            if !input.open
                && self.tasks.is_empty()
                && (self.frontier.is_empty() || self.exhausted.is_some())
                && self.over_everywhere().await?
            {
                return Ok(false);
            }
            tokio::select! {
                line = input.lines.recv(), if input.open => match line {
                    Some(line) => self.read_line(line)?,
                    None => input.open = false,
                },
                Some(joined) = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    self.joined(joined)?;
                }
                _ = tick.tick() => {
                    if self.books.stop_asked() {
                        return Ok(true);
                    }
                    self.commit()?;
                    self.report_progress();
                    ticked = true;
                }
            }
        }
    }

    /// An input line: a `ref` is a start URL, any other record passes through.
    fn read_line(&mut self, line: Result<Line, ReadError>) -> Result<(), DiscoverError> {
        let Some(line) = self.books.read(line)? else {
            return Ok(());
        };
        if line.kind() != &Kind::Ref {
            self.books.pass(&line)?;
            return self.written();
        }
        match line.decode() {
            Ok(Record::Ref(r)) => self.start(r),
            Ok(_) => unreachable!("a line of kind ref decodes to a ref"),
            Err(message) => Ok(self.books.bad_record(&line, message)?),
        }
    }

    /// A task that ended: its results handled, or said on stderr if it panicked.
    fn joined(&mut self, joined: Result<Done, JoinError>) -> Result<(), DiscoverError> {
        match joined {
            Ok(done) => {
                let key = done.item.key;
                self.handle(done)?;
                if let Some(share) = &mut self.share {
                    share.finished(key);
                }
                self.written()
            }
            Err(e) => {
                // Tasks never panic by design; if one did, say so rather than lose it.
                self.books.internal_error("a crawl task", e);
                Ok(())
            }
        }
    }

    /// Counts a record written, and commits every [`COMMIT_EVERY`].
    fn written(&mut self) -> Result<(), DiscoverError> {
        self.uncommitted += 1;
        if self.uncommitted >= COMMIT_EVERY {
            self.commit()?;
        }
        Ok(())
    }

    fn report_progress(&self) {
        if let Some(cb) = &self.cfg.on_progress {
            cb(&self.progress());
        }
        // `--metrics`: what the summary's counters will say, so far.
        if !rip_core::live::enabled() {
            return;
        }
        let live = rip_core::live::stage(&self.cfg.pipe.stage);
        for (name, n) in self.counters.named() {
            live.set_counter(name, n);
        }
        for (name, n) in self.shared.fetcher.stats().counters() {
            if name != "robotsDenied" {
                live.set_counter(&name, n);
            }
        }
        live.set_gauge("frontier", self.frontier.len() as i64);
        live.set_gauge("breakersOpen", self.shared.fetcher.circuits_open() as i64);
    }

    /// Ends the crawl: drops what is in flight (interrupted: a resumed run redoes it, from
    /// the cache), writes the sorted targets and the summary.
    async fn finish(mut self) -> Result<Summary, DiscoverError> {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
        if let Some(renderer) = &self.shared.renderer {
            renderer.close().await;
        }
        if let Some(tap) = &self.warc {
            let failed = tap.close()?;
            if failed > 0 {
                tracing::warn!("--warc: {failed} exchanges could not be archived");
            }
        }
        self.leave_share().await?;
        if self.cfg.sorted {
            let mut refs = std::mem::take(&mut self.sorted);
            refs.sort_by(|a, b| natural_cmp(&a.url, &b.url));
            refs.dedup_by(|a, b| a.url == b.url);
            for r in refs {
                self.books.emit(&Record::Ref(r))?;
            }
        }
        self.commit()?;
        if self.frontier.lost() > 0 {
            // Items lost from the frontier's spill file: URLs that vanished.
            self.books.raise(Status::Failed);
        }
        self.close_books();
        let summary = self.books.finish(None)?;
        self.report_progress();
        Ok(summary)
    }
}
