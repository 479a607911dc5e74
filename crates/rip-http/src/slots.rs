//! Each host's schedule: the instant before which no request to it may start.
//!
//! [`MemorySlots`] keeps it in this process (on tokio's clock, so tests can pause time).
//! [`FileSlots`] keeps it in `<cache dir>/hosts/<host>`, one small file per host holding
//! the next allowed start as Unix microseconds, read and advanced under an exclusive
//! advisory lock (`flock`, via `std::fs::File::lock`). Every process that shares the cache
//! folder (the stages of one pipeline, `rip-fetch` under `xargs -P`) therefore takes its
//! turn from the same schedule, and together they never start two requests to one host
//! closer than its gap. A Retry-After pushes the schedule back for every process alike.
//!
//! While a process is the folder's only user, [`FileSlots`] keeps the schedules in its
//! memory and writes them to the files when another process arrives or it ends
//! (`users`: the protocol, and what a process killed meanwhile leaves).
//!
//! A request *reserves* its slot (`slot = max(now, next, hold, last start + gap)`,
//! `next = slot + gap`), sleeps until it outside the lock, then *commits* right before
//! sending, which succeeds only if the previous start is at least `gap` old and the
//! previous request was answered (see [`SlotStore`]). The lock is held only for a read and
//! a write.
//!
//! Why answered: a commit is not a send. A process descheduled between its commit and its
//! send (a busy machine) sent late, the next slot's request went out on time, and the site
//! saw the two 1 ms apart (issue 22: 2 of 11 runs of two processes on a busy machine, and
//! the cache-folder tests now and then). So a request does not start while the previous one
//! to its host is unanswered, for up to [`ANSWER_WAIT`] (a host slower than that gets
//! overlapping requests again, up to `--per-host`); the answer moves the previous start to
//! when it came, and the gap is measured from there.

mod files;
mod open_files;
mod sole;
mod users;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

pub use files::FileSlots;

use tokio::time::Instant;

/// Where each host's schedule is kept.
///
/// A request first *reserves* a slot (a place in the host's queue), sleeps until it, then
/// *commits* just before sending: the commit succeeds only when the host's previous
/// request actually started at least `gap` ago and no Retry-After hold is in force, so a
/// request that started late (a slow connect, a busy thread) pushes the next one back
/// instead of letting the two arrive closer than the gap.
pub trait SlotStore: Send + Sync + std::fmt::Debug {
    /// Reserves the next start for `host` and advances its queue by `gap`. Returns how
    /// long to wait, from now, before committing.
    fn reserve(&self, host: &str, gap: Duration) -> Duration;
    /// Marks a request to `host` as starting now, if its previous start was at least `gap`
    /// ago, the previous request was answered (or started [`ANSWER_WAIT`] ago) and no hold
    /// is in force: returns `Ok` with the start's stamp, for
    /// [`answered`](Self::answered). Otherwise returns how long to wait before trying again
    /// (nothing is recorded).
    fn commit(&self, host: &str, gap: Duration) -> Result<u64, Duration>;
    /// A [`reserve`](Self::reserve) and, when it leaves nothing to wait for, a
    /// [`commit`](Self::commit), in one update: `Ok` with the start's stamp when the request
    /// may start now; otherwise the reservation stands and `Err` says how long to wait before
    /// committing. A request whose slot has come (its wait slept on
    /// [`ready_in`](Self::ready_in)) starts with one locked update instead of two.
    fn start_or_reserve(&self, host: &str, gap: Duration) -> Result<u64, Duration>;
    /// Holds `host` until at least `now + wait` (a Retry-After): no reservation or commit
    /// goes through before then.
    fn push_back(&self, host: &str, wait: Duration);
    /// Records that the request to `host` committed at `started` has been answered now:
    /// the server has certainly received it, so the next start is measured from here if
    /// that is later than the committed start, and the next request may start.
    fn answered(&self, host: &str, started: u64);
    /// How long `host` is still held by a Retry-After (zero when free). Used instead of
    /// reserve and commit when the host has no gap: it may read a slightly stale state
    /// (up to [`HOLD_PEEK_INTERVAL`] old) and takes no lock.
    fn held_for(&self, host: &str) -> Duration;
    /// How long from now until a request to `host` could start without waiting, by the
    /// schedule as it stands (the queue's next free slot, the previous start plus `gap`, a
    /// hold): a read that reserves nothing, for a scheduler choosing which host to serve
    /// next. It does not wait for an unanswered request (the commit does).
    fn ready_in(&self, host: &str, gap: Duration) -> Duration;
}

