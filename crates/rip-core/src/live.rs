//! What a stage has counted so far, readable from another thread while it runs: the source
//! of the `--metrics` endpoint (rip-cli's `metrics` module renders it in the Prometheus
//! text format).
//!
//! There is one count, not two: a stage's [`Books`](crate::Books) publish their own numbers
//! here ([`LiveStage::publish`]: input and output by kind, passed through, bad lines, the
//! summary's counters), now and then while the run goes on (at most every
//! [`PUBLISH_EVERY`], and at every flush) and once more at the end with the very numbers of
//! the `summary` record. The stage-specific counters a summary only gathers at its end
//! (rip-fetch's `retries`, `failed.TIMEOUT`, …, kept in atomics of the HTTP stack) and the
//! gauges of a stage's state (hosts waiting, the frontier's size, …) are read at scrape
//! time by the readers a stage adds ([`LiveStage::add_reader`]), from the same atomics its
//! summary reads at the end. So the per-record cost is a clock read, never a lock.
//!
//! Stages are found by name ([`stage`]): a process (rip-discover, which runs a fetch inside
//! its crawl) may hold more than one.
//!
//! Nothing is published unless the program serves metrics ([`enable`]): without
//! `--metrics`, the cost is one relaxed atomic load a record.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns publishing on for this process (the program serves metrics).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// True once [`enable`]d: stages publish their books and set their gauges.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// How stale the published books may get while records flow.
pub const PUBLISH_EVERY: Duration = Duration::from_millis(200);

/// A stage's books at one moment (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BooksSnapshot {
    /// Records read, by kind.
    pub input: BTreeMap<String, u64>,
    /// Records written, by kind.
    pub output: BTreeMap<String, u64>,
    /// Of `output`, the records written back unchanged.
    pub passed_through: BTreeMap<String, u64>,
    /// Input lines that were not valid records.
    pub bad_lines: u64,
    /// The summary's stage-specific counters counted so far.
    pub counters: BTreeMap<String, u64>,
    /// True once the `summary` record is written: these are its numbers.
    pub finished: bool,
}

/// What a stage's readers say at scrape time: counters (as in a summary's `counters`) and
/// gauges (the stage's state now), by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Readings {
    /// Counters by their summary name (`retries`, `failed.TIMEOUT`, …).
    pub counters: BTreeMap<String, u64>,
    /// Gauges by name (`hostsWaiting`, `frontier`, …).
    pub gauges: BTreeMap<String, i64>,
}

impl Readings {
    /// Sets the counter `name`.
    pub fn counter(&mut self, name: impl Into<String>, value: u64) {
        self.counters.insert(name.into(), value);
    }

    /// Sets the gauge `name`.
    pub fn gauge(&mut self, name: impl Into<String>, value: i64) {
        self.gauges.insert(name.into(), value);
    }
}

type Reader = (String, Box<dyn Fn(&mut Readings) + Send + Sync>);

/// One stage's live account (see the module docs).
pub struct LiveStage {
    name: String,
    books: Mutex<BooksSnapshot>,
    readers: Mutex<Vec<Reader>>,
    ticked: Mutex<Readings>,
    hosts: Mutex<PerHost>,
}

