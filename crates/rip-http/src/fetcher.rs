//! [`Fetcher`]: the one entry point. A URL goes through cache → robots.txt → politeness →
//! request (redirects followed by hand) → classification → retry, and comes back as a
//! [`Fetched`]: a page, a classified failure or a deliberate skip, with what it cost.
//!
//! One concern per file: [`run`] is the path of one URL (checks, `notBefore`, cache,
//! robots.txt, attempts and retries), [`hops`] one attempt (politeness slot, request,
//! redirects), [`robots`] the robots.txt of each origin, [`api`] API calls, and
//! [`caching`] what the fetcher reads from and writes to the cache, [`limits`] what the
//! fetcher's limits make of what the cache holds.

mod api;
mod caching;
mod hops;
mod limits;
mod robots;
mod run;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rip_core::{ErrorCategory, ExpectedSource, SiteFetch};
use tokio::sync::OnceCell;
use tokio::time::Instant;
use url::Url;

use crate::cache::DiskCache;
use crate::classify::{Classification, Classifier};
use crate::client::{BuildError, Client};
use crate::config::{CacheMode, HttpConfig};
use crate::outcome::{FetchFailure, Fetched, Outcome, RequestStats, Stats, StatsSnapshot};
use crate::politeness::Politeness;
use crate::slots::{FileSlots, MemorySlots, SlotStore};

/// Per-fetch options.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Do not start before this instant (a ref's `notBefore`).
    pub not_before: Option<DateTime<Utc>>,
    /// Skip the robots.txt check for this URL (the fetcher's setting applies otherwise).
    pub ignore_robots: bool,
}

#[derive(Debug)]
struct Inner {
    cfg: HttpConfig,
    client: Client,
    classifier: Classifier,
    politeness: Politeness,
    cache: Option<DiskCache>,
    robots: Mutex<HashMap<String, Arc<OnceCell<robots::RobotsEntry>>>>,
    stats: Stats,
    tap: std::sync::OnceLock<Arc<dyn crate::wire::WireTap>>,
}

/// The HTTP stack of a stage. Cheap to clone (shared state inside); use one per process.
///
/// ```no_run
/// # async fn demo() -> Result<(), rip_http::BuildError> {
/// use rip_http::{Fetcher, HttpConfig, Outcome};
/// let fetcher = Fetcher::new(HttpConfig::default())?;
/// let fetched = fetcher.fetch("http://127.0.0.1:8080/").await;
/// match fetched.outcome {
///     Outcome::Page(resp) => println!("{} bytes", resp.body.len()),
///     Outcome::Failure(f) => println!("{} {}", f.class.category, f.class.message),
///     Outcome::Skipped(s) => println!("skipped: {}", s.reason),
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Fetcher {
    inner: Arc<Inner>,
}

/// The key politeness, robots and the circuit breaker use for a URL: `host:port`.
pub fn host_key(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or("").to_ascii_lowercase(),
        url.port_or_known_default().unwrap_or(0)
    )
}

/// A failure the fetcher decides itself (not classified from a response).
fn failure(category: ErrorCategory, retryable: bool, code: &str, message: String) -> FetchFailure {
    FetchFailure::new(Classification {
        category,
        retryable,
        code: code.to_owned(),
        message,
        retry_after: None,
    })
}

/// A URL the fetcher refuses before any request: a `VALIDATION` failure, `validation.url`.
fn bad_url(message: String) -> FetchFailure {
    failure(ErrorCategory::Validation, false, "validation.url", message)
}