/// How long a request waits for the previous request to its host to be answered before it
/// starts anyway (a host that slow gets overlapping requests, up to `--per-host`).
pub const ANSWER_WAIT: Duration = Duration::from_secs(1);

/// The length of a host file's text ([`Schedule::render`]).
const FILE_LEN: usize = 4 * 21;

/// How often a request waiting for the previous one's answer looks again, in microseconds.
const ANSWER_POLL: u64 = 5_000;

/// How often [`FileSlots::held_for`] reads a host's file at most.
pub const HOLD_PEEK_INTERVAL: Duration = Duration::from_millis(50);

/// One host's schedule, in microseconds of some clock. Microseconds, not milliseconds: a
/// stamp rounded to the millisecond, and a wait rounded up to the next, put a
/// millisecond or two more than the gap between a host's requests (a 253 ms median gap for
/// 250 ms, measured: 1.2 % of the politeness limit lost).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Schedule {
    /// The queue's next free slot.
    next: u64,
    /// When the last request started (0: never).
    last_start: u64,
    /// No start before this (Retry-After).
    hold: u64,
    /// The start of the last request committed and not yet answered (0: none).
    unanswered: u64,
}

impl Schedule {
    fn reserve(&mut self, now: u64, gap: u64) -> u64 {
        let slot = now.max(self.earliest(gap));
        self.next = slot + gap;
        slot - now
    }

    /// The earliest start the schedule allows: the queue's next free slot, the hold, and a
    /// gap after the last start (moved to its answer when that came later). A reservation
    /// counts the answer too: reserving only from the queue, a request slept until a gap
    /// after the previous *commit*, found at its commit that the answer had moved the start
    /// later, and slept again, a timer's millisecond rounding and wake-up more per gap.
    fn earliest(&self, gap: u64) -> u64 {
        let after_last = if self.last_start == 0 {
            0
        } else {
            self.last_start + gap
        };
        self.next.max(self.hold).max(after_last)
    }

    /// [`reserve`](Self::reserve), then [`commit`](Self::commit) when the slot is now and
    /// the commit passes; else only the reservation, and the wait before committing.
    fn start_or_reserve(&mut self, now: u64, gap: u64) -> Result<u64, u64> {
        let wait = self.reserve(now, gap);
        if wait == 0 {
            let mut started = *self;
            if let Ok(stamp) = started.commit(now, gap) {
                *self = started;
                return Ok(stamp);
            }
        }
        Err(wait)
    }

    fn commit(&mut self, now: u64, gap: u64) -> Result<u64, u64> {
        let earliest = if self.last_start == 0 {
            self.hold
        } else {
            (self.last_start + gap).max(self.hold)
        };
        if now < earliest {
            return Err(earliest - now);
        }
        let answer_due = self.unanswered.saturating_add(us(ANSWER_WAIT));
        if self.unanswered != 0 && now < answer_due {
            return Err((answer_due - now).min(ANSWER_POLL));
        }
        self.last_start = now;
        self.unanswered = now;
        self.next = self.next.max(now + gap);
        Ok(now)
    }

    /// Microseconds from `now` until a reservation would not wait and a commit would pass
    /// (the answer aside).
    fn ready_in(&self, now: u64, gap: u64) -> u64 {
        self.earliest(gap).saturating_sub(now)
    }

    fn push_back(&mut self, now: u64, wait: u64) {
        self.hold = self.hold.max(now + wait);
    }

    fn answered(&mut self, now: u64, started: u64) {
        if self.last_start != 0 {
            self.last_start = self.last_start.max(now);
        }
        if self.unanswered == started {
            self.unanswered = 0;
        }
    }

