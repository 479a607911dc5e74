//! The per-host scheduler: refs wait in their host's queue, and a host's next ref starts
//! when the host may be asked again, whatever order the refs arrived in.
//!
//! Without it, a bounded window of refs in flight fills with refs of the few hosts at the
//! front of the input, each waiting for its host's gap, while hosts further down stay idle
//! (issue 22; measured in `docs/benchmarks-log.md`, rip-fetch). Here:
//!
//! - **Read ahead, queue per host.** Refs are read as they come and queued by their
//!   [`host_key`]; only refs whose host may be asked now become fetch tasks, so tasks are
//!   requests about to go out, not refs sleeping through gaps.
//! - **Served by time.** A heap orders hosts by when they may be asked next: the fetcher's
//!   own schedule ([`Fetcher::ready_in`]: the gap, robots.txt Crawl-delay, a Retry-After
//!   hold, shared with other processes through the cache folder) read at the moment of
//!   choosing, and this process's estimate (the start of its last request plus the gap) in
//!   between. The fetch itself still reserves and commits its slot: the scheduler chooses,
//!   the fetcher guarantees the gap, so a fetch starts [`LEAD`] ahead and waits out the
//!   last moment itself. A host whose last answer came from the cache is served
//!   without waiting until one needs the network again, so a cached rerun runs at full
//!   speed; a host without a gap gets up to `--per-host` refs at once.
//! - **Refs for later.** A ref whose `notBefore` is ahead waits in a timed list and joins
//!   its host's queue when due, holding no task meanwhile.
//! - **Bounded memory.** Past the memory budget, queued refs go to a [`Spill`] file and are
//!   read back when their host's turn comes, so a million queued refs for ten thousand
//!   hosts keep a few bytes per run of one host in memory, not the refs.
//!
//! Refs the fetcher will refuse without a request (not an http(s) URL) are not queued:
//! the caller starts them at once.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, VecDeque};
use std::io;

use rip_core::Ref;
use rip_http::{Fetcher, host_key};
use tokio::time::Instant;
use url::Url;

use crate::spill::{Run, Spill};

/// What one queued ref is taken to cost in memory: its line, decoded (strings, a map), and
/// the queue's own entry. Measured: a million refs of 75-byte lines, all in memory, took
/// 390 MB of RSS over the baseline, about 395 bytes each (`scripts/bench/hosts/memory`).
pub(crate) fn queued_cost(line_len: usize) -> usize {
    2 * line_len + 256
}

/// How long before its host may be asked a ref's fetch starts. The fetch reserves and
/// commits its host's slot itself (the fetcher keeps the gap to the microsecond, from the
/// previous answer), so starting it early costs nothing but a task asleep; starting it
/// only once the host is ready put this loop's timer rounding, its wake-up and the task's
/// start on top of every gap.
const LEAD: std::time::Duration = std::time::Duration::from_millis(10);

/// A ref to fetch now, chosen by [`Hosts::next_ready`].
#[derive(Debug)]
pub(crate) struct Ready {
    /// Its host key: hand it back to [`Hosts::done`] when the fetch ends.
    pub host: String,
    /// Its place in the input.
    pub seq: u64,
    /// The ref.
    pub r: Ref,
}

#[derive(Debug)]
enum Item {
    Memory { seq: u64, r: Box<Ref>, cost: usize },
    Disk(Run),
}

#[derive(Debug)]
struct Host {
    items: VecDeque<Item>,
    /// Fetches of this host running.
    active: usize,
    /// In the heap (an entry may also be stale: checked when popped).
    scheduled: bool,
    /// This process's estimate of when the host may be asked again.
    next: Instant,
    /// The last fetch that ended sent no request: answered from the cache, or refused
    /// before one (a host resting after repeated failures fails its refs at once).
    answered_locally: bool,
}

impl Host {
    fn new(now: Instant) -> Self {
        Self {
            items: VecDeque::new(),
            active: 0,
            scheduled: false,
            next: now,
            answered_locally: false,
        }
    }
}

/// Counters for the summary.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct QueueStats {
    /// Refs written to the spill file.
    pub spilled: u64,
    /// The most memory queued refs took at once (estimated, bytes).
    pub peak_memory: usize,
    /// The most refs queued at once.
    pub peak_queued: usize,
}

