//! What a fetch returns: [`Fetched`] = an [`Outcome`] (a [`Response`], a [`FetchFailure`]
//! or a [`Skip`]) plus its [`RequestStats`]; and the [`Stats`] a fetcher accumulates.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use rip_core::{ErrorCategory, ExpectedSource, SiteFetch};

use crate::classify::Classification;

/// A successful (2xx) response, from the network or the cache.
#[derive(Debug, Clone)]
pub struct Response {
    /// Where redirects led.
    pub final_url: String,
    /// The final status.
    pub status: u16,
    /// Response headers, lower-case names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body after decompression, at most the body limit.
    pub body: Bytes,
    /// The body was cut at the limit.
    pub truncated: bool,
    /// The redirect chain, first hop first (the URLs that answered with a redirect).
    pub redirects: Vec<String>,
    /// When the response arrived (for a cache hit: when it was first fetched).
    pub fetched_at: DateTime<Utc>,
}

impl Response {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `Content-Type` header.
    pub fn content_type(&self) -> Option<&str> {
        self.header("content-type")
    }
}

/// A failed fetch, classified. Retries are done when this is returned.
#[derive(Debug, Clone)]
pub struct FetchFailure {
    /// Category, retryability, code, message, Retry-After hint.
    pub class: Classification,
    /// The status of the last response, when there was one.
    pub status: Option<u16>,
    /// The URL the last request went to.
    pub final_url: Option<String>,
    /// The `Content-Type` of the failed response.
    pub content_type: Option<String>,
    /// Its body, at most 64 KiB (error pages often carry a canonical link).
    pub body: Option<Bytes>,
}

impl FetchFailure {
    pub(crate) fn new(class: Classification) -> Self {
        Self {
            class,
            status: None,
            final_url: None,
            content_type: None,
            body: None,
        }
    }

    /// The category.
    pub fn category(&self) -> ErrorCategory {
        self.class.category
    }
}

/// A URL deliberately not fetched: robots.txt disallows it, or a redirect left the scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// For a person, e.g. `disallowed by robots.txt`.
    pub reason: String,
    /// What decided.
    pub source: ExpectedSource,
    /// The rule that matched (`Disallow: /private/`) or the `Location` out of scope.
    pub rule: Option<String>,
    /// The status that led here (a redirect's), when there was one.
    pub status: Option<u16>,
}

/// The three ways a fetch ends.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A 2xx response.
    Page(Response),
    /// A classified failure.
    Failure(FetchFailure),
    /// Not fetched, on purpose.
    Skipped(Skip),
}

/// What one fetch cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestStats {
    /// HTTP requests made (redirect hops and retries included; 0 from cache).
    pub http_attempts: u32,
    /// Retries (attempts after the first).
    pub retries: u32,
    /// Served from the cache without a request.
    pub from_cache: bool,
    /// A stale entry confirmed by a 304.
    pub revalidated: bool,
    /// Wall time, waits included.
    pub elapsed: Duration,
    /// Time spent waiting for politeness, backoff, Retry-After and a `notBefore`.
    pub waited: Duration,
    /// Of `waited`, the time before retries: backoff, Retry-After, and the politeness
    /// slot of each attempt after the first.
    pub retry_waited: Duration,
    /// The status of each HTTP request, in order; `None` when it got no response.
    pub statuses: Vec<Option<u16>>,
    /// The classification code of each failed attempt that was retried, in order.
    pub faults: Vec<String>,
    /// Time the last attempt's requests took, from sending to the last body byte
    /// (redirect hops included, waits excluded): the site's latency when it succeeded.
    pub latency: Duration,
    /// The fetch that went to the site for the response: this one's (when it made the
    /// requests and succeeded), or for a cache hit the one stored with the entry (`None`
    /// for entries written before it was recorded, and for failures and skips).
    pub site: Option<SiteFetch>,
}

