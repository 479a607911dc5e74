//! The shared crawl's frontier taken over: a process that takes a partition over while the
//! previous holder's URLs are still unacknowledged (it died holding them) must do them, do
//! every later URL, and acknowledge nothing past them before they are done.

use rip_queue::frontier::{SharedFrontier, WINDOW};
use rip_queue::{Broker, BrokerOptions};
use rip_testkit::NatsServer;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

const ACK_WAIT: Duration = Duration::from_secs(2);

async fn open(nats: &NatsServer) -> (Broker, SharedFrontier) {
    let broker = Broker::connect(&BrokerOptions::new(nats.url()))
        .await
        .expect("connects");
    let frontier = SharedFrontier::open(&broker, "takeover", 1, ACK_WAIT)
        .await
        .expect("opens");
    (broker, frontier)
}

/// Takes until it holds `n` URLs of partition 0; marks the first `done` of them done (never
/// acknowledged: the process dies).
async fn hold(frontier: &mut SharedFrontier, n: usize, done: usize) -> Vec<u64> {
    let mut seqs = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while seqs.len() < n && Instant::now() < deadline {
        let want = (n - seqs.len()).min(256);
        for d in frontier.take(0, want).await.expect("takes") {
            seqs.push(d.seq);
        }
    }
    assert_eq!(seqs.len(), n, "the first holder took {} URLs", seqs.len());
    for &seq in &seqs[..done] {
        frontier.done(0, seq);
    }
    seqs
}

/// What the heir did: how often each sequence was done, the most it held at once, when it
/// first took a URL.
struct Heir {
    done: BTreeMap<u64, u32>,
    most_held: usize,
    first_take: Option<Duration>,
    slowest_take: Duration,
}