/// Every host's queue, the heap of hosts by when they may be asked, and the refs waiting
/// for their `notBefore`.
#[derive(Debug)]
pub(crate) struct Hosts {
    hosts: HashMap<String, Host>,
    due: BinaryHeap<Reverse<(Instant, String)>>,
    later: BTreeMap<(Instant, u64), (String, Box<Ref>, usize)>,
    per_host: usize,
    budget: usize,
    memory: usize,
    queued: usize,
    spill: Spill,
    /// A spill failed: refs stay in memory (and reading waits for room).
    spill_broken: bool,
    stats: QueueStats,
}

impl Hosts {
    /// Queues allowing `per_host` fetches of one host at once, keeping at most `budget`
    /// bytes of refs in memory (the rest spilled).
    pub(crate) fn new(per_host: usize, budget: usize) -> Self {
        Self {
            hosts: HashMap::new(),
            due: BinaryHeap::new(),
            later: BTreeMap::new(),
            per_host: per_host.max(1),
            budget,
            memory: 0,
            queued: 0,
            spill: Spill::default(),
            spill_broken: false,
            stats: QueueStats::default(),
        }
    }

    /// The host a ref is queued under, or `None` when it is not queued (a URL the fetcher
    /// refuses without a request).
    pub(crate) fn host_of(r: &Ref) -> Option<String> {
        let url = Url::parse(&r.url).ok()?;
        (matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
            .then(|| host_key(&url))
    }

    /// Queues `r` (its input line `line_len` bytes long) under `host`, to start no sooner
    /// than `at` when given (its `notBefore`).
    pub(crate) fn push(
        &mut self,
        host: String,
        seq: u64,
        r: Ref,
        line_len: usize,
        at: Option<Instant>,
    ) {
        let cost = queued_cost(line_len);
        self.queued += 1;
        self.stats.peak_queued = self.stats.peak_queued.max(self.queued);
        if let Some(at) = at {
            self.add_memory(cost);
            self.later.insert((at, seq), (host, Box::new(r), cost));
            return;
        }
        self.enqueue(host, seq, r, cost, false);
    }

    /// Puts `r` in `host`'s queue (at the front for a ref whose `notBefore` came): in
    /// memory, or on disk when memory is over the budget or the host's queue already ends
    /// on disk (its order kept).
    fn enqueue(&mut self, host: String, seq: u64, r: Ref, cost: usize, front: bool) {
        let now = Instant::now();
        let over = self.memory + cost > self.budget;
        let h = self
            .hosts
            .entry(host.clone())
            .or_insert_with(|| Host::new(now));
        let ends_on_disk = matches!(h.items.back(), Some(Item::Disk(_)));
        let kept = if !front && !self.spill_broken && (ends_on_disk || over) {
            let given_back = spill_into(&mut self.spill, h, seq, r);
            self.spill_broken = given_back.is_some();
            given_back
        } else {
            Some(r)
        };
        let in_memory = kept.is_some();
        if let Some(r) = kept {
            let item = Item::Memory {
                seq,
                r: Box::new(r),
                cost,
            };
            if front {
                h.items.push_front(item);
            } else {
                h.items.push_back(item);
            }
        }
        let when = h.next.max(now);
        if in_memory {
            self.add_memory(cost);
        }
        self.schedule(&host, when);
    }

    fn add_memory(&mut self, cost: usize) {
        self.memory += cost;
        self.stats.peak_memory = self.stats.peak_memory.max(self.memory);
    }

    /// Puts `host` in the heap for [`LEAD`] before `at`, unless it is there already, has
    /// nothing to start or runs as many fetches as it may.
    fn schedule(&mut self, host: &str, at: Instant) {
        let per_host = self.per_host;
        if let Some(h) = self.hosts.get_mut(host)
            && !h.scheduled
            && !h.items.is_empty()
            && h.active < per_host
        {
            h.scheduled = true;
            let early = at.checked_sub(LEAD).unwrap_or(at);
            self.due.push(Reverse((early, host.to_owned())));
        }
    }

    /// True while more refs may be read: always, unless spilling failed and memory is
    /// over the budget.
    pub(crate) fn accepting(&self) -> bool {
        !self.spill_broken || self.memory < self.budget
    }

    /// Refs queued or waiting for their `notBefore`.
    pub(crate) fn queued(&self) -> usize {
        self.queued
    }

    /// Hosts with refs waiting for their turn (a `--metrics` gauge).
    pub(crate) fn hosts_waiting(&self) -> usize {
        self.due.len()
    }

    /// Refs waiting per host, queued or for their `notBefore` (a `--metrics` figure, read
    /// on a timer: it goes through every host).
    pub(crate) fn backlog_by_host(&self) -> HashMap<String, u64> {
        let mut backlog: HashMap<String, u64> = (self.hosts.iter())
            .filter(|(_, h)| !h.items.is_empty())
            .map(|(name, h)| (name.clone(), h.items.len() as u64))
            .collect();
        for (host, _, _) in self.later.values() {
            *backlog.entry(host.clone()).or_default() += 1;
        }
        backlog
    }

    /// When something may next be ready: the first host in the heap or ref waiting.
    pub(crate) fn next_due(&self) -> Option<Instant> {
        let host = self.due.peek().map(|Reverse((at, _))| *at);
        let later = self.later.keys().next().map(|(at, _)| *at);
        host.into_iter().chain(later).min()
    }

    /// The next ref whose host may be asked now, if any: moved out of its queue and
    /// counted as running until [`done`](Self::done).
    pub(crate) fn next_ready(&mut self, fetcher: &Fetcher) -> io::Result<Option<Ready>> {
        let now = Instant::now();
        self.release_later(now);
        while let Some(Reverse((at, _))) = self.due.peek() {
            if *at > now {
                return Ok(None);
            }
            let Some(Reverse((_, host))) = self.due.pop() else {
                break;
            };
            if let Some(ready) = self.try_host(host, now, fetcher)? {
                return Ok(Some(ready));
            }
        }
        Ok(None)
    }

    /// Refs whose `notBefore` has come join the front of their host's queue.
    fn release_later(&mut self, now: Instant) {
        while let Some(entry) = self.later.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let ((_, seq), (host, r, cost)) = entry.remove_entry();
            self.memory -= cost;
            self.enqueue(host, seq, *r, cost, true);
        }
    }