impl std::fmt::Debug for LiveStage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveStage")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl LiveStage {
    /// The stage's name, e.g. `rip-fetch`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Replaces the published books. Once `finished`, no URL waits for its host any more.
    pub fn publish(&self, books: BooksSnapshot) {
        if books.finished {
            let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
            hosts.backlog.clear();
        }
        *self.books.lock().unwrap_or_else(PoisonError::into_inner) = books;
    }

    /// The books as last published.
    pub fn books(&self) -> BooksSnapshot {
        self.books
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Adds a reader, called at every scrape to say counters and gauges from the stage's
    /// own state (atomics: a reader must not wait on the stage). A reader of the same `key`
    /// is replaced (a second run in the process). The reader is removed when the returned
    /// guard is dropped: what it holds (an HTTP stack, whose drop writes its hosts'
    /// schedules) is not kept alive past the stage.
    #[must_use = "the reader is removed when the guard is dropped"]
    pub fn add_reader(
        self: &Arc<Self>,
        key: &str,
        reader: impl Fn(&mut Readings) + Send + Sync + 'static,
    ) -> ReaderGuard {
        let mut readers = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        readers.retain(|(k, _)| k != key);
        readers.push((key.to_owned(), Box::new(reader)));
        ReaderGuard {
            stage: self.clone(),
            key: key.to_owned(),
        }
    }

    /// Sets a gauge of the stage's state, for a stage that knows it in its own loop, on a
    /// timer (not a record at a time: this takes a lock).
    pub fn set_gauge(&self, name: &str, value: i64) {
        let mut ticked = self.ticked.lock().unwrap_or_else(PoisonError::into_inner);
        set(&mut ticked.gauges, name, value);
    }

    /// Sets a counter the stage keeps in its own loop, on a timer (as
    /// [`LiveStage::set_gauge`]).
    pub fn set_counter(&self, name: &str, value: u64) {
        let mut ticked = self.ticked.lock().unwrap_or_else(PoisonError::into_inner);
        set(&mut ticked.counters, name, value);
    }

    /// Counts a failure of a URL of `host` (every failure record a stage writes, with
    /// `--metrics`: failures are few beside pages).
    pub fn count_host_failure(&self, host: &str) {
        let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        match hosts.failures.get_mut(host) {
            Some(n) => *n += 1,
            None => {
                hosts.failures.insert(host.to_owned(), 1);
            }
        }
    }

    /// Sets every host's backlog now (URLs waiting for their host's turn), on a timer.
    pub fn set_host_backlog(&self, backlog: impl IntoIterator<Item = (String, u64)>) {
        let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        hosts.backlog = backlog.into_iter().collect();
    }

    /// The [`top_hosts`] hosts by backlog and by failures, the rest summed as `other`.
    pub fn per_host(&self) -> HostFigures {
        let hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        let n = top_hosts();
        HostFigures {
            backlog: top_n(&hosts.backlog, n),
            failures: top_n(&hosts.failures, n),
        }
    }

    /// What the readers say now, under the counters of the published books: once the
    /// summary is written, its counters are the numbers (the readers' atomics were read
    /// for it).
    pub fn readings(&self) -> Readings {
        let mut readings = self
            .ticked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        for (_, reader) in self
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            reader(&mut readings);
        }
        let books = self.books();
        for (name, value) in books.counters {
            let counter = readings.counters.entry(name).or_default();
            *counter = if books.finished {
                value
            } else {
                (*counter).max(value)
            };
        }
        readings
    }
}

fn set<V>(map: &mut BTreeMap<String, V>, name: &str, value: V) {
    match map.get_mut(name) {
        Some(v) => *v = value,
        None => {
            map.insert(name.to_owned(), value);
        }
    }
}

/// Removes its reader from the stage when dropped ([`LiveStage::add_reader`]).
#[derive(Debug)]
pub struct ReaderGuard {
    stage: Arc<LiveStage>,
    key: String,
}

impl Drop for ReaderGuard {
    fn drop(&mut self) {
        let mut readers = self
            .stage
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        readers.retain(|(k, _)| *k != self.key);
    }
}

/// What a stage knows per host: all of them (a few bytes a host); only the top ones are
/// served.
#[derive(Debug, Default)]
struct PerHost {
    backlog: HashMap<String, u64>,
    failures: HashMap<String, u64>,
}

/// A stage's figures per host as served: at most [`top_hosts`] hosts each, by their value,
/// then `other` with the rest added up (when there is a rest).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFigures {
    /// URLs waiting for their host's turn (rip-fetch).
    pub backlog: Vec<(String, u64)>,
    /// Failure records written, by the host of their URL.
    pub failures: Vec<(String, u64)>,
}

/// The label of the hosts past the top ones.
pub const OTHER_HOSTS: &str = "other";

/// Hosts served with a label of their own by default (`--metrics-hosts`).
pub const DEFAULT_TOP_HOSTS: usize = 10;

static TOP_HOSTS: AtomicUsize = AtomicUsize::new(DEFAULT_TOP_HOSTS);

/// Sets how many hosts are served with a label of their own (`--metrics-hosts N`).
pub fn set_top_hosts(n: usize) {
    TOP_HOSTS.store(n, Ordering::Relaxed);
}

/// How many hosts are served with a label of their own.
pub fn top_hosts() -> usize {
    TOP_HOSTS.load(Ordering::Relaxed)
}

