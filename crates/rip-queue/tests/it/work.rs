//! work: stages run on a stream by several workers; the books balance when all goes well,
//! when a worker is killed, when the broker is killed and comes back, and when the program
//! fails on a record.

use super::{entered, messages_in, outcomes, pull, queue, refs, site, wait_for};
use futures::StreamExt;
use rip_testkit::{NatsServer, Stage, path_with_bins};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// The one-machine pipeline each worker runs on a batch of refs.
fn pipeline(cache: &Path) -> String {
    format!(
        "rip-fetch -q --delay 0ms --jitter 0ms --retry-base 20ms --cache-dir {} \
         | rip-parse -q | rip-route -q --final",
        cache.display()
    )
}

/// A worker of `refs` into `docs`, leaving when idle for 3 s (unless `extra` says
/// otherwise).
fn worker(nats: &NatsServer, cache: &Path, extra: &[&str]) -> Child {
    let idle = if extra.contains(&"--idle-exit") {
        &[][..]
    } else {
        &["--idle-exit", "3s"][..]
    };
    queue(nats)
        .env("PATH", path_with_bins())
        .args(["work", "refs", "docs", "--ack-wait", "2s"])
        .args(idle)
        .args(extra)
        .args(["--", "bash", "-c"])
        .arg(pipeline(cache))
        .spawn()
}

fn finish(child: Child) -> rip_testkit::Ran {
    rip_testkit::Ran::wait("rip-queue work", child)
}

/// Every URL has exactly one outcome in `docs`, and entered once; rip-health says complete.
fn assert_books_balance(nats: &NatsServer, urls: &[String]) {
    let (_, values) = pull(nats, "docs");
    let outcomes = outcomes(&values);
    for url in urls {
        assert_eq!(
            outcomes.get(url).map(Vec::len),
            Some(1),
            "{url}: {:?}",
            outcomes.get(url)
        );
    }
    assert_eq!(
        outcomes.len(),
        urls.len(),
        "no outcome for a URL that did not enter"
    );
    let entered = entered(&values);
    assert_eq!(entered.len(), urls.len());
    assert!(
        entered.values().all(|&n| n == 1),
        "each URL entered once: {entered:?}"
    );
    let text: String = values.iter().map(|v| format!("{v}\n")).collect();
    let health = Stage::new("rip-health").stdin(text).run();
    assert_eq!(
        health.code, 0,
        "rip-health: {}\n{}",
        health.stderr, health.stdout
    );
}

