//! Refs scheduled for later: a ref's `notBefore` (written by `rip-route` from a
//! Retry-After hint) is waited for, but never longer than the longest Retry-After rip-fetch
//! honours, and never silently.
//!
//! - **The bound** is `--max-retry-after` (default 5 minutes, as `rip-route`'s
//!   `maxRetryAfter`, which caps the `notBefore` it writes). A ref whose `notBefore` is
//!   further away than that is not fetched and not waited for: it becomes at once a
//!   `failure` (`THROTTLED`, retryable, code `fetch.notBefore`, `retryAfterMs` the wait
//!   left), the record `--give-up-after` makes of a Retry-After it will not wait for.
//!   Fetching it now would break the promise the `notBefore` stands for (the site asked not
//!   to be asked before then), and waiting years helps nobody; as a failure it is data: the
//!   next `rip-route` retries it after its own `maxRetryAfter`, or captures it as an error
//!   document in the last round. `--give-up-after` does not bound it: that flag hands long
//!   waits to `rip-route`, and the `notBefore` is how `rip-route` hands them back.
//! - **Waits are said**: while refs wait a second or more, a line on stderr says for how
//!   many refs and how long (the next and the last), when the wait begins and every
//!   [`SAY_EVERY`] after.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use rip_core::{ErrorCategory, Failure, Phase, Ref};
use rip_http::{Classification, FetchFailure, HttpConfig, RequestStats};

/// Waits shorter than this are not said.
pub const SAY_FROM: Duration = Duration::from_secs(1);
/// How often a wait still going on is said again.
pub const SAY_EVERY: Duration = Duration::from_secs(30);

/// The longest `notBefore` wait (`--max-retry-after`).
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// The longest wait.
    pub wait: Duration,
}

impl Bound {
    /// The bound an HTTP configuration sets.
    pub fn of(http: &HttpConfig) -> Self {
        Self {
            wait: http.retry.max_retry_after,
        }
    }
}

/// What to do with a ref's `notBefore`.
#[derive(Debug)]
pub enum Schedule {
    /// Fetch it now (no `notBefore`, or one already past or under [`SAY_FROM`] away).
    Now,
    /// Wait for it (the fetch task does), until this time.
    Wait(DateTime<Utc>),
    /// Too far: this failure instead of a fetch.
    TooFar(Box<Failure>),
}

/// The schedule of `r` at `now`.
pub fn schedule(r: &Ref, bound: Bound, now: DateTime<Utc>, operation: &str) -> Schedule {
    let Some(nb) = r.not_before else {
        return Schedule::Now;
    };
    let Ok(wait) = (nb - now).to_std() else {
        return Schedule::Now;
    };
    if wait <= bound.wait {
        return if wait >= SAY_FROM {
            Schedule::Wait(nb)
        } else {
            Schedule::Now
        };
    }
    let message = format!(
        "notBefore {} is {} away, longer than rip-fetch waits (--max-retry-after {}): not \
         fetched (hint: a longer --max-retry-after waits for it; else rip-route schedules it \
         again within its maxRetryAfter, or captures it)",
        nb.to_rfc3339_opts(SecondsFormat::Secs, true),
        short(wait),
        short(bound.wait),
    );
    let failure = FetchFailure {
        class: Classification {
            category: ErrorCategory::Throttled,
            retryable: true,
            code: "fetch.notBefore".into(),
            message,
            retry_after: Some(wait),
        },
        status: None,
        final_url: None,
        content_type: None,
        body: None,
    };
    let stats = RequestStats::default();
    Schedule::TooFar(Box::new(rip_http::records::failure_record(
        r,
        &failure,
        &stats,
        Phase::Fetch,
        operation,
    )))
}

/// `at` (a `notBefore`) on tokio's clock: now, or the wait from now later.
pub fn instant(at: DateTime<Utc>) -> tokio::time::Instant {
    let wait = (at - Utc::now()).to_std().unwrap_or_default();
    tokio::time::Instant::now() + wait
}

/// The refs waiting for their `notBefore`, by time, and when that was last said.
#[derive(Debug, Default)]
pub struct Waiting {
    until: BTreeMap<DateTime<Utc>, usize>,
    said: Option<tokio::time::Instant>,
}

