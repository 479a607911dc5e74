//! A broker killed and started again on its store and port: every reader (`pull --follow`,
//! `pull --after`, `relay`) waits for it, reads on from where it was, and writes each record
//! once.

use super::{outcomes, queue, refs, site, wait_for};
use rip_testkit::{NatsServer, Ran, path_with_bins};
use std::io::BufRead;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The lines `child` writes, gathered as they come.
fn gather(child: &mut Child) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let stdout = child.stdout.take().expect("piped stdout");
    let gathered = lines.clone();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            gathered.lock().unwrap().push(line);
        }
    });
    lines
}

fn one_ref(nats: &NatsServer, url: &str) {
    let ran = queue(nats)
        .args(["push", "s"])
        .stdin(refs(&[url.to_owned()]))
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

#[test]
fn a_following_pull_reads_on_after_the_broker_restarts_and_writes_each_record_once() {
    let mut nats = NatsServer::start();
    one_ref(&nats, "http://h/before");
    let mut child = queue(&nats).args(["pull", "s", "--follow"]).spawn();
    let lines = gather(&mut child);
    wait_for("the first record", Duration::from_secs(30), || {
        lines.lock().unwrap().len() == 1
    });
    nats.kill();
    std::thread::sleep(Duration::from_millis(1500));
    nats.restart();
    one_ref(&nats, "http://h/after");
    wait_for(
        "the record pushed after the restart",
        Duration::from_secs(60),
        || lines.lock().unwrap().len() >= 2,
    );
    std::thread::sleep(Duration::from_secs(1)); // nothing more comes
    child.kill().ok();
    let ran = Ran::wait("rip-queue pull", child);
    let lines = lines.lock().unwrap().clone();
    assert_eq!(lines.len(), 2, "{lines:?} {}", ran.stderr);
    assert!(lines[0].contains("http://h/before"), "{lines:?}");
    assert!(lines[1].contains("http://h/after"), "{lines:?}");
    assert!(!ran.stderr.contains("error:"), "{}", ran.stderr);
}

/// A worker of `refs` into `docs` running the one-machine pipeline, patient for 60 s.
fn worker(nats: &NatsServer, cache: &std::path::Path) -> Child {
    let pipeline = format!(
        "rip-fetch -q --delay 0ms --jitter 0ms --retry-base 20ms --cache-dir {} \
         | rip-parse -q | rip-route -q --final",
        cache.display()
    );
    queue(nats)
        .env("PATH", path_with_bins())
        .args([
            "work",
            "refs",
            "docs",
            "--ack-wait",
            "2s",
            "--idle-exit",
            "3s",
        ])
        .args(["--batch", "4", "--", "bash", "-c", &pipeline])
        .spawn()
}

/// Each URL once among the outcomes of `stdout`.
fn each_once(stdout: &str, urls: &[String]) {
    let values: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let outcomes = outcomes(&values);
    for url in urls {
        assert_eq!(
            outcomes.get(url).map(Vec::len),
            Some(1),
            "{url}: {outcomes:?}"
        );
    }
    assert_eq!(outcomes.len(), urls.len(), "{outcomes:?}");
}

/// Kills the broker once the site has had `fetches` requests, and starts it again.
fn restart_after(nats: &mut NatsServer, server: &rip_testserver::TestServer, fetches: usize) {
    wait_for(
        "fetches before the restart",
        Duration::from_secs(60),
        || server.total() >= fetches,
    );
    nats.kill();
    std::thread::sleep(Duration::from_millis(1500));
    nats.restart();
}

#[test]
fn a_pull_after_the_workers_reads_on_after_the_broker_restarts() {
    let mut nats = NatsServer::start();
    let (server, urls) = site(30, Duration::from_millis(60));
    let cache = tempfile::tempdir().unwrap();
    let pushed = queue(&nats).args(["push", "refs"]).stdin(refs(&urls)).run();
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    let pull = queue(&nats)
        .args(["pull", "docs", "--after", "refs"])
        .spawn();
    let work = worker(&nats, cache.path());
    restart_after(&mut nats, &server, 8);
    let worked = Ran::wait("rip-queue work", work);
    assert_eq!(worked.code, 0, "{}", worked.stderr);
    let pulled = Ran::wait("rip-queue pull", pull);
    assert_eq!(pulled.code, 0, "{}", pulled.stderr);
    each_once(&pulled.stdout, &urls);
}

#[test]
fn a_relay_brings_every_record_back_once_across_a_broker_restart() {
    let mut nats = NatsServer::start();
    let (server, urls) = site(30, Duration::from_millis(60));
    let cache = tempfile::tempdir().unwrap();
    let relay = queue(&nats)
        .args(["relay", "refs", "docs"])
        .stdin(refs(&urls))
        .spawn();
    let workers: Vec<Child> = (0..2).map(|_| worker(&nats, cache.path())).collect();
    restart_after(&mut nats, &server, 8);
    let relayed = Ran::wait("rip-queue relay", relay);
    for w in workers {
        let worked = Ran::wait("rip-queue work", w);
        assert_eq!(worked.code, 0, "{}", worked.stderr);
    }
    assert_eq!(relayed.code, 0, "{}", relayed.stderr);
    each_once(&relayed.stdout, &urls);
}