    fn parse(text: &str) -> Self {
        // A torn or foreign file reads as "no constraint": never worse than no file. A
        // file of an earlier version holds Unix milliseconds (below 10^14 until the year
        // 5138; Unix microseconds are above it since 1973): read as microseconds.
        let mut it = text
            .split_whitespace()
            .map(|t| t.parse::<u64>().unwrap_or(0))
            .map(|n| if n < 100_000_000_000_000 { n * 1000 } else { n });
        Self {
            next: it.next().unwrap_or(0),
            last_start: it.next().unwrap_or(0),
            hold: it.next().unwrap_or(0),
            unanswered: it.next().unwrap_or(0),
        }
    }

    /// The file's text: always [`FILE_LEN`] bytes (numbers padded), so an update
    /// overwrites in place. Truncating first cost ~150 µs a time on ext4 (blocks freed and
    /// allocated again), three times per request: 0.43 ms of CPU per page at 1,000 hosts.
    fn render(&self) -> String {
        let Self {
            next,
            last_start,
            hold,
            unanswered,
        } = self;
        format!("{next:>20} {last_start:>20} {hold:>20} {unanswered:>20}\n")
    }
}

/// The schedule in this process only, on tokio's clock (so tests can pause time).
#[derive(Debug)]
pub struct MemorySlots {
    epoch: Instant,
    hosts: Mutex<HashMap<String, Schedule>>,
}