    /// A host popped from the heap: its next ref when it may be asked now; else it goes
    /// back in the heap for when it may (or waits for a fetch of it to end).
    fn try_host(
        &mut self,
        host: String,
        now: Instant,
        fetcher: &Fetcher,
    ) -> io::Result<Option<Ready>> {
        let per_host = self.per_host;
        let Some(h) = self.hosts.get_mut(&host) else {
            return Ok(None);
        };
        h.scheduled = false;
        if h.items.is_empty() || h.active >= per_host {
            return Ok(None);
        }
        if !h.answered_locally {
            let wait = fetcher.ready_in(&host);
            if wait > LEAD {
                self.schedule(&host, now + wait);
                return Ok(None);
            }
        }
        let (seq, r) = self.take_front(&host)?;
        let h = self.hosts.get_mut(&host).expect("present above");
        h.active += 1;
        h.next = if h.answered_locally {
            now
        } else {
            now + fetcher.gap(&host)
        };
        let next = h.next;
        self.schedule(&host, next);
        Ok(Some(Ready { host, seq, r }))
    }

    /// The first ref of `host`'s queue, from memory or read back from the spill file.
    fn take_front(&mut self, host: &str) -> io::Result<(u64, Ref)> {
        let h = self.hosts.get_mut(host).expect("a host with items");
        self.queued -= 1;
        match h.items.front_mut().expect("a host with items") {
            Item::Memory { .. } => {
                let Some(Item::Memory { seq, r, cost }) = h.items.pop_front() else {
                    unreachable!("front is in memory");
                };
                self.memory -= cost;
                Ok((seq, *r))
            }
            Item::Disk(run) => {
                let read = self.spill.read(run);
                if run.is_empty() {
                    h.items.pop_front();
                }
                read
            }
        }
    }

    /// A fetch of `host` ended: `answered` is when, if it sent a request (`None`: answered
    /// from the cache, or refused before a request); the host may be asked again its gap
    /// after that, as the fetcher's schedule measures it.
    pub(crate) fn done(&mut self, host: &str, answered: Option<Instant>, fetcher: &Fetcher) {
        let now = Instant::now();
        let Some(h) = self.hosts.get_mut(host) else {
            return;
        };
        h.active = h.active.saturating_sub(1);
        h.answered_locally = answered.is_none();
        h.next = answered.map_or(now, |at| h.next.max(at + fetcher.gap(host)));
        if h.items.is_empty() && h.active == 0 {
            self.hosts.remove(host);
            return;
        }
        let next = h.next.max(now);
        self.schedule(host, next);
    }

    /// The counters so far.
    pub(crate) fn stats(&self) -> QueueStats {
        QueueStats {
            spilled: self.spill.spilled(),
            ..self.stats
        }
    }

    /// The estimated bytes of refs queued in memory now.
    #[cfg(test)]
    pub(crate) fn memory(&self) -> usize {
        self.memory
    }

