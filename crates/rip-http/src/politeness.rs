//! The per-host scheduler: concurrency caps, the minimum gap (plus jitter, or the host's
//! robots.txt `Crawl-delay` when larger), a global rate, Retry-After push-backs that slow
//! the whole host, and a circuit breaker.
//!
//! A request to a host waits, in order, for: the host's concurrency permit, its start slot
//! ([`SlotStore`], shared across processes when a cache folder is set), the global rate
//! slot, and a total concurrency permit. A request whose slot has come, with a total permit
//! free, starts in one update of the host's schedule; otherwise it reserves its slot, waits,
//! and commits (two updates).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::config::PolitenessConfig;
use crate::slots::{MemorySlots, SlotStore};

/// Where a request stands once its slot has come.
enum Slot {
    /// Started, in one update of the schedule, with its total concurrency permit.
    Started {
        stamp: u64,
        total: OwnedSemaphorePermit,
    },
    /// Reserved and come: a total permit and the commit are next.
    Reserved,
}

/// Sleeps for `wait`, unless it is zero (no timer then).
async fn sleep(wait: Duration) {
    if !wait.is_zero() {
        tokio::time::sleep(wait).await;
    }
}

/// The key of the global rate in the in-process slot store.
const GLOBAL: &str = "\u{0}global";

/// Permission to send one request; dropping it frees the concurrency slots.
#[derive(Debug)]
pub struct Permit {
    _host: OwnedSemaphorePermit,
    _total: OwnedSemaphorePermit,
    /// Time spent waiting for it.
    pub waited: Duration,
    /// The start's stamp in the host's schedule (when the host has a gap), for
    /// [`Politeness::answered`].
    started: Option<u64>,
}

/// A host whose circuit is open: no request goes out until `remaining` has passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CircuitOpen {
    /// Time left before the host is tried again.
    pub remaining: Duration,
}

#[derive(Debug)]
struct Host {
    sem: Arc<Semaphore>,
    crawl_delay: Option<Duration>,
    failures: u32,
    open_until: Option<Instant>,
}

