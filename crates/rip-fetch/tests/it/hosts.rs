//! Many hosts (one test server per port, each port a host): every host with work is kept
//! busy up to its gap whatever the input order, no gap is broken (judged from the servers'
//! logs), and refs queued past the memory budget wait on disk.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use rip_core::Record;
use rip_testkit::{Ran, Stage};
use rip_testserver::{Fault, RetryAfter, Rule, TestServer, min_gap};

use super::{HTML, fetch_stage, refs};

/// `hosts` servers with `pages` pages each, on one runtime of the test's.
struct Hosts {
    servers: Vec<TestServer>,
    _runtime: tokio::runtime::Runtime,
}

impl Hosts {
    fn start(hosts: usize, pages: usize, rule: impl Fn(usize) -> Option<Rule>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let servers = (0..hosts)
            .map(|h| {
                let mut b = TestServer::builder();
                for i in 0..pages {
                    b = b.file(format!("/p{i}"), HTML);
                }
                if let Some(rule) = rule(h) {
                    b = b.rule(rule);
                }
                runtime.block_on(b.start()).unwrap()
            })
            .collect();
        Self {
            servers,
            _runtime: runtime,
        }
    }

    /// Every page's URL, grouped by host (as a crawl or a site list writes them).
    fn grouped(&self, pages: usize) -> Vec<String> {
        self.servers
            .iter()
            .flat_map(|s| (0..pages).map(|i| s.url(&format!("/p{i}"))))
            .collect()
    }

    /// The same URLs, host after host in turn.
    fn interleaved(&self, pages: usize) -> Vec<String> {
        (0..pages)
            .flat_map(|i| self.servers.iter().map(move |s| s.url(&format!("/p{i}"))))
            .collect()
    }

    /// From the first request any server saw to the last.
    fn span(&self) -> Duration {
        let times: Vec<SystemTime> = self
            .servers
            .iter()
            .flat_map(|s| s.requests().into_iter().map(|r| r.time))
            .collect();
        let first = times.iter().min().unwrap();
        let last = times.iter().max().unwrap();
        last.duration_since(*first).unwrap()
    }

    /// The smallest gap any host saw between two requests.
    fn min_gap(&self) -> Duration {
        self.servers
            .iter()
            .filter_map(|s| min_gap(&s.requests()))
            .min()
            .unwrap()
    }

    fn requests(&self) -> usize {
        self.servers.iter().map(|s| s.requests().len()).sum()
    }
}

/// rip-fetch with a 250 ms gap and one request per host, over `urls`.
fn polite_fetch(urls: &[String], extra: &[&str]) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    Stage::new("rip-fetch")
        .args(["--delay", "250ms", "--jitter", "0ms", "--per-host", "1"])
        .args(["--ignore-robots", "--cache", "off", "--quiet"])
        .arg("--cache-dir")
        .arg(dir.path())
        .args(extra)
        .stdin(refs(urls))
        .run()
}

/// Each URL of `urls` has exactly one page record.
fn assert_one_page_each(out: &Ran, urls: &[String]) {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for r in out.records() {
        if let Record::Page(p) = r {
            *seen.entry(p.url.as_str()).or_default() += 1;
        }
    }
    let want: BTreeSet<&str> = urls.iter().map(String::as_str).collect();
    assert_eq!(seen.keys().copied().collect::<BTreeSet<_>>(), want);
    assert!(seen.values().all(|n| *n == 1), "a URL written twice");
}