impl Default for MemorySlots {
    fn default() -> Self {
        Self {
            epoch: Instant::now(),
            hosts: Mutex::new(HashMap::new()),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn us(d: Duration) -> u64 {
    d.as_micros() as u64
}

impl MemorySlots {
    fn with<T>(&self, host: &str, f: impl FnOnce(&mut Schedule, u64) -> T) -> T {
        // +1 so that 0 keeps meaning "never".
        let now = us(self.epoch.elapsed()) + 1;
        let mut map = lock(&self.hosts);
        f(map.entry(host.to_owned()).or_default(), now)
    }
}

impl SlotStore for MemorySlots {
    fn reserve(&self, host: &str, gap: Duration) -> Duration {
        Duration::from_micros(self.with(host, |s, now| s.reserve(now, us(gap))))
    }

    fn commit(&self, host: &str, gap: Duration) -> Result<u64, Duration> {
        self.with(host, |s, now| s.commit(now, us(gap)))
            .map_err(Duration::from_micros)
    }

    fn start_or_reserve(&self, host: &str, gap: Duration) -> Result<u64, Duration> {
        self.with(host, |s, now| s.start_or_reserve(now, us(gap)))
            .map_err(Duration::from_micros)
    }

    fn push_back(&self, host: &str, wait: Duration) {
        self.with(host, |s, now| s.push_back(now, us(wait)));
    }

    fn answered(&self, host: &str, started: u64) {
        self.with(host, |s, now| s.answered(now, started));
    }

    fn held_for(&self, host: &str) -> Duration {
        Duration::from_micros(self.with(host, |s, now| s.hold.saturating_sub(now)))
    }

    fn ready_in(&self, host: &str, gap: Duration) -> Duration {
        Duration::from_micros(self.with(host, |s, now| s.ready_in(now, us(gap))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn memory_slots_space_reservations() {
        let s = MemorySlots::default();
        let g = Duration::from_millis(100);
        assert_eq!(s.reserve("a", g), Duration::ZERO);
        assert_eq!(s.reserve("a", g), g);
        assert_eq!(s.reserve("a", g), g * 2);
        assert_eq!(s.reserve("b", g), Duration::ZERO);
        s.push_back("b", Duration::from_secs(5));
        assert_eq!(s.reserve("b", g), Duration::from_secs(5));
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(s.reserve("a", g), Duration::ZERO);
    }

    #[test]
    fn start_or_reserve_starts_a_free_host_and_otherwise_reserves_as_reserve_does() {
        let gap = 100_000;
        let mut s = Schedule::default();
        assert_eq!(
            s.start_or_reserve(1_000, gap),
            Ok(1_000),
            "a free host starts now"
        );
        assert_eq!(
            (s.last_start, s.unanswered, s.next),
            (1_000, 1_000, 101_000)
        );
        // Its answer 2 ms later: the next start is a gap after the answer.
        s.answered(3_000, 1_000);
        let mut reserved = s;
        let wait = reserved.reserve(50_000, gap);
        assert_eq!(s.start_or_reserve(50_000, gap), Err(wait));
        assert_eq!(wait, 53_000, "a gap after the answer");
        assert_eq!(s, reserved, "the reservation stands");
        // At its slot the reserved request commits; another one waits a gap more.
        assert_eq!(s.start_or_reserve(103_000, gap), Err(gap));
        assert_eq!(s.commit(103_000, gap), Ok(103_000));
        // Unanswered: no start, a reservation, and the commit polls for the answer.
        let mut unanswered = Schedule::default();
        unanswered.start_or_reserve(1_000, gap).unwrap();
        assert_eq!(unanswered.start_or_reserve(101_000, gap), Err(0));
        assert_eq!(unanswered.last_start, 1_000, "nothing started");
        assert!(unanswered.commit(101_000, gap).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn commit_measures_from_the_real_previous_start() {
        let s = MemorySlots::default();
        let g = Duration::from_millis(100);
        assert_eq!(s.reserve("a", g), Duration::ZERO);
        assert_eq!(s.reserve("a", g), g);
        // The first request starts 40 ms late...
        tokio::time::advance(Duration::from_millis(40)).await;
        let first = s.commit("a", g).unwrap();
        // ...and is answered at once, so the second, due at 100 ms, must wait until 140 ms.
        s.answered("a", first);
        tokio::time::advance(Duration::from_millis(60)).await;
        assert_eq!(s.commit("a", g), Err(Duration::from_millis(40)));
        tokio::time::advance(Duration::from_millis(40)).await;
        let second = s.commit("a", g).unwrap();
        s.answered("a", second);
        // A hold blocks commits of requests that reserved before it.
        s.push_back("a", Duration::from_secs(2));
        tokio::time::advance(Duration::from_millis(500)).await;
        assert_eq!(s.commit("a", g), Err(Duration::from_millis(1500)));
    }

    #[tokio::test(start_paused = true)]
    async fn a_reservation_after_the_answer_waits_a_gap_from_the_answer() {
        let s = MemorySlots::default();
        let g = Duration::from_millis(100);
        let first = s.commit("a", g).unwrap();
        // Answered 30 ms after it started: the next request reserves a gap from the answer,
        // so the one sleep it takes ends where its commit passes.
        tokio::time::advance(Duration::from_millis(30)).await;
        s.answered("a", first);
        let wait = s.reserve("a", g);
        assert_eq!(wait, g);
        tokio::time::advance(wait).await;
        assert!(
            s.commit("a", g).is_ok(),
            "the commit agrees with the reservation"
        );
        // And the queue moves on from there.
        assert_eq!(s.reserve("a", g), g);
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_does_not_start_while_the_previous_is_unanswered() {
        let s = MemorySlots::default();
        let g = Duration::from_millis(100);
        let first = s.commit("a", g).unwrap();
        // Its send slipped: a gap later it is still unanswered, and the next waits.
        tokio::time::advance(Duration::from_millis(150)).await;
        assert!(
            s.commit("a", g).is_err(),
            "started while the previous is unanswered"
        );
        tokio::time::advance(Duration::from_millis(250)).await;
        assert!(s.commit("a", g).is_err());
        // Answered at 400 ms: the next starts a gap after the answer, not before.
        s.answered("a", first);
        assert_eq!(s.commit("a", g), Err(g));
        tokio::time::advance(g).await;
        let second = s.commit("a", g).unwrap();
        // A host that does not answer within ANSWER_WAIT gets the next request anyway.
        tokio::time::advance(ANSWER_WAIT).await;
        assert!(s.commit("a", g).is_ok());
        // An older request's answer does not free the newer one's successor.
        s.answered("a", second);
        tokio::time::advance(g).await;
        assert!(s.commit("a", g).is_err());
    }
}
