//! `rip-queue work IN OUT -- CMD ARGS…`: a stage program run on the records of a stream.
//!
//! The worker pulls records from `IN` through a durable consumer that all workers of a group
//! share (JetStream hands each record to one of them), runs the program on a batch of them
//! (the batch on its stdin, then end of input, as in any pipeline), publishes every line the
//! program writes to `OUT`, and acknowledges the batch's records only when the broker has
//! stored all of that output and the program ended as a stage ends (exit 0 or 2). Until then
//! it tells the broker the records are still in progress, so a long batch keeps them.
//!
//! What a worker that is killed leaves: records without an acknowledgement, which the broker
//! delivers to another worker after the acknowledgement wait; and perhaps part of their
//! output, which the second run publishes again under the same identities, stored once.
//!
//! A program that fails on a batch (any other exit, or killed) runs again on each of its
//! records alone, at once (see the `batch` module), so one record that breaks it cannot hold
//! back the others; a record it fails on alone is handed back, and one it fails on every
//! delivery ends as a `failure` of its URL (`queue.workFailed`) when it fails on a delivery
//! numbered `max_deliver` or later. The count is JetStream's, so deliveries that never reached
//! a program (a worker killed first) count too; the broker itself never drops a record.
//! A record that takes its worker down instead is found by running it alone once it is
//! delivered past `max_deliver`, and given up as `queue.workerLost` (see the `alone` module).
//!
//! Records delivered again after their worker died are batched again like new ones: a dead
//! worker's records are mostly innocent, and running each alone made the recovery from one
//! death dozens of runs of the whole pipeline. Only a record delivered repeatedly (more than
//! `TOGETHER` times: it was there when workers died again and again) runs alone.

mod alone;
mod batch;
mod lag;
mod partitioned;
mod tree;

use crate::broker::{Absence, partitions_of};
use crate::{Broker, Published, QueueError};
use async_nats::jetstream::Message;
use async_nats::jetstream::consumer::{AckPolicy, PullConsumer, pull};
use async_nats::jetstream::stream::Stream;
use futures::StreamExt;
use std::ffi::OsString;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

/// How a worker works.
#[derive(Debug, Clone)]
pub struct WorkOptions {
    /// The stream read.
    pub input: String,
    /// The stream the program's output goes to.
    pub output: String,
    /// Partitions by host of `input`, when this worker creates it.
    pub partitions: Option<u32>,
    /// The durable consumer the workers of one job share.
    pub group: String,
    /// Records given to one run of the program at most.
    pub batch: usize,
    /// Runs of the program at once.
    pub parallel: usize,
    /// How long to wait for a batch to fill.
    pub linger: Duration,
    /// How long the broker waits for an acknowledgement before delivering a record to
    /// another worker (a killed worker's records come back after this).
    pub ack_wait: Duration,
    /// Deliveries of a record before it is given up as a failure.
    pub max_deliver: i64,
    /// On a partitioned stream, how long after taking a partition over a worker waits
    /// before working on it: at least the longest per-host gap (or Crawl-delay), so that
    /// the host's previous worker's last request is that far behind.
    pub handover_wait: Duration,
    /// Stop after this long with nothing to do (`None`: run until stopped), once the input
    /// has had a record: a worker started before its input waits for it.
    pub idle_exit: Option<Duration>,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

/// What a worker did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Worked {
    /// Runs of the program.
    pub batches: u64,
    /// Records taken from the input stream (again when delivered again).
    pub records: u64,
    /// Of those, records delivered before (to this or another worker).
    pub redelivered: u64,
    /// Records handed back after the program failed on them.
    pub handed_back: u64,
    /// Records given up after `max_deliver` failures, published as failures.
    pub given_up: u64,
    /// Runs of the program that failed.
    pub failed_runs: u64,
    /// The output published.
    pub published: Published,
}

/// The stage name of a worker's live account (`--metrics`).
pub const LIVE_STAGE: &str = "rip-queue work";

