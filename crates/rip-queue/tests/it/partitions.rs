//! Streams partitioned by host: each host worked on by one worker at a time, so the per-host
//! gap holds for the whole crawl, and a dead worker's hosts taken over by another.

use super::{outcomes, pull, queue, refs, site, wait_for};
use rip_testkit::{NatsServer, Ran, path_with_bins};
use rip_testserver::TestServer;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// The server's logged requests for pages (robots.txt left out).
fn pages(server: &TestServer) -> Vec<rip_testserver::RequestRecord> {
    server
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/p"))
        .collect()
}

/// A worker fetching refs into `pages` with a `gap` per host, its cache folder its own (as on
/// a machine of its own).
fn fetcher(nats: &NatsServer, cache: &Path, gap: &str, extra: &[&str]) -> Child {
    queue(nats)
        .env("PATH", path_with_bins())
        .args([
            "work",
            "refs",
            "pages",
            "--idle-exit",
            "2s",
            "--linger",
            "50ms",
        ])
        .args(extra)
        .args([
            "--",
            "rip-fetch",
            "-q",
            "--jitter",
            "0ms",
            "--delay",
            gap,
            "--cache-dir",
        ])
        .arg(cache)
        .spawn()
}

fn push(nats: &NatsServer, urls: &[String], partitions: &str) {
    let ran = queue(nats)
        .args(["push", "refs", "--partitions", partitions])
        .stdin(refs(urls))
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

/// Each URL has exactly one `page` in `pages`.
fn assert_one_page_each(nats: &NatsServer, urls: &[String]) {
    let (_, values) = pull(nats, "pages");
    let outcomes = outcomes(&values);
    for url in urls {
        assert_eq!(outcomes.get(url), Some(&vec!["page".to_owned()]), "{url}");
    }
    assert_eq!(outcomes.len(), urls.len());
}

#[test]
fn three_workers_on_three_hosts_keep_each_hosts_gap_as_one_fetcher_would() {
    let nats = NatsServer::start();
    let hosts: Vec<_> = (0..3).map(|_| site(12, Duration::ZERO)).collect();
    let urls: Vec<String> = hosts.iter().flat_map(|(_, u)| u.clone()).collect();
    push(&nats, &urls, "64");
    let caches: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let workers: Vec<Child> = caches
        .iter()
        .map(|c| fetcher(&nats, c.path(), "200ms", &["--batch", "4", "-j", "3"]))
        .collect();
    let ran: Vec<Ran> = workers
        .into_iter()
        .map(|w| Ran::wait("rip-queue work", w))
        .collect();
    for r in &ran {
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    assert_one_page_each(&nats, &urls);
    for (server, _) in &hosts {
        let pages = pages(server);
        assert_eq!(pages.len(), 12);
        let gap = rip_testserver::min_gap(&pages).unwrap();
        assert!(
            gap >= Duration::from_millis(195),
            "a host got two requests {gap:?} apart"
        );
    }
    // Hosts in different partitions are worked on at once: the crawl's span (from the
    // servers' own clocks) is well under the sum of the hosts' own spans (2.2 s each: 12
    // pages at 5 a second), which one after the other would take. Workers start a
    // partition a hand-over wait after taking it, so starts are staggered by up to ~2 s.
    // Hosts that share a partition (random ports: ~5% with 64) are one after the other.
    let partition = |urls: &Vec<String>| rip_queue::partition::of_url(Some(&urls[0]), 64);
    let distinct: std::collections::BTreeSet<u32> =
        hosts.iter().map(|(_, u)| partition(u)).collect();
    let arrivals = |server: &TestServer| -> Vec<Instant> {
        let start = server.started_at().into_std();
        pages(server)
            .into_iter()
            .map(|r| start + r.elapsed)
            .collect()
    };
    let span = |times: &[Instant]| *times.iter().max().unwrap() - *times.iter().min().unwrap();
    let each: Duration = hosts.iter().map(|(s, _)| span(&arrivals(s))).sum();
    let all: Vec<Instant> = hosts.iter().flat_map(|(s, _)| arrivals(s)).collect();
    if distinct.len() == hosts.len() {
        assert!(
            span(&all) < each * 85 / 100,
            "{:?} for hosts taking {each:?}",
            span(&all)
        );
    }
}

#[test]
fn a_killed_owner_s_hosts_are_taken_over_and_nothing_is_lost() {
    let nats = NatsServer::start();
    let (server, urls) = site(24, Duration::from_millis(100));
    push(&nats, &urls, "4");
    let (a_cache, b_cache) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let args = ["--batch", "3", "--ack-wait", "2s"];
    let mut owner = fetcher(&nats, a_cache.path(), "0ms", &args);
    wait_for("the owner's first 6 pages", Duration::from_secs(20), || {
        pages(&server).len() >= 6
    });
    owner.kill().unwrap(); // SIGKILL: its lease and name expire, its records come back
    owner.wait().unwrap();
    let heir = fetcher(&nats, b_cache.path(), "0ms", &args);
    let ran = Ran::wait("rip-queue work", heir);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_one_page_each(&nats, &urls);
    let fetched = pages(&server).len();
    assert!(
        fetched <= 24 + 3,
        "{fetched} fetches: at most one batch done twice"
    );
}

/// A broker that answers nothing for longer than a lease may go unrenewed (frozen 7 s, as a
/// cluster electing a leader answers nothing): the worker pauses its run before the lease
/// could pass to another, and once the broker answers and the lease is renewed at the
/// revision it had, goes on with the same batch. Before, the run was dropped and its
/// records came back after the ack wait, fetched again (issue 41's kill run: 51 records).
#[test]
fn a_run_paused_while_the_broker_answers_nothing_goes_on_with_its_batch() {
    let nats = NatsServer::start();
    let (server, urls) = site(16, Duration::from_millis(500));
    push(&nats, &urls, "4");
    let cache = tempfile::tempdir().unwrap();
    // One batch of all 16 pages (about 8 s of fetching); the ack wait outlasts the freeze,
    // so that nothing comes back by the broker's clock either.
    let args = ["--batch", "16", "--ack-wait", "15s"];
    let worker = fetcher(&nats, cache.path(), "0ms", &args);
    wait_for("the first 3 pages", Duration::from_secs(60), || {
        pages(&server).len() >= 3
    });
    nats.freeze();
    let frozen = Instant::now();
    std::thread::sleep(Duration::from_secs(7));
    nats.thaw();
    let thawed = Instant::now();
    let ran = Ran::wait("rip-queue work", worker);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(ran.stderr.contains("(0 delivered again"), "{}", ran.stderr);
    assert_one_page_each(&nats, &urls);
    let start = server.started_at().into_std();
    let asked: Vec<Instant> = pages(&server).iter().map(|r| start + r.elapsed).collect();
    assert_eq!(asked.len(), 16, "each page fetched once: {}", ran.stderr);
    // Paused: nothing asked from 5 s into the freeze (the lease's deadline, 3.5 s after its
    // last renewal, with a second to spare) until the broker answered again.
    let paused = frozen + Duration::from_secs(5)..thawed;
    assert!(
        !asked.iter().any(|t| paused.contains(t)),
        "a page asked while the lease was in doubt: {}",
        ran.stderr
    );
}

/// A lease given up by the worker that took it over must not be renewed by its former
/// holder, back from a cut, at the revision it had: nobody may resume a stale batch on hosts
/// another worker has just asked. (The broker checks an expected revision only of a key
/// that has a message: a lease removed, not written empty, let the old holder renew it.)
#[test]
fn a_lease_taken_over_and_given_up_is_not_renewed_by_its_former_holder() {
    use rip_queue::members::{BEAT, Membership};
    use std::collections::BTreeSet;
    let nats = NatsServer::start();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let options = rip_queue::BrokerOptions::new(nats.url());
        let broker = rip_queue::Broker::connect(&options).await.unwrap();
        let none = BTreeSet::new();
        let mut old = Membership::join(&broker, "g", 1, Duration::ZERO)
            .await
            .unwrap();
        old.beat(&none).await.unwrap();
        assert!(old.holds(0));
        // The old holder is cut off (beats no more); the heir takes the lease once the old
        // one's name is gone and the lease was seen unrenewed for 5 s, then leaves.
        let mut heir = Membership::join(&broker, "g", 1, Duration::ZERO)
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !heir.holds(0) && Instant::now() < deadline {
            heir.beat(&none).await.ok();
            tokio::time::sleep(BEAT).await;
        }
        assert!(heir.holds(0), "the heir took the lease");
        heir.leave().await;
        // Back from the cut: its renewal at the revision it had must fail.
        old.beat(&none).await.ok();
        assert!(
            !old.holds(0),
            "the former holder renewed a lease taken over meanwhile"
        );
    });
}
