//! One run of the program on one batch of records.
//!
//! A run of several records that fails is not handed back whole: each of its records is run
//! again alone at once, by the same worker (which still holds them), so that one record the
//! program fails on neither takes the others down with it nor uses up their deliveries. Only
//! a record whose run alone failed is handed back to the broker.

use super::alone::{self, Mark};
use super::{WorkOptions, Worked};
use crate::fit::failure_of;
use crate::identity::Head;
use crate::{Broker, Published, Publisher, QueueError};
use async_nats::jetstream::{AckKind, Message};
use chrono::{DateTime, Utc};
use rip_core::{ErrorCategory, Record, Status, Summary};
use std::collections::BTreeMap;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};

/// What one run did (with the runs alone of its records when it failed).
#[derive(Default)]
pub(crate) struct Outcome {
    published: Published,
    runs: u64,
    failed: u64,
    handed_back: u64,
    given_up: u64,
}

impl Outcome {
    /// Adds what `other` did to this.
    fn merge(&mut self, other: Outcome) {
        self.runs += other.runs;
        self.failed += other.failed;
        self.handed_back += other.handed_back;
        self.given_up += other.given_up;
        self.published.add(&other.published);
    }

    pub(super) fn add_to(&self, worked: &mut Worked) {
        worked.batches += self.runs;
        worked.failed_runs += self.failed;
        worked.handed_back += self.handed_back;
        worked.given_up += self.given_up;
        worked.published.add(&self.published);
        worked.publish_live(false);
    }
}

/// Runs the program on `messages`, publishes its output, then acknowledges them (the program
/// ended as a stage ends) or, when it did not, runs each again alone (several records) or
/// hands it back (one).
pub(super) async fn run(
    broker: Broker,
    options: Arc<WorkOptions>,
    out_partitions: u32,
    messages: Vec<Message>,
) -> Result<Outcome, QueueError> {
    let messages = Arc::new(messages);
    let keepalive = AbortOnDrop(tokio::spawn(keep_in_progress(
        messages.clone(),
        options.ack_wait,
    )));
    let suspect = alone::suspect(&messages, options.max_deliver);
    let turn = alone::turn(suspect.is_some()).await;
    let mark = match marked(&broker, &options, &messages, suspect).await? {
        Ok(mark) => mark,
        Err(delivered) => {
            drop(keepalive);
            let message = &messages[0];
            return give_up_unrun(&broker, &options, out_partitions, message, delivered).await;
        }
    };
    // The output belongs to the run of its input (`rip-queue relay`), when it names one.
    let run = messages.first().and_then(|m| crate::publish::run_of(m));
    let mut publisher = Publisher::new(&broker, &options.output, out_partitions).with_run(run);
    let started = chrono::Utc::now();
    let mut read = BTreeMap::new();
    let ran = run_program(&options, &messages, &mut publisher, &mut read).await;
    drop(keepalive);
    if let Some(mark) = &mark {
        mark.clear(&broker).await;
    }
    let (status, summaries) = ran?;
    let failed = !ended_as_a_stage(status);
    let mut outcome = Outcome {
        published: Published::default(),
        runs: 1,
        failed: u64::from(failed),
        handed_back: 0,
        given_up: 0,
    };
    if failed && messages.len() > 1 {
        rip_core::stderr::say(format_args!(
            "rip-queue work: `{}` ended with {status} on {} records: running each alone",
            program_name(&options),
            messages.len()
        ));
        outcome.published = publisher.flush().await?;
        // Each run alone takes its own turn (a suspect's run may be waiting for this one's).
        drop(turn);
        let alone = alone_each(&broker, &options, out_partitions, &messages).await?;
        outcome.merge(alone);
        return Ok(outcome);
    }
    if failed {
        rip_core::stderr::say(format_args!(
            "rip-queue work: `{}` ended with {status} on its record: handing it back",
            program_name(&options),
        ));
        if !summaries.is_empty() {
            rip_core::stderr::say(format_args!(
                "rip-queue work: the run's {} stage summaries are not published: its records \
                 will be done again",
                summaries.len()
            ));
        }
        hand_back(&options, &messages, &mut publisher, &mut outcome, status).await?;
    } else {
        for line in &summaries {
            publisher.send(line).await?;
        }
        let summary = summary(started, read, publisher.sent_by_kind());
        publisher.send(&summary).await?;
    }
    outcome.published = publisher.flush().await?;
    if !failed {
        acknowledge_all(&broker, &messages).await;
    }
    Ok(outcome)
}