#[test]
fn grouped_input_keeps_every_host_busy_like_interleaved_input() {
    const HOSTS: usize = 16;
    const PAGES: usize = 8;
    let gap = Duration::from_millis(250);
    // -c 2: at most 8 fetch tasks, fewer than the hosts. Before the per-host queues, the
    // 8 refs read ahead were all the first host's: a few hosts at a time (6.8 s here).
    let mut spans = Vec::new();
    for order in ["grouped", "interleaved"] {
        let hosts = Hosts::start(HOSTS, PAGES, |_| None);
        let urls = match order {
            "grouped" => hosts.grouped(PAGES),
            _ => hosts.interleaved(PAGES),
        };
        let out = polite_fetch(&urls, &["-c", "2"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_one_page_each(&out, &urls);
        assert_eq!(hosts.requests(), HOSTS * PAGES, "one request per page");
        let g = hosts.min_gap();
        assert!(g >= gap - Duration::from_millis(5), "{order}: {g:?} apart");
        spans.push(hosts.span());
    }
    let (grouped, interleaved) = (spans[0], spans[1]);
    // Each host needs 7 gaps (1.75 s) for its 8 pages: every host busy from the start.
    let busy = gap * (PAGES as u32 - 1);
    assert!(
        grouped < busy + Duration::from_millis(600),
        "grouped input took {grouped:?}: hosts waited for others"
    );
    // The rate, pages / (span + gap), is the limit (hosts / gap) when every host is busy
    // from the first request to the last: grouped within 10 % of interleaved.
    let rate = |span: Duration| (HOSTS * PAGES) as f64 / (span + gap).as_secs_f64();
    let ratio = rate(grouped) / rate(interleaved);
    assert!(
        ratio > 0.9,
        "grouped {grouped:?} vs interleaved {interleaved:?}: {:.0} vs {:.0} pages/s",
        rate(grouped),
        rate(interleaved)
    );
}

#[test]
fn a_resting_host_does_not_hold_the_others_back() {
    // The first host answers 503 with Retry-After: 2 s to everything: its refs wait for
    // it (and end as failures, one attempt each), while the other hosts, further down the
    // input, are served.
    let hosts = Hosts::start(4, 4, |h| {
        (h == 0).then(|| Rule::prefix("/").always(Fault::retry_after(503, RetryAfter::Seconds(2))))
    });
    let urls = hosts.grouped(4);
    let out = polite_fetch(&urls, &["-c", "2", "--attempts", "1"]);
    assert_eq!(out.code, 2, "the resting host's refs fail: {}", out.stderr);
    let pages = out.of("page").len();
    let failures = out.of("failure").len();
    assert_eq!((pages, failures), (12, 4), "one record per ref");
    let rested = hosts.servers[0].requests();
    let start = rested[0].time;
    for s in &hosts.servers[1..] {
        let last = s.requests().iter().map(|r| r.time).max().unwrap();
        let after = last.duration_since(start).unwrap();
        assert!(
            after < Duration::from_millis(1800),
            "served {after:?} after the rest began"
        );
    }
    let rests = min_gap(&rested).unwrap();
    assert!(
        rests >= Duration::from_millis(1990),
        "Retry-After kept: {rests:?}"
    );
}

#[test]
fn refs_past_the_memory_budget_wait_on_disk_and_all_come_back() {
    const HOSTS: usize = 8;
    const PAGES: usize = 150;
    let hosts = Hosts::start(HOSTS, PAGES, |_| None);
    let urls = hosts.grouped(PAGES);
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--ignore-robots",
        "--quiet",
        "-c",
        "2",
        "--queue-memory",
        "16KiB",
    ];
    let out = fetch_stage(&args, dir.path(), &refs(&urls)).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_one_page_each(&out, &urls);
    let spilled = out.counter("queueSpilled");
    let peak = out.counter("queueMemoryPeak");
    // Refs are read far faster than two fetches at a time take them: most wait, and
    // most of those on disk.
    let half = urls.len() as u64 / 2;
    assert!(spilled > half, "{spilled} of {} refs spilled", urls.len());
    assert!(out.counter("queuedPeak") > half);
    assert!(peak <= 16 << 10, "{peak} bytes of refs in memory");
}

#[test]
fn a_hosts_crawl_delay_slows_it_alone() {
    // The first host's robots.txt asks for 1 s between requests: its 3 pages take 2 s,
    // while the second host, behind it in the input, goes at the 100 ms gap meanwhile.
    let hosts = Hosts::start(2, 3, |h| {
        (h == 0).then(|| {
            Rule::path("/robots.txt").always(Fault::body(
                "text/plain",
                "User-agent: *\nCrawl-delay: 1\nAllow: /\n",
            ))
        })
    });
    let urls = hosts.grouped(3);
    let dir = tempfile::tempdir().unwrap();
    let out = Stage::new("rip-fetch")
        .args(["--delay", "100ms", "--jitter", "0ms", "--per-host", "1"])
        .args(["--cache", "off", "--quiet", "-c", "1"])
        .arg("--cache-dir")
        .arg(dir.path())
        .stdin(refs(&urls))
        .run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_one_page_each(&out, &urls);
    let pages = |s: &TestServer| -> Vec<_> {
        s.requests()
            .into_iter()
            .filter(|r| r.path != "/robots.txt")
            .collect()
    };
    let slow = pages(&hosts.servers[0]);
    let g = min_gap(&slow).unwrap();
    assert!(g >= Duration::from_millis(990), "Crawl-delay kept: {g:?}");
    // Measured from the first request of the run (the slow host's robots.txt): with one
    // request in flight at most (`-c 1`), a fetch waiting out the Crawl-delay must not hold
    // that one place (it once did, and the fast host's pages all came after 1 s).
    let start = hosts.servers[0].requests()[0].time;
    let fast = pages(&hosts.servers[1]);
    let done = fast.iter().map(|r| r.time).max().unwrap();
    let after = done.duration_since(start).unwrap();
    assert!(
        after < Duration::from_millis(900),
        "the other host waited: {after:?}"
    );
    assert!(min_gap(&fast).unwrap() >= Duration::from_millis(95));
}

#[test]
fn a_host_whose_circuit_opens_fails_fast_and_the_others_go_on() {
    // The first host answers 500 to everything: after 3 failures in a row its circuit
    // opens, and its other refs fail at once (`circuit.open`, no request), while the
    // second host is served at its gap.
    let hosts = Hosts::start(2, 8, |h| {
        (h == 0).then(|| Rule::prefix("/").always(Fault::status(500)))
    });
    let urls = hosts.grouped(8);
    let args = ["-c", "1", "--attempts", "1", "--circuit-threshold", "3"];
    let out = polite_fetch(&urls, &args);
    assert_eq!(out.code, 2, "{}", out.stderr);
    let failures = out.of("failure");
    assert_eq!(
        (out.of("page").len(), failures.len()),
        (8, 8),
        "one record per ref"
    );
    let resting = failures
        .iter()
        .filter(|r| serde_json::to_string(r).unwrap().contains("circuit.open"))
        .count();
    assert_eq!(resting, 5, "refs after the third failure");
    assert_eq!(
        hosts.servers[0].requests().len(),
        3,
        "no request while resting"
    );
    let fast = hosts.servers[1].requests();
    assert!(min_gap(&fast).unwrap() >= Duration::from_millis(245));
    let span = fast
        .last()
        .unwrap()
        .time
        .duration_since(fast[0].time)
        .unwrap();
    // Seven gaps take 1.75 s; waiting behind the resting host's five refs would add 1.25 s
    // more. 1.8 s alone, 2.86 s once beside a fresh clone's whole suite on 2 cores.
    assert!(
        span < Duration::from_millis(3000),
        "the other host: {span:?}"
    );
}
