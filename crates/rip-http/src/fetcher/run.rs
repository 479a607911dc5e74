//! The path of one URL: its checks, its `notBefore`, the cache, robots.txt, then attempts
//! until one succeeds or no retry is left.

use std::ops::ControlFlow;

use chrono::{DateTime, Utc};
use rip_core::ErrorCategory;
use tokio::time::Instant;
use url::Url;

use super::caching::Stored;
use super::hops::Hop;
use super::{Fetcher, failure, host_key};
use crate::cache::CacheEntry;
use crate::config::CacheMode;
use crate::outcome::{FetchFailure, Fetched, Outcome, RequestStats, Stats};
use crate::retry::Backoff;

impl Fetcher {
    /// Fetches `given` (parsed here unless `parsed`), robots.txt checked when `robots`.
    pub(super) async fn run(
        &self,
        given: &str,
        parsed: Option<&Url>,
        not_before: Option<DateTime<Utc>>,
        robots: bool,
    ) -> Fetched {
        let start = Instant::now();
        let mut stats = RequestStats::default();
        let outcome = match self.target(given, parsed) {
            Ok(url) => {
                self.run_checked(given, &url, not_before, robots, &mut stats)
                    .await
            }
            Err(f) => Outcome::Failure(f),
        };
        stats.elapsed = start.elapsed();
        Fetched { outcome, stats }
    }

    /// The path of a URL that passed its checks.
    async fn run_checked(
        &self,
        given: &str,
        url: &Url,
        not_before: Option<DateTime<Utc>>,
        robots: bool,
        stats: &mut RequestStats,
    ) -> Outcome {
        wait_for(not_before, stats).await;
        // The site fetch starts here: a `notBefore` is the pipeline's wait, not the site's.
        let site_start = Instant::now();
        let stale = match self.before_network(given, stats) {
            ControlFlow::Break(done) => return done,
            ControlFlow::Continue(stale) => stale,
        };
        // In `read-only` mode nothing reaches this far but a response from the cache.
        if robots && self.inner.cfg.cache.mode != CacheMode::ReadOnly {
            match self.disallowed_by_robots(url).await {
                Ok(None) => {}
                Ok(Some(skip)) => return Outcome::Skipped(skip),
                Err(f) => return Outcome::Failure(f),
            }
        }
        self.attempts(given, url, stale, robots, stats, site_start)
            .await
    }

    /// What the cache settles before any request: a response it serves (fresh, or any
    /// in `read-only` mode), or a `cache.miss` failure in `read-only` mode; else the stale
    /// entry to revalidate, if any.
    fn before_network(
        &self,
        given: &str,
        stats: &mut RequestStats,
    ) -> ControlFlow<Outcome, Option<CacheEntry>> {
        let stale = match self.stored(given) {
            Stored::Fresh(entry) => {
                stats.from_cache = true;
                stats.site = entry.meta.site_fetch.clone();
                return ControlFlow::Break(Outcome::Page(self.serve(entry)));
            }
            Stored::Stale(entry) => Some(entry),
            Stored::Refused(outcome) => {
                stats.from_cache = true;
                return ControlFlow::Break(outcome);
            }
            Stored::Nothing => None,
        };
        if self.cache_only() {
            return ControlFlow::Break(Outcome::Failure(failure(
                ErrorCategory::Resource,
                false,
                "cache.miss",
                "not in the cache (cache mode read-only: no network request)".into(),
            )));
        }
        ControlFlow::Continue(stale)
    }

    /// Attempts until one ends the fetch: a page (stored in the cache), a 304 for the
    /// `stale` entry (refreshed and served), a skip, or a failure not retried.
    async fn attempts(
        &self,
        given: &str,
        url: &Url,
        mut stale: Option<CacheEntry>,
        robots: bool,
        stats: &mut RequestStats,
        site_start: Instant,
    ) -> Outcome {
        let mut backoff = Backoff::new(&self.inner.cfg.retry);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let conditional = stale.as_ref().filter(|e| e.has_validators());
            match self.hops(url, conditional, robots, None, stats).await {
                Hop::Page(resp, _) => {
                    let site = self.site_fetch_since(stats, site_start);
                    self.store(given, &resp, Some(&site));
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
                    self.refresh(url, &entry, &site);
                    stats.site = Some(site);
                    return Outcome::Page(self.entry_response(entry));
                }
                Hop::Skip(s) => return Outcome::Skipped(s),
                Hop::Failure(f, at) => {
                    if !self
                        .before_retry(&at, &f, attempt, &mut backoff, stats)
                        .await
                    {
                        return Outcome::Failure(f);
                    }
                }
            }
        }
    }

    /// After a failed attempt at `at` (the URL the failing request went to): whether to
    /// try again (retryable, attempts left, no Retry-After past `give_up_after`), having
    /// waited for it. A Retry-After hint or a THROTTLED failure pushes back the whole
    /// host's schedule (the next attempt's politeness slot comes after it; a Retry-After
    /// does so on the last attempt too, for the host's other URLs); other failures sleep
    /// the backoff delay.
    pub(super) async fn before_retry(
        &self,
        at: &Url,
        f: &FetchFailure,
        attempt: u32,
        backoff: &mut Backoff,
        stats: &mut RequestStats,
    ) -> bool {
        let cfg = &self.inner.cfg;
        if !f.class.retryable || f.class.code == "circuit.open" {
            return false;
        }
        let host = host_key(at);
        let hint = f
            .class
            .retry_after
            .map(|ra| ra.min(cfg.retry.max_retry_after));
        if attempt >= cfg.retry.max_attempts.max(1) {
            // No retry of this URL, but the site's Retry-After holds for its host: the
            // next URL to it waits too.
            if let Some(ra) = hint {
                self.inner.politeness.throttle(&host, ra);
            }
            return false;
        }
        let delay = backoff.next_delay();
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
}

/// Waits for a `notBefore`, counted as waited.
async fn wait_for(not_before: Option<DateTime<Utc>>, stats: &mut RequestStats) {
    if let Some(nb) = not_before
        && let Ok(wait) = (nb - Utc::now()).to_std()
    {
        stats.waited += wait;
        tokio::time::sleep(wait).await;
    }
}
