//! [`Fetcher`]: the one entry point. A URL goes through cache → robots.txt → politeness →
//! request (redirects followed by hand) → classification → retry, and comes back as a
//! [`Fetched`]: a page, a classified failure or a deliberate skip, with what it cost.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};
use rip_core::{ErrorCategory, ExpectedSource, SiteFetch};
use tokio::sync::OnceCell;
use tokio::time::Instant;
use url::Url;

use crate::cache::{CacheEntry, CacheMeta, DiskCache, Lookup, now_ms};
use crate::classify::{Classification, Classifier, Observation};
use crate::client::{BuildError, Client, Exchange};
use crate::config::{CacheMode, HttpConfig, RedirectScope};
use crate::outcome::{
    FetchFailure, Fetched, Outcome, RequestStats, Response, Skip, Stats, StatsSnapshot,
};
use crate::politeness::Politeness;
use crate::retry::Backoff;
use crate::robots::{Robots, RobotsRules, Verdict, robots_target};
use crate::slots::{FileSlots, MemorySlots, SlotStore};

/// How long an unreachable robots.txt is remembered before it is asked for again.
const ROBOTS_RETRY: Duration = Duration::from_secs(30);

/// Per-fetch options.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Do not start before this instant (a ref's `notBefore`).
    pub not_before: Option<DateTime<Utc>>,
    /// Skip the robots.txt check for this URL (the fetcher's setting applies otherwise).
    pub ignore_robots: bool,
}

#[derive(Debug, Clone)]
enum RobotsEntry {
    Rules(Arc<dyn RobotsRules>),
    Unreachable(FetchFailure, Instant),
}

#[derive(Debug)]
struct Inner {
    cfg: HttpConfig,
    client: Client,
    classifier: Classifier,
    politeness: Politeness,
    cache: Option<DiskCache>,
    robots: Mutex<HashMap<String, Arc<OnceCell<RobotsEntry>>>>,
    stats: Stats,
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

enum Hop {
    Page(Response),
    NotModified,
    Failure(FetchFailure),
    Skip(Skip),
}

/// The key politeness, robots and the circuit breaker use for a URL: `host:port`.
pub fn host_key(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or("").to_ascii_lowercase(),
        url.port_or_known_default().unwrap_or(0)
    )
}

fn failure(category: ErrorCategory, retryable: bool, code: &str, message: String) -> FetchFailure {
    FetchFailure::new(Classification {
        category,
        retryable,
        code: code.to_owned(),
        message,
        retry_after: None,
    })
}

fn in_scope(scope: &RedirectScope, start: &Url, next: &Url) -> bool {
    let host = next.host_str().unwrap_or("").to_ascii_lowercase();
    match scope {
        RedirectScope::Any => true,
        RedirectScope::SameHost => start
            .host_str()
            .is_some_and(|h| h.eq_ignore_ascii_case(&host)),
        RedirectScope::Domain(d) => {
            let d = d.trim_start_matches('.').to_ascii_lowercase();
            host == d
                || host.ends_with(&format!(".{d}"))
                || start
                    .host_str()
                    .is_some_and(|h| h.eq_ignore_ascii_case(&host))
        }
    }
}

