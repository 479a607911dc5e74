//! One attempt: the request and its redirect hops, each hop in its host's politeness slot,
//! each `Location` checked (length, scheme, loop, hop count, scope, robots.txt).

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use chrono::Utc;
use rip_core::{ErrorCategory, ExpectedSource};
use tokio::time::Instant;
use url::Url;

use super::{Fetcher, failure, host_key};
use crate::cache::CacheEntry;
use crate::classify::{Classification, Observation};
use crate::client::Exchange;
use crate::config::{ClientConfig, RedirectScope};
use crate::outcome::{FetchFailure, RequestStats, Response, Skip, Stats};
use crate::politeness::Permit;
use crate::wire::{WireAnswer, WireExchange};

/// How one attempt ended.
pub(super) enum Hop {
    /// A 2xx response, and the URL that gave it.
    Page(Response, Url),
    /// A 304 to the conditional request of the first hop.
    NotModified,
    /// A failure, and the URL whose host answers for it (a retry waits on that host).
    Failure(FetchFailure, Url),
    /// Not followed on purpose: out of scope, or robots.txt disallows where it led.
    Skip(Skip),
}

/// The redirect chain of one attempt.
pub(super) struct Chain<'a> {
    /// The URL the attempt started at (redirect scopes are relative to it).
    start: &'a Url,
    /// The URL of the hop being requested.
    current: Url,
    /// The URLs that answered with a redirect, first first.
    redirects: Vec<String>,
    /// Every URL of the chain, for loops.
    seen: HashSet<String>,
}

