//! API calls: one request under the fetch path's politeness, retries and classification,
//! without robots.txt and without the cache.

use rip_core::ErrorCategory;
use tokio::time::Instant;

use super::hops::Hop;
use super::{Fetcher, failure};
use crate::classify::Classification;
use crate::outcome::{FetchFailure, Fetched, Outcome, RequestStats, Response, Stats};
use crate::retry::Backoff;

/// Reads a 2xx answer of an API and may call it a failure.
type Check<'a> = dyn Fn(&Response) -> Option<Classification> + Send + Sync + 'a;

impl Fetcher {
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
        let outcome = match self.target(url, None) {
            Ok(url) => self.api_attempts(&url, form, check, &mut stats).await,
            Err(f) => Outcome::Failure(f),
        };
        stats.elapsed = start.elapsed();
        Stats::add(&self.inner.stats.retries, u64::from(stats.retries));
        Fetched { outcome, stats }
    }

    /// Attempts until an answer passes `check`, or a failure is not retried.
    async fn api_attempts(
        &self,
        url: &url::Url,
        form: Option<&str>,
        check: &Check<'_>,
        stats: &mut RequestStats,
    ) -> Outcome {
        let mut backoff = Backoff::new(&self.inner.cfg.retry);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (failure, at) = match self.hops(url, None, false, form, stats).await {
                Hop::Page(resp, at) => match check(&resp) {
                    None => return Outcome::Page(resp),
                    Some(class) => (refused(class, resp), at),
                },
                Hop::Skip(s) => return Outcome::Skipped(s),
                Hop::Failure(f, at) => (f, at),
                // `hops` answers NotModified only to a conditional request; API calls send
                // none, so this is a server answering 304 out of turn.
                Hop::NotModified => (
                    failure(
                        ErrorCategory::Validation,
                        false,
                        "validation.notModified",
                        "304 Not Modified to an unconditional API request".into(),
                    ),
                    url.clone(),
                ),
            };
            if !self
                .before_retry(&at, &failure, attempt, &mut backoff, stats)
                .await
            {
                return Outcome::Failure(failure);
            }
        }
    }
}

/// A 2xx answer `check` called a failure, keeping what an error response keeps.
fn refused(class: Classification, resp: Response) -> FetchFailure {
    let mut f = FetchFailure::new(class);
    f.status = Some(resp.status);
    f.content_type = resp.content_type().map(str::to_owned);
    let keep = resp.body.len().min(crate::client::MAX_ERROR_BODY);
    f.body = Some(resp.body.slice(..keep));
    f.final_url = Some(resp.final_url);
    f
}