impl Waiting {
    /// A ref waits until `at`.
    pub fn add(&mut self, at: DateTime<Utc>) {
        *self.until.entry(at).or_default() += 1;
    }

    /// Forgets waits over at `now`; returns the line to say, when one is due.
    pub fn tick(&mut self, now: DateTime<Utc>) -> Option<String> {
        self.until = self.until.split_off(&now);
        if self.until.is_empty() {
            self.said = None;
            return None;
        }
        if self.said.is_some_and(|t| t.elapsed() < SAY_EVERY) {
            return None;
        }
        self.said = Some(tokio::time::Instant::now());
        let n: usize = self.until.values().sum();
        let next = self.until.keys().next()?;
        let last = self.until.keys().next_back()?;
        let left = |t: &DateTime<Utc>| short((*t - now).to_std().unwrap_or_default());
        Some(format!(
            "waiting for the notBefore of {n} {}: the next in {}, the last in {} (at {})",
            if n == 1 { "ref" } else { "refs" },
            left(next),
            left(last),
            last.to_rfc3339_opts(SecondsFormat::Secs, true),
        ))
    }
}

/// A duration as a person says it: `45s`, `5m`, `2m 30s`, `3h 10m`, `1095 days`.
pub fn short(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 if s.is_multiple_of(60) => format!("{}m", s / 60),
        60..3600 => format!("{}m {}s", s / 60, s % 60),
        3600..172_800 => format!("{}h {}m", s / 3600, s % 3600 / 60),
        _ => format!("{} days", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound(secs: u64) -> Bound {
        Bound {
            wait: Duration::from_secs(secs),
        }
    }

    fn at(r: &mut Ref, now: DateTime<Utc>, ms: i64) {
        r.not_before = Some(now + chrono::Duration::milliseconds(ms));
    }

    #[test]
    fn near_waits_far_fails_past_is_now() {
        let now = Utc::now();
        let mut r = Ref::new("http://h/x");
        assert!(matches!(schedule(&r, bound(300), now, "t"), Schedule::Now));
        at(&mut r, now, -5_000);
        assert!(matches!(schedule(&r, bound(300), now, "t"), Schedule::Now));
        at(&mut r, now, 500);
        assert!(matches!(schedule(&r, bound(300), now, "t"), Schedule::Now));
        at(&mut r, now, 299_000);
        assert!(matches!(
            schedule(&r, bound(300), now, "t"),
            Schedule::Wait(_)
        ));
        at(&mut r, now, 301_000);
        r.attempt = 2;
        let Schedule::TooFar(f) = schedule(&r, bound(300), now, "t") else {
            panic!()
        };
        assert_eq!((f.attempt, f.retry_after_ms), (3, Some(301_000)));
        assert!(f.errors[0].message.contains("5m 1s away"), "{:?}", f.errors);
    }

    #[test]
    fn the_bound_is_max_retry_after_whatever_give_up_after_says() {
        let mut h = HttpConfig::default();
        h.retry.max_retry_after = Duration::from_secs(300);
        h.retry.give_up_after = Some(Duration::from_secs(2));
        assert_eq!(Bound::of(&h).wait, Duration::from_secs(300));
    }

    #[test]
    fn waits_are_said_once_then_every_so_often_and_forgotten_when_over() {
        let now = Utc::now();
        let mut w = Waiting::default();
        assert_eq!(w.tick(now), None);
        w.add(now + chrono::Duration::seconds(90));
        w.add(now + chrono::Duration::seconds(3));
        let line = w.tick(now).unwrap();
        assert!(
            line.starts_with(
                "waiting for the notBefore of 2 refs: the next in 3s, the last in 1m 30s"
            ),
            "{line}"
        );
        assert_eq!(w.tick(now), None, "said already");
        assert!(w.tick(now + chrono::Duration::seconds(91)).is_none());
        assert!(w.until.is_empty());
    }

    #[test]
    fn durations_read_as_spoken() {
        let s = |n| short(Duration::from_secs(n));
        assert_eq!(
            [s(2), s(300), s(150), s(3 * 3600 + 600), s(3 * 365 * 86_400)],
            ["2s", "5m", "2m 30s", "3h 10m", "1095 days"]
        );
    }
}