impl Worked {
    /// The counters of the worker's closing line, by name.
    pub fn counters(&self) -> [(&'static str, u64); 8] {
        [
            ("records", self.records),
            ("batches", self.batches),
            ("redelivered", self.redelivered),
            ("handedBack", self.handed_back),
            ("givenUp", self.given_up),
            ("failedRuns", self.failed_runs),
            ("stored", self.published.stored),
            ("duplicates", self.published.duplicates),
        ]
    }

    /// Publishes these counts to the worker's live account (at each run's end, a lock; and
    /// `finished` at the worker's end: the numbers of its closing line).
    pub fn publish_live(&self, finished: bool) {
        let live = rip_core::live::stage(LIVE_STAGE);
        if finished {
            live.publish(rip_core::live::BooksSnapshot {
                counters: self.counters().map(|(k, v)| (k.to_owned(), v)).into(),
                finished: true,
                ..Default::default()
            });
        } else {
            for (name, n) in self.counters() {
                live.set_counter(name, n);
            }
        }
    }
}

/// Works on `options.input` until stopped (`stop`), or idle for `options.idle_exit`. On a
/// stream partitioned by host, the worker works on the partitions it owns among the live
/// workers of its group, one batch at a time per partition (see the `partitioned` module).
pub async fn work(
    broker: &Broker,
    options: WorkOptions,
    stop: Arc<AtomicBool>,
) -> Result<Worked, QueueError> {
    let input = broker
        .stream_with(&options.input, options.partitions)
        .await?;
    let out_partitions = partitions_of(&broker.stream(&options.output).await?);
    let options = Arc::new(options);
    let lag = lag::LagWatch::start(&input, &options.group);
    let worked = match partitions_of(&input) {
        0 => shared(broker, input, options, out_partitions, stop).await,
        n => partitioned::work(broker, input, n, options, out_partitions, stop).await,
    }?;
    if let Some(lag) = lag {
        lag.last().await;
    }
    worked.publish_live(true);
    Ok(worked)
}

/// Works on a stream that is not partitioned: every worker of the group takes batches.
async fn shared(
    broker: &Broker,
    input: Stream,
    options: Arc<WorkOptions>,
    out_partitions: u32,
    stop: Arc<AtomicBool>,
) -> Result<Worked, QueueError> {
    let consumer = consumer(broker, &input, &options, None).await?;
    let mut running = JoinSet::new();
    let mut worked = Worked::default();
    let mut idle_since = Instant::now();
    let mut absence = Absence::default();
    loop {
        let stopping = stop.load(Ordering::Relaxed);
        if stopping && running.is_empty() {
            break;
        }
        // Every round, so that a broker away longer than the patience ends the worker then.
        absence.check(broker, "ask for records")?;
        let connected = broker.connected();
        if !stopping && connected && running.len() < options.parallel {
            let idle = running.is_empty() && idle_since.elapsed() >= options.linger;
            let messages = fetch(broker, &consumer, &options, idle).await?;
            if !messages.is_empty() {
                idle_since = Instant::now();
                for batch in batches(messages, &mut worked, options.max_deliver) {
                    let run = batch::run(broker.clone(), options.clone(), out_partitions, batch);
                    running.spawn(run);
                }
                continue;
            }
            if running.is_empty() {
                if options
                    .idle_exit
                    .is_some_and(|idle| idle_since.elapsed() >= idle)
                {
                    if all_done(broker, &input, &consumer).await {
                        break;
                    }
                    idle_since = Instant::now(); // a dead worker's records are to come back
                }
                continue;
            }
        }
        if let Some(done) = next_done(broker, &mut running).await {
            let outcome = done.map_err(|e| QueueError::Io(std::io::Error::other(e)))??;
            outcome.add_to(&mut worked);
        }
    }
    Ok(worked)
}

/// The next run to end; `None` when none runs, or when the broker is away or goes away
/// first, so that the caller looks at how long it has been away.
async fn next_done<T: 'static>(
    broker: &Broker,
    running: &mut JoinSet<T>,
) -> Option<Result<T, tokio::task::JoinError>> {
    if !broker.connected() || running.is_empty() {
        tokio::time::sleep(AWAY_POLL).await;
        return None;
    }
    tokio::select! {
        done = running.join_next() => done,
        () = away(broker) => None,
    }
}

/// Resolves once the connection to the broker is down: an answer asked for will not come
/// (the client keeps requests while it reconnects), so a wait for one ends then.
async fn away(broker: &Broker) {
    while broker.connected() {
        tokio::time::sleep(AWAY_POLL).await;
    }
}

/// How often a worker waiting for the broker's answer or a run's end looks whether the
/// broker is still there.
const AWAY_POLL: Duration = Duration::from_millis(100);

/// Whether `input` has had records and the group has done them all (see [`ever_fed`] and
/// [`outstanding`]); not when the broker goes away before it answers.
async fn all_done(broker: &Broker, input: &Stream, consumer: &PullConsumer) -> bool {
    // In this order: a record stored before `ever_fed` read the stream is counted as waiting
    // by the consumer's info read after it.
    let done = async { ever_fed(input).await && outstanding(consumer).await == 0 };
    tokio::select! {
        done = done => done,
        () = away(broker) => false,
    }
}

/// Whether `input` has ever held a record: a worker started before anything was pushed (its
/// coordinator still starting) waits for the first one however long `--idle-exit` is.
async fn ever_fed(input: &Stream) -> bool {
    let mut input = input.clone();
    let info = tokio::time::timeout(crate::broker::ATTEMPT_TIMEOUT, input.info()).await;
    matches!(info, Ok(Ok(i)) if i.state.last_sequence > 0)
}

/// Records of `consumer` not yet done: waiting, or delivered and not acknowledged (held by a
/// worker, perhaps a dead one whose records come back after the acknowledgement wait). An
/// idle worker leaves only when there are none, so the last one alive finishes them.
async fn outstanding(consumer: &PullConsumer) -> u64 {
    let mut consumer = consumer.clone();
    match consumer.info().await {
        Ok(info) => unfinished(info),
        Err(_) => 1, // unknown: not idle
    }
}