/// Works the partition as an owner does (take at most 256 at a time, do, acknowledge) until
/// the crawl is over everywhere. While the URL at `first` (the dead holder's oldest) is not
/// done, the consumer's acknowledgement floor must stay below it.
async fn work_to_the_end(
    frontier: &mut SharedFrontier,
    watch: &Broker,
    first: u64,
    bound: Duration,
) -> Heir {
    let started = Instant::now();
    let mut heir = Heir {
        done: BTreeMap::new(),
        most_held: 0,
        first_take: None,
        slowest_take: Duration::ZERO,
    };
    loop {
        assert!(
            started.elapsed() < bound,
            "the heir did not finish within {bound:?}: {} URLs done, holding {}",
            heir.done.len(),
            frontier.holding(0)
        );
        let taking = Instant::now();
        let taken = frontier.take(0, 256).await.expect("takes");
        heir.slowest_take = heir.slowest_take.max(taking.elapsed());
        let idle = taken.is_empty();
        if !idle && heir.first_take.is_none() {
            heir.first_take = Some(started.elapsed());
        }
        heir.most_held = heir.most_held.max(frontier.holding(0));
        for d in taken {
            *heir.done.entry(d.seq).or_default() += 1;
            frontier.done(0, d.seq);
        }
        frontier.acknowledge().await;
        if !heir.done.contains_key(&first) {
            let floor = ack_floor(watch).await;
            assert!(
                floor < first,
                "acknowledged up to {floor}: {first} was never done"
            );
        }
        if idle {
            if frontier.finished_everywhere().await.expect("reads") {
                return heir;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The partition's acknowledgement floor, as the broker has it.
async fn ack_floor(broker: &Broker) -> u64 {
    let stream = broker
        .existing_stream("crawl_takeover")
        .await
        .expect("the stream");
    let mut consumer: async_nats::jetstream::consumer::PullConsumer =
        stream.get_consumer("crawl-p0").await.expect("the consumer");
    let info = consumer.info().await.expect("its state");
    info.ack_floor.stream_sequence
}

async fn publish(frontier: &mut SharedFrontier, n: u64) {
    for key in 1..=n {
        let url = format!("http://host.test/{key}");
        let payload = bytes::Bytes::from(url.clone());
        frontier
            .publish(&url, key, payload)
            .await
            .expect("publishes");
    }
    frontier.flush().await.expect("stored");
}

/// Runs `test` against a nats-server of its own.
fn on_nats(test: impl AsyncFnOnce(&NatsServer)) {
    let nats = NatsServer::start();
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(test(&nats));
}

/// Asserts that every URL of `seqs` is among `done`.
fn assert_done(done: &BTreeMap<u64, u32>, seqs: std::ops::RangeInclusive<u64>) {
    let missing: Vec<u64> = seqs.filter(|s| !done.contains_key(s)).collect();
    assert!(missing.is_empty(), "never done: {missing:?}");
}

/// Every URL done by the heir exactly once.
fn assert_all_done_once(did: &Heir, total: u64) {
    assert_done(&did.done, 1..=total);
    let twice: Vec<_> = did.done.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "done twice by the heir: {twice:?}");
}

/// The dead holder held half a window (half of it done, none acknowledged). The heir works
/// on later URLs at once, never waiting in a pull, gets the dead holder's URLs when they come
/// again, and finishes: every URL done once, none acknowledged undone.
#[test]
fn an_heir_works_on_at_once_and_does_what_a_dead_holder_left() {
    on_nats(async |nats| {
        let total = 3 * WINDOW as u64 + 100;
        let (broker, mut first) = open(nats).await;
        publish(&mut first, total).await;
        let held = hold(&mut first, WINDOW / 2, WINDOW / 4).await;
        drop(first);
        drop(broker);

        let (watch, mut heir) = open(nats).await;
        let before = heir.seen_before(0).await.expect("reads the floor");
        assert!(before.is_empty(), "nothing was acknowledged: {before:?}");
        let started = Instant::now();
        let did = work_to_the_end(&mut heir, &watch, held[0], Duration::from_secs(60)).await;
        let took = started.elapsed();
        assert_all_done_once(&did, total);
        let first_take = did.first_take.expect("took");
        assert!(
            first_take < ACK_WAIT / 2,
            "the heir waited {first_take:?} before its first URL"
        );
        assert!(
            did.most_held <= WINDOW,
            "the heir holds at most its window: {}",
            did.most_held
        );
        assert!(took < 4 * ACK_WAIT, "{took:?}");
        // At the consumer's limit a pull gets nothing until the dead holder's come again: it
        // must not wait for them (an owner's loop stalled in it misses its beats).
        assert!(
            did.slowest_take < Duration::from_millis(500),
            "a take took {:?}",
            did.slowest_take
        );
        eprintln!("heir: first URL after {first_take:?}, {total} URLs in {took:?}");
    });
}

/// The previous holder, only stalled, took more URLs after the heir took the partition over
/// (before it noticed), then died: those come again later than the ones it held at the
/// takeover, and the heir must still get them. (With acknowledgement policy *all*, a heir
/// that stopped at its own window of URLs it could not acknowledge waited for ever.)
#[test]
fn an_heir_gets_what_its_predecessor_took_after_the_takeover() {
    on_nats(async |nats| {
        let total = 3 * WINDOW as u64 + 100;
        let (broker, mut first) = open(nats).await;
        publish(&mut first, total).await;
        let held = hold(&mut first, WINDOW / 4, 0).await;

        let (watch, mut heir) = open(nats).await;
        heir.seen_before(0).await.expect("reads the floor");
        tokio::time::sleep(ACK_WAIT / 2).await;
        hold(&mut first, WINDOW / 4, 0).await;
        drop(first);
        drop(broker);

        let started = Instant::now();
        let did = work_to_the_end(&mut heir, &watch, held[0], Duration::from_secs(20)).await;
        assert_all_done_once(&did, total);
        eprintln!("heir: {total} URLs in {:?}", started.elapsed());
    });
}

/// A process leaving (budget spent, interrupted) acknowledges what it did and gives back
/// what it did not: the next holder gets those at once, not an acknowledgement wait later,
/// and does nothing twice.
#[test]
fn what_a_leaving_process_did_not_do_reaches_the_next_holder_at_once() {
    on_nats(async |nats| {
        let total = WINDOW as u64;
        let (_broker, mut leaving) = open(nats).await;
        publish(&mut leaving, total).await;
        let held = hold(&mut leaving, 512, 256).await;
        leaving.release().await;
        assert_eq!(leaving.holding(0), 0);

        let (watch, mut next) = open(nats).await;
        let before = next.seen_before(0).await.expect("reads the floor");
        assert_eq!(before.len(), 256, "the floor is past what was done");
        let started = Instant::now();
        let did = work_to_the_end(&mut next, &watch, held[256], Duration::from_secs(20)).await;
        assert!(
            started.elapsed() < ACK_WAIT,
            "given back, yet waited for: {:?}",
            started.elapsed()
        );
        let again: Vec<u64> = held[..256]
            .iter()
            .filter(|s| did.done.contains_key(s))
            .copied()
            .collect();
        assert!(again.is_empty(), "done twice: {again:?}");
        assert_done(&did.done, 257..=total);
    });
}

/// URLs delivered to a pull nobody waits for any more (its process gave up on it, or died in
/// it) come again after the acknowledgement wait: acknowledging the URLs after them does
/// not acknowledge them. (With acknowledgement policy *all* it did: a 1 M-URL simulation lost
/// 1,088 pages.)
#[test]
fn urls_delivered_to_an_abandoned_pull_are_not_acknowledged_by_later_ones() {
    on_nats(async |nats| {
        let total = 1000;
        let (watch, mut owner) = open(nats).await;
        publish(&mut owner, total).await;
        let stream = watch
            .existing_stream("crawl_takeover")
            .await
            .expect("stream");
        let consumer: async_nats::jetstream::consumer::PullConsumer =
            stream.get_consumer("crawl-p0").await.expect("consumer");
        let batch = consumer
            .fetch()
            .max_messages(10)
            .messages()
            .await
            .expect("pull");
        let abandoned: Vec<_> = futures::StreamExt::collect::<Vec<_>>(batch).await;
        assert_eq!(
            abandoned.len(),
            10,
            "the first ten delivered, never seen by the owner"
        );

        let started = Instant::now();
        let did = work_to_the_end(&mut owner, &watch, 1, Duration::from_secs(20)).await;
        assert_done(&did.done, 1..=total);
        assert!(started.elapsed() >= ACK_WAIT / 2, "{:?}", started.elapsed());
    });
}

/// The acknowledgement wait is the crawl's, fixed when it was created: a process asking
/// another is told the one in force.
#[test]
fn the_acknowledgement_wait_is_the_one_the_crawl_was_created_with() {
    on_nats(async |nats| {
        let (_first_broker, first) = open(nats).await;
        assert_eq!(first.ack_wait(), ACK_WAIT);
        let broker = Broker::connect(&BrokerOptions::new(nats.url()))
            .await
            .expect("connects");
        let later = SharedFrontier::open(&broker, "takeover", 1, Duration::from_secs(9))
            .await
            .expect("opens");
        assert_eq!(later.ack_wait(), ACK_WAIT);
    });
}