/// A fetch's result and cost. Never a panic, never an `Err`: every failure is data.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// How it ended.
    pub outcome: Outcome,
    /// What it cost.
    pub stats: RequestStats,
}

/// Counters over all fetches of a [`Fetcher`](crate::Fetcher).
#[derive(Debug, Default)]
pub struct Stats {
    pub(crate) fetches: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) body_bytes: AtomicU64,
    pub(crate) cache_hits: AtomicU64,
    pub(crate) revalidated: AtomicU64,
    pub(crate) retries: AtomicU64,
    pub(crate) cache_corrupt: AtomicU64,
    pub(crate) robots_denied: AtomicU64,
    pub(crate) skipped: AtomicU64,
    pub(crate) pages: AtomicU64,
    pub(crate) truncated: AtomicU64,
    pub(crate) failures: [AtomicU64; 8],
}

/// A copy of [`Stats`] at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatsSnapshot {
    /// Fetches finished.
    pub fetches: u64,
    /// HTTP requests sent (robots.txt, hops and retries included).
    pub requests: u64,
    /// Bytes of response bodies received over the network (after decompression, as far as
    /// the body limit let them in; cache hits not counted).
    pub body_bytes: u64,
    /// Fetches served from the cache without a request.
    pub cache_hits: u64,
    /// Fetches served from the cache after a 304.
    pub revalidated: u64,
    /// Retries.
    pub retries: u64,
    /// Cache entries found corrupt (treated as misses).
    pub cache_corrupt: u64,
    /// URLs robots.txt disallowed.
    pub robots_denied: u64,
    /// URLs skipped (robots or redirect scope).
    pub skipped: u64,
    /// Pages returned.
    pub pages: u64,
    /// Pages cut at the body limit.
    pub truncated: u64,
    /// Failures by category (only non-zero ones).
    pub failures: Vec<(ErrorCategory, u64)>,
}

impl StatsSnapshot {
    /// Failures of all categories.
    pub fn failed(&self) -> u64 {
        self.failures.iter().map(|(_, n)| n).sum()
    }

    /// `(name, value)` counters for a `summary` record: `cacheHits`, `revalidated`,
    /// `retries`, `requests`, `bodyBytes`, `robotsDenied`, `failed.THROTTLED`, …
    pub fn counters(&self) -> Vec<(String, u64)> {
        let mut v = vec![
            ("requests".to_owned(), self.requests),
            ("bodyBytes".to_owned(), self.body_bytes),
            ("cacheHits".to_owned(), self.cache_hits),
            ("revalidated".to_owned(), self.revalidated),
            ("retries".to_owned(), self.retries),
            ("robotsDenied".to_owned(), self.robots_denied),
            ("truncated".to_owned(), self.truncated),
            ("cacheCorrupt".to_owned(), self.cache_corrupt),
        ];
        for (c, n) in &self.failures {
            v.push((format!("failed.{c}"), *n));
        }
        v
    }
}

impl Stats {
    pub(crate) fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn failure(&self, c: ErrorCategory) {
        let i = ErrorCategory::ALL.iter().position(|x| *x == c).unwrap_or(7);
        Self::add(&self.failures[i], 1);
    }

    /// A consistent-enough copy.
    pub fn snapshot(&self) -> StatsSnapshot {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        StatsSnapshot {
            fetches: g(&self.fetches),
            requests: g(&self.requests),
            body_bytes: g(&self.body_bytes),
            cache_hits: g(&self.cache_hits),
            revalidated: g(&self.revalidated),
            retries: g(&self.retries),
            cache_corrupt: g(&self.cache_corrupt),
            robots_denied: g(&self.robots_denied),
            skipped: g(&self.skipped),
            pages: g(&self.pages),
            truncated: g(&self.truncated),
            failures: ErrorCategory::ALL
                .iter()
                .zip(&self.failures)
                .filter(|(_, n)| g(n) > 0)
                .map(|(c, n)| (*c, g(n)))
                .collect(),
        }
    }
}