/// A response of one hop.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Bytes,
    truncated: bool,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Fetcher {
    /// One attempt: the request and its redirect hops (a `form` is sent again to each
    /// hop, as for a 307). `conditional` is the stale entry the first hop revalidates.
    pub(super) async fn hops(
        &self,
        start: &Url,
        conditional: Option<&CacheEntry>,
        robots: bool,
        form: Option<&str>,
        stats: &mut RequestStats,
    ) -> Hop {
        stats.latency = Duration::ZERO;
        let mut chain = Chain::new(start);
        loop {
            let host = host_key(&chain.current);
            let validators = conditional.filter(|_| chain.redirects.is_empty());
            let answer = match self
                .request(&chain.current, &host, validators, form, stats)
                .await
            {
                Ok(answer) => answer,
                Err(f) => return Hop::Failure(f, chain.current),
            };
            if (200..300).contains(&answer.status) {
                self.inner.politeness.record(&host, false);
                return chain.page(answer);
            }
            if answer.status == 304 && validators.is_some() {
                self.inner.politeness.record(&host, false);
                return Hop::NotModified;
            }
            if (300..400).contains(&answer.status)
                && let Some(location) = answer.header("location")
            {
                self.inner.politeness.record(&host, false);
                if let Some(end) = self
                    .redirect(&mut chain, answer.status, location, robots)
                    .await
                {
                    return end;
                }
                continue;
            }
            let f = self.status_failure(&chain.current, &host, answer);
            return Hop::Failure(f, chain.current);
        }
    }

    /// One request to `url` in `host`'s politeness slot, with the validators of a stale
    /// entry; a failure when the host's circuit is open or no response came.
    async fn request(
        &self,
        url: &Url,
        host: &str,
        validators: Option<&CacheEntry>,
        form: Option<&str>,
        stats: &mut RequestStats,
    ) -> Result<Answer, FetchFailure> {
        let permit = self.slot(url, host, stats).await?;
        let extra = validators.map(conditional_headers).unwrap_or_default();
        stats.http_attempts += 1;
        Stats::add(&self.inner.stats.requests, 1);
        let sent = Instant::now();
        let exchange = self
            .inner
            .client
            .send(url, form, &extra, self.inner.cfg.client.max_body)
            .await;
        stats.latency += sent.elapsed();
        self.tap(url, form, &extra, stats.http_attempts, &exchange);
        stats.statuses.push(match &exchange {
            Exchange::Response { status, .. } => Some(*status),
            Exchange::Transport { .. } => None,
        });
        self.inner.politeness.answered(host, &permit);
        drop(permit);
        match exchange {
            Exchange::Response {
                status,
                headers,
                body,
                truncated,
                ..
            } => {
                Stats::add(&self.inner.stats.body_bytes, body.len() as u64);
                Ok(Answer {
                    status,
                    headers,
                    body,
                    truncated,
                })
            }
            Exchange::Transport { code, message } => {
                let c = self.classify(url, &Observation::Transport { code, message });
                self.inner.politeness.record(host, c.retryable);
                let mut f = FetchFailure::new(c);
                f.final_url = Some(url.to_string());
                Err(f)
            }
        }
    }

    /// Tells the tap, if one is set, of the exchange with `url`.
    fn tap(
        &self,
        url: &Url,
        form: Option<&str>,
        extra: &[(&str, String)],
        request_number: u32,
        exchange: &Exchange,
    ) {
        let Some(tap) = self.inner.tap.get() else {
            return;
        };
        // A connection the network policy refused sent nothing: there is nothing to
        // archive (its failure record says why).
        if matches!(exchange, Exchange::Transport { code, .. } if *code == crate::network::DENIED_CODE)
        {
            return;
        }
        let failure = match exchange {
            Exchange::Response {
                status, headers, ..
            } if *status >= 400 => {
                let retry_after = headers
                    .iter()
                    .find(|(k, _)| k == "retry-after")
                    .map(|(_, v)| v.as_str());
                Some(self.classify(
                    url,
                    &Observation::Status {
                        status: *status,
                        retry_after,
                    },
                ))
            }
            Exchange::Response { .. } => None,
            Exchange::Transport { code, message } => Some(self.classify(
                url,
                &Observation::Transport {
                    code,
                    message: message.clone(),
                },
            )),
        };
        let answer = match exchange {
            Exchange::Response {
                status,
                headers,
                body,
                truncated,
                remote,
            } => WireAnswer::Response {
                status: *status,
                headers,
                body,
                truncated: *truncated,
                remote: *remote,
            },
            Exchange::Transport { code, message } => WireAnswer::Transport { code, message },
        };
        tap.exchange(&WireExchange {
            url,
            method: if form.is_some() { "POST" } else { "GET" },
            request_headers: self.inner.client.sent_headers(form, extra),
            request_body: form.map(str::as_bytes).unwrap_or_default(),
            request_number,
            answer,
            failure,
        });
    }

    /// Waits for `host`'s politeness slot (counted as waited, and as a retry's wait after
    /// the first attempt); a `circuit.open` failure when the host rests.
    async fn slot(
        &self,
        url: &Url,
        host: &str,
        stats: &mut RequestStats,
    ) -> Result<Permit, FetchFailure> {
        match self.inner.politeness.acquire(host).await {
            Ok(permit) => {
                stats.waited += permit.waited;
                if stats.retries > 0 {
                    // A retry's slot comes after the Retry-After the host was throttled for.
                    stats.retry_waited += permit.waited;
                }
                Ok(permit)
            }
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
                f.final_url = Some(url.to_string());
                Err(f)
            }
        }
    }

    /// Follows a redirect to `location` when it passes its checks and robots.txt allows
    /// where it leads: the chain moves on (`None`); else how the attempt ends.
    async fn redirect(
        &self,
        chain: &mut Chain<'_>,
        status: u16,
        location: &str,
        robots: bool,
    ) -> Option<Hop> {
        let next = match chain.next(location, &self.inner.cfg.client) {
            Ok(next) => next,
            Err(refusal) => return Some(chain.refused(refusal, Some(status))),
        };
        chain.redirects.push(chain.current.to_string());
        if robots {
            match self.disallowed_by_robots(&next).await {
                Ok(None) => {}
                Ok(Some(skip)) => return Some(Hop::Skip(skip)),
                Err(f) => {
                    let at = failed_at(&f, chain.start);
                    return Some(Hop::Failure(f, at));
                }
            }
        }
        chain.current = next;
        None
    }

    /// A response that is neither a success nor a redirect, classified and counted for
    /// the host's circuit.
    fn status_failure(&self, url: &Url, host: &str, answer: Answer) -> FetchFailure {
        let c = self.classify(
            url,
            &Observation::Status {
                status: answer.status,
                retry_after: answer.header("retry-after"),
            },
        );
        self.inner.politeness.record(host, c.retryable);
        let mut f = FetchFailure::new(c);
        f.status = Some(answer.status);
        f.final_url = Some(url.to_string());
        f.content_type = answer.header("content-type").map(str::to_owned);
        f.body = (!answer.body.is_empty()).then_some(answer.body);
        f
    }

    pub(super) fn classify(&self, url: &Url, obs: &Observation<'_>) -> Classification {
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        self.inner
            .classifier
            .classify(&host, obs, SystemTime::now())
    }
}

impl<'a> Chain<'a> {
    pub(super) fn new(start: &'a Url) -> Self {
        Self {
            start,
            current: start.clone(),
            redirects: Vec::new(),
            seen: HashSet::from([start.as_str().to_owned()]),
        }
    }

