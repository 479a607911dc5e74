#![deny(missing_docs)]
//! `rip-discover`: the link crawler, the first stage of a ripperoni pipeline.
//!
//! From start URLs (arguments, or `ref` records on stdin: every other record passes
//! through unchanged), a breadth-first crawl (the hosts of one depth served in turn: see
//! [`frontier`]) fetches pages through [`rip_http::Fetcher`]
//! (shared cache, robots.txt, per-host politeness, retries), extracts `<a href>` links
//! with a real HTML parser ([`rip_links`]; `<base href>` honoured, `rel=nofollow` skipped
//! unless asked), canonicalises them ([`rip_url`]: one page, one URL), and keeps those
//! the three regexes of the reference allow ([`scope`]: *domain*, *delimiter* =
//! `--follow`, *target*). Each target is written as a `ref` as soon as its page is
//! fetched, with `depth`, `parent`, `linkText` and, with context rules ([`rip_links::context`]),
//! `raw` fields found on the listing page; so `rip-discover | rip-fetch` overlaps crawling
//! and fetching, and rip-fetch finds each page in the cache (one fetch per URL per run).
//!
//! # Records written
//!
//! | record | when |
//! |---|---|
//! | `ref` | a target (matches the delimiter and the target regex), once its fetch ended, whatever the outcome: a target that failed is still written, so `rip-fetch` records its failure |
//! | `expected` (`phase: discover`, `source: robots`, `rule: "Disallow: /private/"`) | a URL in scope that robots.txt disallows: never fetched |
//! | `failure` (`phase: discover`) | a start URL that could not be fetched (the run ends `not-ready`, exit 3); a traversed page that is not a target and failed (the crawl goes on); a sitemap named by robots.txt that failed |
//! | `summary` | last: counters (`fetched`, `targets`, `failed`, `robotsDenied`, `duplicates`, `outOfDomain`, `nofollowSkipped`, `sitemapUrls`, `frontierLeft`, HTTP counters…) and notes (budget exhausted, sitemap problems, resume) |
//!
//! No `ledger`: the stage that consumes the refs (`rip-fetch`) writes it.
//!
//! # An archive's gaps
//!
//! [`from_pages`] (`--from-pages`): no crawl; the links of the `page` records read (an
//! archive's, `rip-warc read`) that the input did not carry, as refs.
//!
//! # Not here: MediaWiki mode
//!
//! `rip-discover --mediawiki API_URL` lists a wiki's pages through its API instead of
//! crawling: that is the crate `rip-wikilist`, which the program calls; this library holds
//! no wiki code.
//!
//! # Breadth first, exactly
//!
//! Depth is link distance from a start URL (0). Work is dispatched level by level:
//! nothing at depth *d*+1 starts while anything at depth *d* is queued or running, so
//! every URL gets its true BFS depth even with many fetches in flight, and `--max-depth`
//! cuts where it says. At the depth limit only targets are fetched (their links would
//! not be followed). Sitemap URLs (`--sitemaps`) enter at depth 1, `parent` naming the
//! sitemap.
//!
//! # Budgets
//!
//! `--max-pages` bounds targets written, `--max-requests` fetches started (pages and
//! sitemaps, cache hits included). When one is reached, nothing new starts; what is in
//! flight finishes; the summary says `budget exhausted` and how much was left.
//!
//! # Order
//!
//! By default records stream out as fetches end. With `--sorted`, refs are held and
//! written at the end, deduplicated, in numeric-aware order ([`rip_url::natural_cmp`]:
//! `item-9` before `item-10`), as the reference returns its results.
//!
//! # Rendered links
//!
//! With [`Config::render`] each HTML page's links are read from its DOM after headless
//! Chromium ran its scripts: a [`rip_render::Renderer`] driven with this crawl's own
//! fetcher, so the page's document is not fetched twice and its script's requests keep the
//! crawl's politeness. The render is cached as `rip-render`'s variant (a `rip-render`
//! after the crawl replays it). A page whose render fails gives the links of the HTML as
//! sent (`renderFallbacks`, and a note naming it). The summary adds `renderedPages` and the
//! renderer's counters (`rendered`, `renderTimeouts`, `browserStarts`, …). Rendering is part
//! of a state folder's parameters: a crawl resumed with the flag changed is refused.
//!
//! # Resuming
//!
//! With a state folder ([`journal`]), the frontier and visited set are journalled as the
//! crawl goes; after a `kill -9` the same command continues: nothing done is redone,
//! nothing is lost. The visited set holds 64-bit hashes ([`frontier`]): a million URLs
//! in about 17 MB, in the same map that says where each waiting URL's item is.