/// Acknowledges a batch done: plain acknowledgements for all but the last, which is
/// confirmed: one round trip for the batch (one per record cost the broker ~110 µs a
/// record: scripts/bench/queue). The connection is ordered, so the confirmation of the last
/// comes after the others were received; one lost with a broken connection brings its
/// record back, done again and its output stored once.
///
/// When the broker was waited for meanwhile (a server died, the consumer's leader among
/// them, or the connection moved to another server), the plain acknowledgements may have
/// gone with it: they are sent again and the connection flushed, so that a run done is not
/// done again (issue 41's kill run: 45 records delivered again).
async fn acknowledge_all(broker: &Broker, messages: &[Message]) {
    if let Some((last, others)) = messages.split_last() {
        let before = (broker.waits(), broker.connections());
        for message in others {
            message.ack().await.ok();
        }
        acknowledge(broker, last, AckKind::Ack).await;
        if (broker.waits(), broker.connections()) != before && !others.is_empty() {
            for message in others {
                message.ack().await.ok();
            }
            let flushed = broker
                .patiently("acknowledge a batch", || broker.flush())
                .await;
            if let Err(e) = flushed {
                tracing::warn!("{e}");
            }
        }
    }
}

/// Runs the program on each of `messages` alone, one after the other, the ones waiting kept
/// in progress meanwhile.
async fn alone_each(
    broker: &Broker,
    options: &Arc<WorkOptions>,
    out_partitions: u32,
    messages: &Arc<Vec<Message>>,
) -> Result<Outcome, QueueError> {
    let _keepalive = AbortOnDrop(tokio::spawn(keep_in_progress(
        messages.clone(),
        options.ack_wait,
    )));
    let mut outcome = Outcome::default();
    for message in messages.iter() {
        let one = Box::pin(run(
            broker.clone(),
            options.clone(),
            out_partitions,
            vec![message.clone()],
        ))
        .await?;
        outcome.merge(one);
    }
    Ok(outcome)
}

async fn run_program(
    options: &WorkOptions,
    messages: &Arc<Vec<Message>>,
    publisher: &mut Publisher,
    read: &mut BTreeMap<String, u64>,
) -> Result<(ExitStatus, Vec<String>), QueueError> {
    let (program, args) = options.command.split_first().expect("a command");
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| QueueError::Spawn {
            command: program.to_string_lossy().into_owned(),
            source,
        })?;
    // Declared after the child, so dropped before it: the stages below the command are
    // killed while the command still holds them.
    let mut tree = super::tree::RunTree::of(child.id());
    // A partition's run pauses while its lease is in doubt (see the `gate` module).
    let gate = super::partitioned::gate::GATE.try_with(Arc::clone).ok();
    if let Some(gate) = &gate {
        gate.running(child.id());
    }
    let stdin = child.stdin.take().expect("piped stdin");
    let feeder = tokio::spawn(feed(stdin, messages.clone()));
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    // The stages' summaries are held until the run has ended as a stage ends: a failed run's
    // records are done again, and its `failed` summaries would tell rip-health of a failure
    // that the second run repaired.
    let mut summaries = Vec::new();
    let mut held = Held::default();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        // Read once: its kind here, its identity when it is published.
        let head = Head::of(&line);
        *read.entry(head.kind.clone()).or_default() += 1;
        if head.kind == "summary" {
            summaries.push(line);
        } else if held.hold(line, head) {
            held.publish(publisher).await?;
        }
    }
    held.publish(publisher).await?;
    let status = child.wait().await?;
    tree.disarm();
    if let Some(gate) = &gate {
        gate.running(None);
    }
    // A program that stopped reading early broke the feeder's pipe: its exit status says
    // whether that was fine.
    feeder.await.ok();
    Ok((status, summaries))
}

