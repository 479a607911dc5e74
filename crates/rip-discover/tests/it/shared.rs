//! A crawl shared by several `rip-discover` processes through a real nats-server: the same
//! pages as one process finds, each fetched once, and a process killed mid-crawl leaves
//! nothing behind.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use rip_testkit::{NatsServer, Ran, Stage};
use rip_testserver::{Fault, Rule, TestServer};
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
/// three machines), with `extra` flags.
fn three(
    nats: &NatsServer,
    start: &str,
    crawl: &str,
    extra: &[&str],
) -> (Vec<TempDir>, Vec<Child>) {
    let dirs: Vec<TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let url = nats.url();
    let mut flags = vec![
        "--broker",
        &url,
        "--crawl",
        crawl,
        "--handover-wait",
        "200ms",
    ];
    flags.extend(extra);
    let children = dirs
        .iter()
        .map(|d| discover(d.path(), start, &flags).spawn())
        .collect();
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

fn urls(ran: &Ran) -> Vec<String> {
    ran.refs().iter().map(|r| r.url.clone()).collect()
}

#[test]
fn three_processes_find_the_pages_one_finds_each_fetched_once() {
    let nats = NatsServer::start();
    let servers = hosts(Duration::from_millis(5));
    let start = format!("{}/p0", servers[0].url("").trim_end_matches('/'));
    let (_dirs, children) = three(&nats, &start, "three", &["--ack-wait", "3s"]);
    let ran: Vec<Ran> = children
        .into_iter()
        .map(|c| Ran::wait("rip-discover", c))
        .collect();
    let shared_fetches = fetches(&servers);
    let gaps: Vec<_> = servers
        .iter()
        .flat_map(|s| ["127.0.0.1", "localhost"].map(|h| s.min_gap_for_host(h)))
        .collect();
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
    // Politeness across processes: a host is fetched by its owner only, at its gap.
    for gap in &gaps {
        assert!(gap.unwrap() >= Duration::from_millis(95), "{gaps:?}");
    }
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
    let (_dirs, mut children) = three(&nats, &start, "killed", &["--ack-wait", "3s"]);
    let page_requests = || fetches(&servers).values().sum::<usize>();
    rip_testkit::wait_for("40 pages fetched", Duration::from_secs(30), || {
        page_requests() >= 40
    });
    // The first process started first: it held every partition at the start.
    let mut victim = children.remove(0);
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
    let before_the_kill = urls_written_before_the_kill(&killed).len();
    assert!(before_the_kill > 0, "the killed process was crawling");
}

#[test]
fn max_pages_holds_for_the_crawl_as_a_whole() {
    let nats = NatsServer::start();
    let servers = hosts(Duration::from_millis(5));
    let start = format!("{}/p0", servers[0].url("").trim_end_matches('/'));
    let (_dirs, children) = three(&nats, &start, "budget", &["--max-pages", "40"]);
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