impl Fetcher {
    /// Builds the client, the scheduler (sharing host schedules through
    /// `<cache dir>/hosts/` when a cache folder is set and sharing is on) and the cache.
    pub fn new(cfg: HttpConfig) -> Result<Self, BuildError> {
        let client = Client::new(&cfg.client)?;
        let store: Arc<dyn SlotStore> = match (&cfg.cache.dir, cfg.politeness.shared) {
            (Some(dir), true) => {
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
                cfg,
            }),
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &HttpConfig {
        &self.inner.cfg
    }

    /// Counters over every fetch so far.
    pub fn stats(&self) -> StatsSnapshot {
        self.inner.stats.snapshot()
    }

    /// Fetches `url` (see the crate docs for the path it takes).
    pub async fn fetch(&self, url: &str) -> Fetched {
        self.fetch_with(url, &FetchOptions::default()).await
    }

    /// Fetches `url` with options.
    pub async fn fetch_with(&self, url: &str, opts: &FetchOptions) -> Fetched {
        let robots = self.inner.cfg.robots && !opts.ignore_robots;
        let fetched = self.run(url, opts.not_before, robots).await;
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
        fetched
    }

    /// The robots.txt rules for `url`'s origin (fetched once per origin and remembered),
    /// or the failure that made it unreachable. A 4xx for robots.txt allows everything.
    pub async fn robots(&self, url: &Url) -> Result<Arc<dyn RobotsRules>, FetchFailure> {
        let origin = url.origin().ascii_serialization();
        let cell = {
            let mut map = self.inner.robots.lock().unwrap_or_else(|p| p.into_inner());
            let cell = map.entry(origin.clone()).or_default();
            if let Some(RobotsEntry::Unreachable(_, at)) = cell.get()
                && at.elapsed() > ROBOTS_RETRY
            {
                *cell = Arc::new(OnceCell::new());
            }
            cell.clone()
        };
        let entry = cell.get_or_init(|| self.load_robots(url)).await;
        match entry {
            RobotsEntry::Rules(r) => Ok(r.clone()),
            RobotsEntry::Unreachable(f, _) => Err(f.clone()),
        }
    }

    async fn load_robots(&self, url: &Url) -> RobotsEntry {
        let mut robots_url = url.clone();
        robots_url.set_path("/robots.txt");
        robots_url.set_query(None);
        robots_url.set_fragment(None);
        let fetched = Box::pin(self.run(robots_url.as_str(), None, false)).await;
        match fetched.outcome {
            Outcome::Page(resp) => {
                let rules = Robots::parse(&resp.body, &self.inner.cfg.client.robots_agent);
                if let Some(d) = rules.crawl_delay() {
                    self.inner.politeness.set_crawl_delay(&host_key(url), d);
                }
                RobotsEntry::Rules(Arc::new(rules))
            }
            Outcome::Skipped(_) => RobotsEntry::Rules(Arc::new(Robots::allow_all())),
            Outcome::Failure(f)
                if f.status
                    .is_some_and(|s| (400..500).contains(&s) && s != 429) =>
            {
                RobotsEntry::Rules(Arc::new(Robots::allow_all()))
            }
            Outcome::Failure(mut f) => {
                f.class.message = format!("robots.txt unreachable: {}", f.class.message);
                f.class.code = "robots.unreachable".into();
                f.class.retryable = true;
                RobotsEntry::Unreachable(f, Instant::now())
            }
        }
    }

    async fn robots_check(&self, url: &Url) -> Result<Option<Skip>, FetchFailure> {
        if url.path() == "/robots.txt" {
            return Ok(None);
        }
        let rules = self.robots(url).await?;
        Ok(match rules.check(&robots_target(url)) {
            Verdict::Allowed => None,
            Verdict::Disallowed { rule } => Some(Skip {
                reason: "disallowed by robots.txt".into(),
                source: ExpectedSource::Robots,
                rule: Some(rule),
                status: None,
            }),
        })
    }

    #[allow(clippy::result_large_err)] // built once per fetch, returned as the outcome
    fn parse_url(&self, url: &str) -> Result<Url, FetchFailure> {
        let max = self.inner.cfg.client.max_url_len;
        if url.len() > max {
            return Err(failure(
                ErrorCategory::Validation,
                false,
                "validation.url",
                format!("URL is {} bytes long (limit {max})", url.len()),
            ));
        }
        let parsed = Url::parse(url).map_err(|e| {
            failure(
                ErrorCategory::Validation,
                false,
                "validation.url",
                format!("invalid URL: {e}"),
            )
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(failure(
                ErrorCategory::Validation,
                false,
                "validation.url",
                format!("not an http(s) URL with a host: {url}"),
            ));
        }
        Ok(parsed)
    }

    /// The cache's work (an `fstat` of its index, a read or two appends to open files)
    /// runs on the calling runtime thread, as the politeness slot files do. Handing each
    /// lookup and write to tokio's blocking pool cost more CPU than the fetch itself: with
    /// 64 fetches in flight the pool grew to 30-odd threads and every hand-off was a futex
    /// wake and a context switch (crawl bench, with the earlier file-per-URL cache: 310-460
    /// µs of CPU per page against 225-235 inline). A stalled disk therefore stalls that
    /// runtime thread; the others go on.
    fn cache_get(&self, url: &str) -> Option<Lookup> {
        self.inner.cache.as_ref().map(|cache| cache.get(url))
    }

    async fn run(&self, url_str: &str, not_before: Option<DateTime<Utc>>, robots: bool) -> Fetched {
        let start = Instant::now();
        let mut stats = RequestStats::default();
        let outcome = self
            .run_inner(url_str, not_before, robots, &mut stats)
            .await;
        stats.elapsed = start.elapsed();
        Fetched { outcome, stats }
    }

    async fn run_inner(
        &self,
        url_str: &str,
        not_before: Option<DateTime<Utc>>,
        robots: bool,
        stats: &mut RequestStats,
    ) -> Outcome {
        let cfg = &self.inner.cfg;
        let url = match self.parse_url(url_str) {
            Ok(u) => u,
            Err(f) => return Outcome::Failure(f),
        };
        if let Some(nb) = not_before
            && let Ok(wait) = (nb - Utc::now()).to_std()
        {
            stats.waited += wait;
            tokio::time::sleep(wait).await;
        }
        // The site fetch starts here: a `notBefore` is the pipeline's wait, not the site's.
        let site_start = Instant::now();

        let mode = cfg.cache.mode;
        let mut stale: Option<CacheEntry> = None;
        if matches!(mode, CacheMode::ReadWrite | CacheMode::ReadOnly) {
            match self.cache_get(url_str) {
                Some(Lookup::Hit(entry)) => {
                    if mode == CacheMode::ReadOnly || entry.is_fresh(cfg.cache.ttl) {
                        stats.from_cache = true;
                        stats.site = entry.meta.site_fetch.clone();
                        Stats::add(&self.inner.stats.cache_hits, 1);
                        return Outcome::Page(from_entry(entry));
                    }
                    stale = Some(entry);
                }
                Some(Lookup::Corrupt(why)) => {
                    Stats::add(&self.inner.stats.cache_corrupt, 1);
                    tracing::warn!("corrupt cache entry for {url_str}, treated as a miss: {why}");
                }
                Some(Lookup::Miss) | None => {}
            }
            if mode == CacheMode::ReadOnly && self.inner.cache.is_some() {
                return Outcome::Failure(failure(
                    ErrorCategory::Resource,
                    false,
                    "cache.miss",
                    "not in the cache (cache mode read-only: no network request)".into(),
                ));
            }
        }

        if robots && mode != CacheMode::ReadOnly {
            match self.robots_check(&url).await {
                Ok(None) => {}
                Ok(Some(skip)) => return Outcome::Skipped(skip),
                Err(f) => return Outcome::Failure(f),
            }
        }

        let mut backoff = Backoff::new(&cfg.retry);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let conditional = stale.as_ref().filter(|e| e.has_validators());
            match self.hops(&url, conditional, robots, None, stats).await {
                Hop::Page(resp) => {
                    let site = self.site_fetch_since(stats, site_start);
                    self.store(url_str, &resp, Some(&site));
                    stats.site = Some(site);
                    return Outcome::Page(resp);
                }
                Hop::NotModified => {
                    let entry = stale
                        .take()
                        .expect("a 304 only answers a conditional request");
                    stats.revalidated = true;
                    Stats::add(&self.inner.stats.revalidated, 1);
                    let site = self.site_fetch_since(stats, site_start);
                    if let Some(cache) = &self.inner.cache
                        && let Err(e) = cache.refresh(&entry, Some(site.clone()))
                    {
                        tracing::warn!("cannot refresh the cache entry for {url}: {e}");
                    }
                    stats.site = Some(site);
                    return Outcome::Page(from_entry(entry));
                }
                Hop::Skip(s) => return Outcome::Skipped(s),
                Hop::Failure(f) => {
                    if !self
                        .before_retry(&url, &f, attempt, &mut backoff, stats)
                        .await
                    {
                        return Outcome::Failure(f);
                    }
                }
            }
        }
    }

    /// After a failed attempt: whether to try again (retryable, attempts left, no
    /// Retry-After past `give_up_after`), having waited for it. A Retry-After hint or a
    /// THROTTLED failure pushes back the whole host's schedule (the next attempt's
    /// politeness slot comes after it); other failures sleep the backoff delay.
    async fn before_retry(
        &self,
        url: &Url,
        f: &FetchFailure,
        attempt: u32,
        backoff: &mut Backoff,
        stats: &mut RequestStats,
    ) -> bool {
        let cfg = &self.inner.cfg;
        if !f.class.retryable
            || attempt >= cfg.retry.max_attempts.max(1)
            || f.class.code == "circuit.open"
        {
            return false;
        }
        let host = f
            .final_url
            .as_deref()
            .and_then(|u| Url::parse(u).ok())
            .map_or_else(|| host_key(url), |u| host_key(&u));
        let delay = backoff.next_delay();
        let hint = f
            .class
            .retry_after
            .map(|ra| ra.min(cfg.retry.max_retry_after));
        if let (Some(ra), Some(limit)) = (hint, cfg.retry.give_up_after)
            && ra > limit
        {
            self.inner.politeness.throttle(&host, ra);
            return false;
        }
        if hint.is_some() || f.class.category == ErrorCategory::Throttled {
            // The whole host waits, in every process sharing its schedule; the
            // next attempt's politeness slot comes after it.
            self.inner.politeness.throttle(&host, hint.unwrap_or(delay));
        } else {
            stats.waited += delay;
            stats.retry_waited += delay;
            tokio::time::sleep(delay).await;
        }
        stats.retries += 1;
        stats.faults.push(f.class.code.clone());
        true
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

    /// The site fetch of a [`Fetcher::run`] whose requests started at `start` (after
    /// its `notBefore`).
    fn site_fetch_since(&self, stats: &RequestStats, start: Instant) -> SiteFetch {
        let mut site = self.site_fetch(stats);
        site.elapsed_ms = start.elapsed().as_millis() as u64;
        site
    }

    /// Sends one API request — GET `url`, or POST `form` to it — under the same
    /// politeness, retries and classification as [`Fetcher::fetch`], but without
    /// robots.txt (an API is called, not crawled) and without the cache (the caller
    /// caches what it makes of the answer, see [`Fetcher::cached`] and
    /// [`Fetcher::remember`]).
    ///
    /// `check` reads each 2xx answer and may call it a failure: an API that reports its
    /// errors in a 200 body (MediaWiki's `maxlag`) says so there, and a retryable verdict
    /// is retried like an HTTP failure, its `retry_after` honoured for the whole host.
    pub async fn call_api(
        &self,
        url: &str,
        form: Option<&str>,
        check: &(dyn Fn(&Response) -> Option<Classification> + Send + Sync),
    ) -> Fetched {
        let start = Instant::now();
        let mut stats = RequestStats::default();
        let outcome = self.api_inner(url, form, check, &mut stats).await;
        stats.elapsed = start.elapsed();
        Stats::add(&self.inner.stats.retries, u64::from(stats.retries));
        Fetched { outcome, stats }
    }

    async fn api_inner(
        &self,
        url_str: &str,
        form: Option<&str>,
        check: &(dyn Fn(&Response) -> Option<Classification> + Send + Sync),
        stats: &mut RequestStats,
    ) -> Outcome {
        let url = match self.parse_url(url_str) {
            Ok(u) => u,
            Err(f) => return Outcome::Failure(f),
        };
        let mut backoff = Backoff::new(&self.inner.cfg.retry);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let failure = match self.hops(&url, None, false, form, stats).await {
                Hop::Page(resp) => match check(&resp) {
                    None => return Outcome::Page(resp),
                    Some(class) => {
                        let mut f = FetchFailure::new(class);
                        f.status = Some(resp.status);
                        f.content_type = resp.content_type().map(str::to_owned);
                        let keep = resp.body.len().min(crate::client::MAX_ERROR_BODY);
                        f.body = Some(resp.body.slice(..keep));
                        f.final_url = Some(resp.final_url);
                        f
                    }
                },
                Hop::Skip(s) => return Outcome::Skipped(s),
                Hop::Failure(f) => f,
                // `hops` answers NotModified only to a conditional request; API calls send
                // none, so this is a server answering 304 out of turn.
                Hop::NotModified => failure(
                    ErrorCategory::Validation,
                    false,
                    "validation.notModified",
                    "304 Not Modified to an unconditional API request".into(),
                ),
            };
            if !self
                .before_retry(&url, &failure, attempt, &mut backoff, stats)
                .await
            {
                return Outcome::Failure(failure);
            }
        }
    }

    /// The cache's fresh entry for `url` as a response (counted as a cache hit), as a
    /// fetch would serve it, with the site fetch stored with it (`None` for entries of
    /// earlier versions): `None` when it is not cached, stale, corrupt, or the cache
    /// mode does not read. In `read-only` mode any entry, fresh or stale, is served.
    pub async fn cached(&self, url: &str) -> Option<(Response, Option<SiteFetch>)> {
        let cfg = &self.inner.cfg;
        let mode = cfg.cache.mode;
        if !matches!(mode, CacheMode::ReadWrite | CacheMode::ReadOnly) {
            return None;
        }
        match self.cache_get(url)? {
            Lookup::Hit(entry) if mode == CacheMode::ReadOnly || entry.is_fresh(cfg.cache.ttl) => {
                Stats::add(&self.inner.stats.cache_hits, 1);
                let site = entry.meta.site_fetch.clone();
                Some((from_entry(entry), site))
            }
            Lookup::Hit(_) | Lookup::Miss => None,
            Lookup::Corrupt(why) => {
                Stats::add(&self.inner.stats.cache_corrupt, 1);
                tracing::warn!("corrupt cache entry for {url}, treated as a miss: {why}");
                None
            }
        }
    }

    /// True when the cache mode is `read-only` with a cache folder: a miss must become a
    /// failure (`cache.miss`), never a request.
    pub fn cache_only(&self) -> bool {
        self.inner.cfg.cache.mode == CacheMode::ReadOnly && self.inner.cache.is_some()
    }

    /// Stores `resp` as the cache entry of `url`, with the site fetch that got it, when
    /// the cache mode writes (what a fetch does with a success; for API callers that
    /// cache per item, see [`Fetcher::site_fetch`]).
    pub async fn remember(&self, url: &str, resp: &Response, site: Option<&SiteFetch>) {
        self.store(url, resp, site);
    }

    /// Writes the entry on this thread (see [`Fetcher::cache_get`]).
    fn store(&self, url: &str, resp: &Response, site: Option<&SiteFetch>) {
        let cfg = &self.inner.cfg;
        let Some(cache) = &self.inner.cache else {
            return;
        };
        if !matches!(cfg.cache.mode, CacheMode::ReadWrite | CacheMode::WriteOnly) {
            return;
        }
        let meta = CacheMeta {
            url: url.to_owned(),
            final_url: resp.final_url.clone(),
            status: resp.status,
            headers: resp.headers.clone(),
            redirects: resp.redirects.clone(),
            fetched_at: resp.fetched_at,
            stored_at_ms: now_ms(),
            etag: resp.header("etag").map(str::to_owned),
            last_modified: resp.header("last-modified").map(str::to_owned),
            truncated: resp.truncated,
            body_len: 0,
            body_sha256: String::new(),
            site_fetch: site.cloned(),
        };
        if let Err(e) = cache.put(meta, &resp.body) {
            tracing::warn!("cannot write the cache entry for {url}: {e}");
        }
    }

    /// One attempt: the request and its redirect hops (a `form` is sent again to each
    /// hop, as for a 307).
    async fn hops(
        &self,
        start: &Url,
        conditional: Option<&CacheEntry>,
        robots: bool,
        form: Option<&str>,
        stats: &mut RequestStats,
    ) -> Hop {
        let cfg = &self.inner.cfg.client;
        stats.latency = Duration::ZERO;
        let mut current = start.clone();
        let mut redirects: Vec<String> = Vec::new();
        let mut seen: HashSet<String> = HashSet::from([start.as_str().to_owned()]);
        loop {
            let host = host_key(&current);
            let permit = match self.inner.politeness.acquire(&host).await {
                Ok(p) => p,
                Err(open) => {
                    let mut f = failure(
                        ErrorCategory::Transient,
                        true,
                        "circuit.open",
                        format!(
                            "circuit open for {host} after repeated failures: resting {:.1}s",
                            open.remaining.as_secs_f64()
                        ),
                    );
                    f.class.retry_after = Some(open.remaining);
                    f.final_url = Some(current.to_string());
                    return Hop::Failure(f);
                }
            };
            stats.waited += permit.waited;
            if stats.retries > 0 {
                // A retry's slot comes after the Retry-After the host was throttled for.
                stats.retry_waited += permit.waited;
            }
            let mut extra: Vec<(&str, String)> = Vec::new();
            if let Some(e) = conditional.filter(|_| redirects.is_empty()) {
                if let Some(etag) = &e.meta.etag {
                    extra.push(("if-none-match", etag.clone()));
                }
                if let Some(lm) = &e.meta.last_modified {
                    extra.push(("if-modified-since", lm.clone()));
                }
            }
            stats.http_attempts += 1;
            Stats::add(&self.inner.stats.requests, 1);
            let sent = Instant::now();
            let exchange = self
                .inner
                .client
                .send(&current, form, &extra, cfg.max_body)
                .await;
            stats.latency += sent.elapsed();
            stats.statuses.push(match &exchange {
                Exchange::Response { status, .. } => Some(*status),
                Exchange::Transport { .. } => None,
            });
            self.inner.politeness.answered(&host);
            drop(permit);
            let (status, headers, body, truncated) = match exchange {
                Exchange::Transport { code, message } => {
                    let c = self.classify(&current, &Observation::Transport { code, message });
                    self.inner.politeness.record(&host, c.retryable);
                    let mut f = FetchFailure::new(c);
                    f.final_url = Some(current.to_string());
                    return Hop::Failure(f);
                }
                Exchange::Response {
                    status,
                    headers,
                    body,
                    truncated,
                } => (status, headers, body, truncated),
            };
            let header = |name: &str| {
                headers
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            };
            if (200..300).contains(&status) {
                self.inner.politeness.record(&host, false);
                return Hop::Page(Response {
                    final_url: current.to_string(),
                    status,
                    headers,
                    body,
                    truncated,
                    redirects,
                    fetched_at: Utc::now(),
                });
            }
            if status == 304 && conditional.is_some() && redirects.is_empty() {
                self.inner.politeness.record(&host, false);
                return Hop::NotModified;
            }
            if (300..400).contains(&status)
                && let Some(location) = header("location")
            {
                self.inner.politeness.record(&host, false);
                let fail = |code: &str, msg: String| {
                    let mut f = failure(ErrorCategory::Validation, false, code, msg);
                    f.status = Some(status);
                    f.final_url = Some(current.to_string());
                    Hop::Failure(f)
                };
                if location.len() > cfg.max_url_len {
                    return fail(
                        "validation.redirect",
                        format!(
                            "Location is {} bytes long (limit {})",
                            location.len(),
                            cfg.max_url_len
                        ),
                    );
                }
                let next = match current.join(&location) {
                    Ok(u) => u,
                    Err(e) => {
                        return fail(
                            "validation.redirect",
                            format!("bad Location `{location}`: {e}"),
                        );
                    }
                };
                if !matches!(next.scheme(), "http" | "https") {
                    return fail(
                        "validation.redirect",
                        format!("redirect to a non-http(s) URL: {next}"),
                    );
                }
                if !seen.insert(next.as_str().to_owned()) {
                    return fail(
                        "validation.redirectLoop",
                        format!("redirect loop: {} → {next}", current),
                    );
                }
                if redirects.len() as u32 >= cfg.max_redirects {
                    return fail(
                        "validation.tooManyRedirects",
                        format!("more than {} redirects", cfg.max_redirects),
                    );
                }
                if !in_scope(&cfg.redirect_scope, start, &next) {
                    return Hop::Skip(Skip {
                        reason: "redirect leaves the allowed scope".into(),
                        source: ExpectedSource::Other,
                        rule: Some(format!("Location: {next}")),
                        status: Some(status),
                    });
                }
                redirects.push(current.to_string());
                if robots {
                    match self.robots_check(&next).await {
                        Ok(None) => {}
                        Ok(Some(skip)) => return Hop::Skip(skip),
                        Err(f) => return Hop::Failure(f),
                    }
                }
                current = next;
                continue;
            }
            let c = self.classify(
                &current,
                &Observation::Status {
                    status,
                    retry_after: header("retry-after").as_deref(),
                },
            );
            self.inner.politeness.record(&host, c.retryable);
            let mut f = FetchFailure::new(c);
            f.status = Some(status);
            f.final_url = Some(current.to_string());
            f.content_type = header("content-type");
            f.body = (!body.is_empty()).then_some(body);
            return Hop::Failure(f);
        }
    }

    fn classify(&self, url: &Url, obs: &Observation<'_>) -> Classification {
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        self.inner
            .classifier
            .classify(&host, obs, SystemTime::now())
    }
}

fn from_entry(entry: CacheEntry) -> Response {
    Response {
        final_url: entry.meta.final_url,
        status: entry.meta.status,
        headers: entry.meta.headers,
        body: entry.body,
        truncated: entry.meta.truncated,
        redirects: entry.meta.redirects,
        fetched_at: entry.meta.fetched_at,
    }
}
