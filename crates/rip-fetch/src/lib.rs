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
//! A ref marked `needsBrowser` (a page a `rip-route` render rule sent to the browser) is
//! not this stage's: it passes through unfetched for the `rip-render` after, counted in
//! `passedToBrowser`.
//!
//! Fetches run concurrently; a record is written as soon as its fetch ends, or in input
//! order with [`Config::ordered`].
//!
//! # Many hosts
//!
//! Refs are read as they come and wait in their host's queue; a host's next ref becomes a
//! fetch when the host may be asked (its gap, Crawl-delay or Retry-After, as the shared
//! schedule says), at most [`Config::window`] fetches at once. So every host with work is
//! served up to its gap whatever the input order, and a host that rests holds no other
//! back. Refs queued past [`Config::queue_memory`] wait in a temporary file, so memory stays
//! flat however many refs arrive (see `hosts.rs` and `spill.rs`). With [`Config::ordered`]
//! the input is read only [`Config::window`] refs ahead of the oldest not yet written (the
//! reorder buffer stays bounded; grouped input then keeps fewer hosts busy).
//!
//! The summary counts `queuedPeak` (refs waiting at once, at most), `queueMemoryPeak`
//! (their estimated bytes in memory) and `queueSpilled` (refs that waited on disk).
//!
//! # MediaWiki refs
//!
//! A ref carrying `title` and `wikiApi` (written by `rip-discover --mediawiki`) is not
//! fetched by its URL: it waits, grouped with refs of the same API, until 50 are there or
//! the input has been quiet for 50 ms (or ended), and the group's current wikitext is asked
//! in one API request. Cache hits (per ref URL) and `notBefore` waits are dealt with first,
//! so only what the cache lacks is asked. See [`wiki`] for the records each title becomes
//! (`page` with the wikitext, `wiki.missing`, `wiki.invalid`, API errors by code). The
//! template calls in each page's infobox are expanded by the wiki (`action=expandtemplates`,
//! many pages per request) and carried on the page as `wikiExpansions`; the summary counts
//! `wikiExpandRequests`, `wikiExpandedCalls` and `wikiUnexpandedPages`.
//!
//! # Archiving: `--warc`
//!
//! With [`Config::warc`], every request sent and what came back is written as WARC records
//! (request, response, metadata) by `rip_warc::write::tap`, through rip-http's wire tap;
//! see docs/guide/rip-fetch.md.
//!
//! # Refs scheduled for later
//!
//! A ref's `notBefore` is waited for, at most as long as the longest Retry-After honoured
//! (`--max-retry-after`); a ref scheduled further away becomes a `THROTTLED` failure
//! (`fetch.notBefore`) at once, and waits of a second or more are said on stderr. See
//! [`not_before`].

mod hosts;
pub mod not_before;
mod spill;
mod stage;
mod summary;
pub mod wiki;

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use rip_core::PipeOptions;
use rip_core::stream::spawn_reader;
use rip_core::{Phase, Record, Ref, Summary};
use rip_http::{FetchOptions, Fetched, Fetcher, HttpConfig, StatsSnapshot, records};
use tokio::sync::mpsc;

use stage::{Input, Stage};

pub use rip_warc::write::WriterConfig as WarcConfig;
pub use summary::summary_line;

/// The stage name in records.
pub const STAGE: &str = "rip-fetch";

/// [`Config::queue_memory`] by default: 32 MiB, about 80,000 refs of a typical crawl.
pub const DEFAULT_QUEUE_MEMORY: usize = 32 << 20;