impl Fetcher {
    /// Builds the client, the scheduler (sharing host schedules through
    /// `<cache dir>/hosts/` when a cache folder is set and sharing is on) and the cache.
    /// A `read-only` cache creates nothing: its folder must exist
    /// ([`BuildError::NoCacheFolder`]), and host schedules stay in this process (it
    /// makes no page requests).
    pub fn new(cfg: HttpConfig) -> Result<Self, BuildError> {
        let client = Client::new(&cfg.client)?;
        let read_only = cfg.cache.mode == CacheMode::ReadOnly;
        if let (Some(dir), true) = (&cfg.cache.dir, read_only)
            && !dir.is_dir()
        {
            return Err(BuildError::NoCacheFolder {
                path: dir.clone(),
                from: (cfg.cache.dir_from.clone()).unwrap_or_else(|| "as configured".into()),
            });
        }
        let store: Arc<dyn SlotStore> = match (&cfg.cache.dir, cfg.politeness.shared) {
            (Some(dir), true) if !read_only => {
                let hosts = dir.join("hosts");
                Arc::new(
                    FileSlots::new(&hosts).map_err(|source| BuildError::CacheDir {
                        path: hosts.clone(),
                        source,
                    })?,
                )
            }
            _ => Arc::new(MemorySlots::default()),
        };
        let cache = match (&cfg.cache.dir, cfg.cache.mode) {
            (Some(dir), mode) if mode != CacheMode::Off => Some(DiskCache::new(dir)),
            _ => None,
        };
        Ok(Self {
            inner: Arc::new(Inner {
                classifier: Classifier::new(cfg.rules.clone()),
                politeness: Politeness::new(cfg.politeness.clone(), store),
                client,
                cache,
                robots: Mutex::new(HashMap::new()),
                stats: Stats::default(),
                tap: std::sync::OnceLock::new(),
                cfg,
            }),
        })
    }

    /// Tells `tap` of every request this fetcher (and its clones) sends from now on, and
    /// what came back. One tap a fetcher: `false` (and `tap` unused) when one is set.
    pub fn set_tap(&self, tap: Arc<dyn crate::wire::WireTap>) -> bool {
        self.inner.tap.set(tap).is_ok()
    }

    /// How long requests to `host` (a [`host_key`]) are held from now: by a Retry-After, a
    /// backoff or an open circuit, whichever ends last (zero when free). What a process
    /// handing the host to another (a shared crawl) passes on, with [`hold`](Self::hold).
    pub fn held_for(&self, host: &str) -> Duration {
        let politeness = &self.inner.politeness;
        let circuit = politeness.circuit(host).map(|c| c.remaining);
        politeness.held_for(host).max(circuit.unwrap_or_default())
    }

    /// How long from now until a request to `host` (a [`host_key`]) could start without
    /// waiting for its gap (with its robots.txt Crawl-delay) or a hold: what a caller
    /// choosing which host to serve next reads. A read: nothing is reserved, so two callers
    /// may both see zero, and the second then waits in the fetch as before.
    pub fn ready_in(&self, host: &str) -> Duration {
        self.inner.politeness.ready_in(host)
    }

    /// The smallest time between two requests to `host` (a [`host_key`]): the configured
    /// gap, or the host's robots.txt Crawl-delay when larger (jitter not included).
    pub fn gap(&self, host: &str) -> Duration {
        self.inner.politeness.gap(host)
    }

    /// Holds `host` for `wait` from now: no request to it starts before (a hold another
    /// process had on it, see [`held_for`](Self::held_for)).
    pub fn hold(&self, host: &str, wait: Duration) {
        self.inner.politeness.throttle(host, wait);
    }

    /// The configuration in use.
    pub fn config(&self) -> &HttpConfig {
        &self.inner.cfg
    }

    /// Lets the crawl into the networks of start URL `url` (see [`crate::network`]): a
    /// crawl of `http://127.0.0.1:8080/` may go on within loopback, one of public start
    /// URLs never leaves the public internet. Nothing happens unless the policy is guarded.
    pub fn admit_start(&self, url: &Url) {
        self.inner.client.policy().admit_start(url);
    }

    /// Admits the networks `r` may be fetched in, before it is: a ref without a `parent`
    /// was named by a person (an argument, a list of URLs, a crawl's start), so it is a
    /// start URL (a MediaWiki ref's is its `wikiApi`, the endpoint fetched: its article
    /// URL is built from what the wiki says); a ref found on a page admits the network of
    /// that page, which a stage before fetched under the same policy, when its host is an
    /// IP literal or `localhost` (a name of the page is not trusted: its DNS may answer
    /// otherwise now, which is how rebinding works). A link a stranger wrote is therefore
    /// held to the networks its pipeline started in.
    pub fn admit_ref(&self, r: &rip_core::Ref) {
        let policy = self.inner.client.policy();
        let parsed = |u: &str| Url::parse(u).ok();
        match (&r.context.parent, &r.context.wiki_api) {
            (Some(parent), _) => {
                if let Some(p) = parsed(parent) {
                    policy.admit_fixed(&p);
                }
            }
            (None, Some(api)) => (parsed(api).iter()).for_each(|u| policy.admit_start(u)),
            (None, None) => (parsed(&r.url).iter()).for_each(|u| policy.admit_start(u)),
        }
    }