/// A run's output, held until the run ends or [`HELD_BYTES`] are waiting, then published
/// together. Its input is acknowledged only once all of it is stored, so publishing a
/// record as soon as it was written gained nothing, and it cost the broker a wake-up per
/// record: the records of a stage whose pages answer one by one came one by one.
#[derive(Default)]
struct Held {
    records: Vec<(String, Head)>,
    bytes: usize,
}

/// Output held at most before it is published (a run's records, not its whole output,
/// wait in memory).
const HELD_BYTES: usize = 8 << 20;

impl Held {
    /// Holds `line`, whose head is `head`; true when what is held should go now.
    fn hold(&mut self, line: String, head: Head) -> bool {
        self.bytes += line.len();
        self.records.push((line, head));
        self.bytes >= HELD_BYTES
    }

    /// Publishes what is held, each URL's ledger entry with its outcome
    /// ([`Publisher::send_run`]).
    async fn publish(&mut self, publisher: &mut Publisher) -> Result<(), QueueError> {
        publisher
            .send_run(std::mem::take(&mut self.records))
            .await?;
        self.bytes = 0;
        Ok(())
    }
}

/// The `summary` a run ends with, as every stage's output does: what the program wrote
/// (`input`) and what was published (`output`, this summary included). They differ where a
/// `ledger` record went out one URL at a time, so that `rip-health`, comparing each stage's
/// output with the next one's input, finds the books as they are.
fn summary(
    started: DateTime<Utc>,
    read: BTreeMap<String, u64>,
    sent: &BTreeMap<String, u64>,
) -> String {
    let mut output = sent.clone();
    *output.entry("summary".to_owned()).or_default() += 1;
    let passed_through = read
        .iter()
        .filter(|(kind, n)| sent.get(*kind) == Some(n))
        .map(|(kind, n)| (kind.clone(), *n))
        .collect();
    let summary = Summary {
        stage: "rip-queue".to_owned(),
        pid: std::process::id(),
        started_at: started,
        ended_at: Utc::now(),
        input: read,
        output,
        passed_through,
        bad_lines: 0,
        status: Status::Complete,
        counters: BTreeMap::new(),
        notes: Vec::new(),
        peak_rss_bytes: rip_core::peak_rss_bytes(),
        extra: serde_json::Map::new(),
    };
    serde_json::to_string(&Record::Summary(summary)).expect("a summary serialises")
}

async fn feed(mut stdin: ChildStdin, messages: Arc<Vec<Message>>) -> std::io::Result<()> {
    for message in messages.iter() {
        stdin.write_all(&message.payload).await?;
        stdin.write_all(b"\n").await?;
    }
    stdin.shutdown().await
}

/// A task aborted when this is dropped (an error returned early included).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Tells the broker, a few times per acknowledgement wait, that the records are being worked
/// on, so that a long run does not have them delivered to another worker meanwhile.
async fn keep_in_progress(messages: Arc<Vec<Message>>, ack_wait: Duration) {
    let every = (ack_wait / 3).max(Duration::from_millis(100));
    loop {
        tokio::time::sleep(every).await;
        let progress = messages.iter().map(|m| m.ack_with(AckKind::Progress));
        futures::future::join_all(progress).await;
    }
}

/// Exit 0 (complete) and 2 (partial: failures are in the output, as records) end a stage's
/// work; anything else (fatal, not ready, interrupted, killed) did not do it.
fn ended_as_a_stage(status: ExitStatus) -> bool {
    matches!(status.code(), Some(0 | 2))
}

async fn hand_back(
    options: &WorkOptions,
    messages: &[Message],
    publisher: &mut Publisher,
    outcome: &mut Outcome,
    status: ExitStatus,
) -> Result<(), QueueError> {
    for message in messages {
        let delivered = message.info().map(|i| i.delivered).unwrap_or(1);
        if delivered < options.max_deliver {
            outcome.handed_back += 1;
            message
                .ack_with(AckKind::Nak(Some(Duration::from_millis(500))))
                .await
                .ok();
            continue;
        }
        outcome.given_up += 1;
        let why = format!(
            "`{}` failed on this record's delivery {delivered} (--max-deliver {}; last: {status})",
            program_name(options),
            options.max_deliver
        );
        give_up(message, publisher, "queue.workFailed", &why).await?;
    }
    Ok(())
}