/// The `n` largest values (ties by host name; zeros left out), then [`OTHER_HOSTS`] with the
/// rest added up when there is a rest: at most `n + 1` entries.
fn top_n(values: &HashMap<String, u64>, n: usize) -> Vec<(String, u64)> {
    let mut all: Vec<(&String, u64)> = values
        .iter()
        .filter(|(_, v)| **v > 0)
        .map(|(h, v)| (h, *v))
        .collect();
    all.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let rest: u64 = all.iter().skip(n).map(|(_, v)| v).sum();
    let mut top: Vec<(String, u64)> = all
        .into_iter()
        .take(n)
        .map(|(h, v)| (h.clone(), v))
        .collect();
    if rest > 0 {
        top.push((OTHER_HOSTS.to_owned(), rest));
    }
    top
}

/// The host (and port, when there is one) of `url`, as a label: `example.org`,
/// `127.0.0.1:8080`; `unknown` for what does not parse.
pub fn host_label(url: &str) -> String {
    host_and_port(url).unwrap_or_else(|| "unknown".to_owned())
}

/// The host of `url` and its port when the URL names one (`127.0.0.1:8080`,
/// `example.org`); `None` when it does not parse or has no host. The one spelling of a
/// host in labels and reports (rip-health's per-host counts use it too).
pub fn host_and_port(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?;
    Some(match u.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_owned(),
    })
}

static STAGES: Mutex<Vec<Arc<LiveStage>>> = Mutex::new(Vec::new());

/// The live account of the stage `name` in this process, made on first use.
pub fn stage(name: &str) -> Arc<LiveStage> {
    let mut stages = STAGES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(s) = stages.iter().find(|s| s.name == name) {
        return s.clone();
    }
    let s = Arc::new(LiveStage {
        name: name.to_owned(),
        books: Mutex::new(BooksSnapshot::default()),
        readers: Mutex::new(Vec::new()),
        ticked: Mutex::new(Readings::default()),
        hosts: Mutex::new(PerHost::default()),
    });
    stages.push(s.clone());
    s
}

/// Every stage of this process with a live account, in the order they started.
pub fn stages() -> Vec<Arc<LiveStage>> {
    STAGES
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// A value of `/proc/self/status` (`VmRSS`, `VmHWM`), in bytes.
pub fn proc_status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status
        .lines()
        .find(|l| l.strip_prefix(field).is_some_and(|r| r.starts_with(':')))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counters_win_once_finished() {
        enable();
        let s = stage("rip-live-test");
        let reader = s.add_reader("test", |r| r.counter("retries", 3));
        s.set_gauge("hostsWaiting", 2);
        let mut books = BooksSnapshot::default();
        books.counters.insert("retries".into(), 1);
        s.publish(books.clone());
        assert_eq!(
            s.readings().counters["retries"],
            3,
            "the live reading is newer"
        );
        books.finished = true;
        s.publish(books);
        let r = s.readings();
        assert_eq!((r.counters["retries"], r.gauges["hostsWaiting"]), (1, 2));
        assert!(Arc::ptr_eq(&s, &stage("rip-live-test")));
        drop(reader);
        assert!(!s.readings().gauges.is_empty() && s.readers.lock().unwrap().is_empty());
    }

    #[test]
    fn hosts_past_the_top_ones_are_summed_as_other() {
        let s = stage("rip-live-hosts-test");
        for i in 0..25u64 {
            let host = format!("h{i:02}.example");
            for _ in 0..=i {
                s.count_host_failure(&host);
            }
        }
        s.set_host_backlog((0..3u64).map(|i| (format!("b{i}"), i)));
        let figures = s.per_host();
        let n = top_hosts();
        assert_eq!(figures.failures.len(), n + 1, "{figures:?}");
        assert_eq!(figures.failures[0], ("h24.example".to_owned(), 25));
        let total: u64 = figures.failures.iter().map(|(_, v)| v).sum();
        assert_eq!(total, (1..=25).sum::<u64>(), "nothing lost in other");
        assert_eq!(figures.failures[n].0, OTHER_HOSTS);
        let backlog = vec![("b2".to_owned(), 2), ("b1".to_owned(), 1)];
        assert_eq!(
            figures.backlog, backlog,
            "no other without a rest, no zeros"
        );
        assert_eq!(host_label("http://127.0.0.1:8080/a"), "127.0.0.1:8080");
        assert_eq!(host_label("https://Example.org/"), "example.org");
    }

    #[test]
    fn resident_memory_is_read() {
        let rss = proc_status_bytes("VmRSS").unwrap();
        let peak = proc_status_bytes("VmHWM").unwrap();
        assert!(rss > 0 && peak >= rss / 2, "{rss} {peak}");
    }
}