    /// The network policy requests are held to.
    pub fn network(&self) -> &crate::network::NetworkPolicy {
        self.inner.client.policy()
    }

    /// Counters over every fetch so far.
    pub fn stats(&self) -> StatsSnapshot {
        self.inner.stats.snapshot()
    }

    /// Hosts whose circuit breaker is open now.
    pub fn circuits_open(&self) -> usize {
        self.inner.politeness.circuits_open()
    }

    /// Fetches `url` (see the crate docs for the path it takes).
    pub async fn fetch(&self, url: &str) -> Fetched {
        self.fetch_with(url, &FetchOptions::default()).await
    }

    /// Fetches `url` with options.
    pub async fn fetch_with(&self, url: &str, opts: &FetchOptions) -> Fetched {
        self.fetch_target(url, None, opts).await
    }

    /// Fetches `url`, which the caller has parsed already from `given`, with options: as
    /// [`Fetcher::fetch_with`] of `given` does, without parsing it again. `given` is the
    /// URL as the caller has it, its identity (the cache key, the `url` of its records);
    /// `url` must be what [`Url::parse`] makes of it.
    pub async fn fetch_parsed(&self, given: &str, url: &Url, opts: &FetchOptions) -> Fetched {
        self.fetch_target(given, Some(url), opts).await
    }

    /// A fetch of `given` (parsed here unless `parsed`), counted in the fetcher's stats.
    async fn fetch_target(
        &self,
        given: &str,
        parsed: Option<&Url>,
        opts: &FetchOptions,
    ) -> Fetched {
        let robots = self.inner.cfg.robots && !opts.ignore_robots;
        let fetched = self.run(given, parsed, opts.not_before, robots).await;
        self.count(&fetched);
        fetched
    }

    /// Adds a fetch to the counters of [`Fetcher::stats`].
    fn count(&self, fetched: &Fetched) {
        let s = &self.inner.stats;
        Stats::add(&s.fetches, 1);
        Stats::add(&s.retries, u64::from(fetched.stats.retries));
        match &fetched.outcome {
            Outcome::Page(p) => {
                Stats::add(&s.pages, 1);
                if p.truncated {
                    Stats::add(&s.truncated, 1);
                }
            }
            Outcome::Failure(f) => s.failure(f.class.category),
            Outcome::Skipped(k) => {
                Stats::add(&s.skipped, 1);
                if k.source == ExpectedSource::Robots {
                    Stats::add(&s.robots_denied, 1);
                }
            }
        }
    }

    /// `given` as a URL the fetcher may request: at most `max_url_len` bytes, http(s) with
    /// a host; parsed here unless the caller did. Else a `validation.url` failure.
    #[allow(clippy::result_large_err)] // built once per fetch, returned as the outcome
    fn target<'u>(
        &self,
        given: &str,
        parsed: Option<&'u Url>,
    ) -> Result<Cow<'u, Url>, FetchFailure> {
        let max = self.inner.cfg.client.max_url_len;
        if given.len() > max {
            return Err(bad_url(format!(
                "URL is {} bytes long (limit {max})",
                given.len()
            )));
        }
        let url = match parsed {
            Some(url) => Cow::Borrowed(url),
            None => {
                Cow::Owned(Url::parse(given).map_err(|e| bad_url(format!("invalid URL: {e}")))?)
            }
        };
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Err(bad_url(format!("not an http(s) URL with a host: {given}")));
        }
        Ok(url)
    }

    /// The site fetch `stats` describe, made by this fetcher's stage: for callers that
    /// gather the requests of one response themselves (an API answer split per item).
    pub fn site_fetch(&self, stats: &RequestStats) -> SiteFetch {
        SiteFetch {
            fetched_by: self.inner.cfg.stage.clone(),
            http_attempts: stats.http_attempts,
            statuses: stats.statuses.clone(),
            faults: stats.faults.clone(),
            waited_ms: stats.retry_waited.as_millis() as u64,
            latency_ms: stats.latency.as_millis() as u64,
            elapsed_ms: stats.elapsed.as_millis() as u64,
        }
    }

    /// The site fetch of a run whose requests started at `start` (after its `notBefore`).
    fn site_fetch_since(&self, stats: &RequestStats, start: Instant) -> SiteFetch {
        let mut site = self.site_fetch(stats);
        site.elapsed_ms = start.elapsed().as_millis() as u64;
        site
    }
}
