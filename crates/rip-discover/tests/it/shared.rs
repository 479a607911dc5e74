//! A crawl shared by several `rip-discover` processes through a real nats-server: the same
//! pages as one process finds, each fetched once, and a process killed mid-crawl leaves
//! nothing behind.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use rip_testkit::{NatsServer, Ran, Stage};
use rip_testserver::{Fault, RetryAfter, Rule, TestServer};
use tempfile::TempDir;

use crate::Crawled;

const PAGES: usize = 24;

/// Three servers (hosts `127.0.0.1:P`; each also reachable as `localhost:P`, another host),
/// `PAGES` pages each, answered after `delay`. Page `j` links to two pages of its host under
/// the same name and, every fourth page, to page `j` of the next server under the other name:
/// six hosts, most of them reached only through another host's pages.
fn hosts(delay: Duration) -> Vec<TestServer> {
    let ports: Vec<u16> = (0..3).map(|_| rip_testkit::free_port()).collect();
    let name = |h: usize, local: bool| {
        let host = if local { "localhost" } else { "127.0.0.1" };
        format!("http://{host}:{}", ports[h % 3])
    };
    ports
        .iter()
        .enumerate()
        .map(|(h, &port)| {
            let mut b = TestServer::builder()
                .bind(SocketAddr::from(([127, 0, 0, 1], port)))
                .file("/robots.txt", "User-agent: *\nAllow: /\n")
                .rule(Rule::prefix("/p").always(Fault::serve().delay(delay)));
            for j in 0..PAGES {
                let mut links = format!(
                    "<a href=\"/p{}\">next</a> <a href=\"/p{}\">skip</a>",
                    (j + 1) % PAGES,
                    (j * 5 + 3) % PAGES
                );
                if j % 4 == 0 {
                    for local in [false, true] {
                        links += &format!(" <a href=\"{}/p{j}\">there</a>", name(h + 1, local));
                    }
                }
                let html = format!("<!doctype html><title>{h}/{j}</title><p>{links}</p>");
                b = b.file(format!("/p{j}"), html);
            }
            b.start_background().unwrap()
        })
        .collect()
}

fn discover(cache: &Path, start: &str, extra: &[&str]) -> Stage {
    Stage::new("rip-discover")
        .args([
            "-q",
            "--jitter",
            "0",
            "--delay",
            "100ms",
            "--retry-base",
            "10ms",
        ])
        .args(["--domain", r"^http://(127\.0\.0\.1|localhost):"])
        .arg("--cache-dir")
        .arg(cache)
        .args(extra)
        .arg(start)
}

/// Three processes sharing the crawl `crawl` from `start` (each with its own cache folder:
/// three machines; each names itself in an `X-Process` header), with `extra` flags;
/// `before(i)` runs before process `i` starts.
fn three(
    nats: &NatsServer,
    start: &str,
    crawl: &str,
    extra: &[&str],
    mut before: impl FnMut(usize),
) -> (Vec<TempDir>, Vec<Child>) {
    let url = nats.url();
    let mut dirs = Vec::new();
    let mut children = Vec::new();
    for i in 0..3 {
        before(i);
        let process = format!("X-Process: {i}");
        let mut flags = vec![
            "--broker",
            &url,
            "--crawl",
            crawl,
            "--handover-wait",
            "200ms",
        ];
        flags.extend(extra);
        flags.extend(["-H", process.as_str()]);
        let dir = tempfile::tempdir().unwrap();
        children.push(discover(dir.path(), start, &flags).spawn());
        dirs.push(dir);
    }
    (dirs, children)
}

/// Page requests per `host:port/path`, over all servers (both names of a server apart).
fn fetches(servers: &[TestServer]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for s in servers {
        for r in s.requests().iter().filter(|r| r.path.starts_with("/p")) {
            let host = r.host.clone().unwrap_or_default();
            *m.entry(format!("{host}{}", r.path)).or_default() += 1;
        }
    }
    m
}

/// For each host, the gaps between successive requests made by two different processes (the
/// `X-Process` header each is given): `(host, processes, gap)`.
fn gaps_between_processes(servers: &[TestServer]) -> Vec<(String, String, Duration)> {
    let mut out = Vec::new();
    for server in servers {
        let mut requests = server.requests();
        requests.sort_by_key(|r| r.elapsed);
        let mut last: BTreeMap<String, (Duration, String)> = BTreeMap::new();
        for r in requests {
            let host = r.host.clone().unwrap_or_default();
            let process = r.header("x-process").unwrap_or_default().to_owned();
            if let Some((at, before)) = last.get(&host)
                && *before != process
            {
                out.push((host.clone(), format!("{before}→{process}"), r.elapsed - *at));
            }
            last.insert(host, (r.elapsed, process));
        }
    }
    out
}

/// Page requests per process (its `X-Process` header).
fn pages_by_process(servers: &[TestServer]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for s in servers {
        for r in s.requests().iter().filter(|r| r.path.starts_with("/p")) {
            let process = r.header("x-process").unwrap_or_default().to_owned();
            *m.entry(process).or_default() += 1;
        }
    }
    m
}