fn push_refs(nats: &NatsServer, urls: &[String]) {
    let ran = queue(nats).args(["push", "refs"]).stdin(refs(urls)).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

#[test]
fn three_workers_share_a_crawl_and_every_url_ends_once() {
    let nats = NatsServer::start();
    let (server, urls) = site(60, Duration::from_millis(30));
    let cache = tempfile::tempdir().unwrap();
    push_refs(&nats, &urls);
    let workers: Vec<Child> = (0..3)
        .map(|_| worker(&nats, cache.path(), &["--batch", "8"]))
        .collect();
    let ran: Vec<_> = workers.into_iter().map(finish).collect();
    for r in &ran {
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let busy = ran
        .iter()
        .filter(|r| !r.stderr.contains(" 0 records in"))
        .count();
    assert!(
        busy >= 2,
        "the records were shared: {:?}",
        ran.iter().map(|r| &r.stderr).collect::<Vec<_>>()
    );
    assert_books_balance(&nats, &urls);
    for i in 0..60 {
        assert_eq!(server.count(&format!("/p{i}")), 1, "/p{i} fetched once");
    }
}

#[test]
fn a_worker_killed_mid_crawl_loses_nothing_and_others_finish_its_records() {
    let nats = NatsServer::start();
    let (server, urls) = site(40, Duration::from_millis(150));
    let cache = tempfile::tempdir().unwrap();
    push_refs(&nats, &urls);
    let mut doomed = worker(&nats, cache.path(), &["--batch", "4", "-j", "2"]);
    wait_for("10 fetches", Duration::from_secs(30), || {
        server.total() >= 10
    });
    doomed.kill().unwrap(); // SIGKILL: no acknowledgement of what it holds
    doomed.wait().unwrap();
    let at_kill = server.total();
    let others: Vec<Child> = (0..2)
        .map(|_| worker(&nats, cache.path(), &["--batch", "4"]))
        .collect();
    assert!(at_kill < 41, "killed mid-crawl: {at_kill} requests");
    let ran: Vec<_> = others.into_iter().map(finish).collect();
    for r in &ran {
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let again = ran.iter().any(|r| !r.stderr.contains("(0 delivered again"));
    assert!(
        again,
        "the killed worker's records came back: {:?}",
        ran.iter().map(|r| &r.stderr).collect::<Vec<_>>()
    );
    assert_books_balance(&nats, &urls);
    // The killed worker held at most 2 batches of 4: those pages may be fetched twice.
    let fetches = server.total() - 1; // robots.txt
    assert!(
        fetches <= 40 + 8,
        "{fetches} fetches for 40 pages ({at_kill} before the kill)"
    );
}

#[test]
fn the_broker_killed_and_restarted_on_its_store_mid_run_and_the_books_still_balance() {
    let mut nats = NatsServer::start();
    let (server, urls) = site(40, Duration::from_millis(60));
    let cache = tempfile::tempdir().unwrap();
    push_refs(&nats, &urls);
    let workers: Vec<Child> = (0..2)
        .map(|_| worker(&nats, cache.path(), &["--batch", "4", "--patience", "30s"]))
        .collect();
    wait_for("8 fetches", Duration::from_secs(30), || server.total() >= 8);
    let at_kill = server.total();
    nats.kill();
    std::thread::sleep(Duration::from_millis(800));
    nats.restart();
    let ran: Vec<_> = workers.into_iter().map(finish).collect();
    for r in &ran {
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    // The outage is the client's to ride out: it buffers, reconnects, and records whose
    // acknowledgement was lost come back and are done again, their output stored once.
    assert!(
        at_kill < 41,
        "the broker died mid-crawl: {at_kill} requests before"
    );
    assert!(server.total() < 41 + 8, "{} fetches", server.total());
    assert_books_balance(&nats, &urls);
}

/// A program that echoes its records and dies on the poison one, having written a summary
/// that says so (as a stage that fails does).
const FAILS_ON_POISON: &str = "while IFS= read -r line; do case \"$line\" in *poison*) \
    echo '{\"_type\":\"summary\",\"stage\":\"x\",\"status\":\"failed\"}'; exit 1;; esac; \
    echo \"$line\" | sed 's/\"ref\"/\"expected\"/'; done";

/// Refs http://h/0 to http://h/9, then http://h/poison, pushed to `refs`.
fn push_ten_and_a_poison(nats: &NatsServer) {
    let mut input = String::new();
    for i in 0..10 {
        input += &format!("{{\"_type\":\"ref\",\"url\":\"http://h/{i}\",\"attempt\":0}}\n");
    }
    input += "{\"_type\":\"ref\",\"url\":\"http://h/poison\",\"attempt\":0}\n";
    queue(nats).args(["push", "refs"]).stdin(input).run();
}

#[test]
fn a_record_the_program_always_fails_on_becomes_a_failure_and_the_others_go_through() {
    let nats = NatsServer::start();
    push_ten_and_a_poison(&nats);
    let program = FAILS_ON_POISON;
    let ran = queue(&nats)
        .args([
            "work",
            "refs",
            "out",
            "--idle-exit",
            "2s",
            "--max-deliver",
            "3",
            "--linger",
            "50ms",
        ])
        .args(["--", "bash", "-c", program])
        .run();
    assert_eq!(ran.code, 2, "partial: one record given up; {}", ran.stderr);
    assert!(
        ran.stderr.contains("1 given up as failures"),
        "{}",
        ran.stderr
    );
    let (_, values) = pull(&nats, "out");
    let outcomes = outcomes(&values);
    assert_eq!(outcomes.len(), 11, "{outcomes:?}");
    for i in 0..10 {
        assert_eq!(outcomes[&format!("http://h/{i}")], vec!["expected"]);
    }
    assert_eq!(outcomes["http://h/poison"], vec!["failure"]);
    let failed = values.iter().filter(|v| v["status"] == "failed").count();
    assert_eq!(
        failed, 0,
        "a failed run's summaries are not published: {values:?}"
    );
    let failure = values
        .iter()
        .find(|v| v["url"] == "http://h/poison")
        .unwrap();
    assert_eq!(failure["errors"][0]["code"], "queue.workFailed");
    assert!(
        failure["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("(--max-deliver 3;"),
        "{failure}"
    );
}

#[test]
fn a_record_that_kills_its_worker_is_given_up_after_it_killed_one_running_it_alone() {
    let nats = NatsServer::start();
    push_ten_and_a_poison(&nats);
    // The program kills its worker (its parent) on the poison record, as a container's memory
    // limit would take the whole group down: no failure of the program is ever seen.
    let program = "while IFS= read -r line; do case \"$line\" in *poison*) kill -9 $PPID; exit 1;; esac; \
                   echo \"$line\" | sed 's/\"ref\"/\"expected\"/'; done";
    let mut killed = 0;
    let last = loop {
        let ran = queue(&nats)
            .args(
                "work refs out --idle-exit 2s --max-deliver 2 --ack-wait 1s --linger 50ms"
                    .split(' '),
            )
            .args(["--", "bash", "-c", program])
            .run();
        if ran.code != -1 {
            break ran;
        }
        killed += 1;
        assert!(killed <= 4, "the poison record keeps killing workers");
    };
    // Deliveries 1 (with the others) and 2 (alone, beside other runs) kill a worker; the
    // third, past --max-deliver, runs with no other run and kills its worker too; the fourth
    // finds that run's mark and gives the record up without running it.
    assert_eq!(killed, 3, "{}", last.stderr);
    assert_eq!(
        last.code, 2,
        "partial: one record given up; {}",
        last.stderr
    );
    let (_, values) = pull(&nats, "out");
    let outcomes = outcomes(&values);
    for i in 0..10 {
        assert_eq!(outcomes[&format!("http://h/{i}")], vec!["expected"]);
    }
    assert_eq!(outcomes["http://h/poison"], vec!["failure"], "{values:?}");
    let failure = values
        .iter()
        .find(|v| v["url"] == "http://h/poison")
        .unwrap();
    assert_eq!(
        failure["errors"][0]["code"], "queue.workerLost",
        "{failure}"
    );
}

#[test]
fn a_worker_with_nothing_to_do_asks_the_broker_about_once_a_second() {
    let nats = NatsServer::start();
    push_ten_and_a_poison(&nats);
    // Every pull is a request on this subject: a plain subscriber sees each one.
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mut pulls = rt.block_on(async {
        let client = async_nats::connect(nats.url()).await.expect("connect");
        let sub = client
            .subscribe("$JS.API.CONSUMER.MSG.NEXT.>")
            .await
            .expect("subscribe");
        client.flush().await.expect("flush");
        (client, sub)
    });
    let ran = queue(&nats)
        .args(["work", "refs", "out", "--idle-exit", "5s", "--", "cat"])
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let asked = rt.block_on(async {
        let mut n = 0;
        while let Ok(Some(_)) =
            tokio::time::timeout(Duration::from_millis(200), pulls.1.next()).await
        {
            n += 1;
        }
        n
    });
    // Two pulls for the records, then about one a second for the five idle seconds (five a
    // second, 25, when each pull waited only --linger).
    assert!((3..=10).contains(&asked), "{asked} pulls");
}

#[test]
fn a_broker_that_stays_away_ends_the_worker_with_exit_1_after_its_patience() {
    let mut nats = NatsServer::start();
    push_refs(&nats, &["http://127.0.0.1:9/a".to_owned()]);
    let child = queue(&nats)
        .args([
            "work",
            "refs",
            "out",
            "--patience",
            "2s",
            "--linger",
            "50ms",
        ])
        .args(["--", "cat"])
        .spawn();
    std::thread::sleep(Duration::from_millis(500));
    nats.kill();
    let start = Instant::now();
    let ran = finish(child);
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    assert!(
        ran.stderr.contains("has not answered for 2s"),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr
            .contains("waiting for the broker at nats://127.0.0.1:"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_pull_after_the_workers_ends_once_they_have_done_every_record_and_holds_all_they_wrote() {
    let nats = NatsServer::start();
    let (_server, urls) = site(30, Duration::from_millis(50));
    let cache = tempfile::tempdir().unwrap();
    push_refs(&nats, &urls);
    // The collector starts first and knows nothing of the workers but their input.
    let collector = queue(&nats)
        .args(["pull", "docs", "--after", "refs"])
        .spawn();
    let workers: Vec<Child> = (0..2)
        .map(|_| worker(&nats, cache.path(), &["--batch", "4", "--idle-exit", "60s"]))
        .collect();
    let collected = finish(collector);
    assert_eq!(collected.code, 0, "{}", collected.stderr);
    let values: Vec<serde_json::Value> = collected
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let outcomes = outcomes(&values);
    for url in &urls {
        assert_eq!(outcomes.get(url).map(Vec::len), Some(1), "{url}");
    }
    // The workers are still there (idle, not done waiting): the collector did not need them
    // to leave.
    for mut w in workers {
        assert!(w.try_wait().unwrap().is_none(), "a worker left early");
        rip_testkit::interrupt(&w);
        let status = w.wait().unwrap();
        assert_eq!(status.code(), Some(130));
    }
}

/// A worker started before its coordinator pushed anything waits for the first record
/// however short `--idle-exit` is, then leaves once the records are done.
#[test]
fn an_idle_worker_waits_for_the_first_record_then_leaves_when_done() {
    let nats = NatsServer::start();
    let (_server, urls) = site(5, Duration::ZERO);
    let cache = tempfile::tempdir().unwrap();
    let mut child = worker(&nats, cache.path(), &["--idle-exit", "300ms"]);
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        child.try_wait().unwrap().is_none(),
        "left before anything was pushed"
    );
    push_refs(&nats, &urls);
    let ran = finish(child);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_books_balance(&nats, &urls);
}

#[test]
fn a_urls_ledger_entry_is_stored_with_its_outcome_in_one_message() {
    let nats = NatsServer::start();
    let (_server, urls) = site(20, Duration::ZERO);
    let cache = tempfile::tempdir().unwrap();
    push_refs(&nats, &urls);
    let ran = finish(worker(&nats, cache.path(), &["--batch", "8"]));
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_books_balance(&nats, &urls);
    let (pulled, values) = pull(&nats, "docs");
    let stored = messages_in(&nats, "docs");
    // 20 docs, 20 ledger entries, and each run's summaries (three stages and rip-queue's).
    assert_eq!(values.len() as u64, stored + 20, "{}", pulled.stdout);
    let lines: Vec<&str> = pulled.stdout.lines().collect();
    for url in &urls {
        let at = lines
            .iter()
            .position(|l| l.contains("\"_type\":\"ledger\"") && l.contains(url.as_str()))
            .unwrap_or_else(|| panic!("{url} entered"));
        assert!(
            lines[at + 1].contains("\"_type\":\"doc\"") && lines[at + 1].contains(url.as_str()),
            "{url}: its entry, then its doc: {}",
            lines[at + 1]
        );
    }
    assert!(
        pulled.stderr.contains(&format!("{} records", values.len())),
        "pull counts records, not messages: {}",
        pulled.stderr
    );
}

/// The runs of the program a worker's last line counts (`N records in M runs (K delivered
/// again, …`): (M, K).
fn runs_and_redelivered(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains(" runs (") && l.contains(" delivered again"))
        .unwrap_or_else(|| panic!("no worker's summary line: {stderr}"));
    let number_before = |word: &str| -> u64 {
        let at = line.find(word).unwrap_or_else(|| panic!("{word}: {line}"));
        let digits = line[..at].rsplit([' ', '(']).next().unwrap();
        digits.parse().unwrap_or_else(|_| panic!("{word}: {line}"))
    };
    (number_before(" runs ("), number_before(" delivered again"))
}

#[test]
fn a_dead_workers_records_are_batched_again_by_the_survivor() {
    let nats = NatsServer::start();
    let (server, urls) = site(50, Duration::from_millis(100));
    let cache = tempfile::tempdir().unwrap();
    push_refs(&nats, &urls);
    // The doomed worker takes every record (two runs of 25) and dies early in them.
    let mut doomed = worker(&nats, cache.path(), &["--batch", "25", "--parallel", "2"]);
    wait_for("5 fetches", Duration::from_secs(30), || server.total() >= 5);
    let survivor = worker(&nats, cache.path(), &["--batch", "10"]);
    doomed.kill().unwrap(); // SIGKILL: its records come back after --ack-wait (2 s)
    doomed.wait().unwrap();
    let ran = finish(survivor);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_books_balance(&nats, &urls);
    let (runs, again) = runs_and_redelivered(&ran.stderr);
    assert!(
        again >= 25,
        "the dead worker's records came back: {}",
        ran.stderr
    );
    // Batches of up to 10 (a pull that comes short makes one more): about 5 runs, not one
    // run of the whole pipeline per record delivered again.
    assert!(
        runs <= 12,
        "{runs} runs for {again} records delivered again"
    );
}

#[test]
fn a_record_the_program_fails_on_costs_the_others_of_its_batch_no_delivery() {
    let nats = NatsServer::start();
    push_ten_and_a_poison(&nats);
    // Two deliveries at most: the ten others, in the poison's batch at their first, must not
    // need a second.
    let ran = queue(&nats)
        .args("work refs out --idle-exit 2s --max-deliver 2 --linger 50ms".split(' '))
        .args(["--", "bash", "-c", FAILS_ON_POISON])
        .run();
    assert_eq!(ran.code, 2, "partial: one record given up; {}", ran.stderr);
    assert!(
        ran.stderr.contains("on 11 records: running each alone"),
        "{}",
        ran.stderr
    );
    let (_, values) = pull(&nats, "out");
    let outcomes = outcomes(&values);
    for i in 0..10 {
        assert_eq!(outcomes[&format!("http://h/{i}")], vec!["expected"], "{i}");
    }
    assert_eq!(outcomes["http://h/poison"], vec!["failure"]);
    // The batch, each record alone, then the poison's second delivery alone.
    let (runs, again) = runs_and_redelivered(&ran.stderr);
    assert_eq!((runs, again), (13, 1), "{}", ran.stderr);
}

#[test]
fn a_broker_away_ends_each_worker_when_its_patience_is_spent_not_later() {
    let mut nats = NatsServer::start();
    let busy_mark = tempfile::tempdir().unwrap();
    let mark = busy_mark.path().join("running");
    push_refs(&nats, &["http://127.0.0.1:9/a".to_owned()]);
    let patient = |extra: &[&str], command: &[&str]| {
        queue(&nats)
            .args(["--patience", "5s"])
            .args(extra)
            .args(["--", "bash", "-c"])
            .args(command)
            .spawn()
    };
    let mut workers = vec![
        // Idle: waiting for a stream nobody writes.
        ("idle", patient(&["work", "empty", "out1"], &["cat"])),
        // Idle on a stream partitioned by host.
        (
            "partitioned",
            patient(&["work", "parts", "out2", "--partitions", "2"], &["cat"]),
        ),
        // Running a batch that does not need the broker for a while.
        (
            "busy",
            patient(
                &["work", "refs", "out3", "--linger", "50ms"],
                &[&format!("touch {}; sleep 60; cat", mark.display())],
            ),
        ),
    ];
    wait_for("the busy worker's run", Duration::from_secs(30), || {
        mark.exists()
    });
    std::thread::sleep(Duration::from_secs(1)); // every worker waiting on the broker
    nats.kill();
    let start = Instant::now();
    let mut ended = Vec::new();
    while !workers.is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "still running");
        workers.retain_mut(|(name, child)| match child.try_wait().unwrap() {
            Some(status) => {
                ended.push((*name, status.code(), start.elapsed()));
                false
            }
            None => true,
        });
        std::thread::sleep(Duration::from_millis(20));
    }
    for (name, code, after) in ended {
        assert_eq!(code, Some(1), "{name}");
        // Its patience, and at most about a second more (it was 12 s for 5 s).
        let (least, most) = (Duration::from_millis(4500), Duration::from_millis(6500));
        assert!(
            (least..=most).contains(&after),
            "{name} gave up {after:?} after the broker went away, with --patience 5s"
        );
    }
}