//!
//! # Shared crawl
//!
//! With `--broker URL --crawl NAME`, any number of processes, on any machines, share one
//! crawl through a NATS JetStream broker: the design of Mercator, BUbiNG and Heritrix. Every
//! URL is routed to the partition of its host (`xxh3(host:port) % --partitions`) in the
//! stream `crawl_NAME`; each partition is owned by one live process (rendezvous hashing over
//! the members, a lease taken create-if-absent, see `rip_queue::members`), which keeps the
//! partition's visited set and fetches its URLs through its own HTTP stack: a host's
//! robots.txt, per-host gap, Retry-After and circuit breaker live in one place and need no
//! broker round trip per request. Links found go to their owners through the broker,
//! published under their key as message id (the broker stores a URL found twice within its
//! deduplication window once; the owner's visited set catches the rest).
//!
//! Each URL is acknowledged on its own, after the records it caused are flushed and its
//! links stored; a process killed at any moment leaves its partitions to the others (after
//! its lease lapses, 5 s) and its unacknowledged URLs to their new owner (after
//! `--ack-wait`; it works on the later ones meanwhile), who rebuilds the visited set from
//! the URLs below the partition's acknowledgement floor. What the dead process was fetching
//! is fetched again, nothing else.
//! A process taking a partition over waits `--handover-wait` before its first request, so
//! the previous owner's last one is a gap behind. `--max-pages` and `--max-requests` are
//! counters on the broker that processes claim from, a few at a time, never past the limit;
//! `--max-depth` holds as each URL carries its depth (the depth along the path by which its
//! owner first got it: across processes there is no global breadth-first barrier). Each
//! process writes the records of its own partitions on its stdout and its own summary; the
//! crawl ends, for every process, when no partition has anything waiting or unfinished.
//! Every process of a crawl is given the same start URLs and scope; running the command
//! again under the same name continues the crawl (`--state` and `--sorted` do not apply).

mod crawl;
pub mod explain;
pub mod from_pages;
pub mod frontier;
mod html;
pub mod journal;
mod resolved;
pub mod scope;
pub mod sitemap;
mod summary;
mod task;

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use rip_core::{PipeOptions, Summary};
use rip_http::{HttpConfig, StatsSnapshot};
use rip_url::Canonicalizer;

pub use rip_links::context::ContextRules;
pub use summary::summary_line;

/// The stage name in records.
pub const STAGE: &str = "rip-discover";

/// What `rip-discover` does.
#[derive(Clone)]
pub struct Config {
    /// The HTTP stack (robots.txt on or off is `http.robots`).
    pub http: HttpConfig,
    /// Start URLs given as arguments.
    pub starts: Vec<String>,
    /// `--domain`: links must match to be considered; `None`: the start URLs' origins.
    pub domain: Option<Regex>,
    /// `--follow` (the reference's delimiter): links that are traversed; `None`: all.
    pub follow: Option<Regex>,
    /// `--target`: traversed links that are collected; `None`: all traversed links.
    pub target: Option<Regex>,
    /// URL canonicalisation (which query parameters are dropped).
    pub canon: Canonicalizer,
    /// Follow `rel=nofollow` links (and pages with a robots `nofollow` meta tag).
    pub follow_nofollow: bool,
    /// Links are followed up to this depth (start URLs are 0).
    pub max_depth: Option<u32>,
    /// Targets written at most.
    pub max_pages: Option<u64>,
    /// Fetches started at most.
    pub max_requests: Option<u64>,
    /// Seed from robots.txt `Sitemap:` lines, or `/sitemap.xml`.
    pub sitemaps: bool,
    /// Bounds on sitemaps.
    pub sitemap_limits: sitemap::Limits,
    /// Context rules (row fields into `raw`).
    pub context: Option<ContextRules>,
    /// Write refs at the end, deduplicated and in numeric-aware order.
    pub sorted: bool,
    /// Persist the crawl here and resume from it.
    pub state_dir: Option<PathBuf>,
    /// Bytes of waiting items (estimated) kept in memory; more wait in a temporary file
    /// ([`frontier::Frontier::with_memory`]).
    pub frontier_memory: usize,
    /// Items (pages, sitemaps) in flight at most.
    pub concurrency: usize,
    /// What every stage is told about its input (`ref` records on stdin, or none): its
    /// name in messages (`-` for stdin), `strict` (stop at the first malformed line) and
    /// `stop` (set by a signal handler: stop, write what is done, end `interrupted`). Its
    /// `read_ahead_bytes` is not read: refs are small.
    pub pipe: PipeOptions,
    /// Called about ten times a second with the counters so far.
    pub on_progress: Option<ProgressFn>,
    /// `--render`: read each page's links from its DOM after headless Chromium ran its
    /// scripts (`None`: from the HTML as sent).
    pub render: Option<rip_render::RenderSettings>,
    /// `--render auto`: with `render`, only the pages whose HTML shows that their content
    /// needs script are rendered (see the crate `rip-adaptive`), the decision learnt per
    /// URL pattern; the others' links are read from their HTML as sent.
    pub render_auto: bool,
    /// Share the crawl with other processes through a broker (`None`: not shared).
    pub shared: Option<SharedConfig>,
    /// `--warc DIR`: write every exchange on the wire (pages, robots.txt, sitemaps, a
    /// render's requests) as WARC records, as `rip-fetch --warc` does (see
    /// `rip_warc::write::tap`); cache hits are not archived (nothing went over the wire).
    pub warc: Option<rip_warc::write::WriterConfig>,
}