    /// Refs on disk now.
    #[cfg(test)]
    pub(crate) fn on_disk(&self) -> u64 {
        self.spill.held()
    }
}

/// Appends `r` to `h`'s spilled runs; gives it back when the spill file cannot be
/// written (said once, on stderr).
fn spill_into(spill: &mut Spill, h: &mut Host, seq: u64, r: Ref) -> Option<Ref> {
    let last = match h.items.back_mut() {
        Some(Item::Disk(run)) => Some(run),
        _ => None,
    };
    match spill.write(seq, &r, last) {
        Ok(Some(run)) => h.items.push_back(Item::Disk(run)),
        Ok(None) => {}
        Err(e) => {
            tracing::warn!(
                "cannot spill queued refs to a temporary file ({e}): keeping them in memory, \
                 reading the input only as fast as refs are fetched"
            );
            return Some(r);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use rip_http::HttpConfig;
    use std::time::Duration;

    const GAP: Duration = Duration::from_millis(100);

    fn fetcher() -> Fetcher {
        let mut cfg = HttpConfig::default();
        cfg.politeness.min_gap = GAP;
        cfg.politeness.jitter = Duration::ZERO;
        cfg.cache.dir = None;
        Fetcher::new(cfg).unwrap()
    }

    fn url(host: &str, i: u64) -> String {
        format!("http://{host}.test/{i}")
    }

    /// 5 refs for each of hosts a, b, c, grouped by host; room in memory for 3.
    fn queued() -> Hosts {
        let line = 40;
        let mut hosts = Hosts::new(1, 3 * queued_cost(line));
        for (h, name) in ["a", "b", "c"].iter().enumerate() {
            for i in 0..5 {
                let seq = h as u64 * 5 + i;
                let r = Ref::new(url(name, seq));
                let host = Hosts::host_of(&r).unwrap();
                hosts.push(host, seq, r, line, None);
            }
        }
        hosts
    }

    fn ready(hosts: &mut Hosts, f: &Fetcher) -> Option<(String, u64)> {
        let r = hosts.next_ready(f).unwrap()?;
        assert_eq!(Hosts::host_of(&r.r).as_ref(), Some(&r.host));
        Some((r.host, r.seq))
    }

    #[tokio::test(start_paused = true)]
    async fn each_host_in_turn_at_its_gap_and_past_the_budget_on_disk() {
        let f = fetcher();
        let mut hosts = queued();
        assert!(hosts.memory() <= 3 * queued_cost(40));
        assert_eq!(hosts.on_disk(), 12);
        // Every host's first ref at once, grouped input or not; then nothing: one each.
        let first: Vec<u64> = std::iter::from_fn(|| ready(&mut hosts, &f))
            .map(|(_, seq)| seq)
            .collect();
        assert_eq!(first, [0, 5, 10]);
        hosts.done("a.test:80", Some(Instant::now()), &f);
        assert_eq!(ready(&mut hosts, &f), None, "a's gap has not passed");
        // Its next fetch starts a little ahead (the fetcher itself waits out the gap).
        tokio::time::advance(GAP - LEAD - Duration::from_millis(1)).await;
        assert_eq!(
            ready(&mut hosts, &f),
            None,
            "not yet {LEAD:?} before the gap's end"
        );
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(ready(&mut hosts, &f), Some(("a.test:80".into(), 1)));
        // b answered from the cache: its next ref goes without waiting.
        hosts.done("b.test:80", None, &f);
        assert_eq!(ready(&mut hosts, &f), Some(("b.test:80".into(), 6)));
    }

    #[tokio::test(start_paused = true)]
    async fn every_ref_comes_back_once_in_its_hosts_order() {
        let f = fetcher();
        let mut hosts = queued();
        let mut got: Vec<(String, u64)> = Vec::new();
        while hosts.queued() > 0 {
            while let Some((host, seq)) = ready(&mut hosts, &f) {
                hosts.done(&host, Some(Instant::now()), &f);
                got.push((host, seq));
            }
            tokio::time::advance(GAP).await;
        }
        assert_eq!(got.len(), 15);
        for name in ["a", "b", "c"] {
            let seqs: Vec<u64> = got
                .iter()
                .filter(|(h, _)| h.starts_with(name))
                .map(|(_, s)| *s)
                .collect();
            assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{name}: {seqs:?}");
            assert_eq!(seqs.len(), 5);
        }
        assert_eq!((hosts.on_disk(), hosts.memory()), (0, 0));
        assert_eq!(hosts.stats().spilled, 12);
    }
}