/// The scheduler shared by all fetches of a [`Fetcher`](crate::Fetcher).
#[derive(Debug)]
pub struct Politeness {
    cfg: PolitenessConfig,
    store: Arc<dyn SlotStore>,
    global: MemorySlots,
    hosts: Mutex<HashMap<String, Host>>,
    total: Arc<Semaphore>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Politeness {
    /// A scheduler keeping host schedules in `store`.
    pub fn new(cfg: PolitenessConfig, store: Arc<dyn SlotStore>) -> Self {
        let total = Arc::new(Semaphore::new(cfg.total_concurrency.max(1)));
        Self {
            cfg,
            store,
            global: MemorySlots::default(),
            hosts: Mutex::new(HashMap::new()),
            total,
        }
    }

    fn with_host<T>(&self, host: &str, f: impl FnOnce(&mut Host) -> T) -> T {
        let mut hosts = lock(&self.hosts);
        let h = hosts.entry(host.to_owned()).or_insert_with(|| Host {
            sem: Arc::new(Semaphore::new(self.cfg.per_host_concurrency.max(1))),
            crawl_delay: None,
            failures: 0,
            open_until: None,
        });
        f(h)
    }

    /// The host's base gap: the configured minimum, or its Crawl-delay when larger.
    pub fn gap(&self, host: &str) -> Duration {
        let cd = self.with_host(host, |h| h.crawl_delay);
        cd.map_or(self.cfg.min_gap, |d| d.max(self.cfg.min_gap))
    }

    /// Records the host's robots.txt Crawl-delay (capped).
    pub fn set_crawl_delay(&self, host: &str, delay: Duration) {
        if self.cfg.crawl_delay {
            let d = delay.min(self.cfg.max_crawl_delay);
            self.with_host(host, |h| h.crawl_delay = Some(d));
        }
    }

    /// A Retry-After (or backoff) for the whole host: no request to it starts before
    /// `wait` has passed, in this process or any other sharing the schedule.
    pub fn throttle(&self, host: &str, wait: Duration) {
        self.store.push_back(host, wait);
    }

    /// How long `host` is still held by a Retry-After or a backoff (zero when free).
    pub fn held_for(&self, host: &str) -> Duration {
        self.store.held_for(host)
    }

    /// How long from now until a request to `host` could start without waiting for its
    /// gap or a hold (a read: nothing is reserved). The circuit is not counted: a request
    /// to a resting host fails at once, it does not wait.
    pub fn ready_in(&self, host: &str) -> Duration {
        let gap = self.gap(host);
        if gap.is_zero() {
            self.store.held_for(host)
        } else {
            self.store.ready_in(host, gap)
        }
    }

    /// Records that the request to `host` sent under `permit` was answered (or failed)
    /// now: with a non-zero gap, the next request starts at least a gap after this, and not
    /// before it (see [`crate::slots`]).
    pub fn answered(&self, host: &str, permit: &Permit) {
        if let Some(started) = permit.started {
            self.store.answered(host, started);
        }
    }

    /// The circuit state: `Some` while the host rests.
    pub fn circuit(&self, host: &str) -> Option<CircuitOpen> {
        let now = Instant::now();
        self.with_host(host, |h| match h.open_until {
            Some(t) if t > now => Some(CircuitOpen { remaining: t - now }),
            _ => None,
        })
    }

    /// Hosts whose circuit is open now (a `--metrics` gauge).
    pub fn circuits_open(&self) -> usize {
        let now = Instant::now();
        lock(&self.hosts)
            .values()
            .filter(|h| h.open_until.is_some_and(|t| t > now))
            .count()
    }

    /// Counts an attempt's outcome for the circuit breaker: a retryable failure (network,
    /// timeout, 5xx, 429) or not. Returns true when this failure opened the circuit.
    pub fn record(&self, host: &str, failed: bool) -> bool {
        let threshold = self.cfg.circuit_threshold;
        let recovery = self.cfg.circuit_recovery;
        self.with_host(host, |h| {
            if !failed {
                h.failures = 0;
                h.open_until = None;
                return false;
            }
            h.failures += 1;
            if threshold > 0 && h.failures >= threshold {
                h.open_until = Some(Instant::now() + recovery);
                // Half-open after the rest: one more failure opens it again.
                h.failures = threshold - 1;
                return true;
            }
            false
        })
    }

    /// Waits for permission to send a request to `host`. Fails at once, or after the
    /// wait, when the host's circuit is open.
    pub async fn acquire(&self, host: &str) -> Result<Permit, CircuitOpen> {
        let start = Instant::now();
        if let Some(open) = self.circuit(host) {
            return Err(open);
        }
        let sem = self.with_host(host, |h| h.sem.clone());
        let host_permit = sem.acquire_owned().await.expect("semaphore never closed");
        if let Some(open) = self.circuit(host) {
            return Err(open);
        }
        let gap = self.gap(host) + self.jitter();
        let (total, started) = match self.to_slot(host, gap).await {
            Slot::Started { stamp, total } => (total, Some(stamp)),
            Slot::Reserved => self.commit(host, gap).await?,
        };
        if let Some(open) = self.circuit(host) {
            return Err(open);
        }
        Ok(Permit {
            _host: host_permit,
            _total: total,
            waited: start.elapsed(),
            started,
        })
    }

    /// Waits until the host's slot (and the global rate's) has come. With a gap and no
    /// global rate, the wait is slept on a read of the schedule ([`SlotStore::ready_in`]), and
    /// a request whose slot is still free then starts in one update
    /// ([`SlotStore::start_or_reserve`]); otherwise its slot is reserved and waited for.
    async fn to_slot(&self, host: &str, gap: Duration) -> Slot {
        let rate = self.cfg.global_rate.filter(|r| *r > 0.0);
        if gap.is_zero() {
            // No gap to keep: only a Retry-After hold (this process's or another's) matters,
            // and it is read without a lock.
            sleep(self.store.held_for(host)).await;
        } else {
            if rate.is_none()
                && let Some(slot) = self.start_at_slot(host, gap).await
            {
                return slot;
            }
            sleep(self.store.reserve(host, gap)).await;
        }
        if let Some(rate) = rate {
            sleep(
                self.global
                    .reserve(GLOBAL, Duration::from_secs_f64(1.0 / rate)),
            )
            .await;
        }
        Slot::Reserved
    }

    /// Sleeps to the host's slot on a read of the schedule, then, with a total permit free
    /// and the circuit closed, starts in one update, or reserves the slot and waits for it
    /// when another request took it meanwhile. `None` (nothing reserved) when no total
    /// permit is free or the circuit opened: the caller reserves as usual.
    async fn start_at_slot(&self, host: &str, gap: Duration) -> Option<Slot> {
        sleep(self.store.ready_in(host, gap)).await;
        if self.circuit(host).is_some() {
            return None;
        }
        let total = self.total.clone().try_acquire_owned().ok()?;
        match self.store.start_or_reserve(host, gap) {
            Ok(stamp) => Some(Slot::Started { stamp, total }),
            Err(wait) => {
                drop(total);
                sleep(wait).await;
                Some(Slot::Reserved)
            }
        }
    }

    /// With the slot reserved and come: a total concurrency permit, then the commit, right
    /// before sending: the previous request to this host may have started late or not be
    /// answered yet, or a Retry-After may have arrived since the reservation.
    async fn commit(
        &self,
        host: &str,
        gap: Duration,
    ) -> Result<(OwnedSemaphorePermit, Option<u64>), CircuitOpen> {
        let total = self
            .total
            .clone()
            .acquire_owned()
            .await
            .expect("semaphore never closed");
        while !gap.is_zero() {
            if let Some(open) = self.circuit(host) {
                return Err(open);
            }
            match self.store.commit(host, gap) {
                Ok(stamp) => return Ok((total, Some(stamp))),
                Err(wait) => tokio::time::sleep(wait).await,
            }
        }
        Ok((total, None))
    }

    fn jitter(&self) -> Duration {
        let j = self.cfg.jitter.as_millis() as u64;
        if j == 0 {
            Duration::ZERO
        } else {
            Duration::from_millis(fastrand::u64(0..=j))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sched(gap_ms: u64, threshold: u32) -> Politeness {
        let cfg = PolitenessConfig {
            min_gap: Duration::from_millis(gap_ms),
            jitter: Duration::ZERO,
            circuit_threshold: threshold,
            circuit_recovery: Duration::from_secs(60),
            ..PolitenessConfig::default()
        };
        Politeness::new(cfg, Arc::new(MemorySlots::default()))
    }

    #[tokio::test(start_paused = true)]
    async fn gap_per_host_and_hosts_in_parallel() {
        let p = Arc::new(sched(1000, 0));
        let t0 = Instant::now();
        let mut tasks = Vec::new();
        for host in ["a", "a", "a", "b", "b"] {
            let p = p.clone();
            tasks.push(tokio::spawn(async move {
                let _permit = p.acquire(host).await.unwrap();
                (host, t0.elapsed())
            }));
        }
        let mut a = Vec::new();
        let mut b = Vec::new();
        for t in tasks {
            let (h, at) = t.await.unwrap();
            if h == "a" { a.push(at) } else { b.push(at) }
        }
        a.sort();
        b.sort();
        assert_eq!(a, [0, 1000, 2000].map(Duration::from_millis));
        assert_eq!(b, [0, 1000].map(Duration::from_millis));
    }

    /// A schedule that counts its updates (the locked read-modify-writes of a host file).
    #[derive(Debug, Default)]
    struct Counted {
        slots: MemorySlots,
        updates: std::sync::atomic::AtomicUsize,
    }

    impl Counted {
        fn count(&self) {
            self.updates
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    impl SlotStore for Counted {
        fn reserve(&self, host: &str, gap: Duration) -> Duration {
            self.count();
            self.slots.reserve(host, gap)
        }
        fn commit(&self, host: &str, gap: Duration) -> Result<u64, Duration> {
            self.count();
            self.slots.commit(host, gap)
        }
        fn start_or_reserve(&self, host: &str, gap: Duration) -> Result<u64, Duration> {
            self.count();
            self.slots.start_or_reserve(host, gap)
        }
        fn push_back(&self, host: &str, wait: Duration) {
            self.count();
            self.slots.push_back(host, wait)
        }
        fn answered(&self, host: &str, started: u64) {
            self.count();
            self.slots.answered(host, started)
        }
        fn held_for(&self, host: &str) -> Duration {
            self.slots.held_for(host)
        }
        fn ready_in(&self, host: &str, gap: Duration) -> Duration {
            self.slots.ready_in(host, gap)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_whose_slot_has_come_starts_in_one_update_of_its_schedule() {
        let store = Arc::new(Counted::default());
        let p = Politeness::new(sched(250, 0).cfg.clone(), store.clone());
        let t0 = Instant::now();
        let mut starts = Vec::new();
        for _ in 0..3 {
            let permit = p.acquire("a").await.unwrap();
            starts.push(t0.elapsed());
            tokio::time::advance(Duration::from_millis(2)).await; // the answer comes
            p.answered("a", &permit);
        }
        // Each a gap after the previous answer, as before.
        assert_eq!(starts, [0, 252, 504].map(Duration::from_millis));
        // A start and an answer per request (a reservation, a commit and an answer before).
        assert_eq!(store.updates.load(std::sync::atomic::Ordering::Relaxed), 6);
    }

    #[tokio::test(start_paused = true)]
    async fn global_rate_spaces_requests_across_hosts() {
        let mut cfg = sched(0, 0).cfg.clone();
        cfg.global_rate = Some(4.0);
        let p = Politeness::new(cfg, Arc::new(MemorySlots::default()));
        let t0 = Instant::now();
        for host in ["a", "b", "c", "d", "e"] {
            drop(p.acquire(host).await.unwrap());
        }
        assert_eq!(t0.elapsed(), Duration::from_millis(1000));
    }

    #[tokio::test(start_paused = true)]
    async fn crawl_delay_and_throttle_slow_the_host() {
        let p = sched(100, 0);
        p.set_crawl_delay("a", Duration::from_secs(2));
        assert_eq!(p.gap("a"), Duration::from_secs(2));
        assert_eq!(p.gap("b"), Duration::from_millis(100));
        p.throttle("b", Duration::from_secs(5));
        let t0 = Instant::now();
        drop(p.acquire("b").await.unwrap());
        assert_eq!(t0.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test(start_paused = true)]
    async fn circuit_opens_after_n_failures_and_recovers() {
        let p = sched(0, 3);
        assert!(!p.record("a", true));
        assert!(!p.record("a", true));
        assert!(p.record("a", true));
        let open = p.acquire("a").await.unwrap_err();
        assert_eq!(open.remaining, Duration::from_secs(60));
        assert!(p.acquire("b").await.is_ok());
        tokio::time::advance(Duration::from_secs(61)).await;
        assert!(p.acquire("a").await.is_ok());
        assert!(p.record("a", true), "half-open: one failure reopens");
        p.record("a", false);
        assert!(p.circuit("a").is_none());
    }
}