fn urls(ran: &Ran) -> Vec<String> {
    ran.refs().iter().map(|r| r.url.clone()).collect()
}

#[test]
fn three_processes_find_the_pages_one_finds_each_fetched_once() {
    let nats = NatsServer::start();
    let servers = hosts(Duration::from_millis(5));
    let start = format!("{}/p0", servers[0].url("").trim_end_matches('/'));
    // The first process crawls alone a while: its hosts then move to the two others as
    // they join, while it is fetching them (the hand-over the gap must survive).
    let page_requests = || fetches(&servers).values().sum::<usize>();
    let (_dirs, children) = three(&nats, &start, "three", &["--ack-wait", "3s"], |i| {
        if i == 1 {
            rip_testkit::wait_for("10 pages fetched", Duration::from_secs(30), || {
                page_requests() >= 10
            });
        }
    });
    let ran: Vec<Ran> = children
        .into_iter()
        .map(|c| Ran::wait("rip-discover", c))
        .collect();
    let shared_fetches = fetches(&servers);
    let gaps = gaps_between_processes(&servers);
    let alone = tempfile::tempdir().unwrap();
    let one = discover(alone.path(), &start, &[]).run();
    assert_eq!(one.code, 0, "{}", one.stderr);
    let found_by_one: BTreeSet<String> = urls(&one).into_iter().collect();
    assert_eq!(found_by_one.len(), 6 * PAGES, "six hosts of {PAGES} pages");

    let mut found: Vec<String> = Vec::new();
    for r in &ran {
        assert_eq!(r.code, 0, "{}", r.stderr);
        found.extend(urls(r));
    }
    let distinct: BTreeSet<String> = found.iter().cloned().collect();
    assert_eq!(distinct, found_by_one, "the pages one process finds");
    assert_eq!(found.len(), distinct.len(), "each written by one process");
    let twice: Vec<_> = shared_fetches.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    assert_eq!(shared_fetches.len(), 6 * PAGES);
    // Politeness across processes: a host's requests from two processes never closer than
    // its gap (a host changes owner only with the hand-over wait between).
    let close: Vec<_> = gaps
        .iter()
        .filter(|g| g.2 < Duration::from_millis(95))
        .collect();
    assert!(
        close.is_empty(),
        "requests of two processes too close: {close:?}"
    );
    assert!(
        !gaps.is_empty(),
        "hosts changed owner while crawled (the gap checked)"
    );
    // Politeness across processes: a host is fetched by its owner only, at its gap.
    let written: Vec<usize> = ran.iter().map(|r| r.refs().len()).collect();
    let taken: Vec<u64> = ran
        .iter()
        .map(|r| r.counter("partitionsTakenOver"))
        .collect();
    let working = written.iter().filter(|n| **n > 0).count();
    assert!(
        working >= 2,
        "the hosts were shared: refs written {written:?}, partitions taken {taken:?}"
    );
}