/// What `rip-fetch` does.
#[derive(Clone)]
pub struct Config {
    /// The HTTP stack.
    pub http: HttpConfig,
    /// Fetch tasks at once, at most (requests in flight or about to go out); with
    /// [`Config::ordered`], also refs read ahead of what has been written.
    pub window: usize,
    /// Bytes of refs (estimated) kept in memory while they wait for their host's turn;
    /// more go to a temporary file. See the crate docs.
    pub queue_memory: usize,
    /// Write records in input order instead of as fetches end.
    pub ordered: bool,
    /// Ask the wiki to expand the template calls of wiki pages' infoboxes (see [`wiki`]);
    /// off, pages carry none and rip-parse shows no value holding a template.
    pub wiki_expand: bool,
    /// What every stage is told about its input: its name in messages (`-` for stdin),
    /// `strict` (stop at the first malformed line) and `stop` (set by a signal handler:
    /// stop reading, write what is done, end `interrupted`). Its `read_ahead_bytes` is not
    /// read: [`Config::window`] bounds what is read ahead, in refs.
    pub pipe: PipeOptions,
    /// Called about ten times a second with the counters so far (for a progress bar).
    pub on_progress: Option<ProgressFn>,
    /// Write every exchange on the wire as WARC records into these files (`--warc DIR`;
    /// see `rip_warc::write::tap`: request, response and metadata records per request
    /// sent, retries and redirect hops included).
    pub warc: Option<WarcConfig>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("http", &self.http)
            .field("window", &self.window)
            .field("queue_memory", &self.queue_memory)
            .field("ordered", &self.ordered)
            .field("wiki_expand", &self.wiki_expand)
            .field("warc", &self.warc)
            .finish_non_exhaustive()
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            http: HttpConfig::default(),
            window: 256,
            queue_memory: DEFAULT_QUEUE_MEMORY,
            ordered: false,
            wiki_expand: true,
            pipe: PipeOptions::new(STAGE),
            on_progress: None,
            warc: None,
        }
    }
}

impl Config {
    /// Refs read ahead of what has been written, at most: [`Config::window`], at least 1.
    fn read_ahead(&self) -> usize {
        self.window.max(1)
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
    /// The input could not be read, a malformed line under `--strict`, or the output
    /// could not be written (a broken pipe among others).
    #[error(transparent)]
    Pipe(#[from] rip_core::PipeError),
    /// Refs queued past the memory budget could not be read back from their temporary
    /// file.
    #[error("cannot read back queued refs: {0}")]
    Spill(std::io::Error),
    /// The WARC folder or a WARC file could not be created or closed (`--warc`).
    #[error("--warc: {0}")]
    Warc(#[from] rip_warc::write::Error),
}

/// Fetches one ref and returns its record (the networks it names admitted first:
/// [`Fetcher::admit_ref`]).
pub async fn fetch_one(fetcher: &Fetcher, r: &Ref) -> Record {
    fetcher.admit_ref(r);
    record_of(r, &fetch_ref(fetcher, r).await)
}

/// Fetches one ref (waiting for its `notBefore`, obeying robots.txt).
pub(crate) async fn fetch_ref(fetcher: &Fetcher, r: &Ref) -> Fetched {
    let opts = FetchOptions {
        not_before: r.not_before,
        ignore_robots: false,
    };
    fetcher.fetch_with(&r.url, &opts).await
}

/// The record a ref's fetch makes.
pub(crate) fn record_of(r: &Ref, fetched: &Fetched) -> Record {
    records::record_for(r, fetched, Phase::Fetch, STAGE)
}

/// Runs the stage: reads `input`, writes `output`, returns the closing summary (also
/// written as the last record).
pub async fn run<R, W>(config: Config, input: R, output: W) -> Result<Summary, FetchError>
where
    R: Read + Send + 'static,
    W: Write,
{
    let started = (Utc::now(), tokio::time::Instant::now());
    let fetcher = Fetcher::new(HttpConfig {
        stage: STAGE.into(),
        ..config.http.clone()
    })?;
    let tap = match &config.warc {
        Some(cfg) => {
            let tap = Arc::new(rip_warc::write::tap::WarcTap::new(cfg.clone(), STAGE)?);
            fetcher.set_tap(tap.clone());
            Some(tap)
        }
        None => None,
    };
    let mut input = read_lines(&config, input)?;
    let mut stage = Stage::new(&config, fetcher, output, started);
    stage.pump(&mut input).await?;
    let summary = stage.finish()?;
    if let Some(tap) = tap {
        let failed = tap.close()?;
        if failed > 0 {
            tracing::warn!("--warc: {failed} exchanges could not be archived");
        }
    }
    Ok(summary)
}

/// The lines of `input`, read on a thread of their own, at most a window ahead.
fn read_lines<R: Read + Send + 'static>(config: &Config, input: R) -> Result<Input, FetchError> {
    let (tx, rx) = mpsc::channel(config.read_ahead().min(1024));
    spawn_reader(input, config.pipe.input_name.as_str().into(), move |item| {
        tx.blocking_send(item.map(stage::InputLine::of)).is_ok()
    })
    .map_err(rip_core::PipeError::Spawn)?;
    Ok(rx)
}