/// A crawl shared by processes on any number of machines through a NATS JetStream broker:
/// see the crate documentation's *Shared crawl*.
#[derive(Debug, Clone)]
pub struct SharedConfig {
    /// How to reach the broker (URL, credentials, prefix, patience).
    pub broker: rip_queue::BrokerOptions,
    /// The crawl's name: every process of one crawl gives the same (a crawl run again under
    /// its name continues it).
    pub crawl: String,
    /// Partitions of the frontier (hosts are spread over them; a process owns some).
    pub partitions: u32,
    /// How long a URL taken by a process that died waits before it is given to another.
    pub ack_wait: Duration,
    /// How long a process waits after taking a partition over before fetching from its
    /// hosts: at least the per-host gap, so the previous owner's last request is that far
    /// behind.
    pub handover_wait: Duration,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("starts", &self.starts)
            .field("domain", &self.domain)
            .field("follow", &self.follow)
            .field("target", &self.target)
            .field("max_depth", &self.max_depth)
            .field("sitemaps", &self.sitemaps)
            .field("state_dir", &self.state_dir)
            .field("warc", &self.warc)
            .finish_non_exhaustive()
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            http: HttpConfig::default(),
            starts: Vec::new(),
            domain: None,
            follow: None,
            target: None,
            canon: Canonicalizer::default(),
            follow_nofollow: false,
            max_depth: None,
            max_pages: None,
            max_requests: None,
            sitemaps: false,
            sitemap_limits: sitemap::Limits::default(),
            context: None,
            sorted: false,
            state_dir: None,
            frontier_memory: frontier::DEFAULT_FRONTIER_MEMORY,
            concurrency: 64,
            pipe: PipeOptions::new(STAGE),
            on_progress: None,
            render: None,
            render_auto: false,
            shared: None,
            warc: None,
        }
    }
}

/// A progress callback.
pub type ProgressFn = Arc<dyn Fn(&Progress) + Send + Sync>;

/// Counters for a progress display.
#[derive(Debug, Clone, Default)]
pub struct Progress {
    /// Pages done (fetched, failed or disallowed).
    pub done: u64,
    /// Targets written.
    pub targets: u64,
    /// Items waiting in the frontier.
    pub queued: u64,
    /// Items in flight.
    pub in_flight: u64,
    /// The depth being crawled.
    pub depth: u32,
    /// The HTTP stack's counters.
    pub http: StatsSnapshot,
    /// Time since the start.
    pub elapsed: Duration,
}

/// What stops `rip-discover`.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// The HTTP stack could not be built.
    #[error(transparent)]
    Build(#[from] rip_http::BuildError),
    /// The state folder could not be used.
    #[error(transparent)]
    State(#[from] journal::StateError),
    /// The input could not be read, a malformed line under `--strict`, or the output
    /// could not be written (a broken pipe among others).
    #[error(transparent)]
    Pipe(#[from] rip_core::PipeError),
    /// The broker of a shared crawl could not be reached, or refused.
    #[error(transparent)]
    Broker(rip_queue::QueueError),
    /// The output could not be written (a broken pipe among others).
    #[error("cannot write output: {0}")]
    Write(#[from] std::io::Error),
    /// The WARC folder or a WARC file could not be created or closed (`--warc`).
    #[error("--warc: {0}")]
    Warc(#[from] rip_warc::write::Error),
}

/// The parameters that define a crawl, for the state folder: budgets, concurrency and
/// HTTP settings may change between runs; these may not.
pub(crate) fn params_json(cfg: &Config, context: Option<&ContextRules>) -> String {
    let scope = scope::Scope::of(cfg);
    let dropped: Vec<String> = cfg
        .canon
        .dropped()
        .iter()
        .map(|p| match p {
            rip_url::ParamPattern::Exact(n) => n.clone(),
            rip_url::ParamPattern::Prefix(p) => format!("{p}*"),
        })
        .collect();
    let mut params = serde_json::json!({
        "version": 1,
        "starts": cfg.starts,
        "scope": scope.describe(),
        "followNofollow": cfg.follow_nofollow,
        "maxDepth": cfg.max_depth,
        "sitemaps": cfg.sitemaps,
        "robots": cfg.http.robots,
        "dropParams": dropped,
        "context": context.map(ContextRules::describe),
    });
    if cfg.render.is_some() {
        // Only when on, so that state folders written before the flag existed resume.
        params["render"] = match cfg.render_auto {
            true => serde_json::Value::from("auto"),
            false => serde_json::Value::Bool(true),
        };
    }
    params.to_string()
}

/// Runs the crawl: reads start refs from `input` (when given), writes records to
/// `output`, returns the closing summary (also written as the last record).
pub async fn run<R, W>(
    config: Config,
    input: Option<R>,
    output: W,
) -> Result<Summary, DiscoverError>
where
    R: Read + Send + 'static,
    W: Write,
{
    crawl::run(config, input, output).await
}