/// The ref URLs of a killed process's output (no summary: it was killed).
fn urls_written_before_the_kill(ran: &Ran) -> Vec<String> {
    ran.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["_type"] == "ref")
        .filter_map(|v| v["url"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn a_process_killed_mid_crawl_leaves_its_hosts_to_the_others_and_nothing_is_lost() {
    let nats = NatsServer::start();
    let servers = hosts(Duration::from_millis(5));
    let start = format!("{}/p0", servers[0].url("").trim_end_matches('/'));
    let (_dirs, mut children) = three(&nats, &start, "killed", &["--ack-wait", "8s"], |_| {});
    let page_requests = || fetches(&servers).values().sum::<usize>();
    rip_testkit::wait_for("40 pages fetched", Duration::from_secs(90), || {
        page_requests() >= 40
    });
    // Kill the process that has fetched the most pages: its hosts are mid-crawl.
    let by_process = pages_by_process(&servers);
    let (victim, fetched_by_victim) = by_process
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(p, n)| (p.parse::<usize>().unwrap(), *n))
        .unwrap();
    let mut victim = children.remove(victim);
    victim.kill().unwrap();
    let at_kill = page_requests();
    let killed = Ran::wait("rip-discover", victim);
    let survivors: Vec<Ran> = children
        .into_iter()
        .map(|c| Ran::wait("rip-discover", c))
        .collect();

    let mut found: BTreeSet<String> = urls_written_before_the_kill(&killed).into_iter().collect();
    for r in &survivors {
        assert_eq!(r.code, 0, "{}", r.stderr);
        found.extend(urls(r));
    }
    assert_eq!(
        found.len(),
        6 * PAGES,
        "every page found, the killed process's included"
    );
    let counts = fetches(&servers);
    assert_eq!(counts.len(), 6 * PAGES, "every page fetched");
    let again: usize = counts.values().map(|n| n - 1).sum();
    assert!(
        again <= 12,
        "fetched again: {again} (pages at the kill: {at_kill}); {counts:?}"
    );
    assert!(fetched_by_victim > 0, "{by_process:?}");
}

#[test]
fn max_pages_holds_for_the_crawl_as_a_whole() {
    let nats = NatsServer::start();
    let servers = hosts(Duration::from_millis(5));
    let start = format!("{}/p0", servers[0].url("").trim_end_matches('/'));
    let (_dirs, children) = three(&nats, &start, "budget", &["--max-pages", "40"], |_| {});
    let ran: Vec<Ran> = children
        .into_iter()
        .map(|c| Ran::wait("rip-discover", c))
        .collect();
    let written: usize = ran.iter().map(|r| r.refs().len()).sum();
    assert_eq!(
        written,
        40,
        "{:?}",
        ran.iter().map(|r| &r.stderr).collect::<Vec<_>>()
    );
    assert!(ran.iter().any(|r| r.counter("budgetExhausted") == 1));
    assert!(
        fetches(&servers).len() < 6 * PAGES,
        "the crawl stopped early"
    );
}

#[test]
fn a_broker_that_is_not_there_is_an_error_naming_it_without_its_password() {
    let cache = tempfile::tempdir().unwrap();
    let broker = rip_testkit::absent_broker("s3cret");
    let ran = discover(
        cache.path(),
        "http://127.0.0.1:9/",
        &["--broker", &broker, "--crawl", "x"],
    )
    .run();
    rip_testkit::assert_broker_absent(&ran, "s3cret");
    assert!(ran.stdout.is_empty(), "no records: {}", ran.stdout);
}

#[test]
fn the_broker_killed_and_restarted_mid_crawl_and_every_page_is_still_found() {
    let mut nats = NatsServer::start();
    let servers = hosts(Duration::from_millis(5));
    let start = format!("{}/p0", servers[0].url("").trim_end_matches('/'));
    let (_dirs, children) = three(&nats, &start, "restarted", &["--ack-wait", "3s"], |_| {});
    let page_requests = || fetches(&servers).values().sum::<usize>();
    rip_testkit::wait_for("30 pages fetched", Duration::from_secs(30), || {
        page_requests() >= 30
    });
    let at_kill = page_requests();
    nats.kill();
    std::thread::sleep(Duration::from_millis(500));
    nats.restart();
    let while_away = page_requests() - at_kill;
    let ran: Vec<Ran> = children
        .into_iter()
        .map(|c| Ran::wait("rip-discover", c))
        .collect();
    let mut found = BTreeSet::new();
    for r in &ran {
        assert_eq!(r.code, 0, "{}", r.stderr);
        found.extend(urls(r));
    }
    assert_eq!(found.len(), 6 * PAGES, "every page found");
    let counts = fetches(&servers);
    assert_eq!(counts.len(), 6 * PAGES, "every page fetched");
    let again: usize = counts.values().map(|n| n - 1).sum();
    // Pages fetched while the broker was away could not be acknowledged: they come again
    // after the restart and are fetched again. Beyond those, at most a few in flight.
    // (A fixed bound of 12 failed now and then, before and after the frontier served hosts
    // in turn: 13 fetched again with 18 fetched while the broker was away.)
    assert!(
        again <= while_away + 12,
        "fetched again: {again}, {while_away} fetched while the broker was away; {counts:?}"
    );
}

/// A host told to wait (429, Retry-After: 10) under one owner stays held under the next: its
/// owner is killed 1.5 s after the 429, and the process that takes the host over (after the
/// dead owner's 5 s lease) sends nothing to it before the 10 s are up.
#[test]
fn a_retry_after_holds_when_its_host_changes_owner() {
    let nats = NatsServer::start();
    let mut b = TestServer::builder()
        .file("/robots.txt", "User-agent: *\nAllow: /\n")
        .rule(Rule::path("/p3").once(Fault::retry_after(429, RetryAfter::Seconds(10))));
    for j in 0..12 {
        let html = format!(
            "<a href=\"/p{}\">a</a> <a href=\"/p{}\">b</a>",
            j + 1,
            j + 2
        );
        b = b.file(format!("/p{j}"), html);
    }
    let server = b.start_background().unwrap();
    let start = server.url("/p0");
    let (_dirs, mut children) = three(&nats, &start, "held", &["--ack-wait", "1s"], |i| {
        if i == 1 {
            rip_testkit::wait_for("the 429", Duration::from_secs(30), || {
                server.requests().iter().any(|r| r.status == Some(429))
            });
            std::thread::sleep(Duration::from_millis(1500));
        }
    });
    let told = server
        .requests()
        .into_iter()
        .find(|r| r.status == Some(429))
        .unwrap()
        .elapsed;
    children[0].kill().unwrap();
    for c in children {
        Ran::wait("rip-discover", c);
    }
    let after: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.elapsed > told && r.header("x-process") != Some("0"))
        .collect();
    assert!(!after.is_empty(), "the host was taken over");
    let first = after.iter().map(|r| r.elapsed).min().unwrap() - told;
    assert!(
        first >= Duration::from_millis(9_500),
        "{first:?} after the 429"
    );
}