/// The records a consumer has not finished: waiting, or delivered and not acknowledged.
pub(crate) fn unfinished(info: &async_nats::jetstream::consumer::Info) -> u64 {
    info.num_pending + info.num_ack_pending as u64
}

/// The group's durable consumer of `input`, or of its partition `p`.
async fn consumer(
    broker: &Broker,
    input: &Stream,
    options: &WorkOptions,
    partition: Option<u32>,
) -> Result<PullConsumer, QueueError> {
    let (name, filter_subject) = match partition {
        None => (options.group.clone(), String::new()),
        Some(p) => (
            format!("{}-p{p}", options.group),
            format!("{}.{p}", broker.subject(&options.input)),
        ),
    };
    let config = pull::Config {
        durable_name: Some(name.clone()),
        ack_policy: AckPolicy::Explicit,
        ack_wait: options.ack_wait,
        // No cap on the broker's side: a record past the cap would be dropped there without
        // a word (a delivery lost with a dead worker or an expired pull counts too). The
        // worker gives a record up itself, as a `failure`, once the program has failed on a
        // delivery numbered `max_deliver` or more.
        max_deliver: -1,
        filter_subject,
        ..Default::default()
    };
    let doing = format!("join the worker group {}", options.group);
    broker
        .patiently(&doing, || {
            input.get_or_create_consumer(&name, config.clone())
        })
        .await
}

/// Up to a batch of records, waiting at most `--linger` for it to fill. After a pull that
/// found nothing (`idle`), it first waits for one record, up to [`IDLE_POLL`], then for the
/// rest of a batch as usual: a worker with nothing to do asks the broker once a second
/// instead of five times (each pull cost the broker ~0.1 ms of CPU; a hundred idle
/// workers would keep it busy).
async fn fetch(
    broker: &Broker,
    consumer: &PullConsumer,
    options: &WorkOptions,
    idle: bool,
) -> Result<Vec<Message>, QueueError> {
    let mut messages = Vec::new();
    if idle {
        let poll = options
            .idle_exit
            .map_or(IDLE_POLL, |i| IDLE_POLL.min(i / 2));
        messages = pull(broker, consumer, 1, poll.max(options.linger)).await?;
        if messages.is_empty() {
            return Ok(messages);
        }
    }
    let more = options.batch - messages.len();
    messages.extend(pull(broker, consumer, more, options.linger).await?);
    Ok(messages)
}

/// How long an idle worker's pull waits for a record at most.
const IDLE_POLL: Duration = Duration::from_secs(1);

/// Up to `max` records, waiting at most `expires` for them.
async fn pull(
    broker: &Broker,
    consumer: &PullConsumer,
    max: usize,
    expires: Duration,
) -> Result<Vec<Message>, QueueError> {
    let batch = broker
        .patiently("ask for records", || {
            consumer
                .batch()
                .max_messages(max)
                .expires(expires)
                .messages()
        })
        .await?;
    let messages = received_while(broker, batch, expires + crate::broker::ATTEMPT_TIMEOUT).await;
    crate::chunks::for_work(broker, messages).await
}

/// The records of a pull's answer, waiting for it at most `bound`. None when it does not
/// come (the caller checks whether the broker is away); an error inside the answer (the broker
/// went away mid-answer) ends it: the records not received are delivered again later.
pub(crate) async fn received(
    batch: async_nats::jetstream::consumer::pull::Batch,
    bound: Duration,
) -> Vec<Message> {
    match tokio::time::timeout(bound, batch.collect::<Vec<_>>()).await {
        Ok(messages) => messages.into_iter().filter_map(Result::ok).collect(),
        Err(_) => Vec::new(),
    }
}

/// Deliveries of a record after which it still goes in a batch with others: the first, and
/// one more after the worker that had it died (or a run alone of it failed). A record
/// delivered more often runs alone.
const TOGETHER: i64 = 2;

/// The records of a pull's answer ([`received`]), or none when the broker goes away first.
async fn received_while(
    broker: &Broker,
    batch: async_nats::jetstream::consumer::pull::Batch,
    bound: Duration,
) -> Vec<Message> {
    tokio::select! {
        messages = received(batch, bound) => messages,
        () = away(broker) => Vec::new(),
    }
}

/// Records delivered at most [`TOGETHER`] times (and at most `max_deliver` times) go together;
/// a record delivered more often goes alone, so that one that takes its worker down is found
/// and does not take others down with it again (see the `alone` module).
fn batches(messages: Vec<Message>, worked: &mut Worked, max_deliver: i64) -> Vec<Vec<Message>> {
    let together = TOGETHER.min(max_deliver);
    let delivered = |m: &Message| m.info().map(|i| i.delivered).unwrap_or(1);
    worked.records += messages.len() as u64;
    worked.redelivered += messages.iter().filter(|m| delivered(m) > 1).count() as u64;
    let (batch, alone): (Vec<_>, Vec<_>) =
        messages.into_iter().partition(|m| delivered(m) <= together);
    let mut out: Vec<Vec<Message>> = alone.into_iter().map(|m| vec![m]).collect();
    if !batch.is_empty() {
        out.push(batch);
    }
    out
}
