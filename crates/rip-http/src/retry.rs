//! Delays between attempts: decorrelated jitter (default), exponential, full jitter; and
//! how a Retry-After hint combines with them.
//!
//! The retry loop itself lives in the fetcher, because every attempt must also wait for
//! its host's politeness slot and check the circuit breaker; a generic retry crate would
//! hide those waits. The delay curves are a few lines each.

use std::time::Duration;

use crate::config::{BackoffKind, RetryConfig};

/// The sequence of delays of one fetch.
#[derive(Debug, Clone)]
pub struct Backoff {
    kind: BackoffKind,
    base: Duration,
    max: Duration,
    prev: Duration,
    n: u32,
    rng: fastrand::Rng,
}

impl Backoff {
    /// A fresh sequence for `config`, with a random seed.
    pub fn new(config: &RetryConfig) -> Self {
        Self::with_rng(config, fastrand::Rng::new())
    }

    /// A fresh sequence with a given random generator (tests seed it).
    pub fn with_rng(config: &RetryConfig, rng: fastrand::Rng) -> Self {
        Self {
            kind: config.backoff,
            base: config.base_delay,
            max: config.max_delay.max(config.base_delay),
            prev: config.base_delay,
            n: 0,
            rng,
        }
    }

    fn uniform(&mut self, lo: Duration, hi: Duration) -> Duration {
        if hi <= lo {
            return lo;
        }
        let (lo_ms, hi_ms) = (lo.as_millis() as u64, hi.as_millis() as u64);
        Duration::from_millis(self.rng.u64(lo_ms..=hi_ms))
    }

    /// The delay before the next attempt.
    pub fn next_delay(&mut self) -> Duration {
        let exp = || {
            let factor = 1u32.checked_shl(self.n.min(20)).unwrap_or(u32::MAX);
            self.base.saturating_mul(factor).min(self.max)
        };
        let d = match self.kind {
            BackoffKind::Exponential => exp(),
            BackoffKind::FullJitter => {
                let cap = exp();
                self.uniform(Duration::ZERO, cap)
            }
            BackoffKind::DecorrelatedJitter => {
                let hi = self.prev.saturating_mul(3).min(self.max);
                self.uniform(self.base.min(hi), hi)
            }
        };
        self.n += 1;
        self.prev = d.max(self.base);
        d
    }
}

/// The wait before the next attempt given the computed backoff and a Retry-After hint:
/// the hint (capped at `max_retry_after`) replaces the backoff, and neither is shorter than
/// the host's politeness gap.
pub fn wait_before_retry(
    backoff: Duration,
    retry_after: Option<Duration>,
    config: &RetryConfig,
    host_gap: Duration,
) -> Duration {
    let d = match retry_after {
        Some(ra) => ra.min(config.max_retry_after),
        None => backoff,
    };
    d.max(host_gap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(kind: BackoffKind) -> RetryConfig {
        RetryConfig {
            backoff: kind,
            ..RetryConfig::default()
        }
    }

    #[test]
    fn decorrelated_jitter_grows_within_bounds() {
        let c = cfg(BackoffKind::DecorrelatedJitter);
        let mut b = Backoff::with_rng(&c, fastrand::Rng::with_seed(1));
        let mut prev = c.base_delay;
        let mut max_seen = Duration::ZERO;
        for _ in 0..50 {
            let d = b.next_delay();
            assert!(d >= c.base_delay, "{d:?}");
            assert!(d <= c.max_delay, "{d:?}");
            assert!(d <= prev * 3, "{d:?} > 3 × {prev:?}");
            prev = d.max(c.base_delay);
            max_seen = max_seen.max(d);
        }
        assert!(
            max_seen > Duration::from_secs(5),
            "never grew: {max_seen:?}"
        );
    }

    #[test]
    fn exponential_and_full_jitter() {
        let c = cfg(BackoffKind::Exponential);
        let mut b = Backoff::new(&c);
        let v: Vec<u64> = (0..8).map(|_| b.next_delay().as_millis() as u64).collect();
        assert_eq!(v, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
        let c = cfg(BackoffKind::FullJitter);
        let mut b = Backoff::with_rng(&c, fastrand::Rng::with_seed(3));
        for n in 0..8u32 {
            let cap = (c.base_delay * 2u32.pow(n)).min(c.max_delay);
            assert!(b.next_delay() <= cap);
        }
    }

    #[test]
    fn retry_after_is_capped_and_never_below_the_host_gap() {
        let c = RetryConfig::default();
        let gap = Duration::from_secs(2);
        let w = wait_before_retry(Duration::from_millis(10), None, &c, gap);
        assert_eq!(w, gap);
        let w = wait_before_retry(Duration::ZERO, Some(Duration::from_secs(1)), &c, gap);
        assert_eq!(w, gap);
        let w = wait_before_retry(Duration::ZERO, Some(Duration::from_secs(9)), &c, gap);
        assert_eq!(w, Duration::from_secs(9));
        let w = wait_before_retry(Duration::ZERO, Some(Duration::from_secs(9999)), &c, gap);
        assert_eq!(w, c.max_retry_after);
    }
}