/// The mark of a suspect's run (`suspect`: its delivery number), set (`Ok(None)`: not a
/// suspect); or `Err(delivery)` for a suspect that took down a worker running it alone (see
/// the `alone` module).
async fn marked(
    broker: &Broker,
    options: &WorkOptions,
    messages: &[Message],
    suspect: Option<i64>,
) -> Result<Result<Option<Mark>, i64>, QueueError> {
    let Some(delivered) = suspect else {
        return Ok(Ok(None));
    };
    let mark = Mark::of(broker, &options.input, &messages[0]).await?;
    if mark.left(broker).await? {
        return Ok(Err(delivered));
    }
    mark.set(broker).await?;
    Ok(Ok(Some(mark)))
}

/// Gives up a record that took down a worker running it alone, without running the program
/// on it again: a `failure` of its URL (`queue.workerLost`) in the output.
async fn give_up_unrun(
    broker: &Broker,
    options: &WorkOptions,
    out_partitions: u32,
    message: &Message,
    delivered: i64,
) -> Result<Outcome, QueueError> {
    let run = crate::publish::run_of(message);
    let mut publisher = Publisher::new(broker, &options.output, out_partitions).with_run(run);
    let why = format!(
        "this record took its worker down: a worker running `{}` on it alone (its delivery \
         past --max-deliver {}) died; not run again at its delivery {delivered}",
        program_name(options),
        options.max_deliver
    );
    rip_core::stderr::say(format_args!(
        "rip-queue work: a record given up as a failure: {why}"
    ));
    give_up(message, &mut publisher, "queue.workerLost", &why).await?;
    Ok(Outcome {
        published: publisher.flush().await?,
        runs: 1,
        failed: 0,
        handed_back: 0,
        given_up: 1,
    })
}

/// Publishes the `failure` (`code`) that stands for a record given up, and ends the record's
/// deliveries. A record without a URL to account for is passed on unchanged.
async fn give_up(
    message: &Message,
    publisher: &mut Publisher,
    code: &str,
    why: &str,
) -> Result<(), QueueError> {
    let text = String::from_utf8_lossy(&message.payload);
    // A message may hold a ledger entry before its URL's outcome (`crate::pairs`): the
    // entry passes on, the outcome is given up.
    let (entries, line) = text.rsplit_once('\n').unwrap_or(("", &text));
    for entry in entries.lines() {
        publisher.send(entry).await?;
    }
    match gave_up(line, code, why) {
        Some(failure) => publisher.send(&failure).await?,
        None => {
            rip_core::stderr::say(format_args!(
                "rip-queue work: a record without a URL passed on unchanged: {why}"
            ));
            publisher.send(line).await?;
        }
    }
    message.ack_with(AckKind::Term).await.ok();
    Ok(())
}

/// The `failure` record (`code`) that stands for a record given up, when it has a URL to
/// account for.
fn gave_up(line: &str, code: &str, why: &str) -> Option<String> {
    let failure = failure_of(line, ErrorCategory::Unknown, code, why)?;
    serde_json::to_string(&Record::Failure(failure)).ok()
}

async fn acknowledge(broker: &Broker, message: &Message, kind: AckKind) {
    let done = broker
        .patiently("acknowledge a record", || message.double_ack_with(kind))
        .await;
    if let Err(e) = done {
        // Not acknowledged: the record comes back and is done again; its output has the
        // same identities and is stored once.
        tracing::warn!("{e}");
    }
}

fn program_name(options: &WorkOptions) -> String {
    options
        .command
        .first()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_held_up_to_its_budget() {
        let mut held = Held::default();
        let line = "x".repeat(HELD_BYTES / 4);
        let hold = |held: &mut Held, line: &str| held.hold(line.to_owned(), Head::of(line));
        assert!(!hold(&mut held, &line));
        assert!(!hold(&mut held, &line));
        assert!(!hold(&mut held, &line));
        assert!(hold(&mut held, &line), "a full budget goes out");
        assert_eq!(held.records.len(), 4);
    }
}