    /// The attempt's page: the 2xx answer of the current hop.
    fn page(self, answer: Answer) -> Hop {
        let resp = Response {
            final_url: self.current.to_string(),
            status: answer.status,
            headers: answer.headers,
            body: answer.body,
            truncated: answer.truncated,
            redirects: self.redirects,
            fetched_at: Utc::now(),
        };
        Hop::Page(resp, self.current)
    }

    /// Where a redirect of the current hop to `location` leads, when it may be followed:
    /// not too long, a URL, http(s), not seen before in the chain, within the hop limit
    /// and the redirect scope.
    pub(super) fn next(&mut self, location: &str, cfg: &ClientConfig) -> Result<Url, Refusal> {
        let invalid = |code: &'static str, message: String| Refusal::Invalid { code, message };
        if location.len() > cfg.max_url_len {
            return Err(invalid(
                "validation.redirect",
                format!(
                    "Location is {} bytes long (limit {})",
                    location.len(),
                    cfg.max_url_len
                ),
            ));
        }
        let next = self.current.join(location).map_err(|e| {
            invalid(
                "validation.redirect",
                format!("bad Location `{location}`: {e}"),
            )
        })?;
        if !matches!(next.scheme(), "http" | "https") {
            return Err(invalid(
                "validation.redirect",
                format!("redirect to a non-http(s) URL: {next}"),
            ));
        }
        if !self.seen.insert(next.as_str().to_owned()) {
            return Err(invalid(
                "validation.redirectLoop",
                format!("redirect loop: {} → {next}", self.current),
            ));
        }
        if self.redirects.len() as u32 >= cfg.max_redirects {
            return Err(invalid(
                "validation.tooManyRedirects",
                format!("more than {} redirects", cfg.max_redirects),
            ));
        }
        if !in_scope(&cfg.redirect_scope, self.start, &next) {
            return Err(Refusal::OutOfScope(next));
        }
        Ok(next)
    }

    /// Moves the chain on to `next`, which [`Chain::next`] gave.
    pub(super) fn follow(&mut self, next: Url) {
        self.redirects.push(self.current.to_string());
        self.current = next;
    }

    /// How the attempt ends on a redirect (`status`) that is not followed.
    fn refused(&self, refusal: Refusal, status: Option<u16>) -> Hop {
        match self.refusal(refusal, status) {
            Ok(skip) => Hop::Skip(skip),
            Err(f) => Hop::Failure(f, self.current.clone()),
        }
    }

    /// A redirect (`status`, when known) that is not followed: a skip out of scope, or a
    /// `VALIDATION` failure at the current hop.
    #[allow(clippy::result_large_err)] // built once per fetch, returned as the outcome
    pub(super) fn refusal(
        &self,
        refusal: Refusal,
        status: Option<u16>,
    ) -> Result<Skip, FetchFailure> {
        match refusal {
            Refusal::Invalid { code, message } => {
                let mut f = failure(ErrorCategory::Validation, false, code, message);
                f.status = status;
                f.final_url = Some(self.current.to_string());
                Err(f)
            }
            Refusal::OutOfScope(next) => Ok(Skip {
                reason: "redirect leaves the allowed scope".into(),
                source: ExpectedSource::Other,
                rule: Some(format!("Location: {next}")),
                status,
            }),
        }
    }
}

/// Why a redirect is not followed.
pub(super) enum Refusal {
    /// Its `Location` is not a URL that may be requested next: code and message.
    Invalid { code: &'static str, message: String },
    /// It leads out of the redirect scope, to this URL.
    OutOfScope(Url),
}

/// The `If-None-Match` and `If-Modified-Since` of a stale entry.
fn conditional_headers(entry: &CacheEntry) -> Vec<(&'static str, String)> {
    let mut extra = Vec::new();
    if let Some(etag) = &entry.meta.etag {
        extra.push(("if-none-match", etag.clone()));
    }
    if let Some(lm) = &entry.meta.last_modified {
        extra.push(("if-modified-since", lm.clone()));
    }
    extra
}

/// The URL whose host answers for a failure met on the way (robots.txt of a redirect's
/// target): where its last request went, else `fallback`.
fn failed_at(f: &FetchFailure, fallback: &Url) -> Url {
    f.final_url
        .as_deref()
        .and_then(|u| Url::parse(u).ok())
        .unwrap_or_else(|| fallback.clone())
}

/// May a redirect from `start` lead to `next`?
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
