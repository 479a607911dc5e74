//! Publishing records: each under its identity, a window of acknowledgements in flight, and
//! again (under the same identity) while the broker restarts.

use crate::identity::{Head, ledger_per_url};
use crate::pairs::{Piece, pieces};
use crate::{Broker, QueueError, fit::fit, partition};
use async_nats::jetstream::context::{PublishAckFuture, PublishError};
use async_nats::jetstream::message::PublishMessage;
use bytes::Bytes;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The header naming the run a record belongs to (see [`Publisher::with_run`]).
pub const RUN_HEADER: &str = "Rip-Run";

/// The run a message belongs to, if it says.
pub fn run_of(message: &async_nats::Message) -> Option<String> {
    let value = message.headers.as_ref()?.get(RUN_HEADER)?;
    Some(value.as_str().to_owned())
}

/// Publish acknowledgements awaited at most at once.
const WINDOW: usize = 256;

/// What a [`Publisher`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    /// Records the broker stored.
    pub stored: u64,
    /// Records the broker already had (same identity): stored once.
    pub duplicates: u64,
    /// Records over the broker's maximum message, published as a failure of their URL.
    pub too_large: u64,
    /// Records over the maximum without a URL to stand for them: not published, said on
    /// stderr.
    pub dropped: u64,
}

/// Publishes records to one stream's subject.
pub struct Publisher {
    broker: Broker,
    subject: String,
    partitions: u32,
    max_payload: usize,
    pending: VecDeque<Pending>,
    /// The run the records belong to ([`with_run`](Self::with_run)).
    run: Option<String>,
    counts: Published,
    by_kind: BTreeMap<String, u64>,
}

struct Pending {
    ack: PublishAckFuture,
    subject: String,
    payload: Bytes,
    id: String,
    /// Records in the message (a ledger entry with its URL's outcome: two).
    records: u64,
}

impl Publisher {
    /// A publisher to the stream `stream` (which must exist: [`Broker::stream`]) with
    /// `partitions` ([`crate::broker::partitions_of`]; 0: not partitioned).
    pub fn new(broker: &Broker, stream: &str, partitions: u32) -> Self {
        Self {
            subject: broker.subject(stream),
            partitions,
            max_payload: broker.max_payload(),
            broker: broker.clone(),
            pending: VecDeque::new(),
            run: None,
            counts: Published::default(),
            by_kind: BTreeMap::new(),
        }
    }

    /// Publishes as records of the run `run` (`rip-queue relay`): each message carries the
    /// header [`RUN_HEADER`] and a message id prefixed with the run, so that a record of a new
    /// run is stored even when an earlier run stored the same one within the deduplication
    /// window, and a collector reads only its own run's records.
    pub fn with_run(mut self, run: Option<String>) -> Self {
        self.run = run;
        self
    }

    /// Publishes the record on `line`, waiting for the oldest acknowledgement when the window
    /// is full. A `ledger` record naming several URLs is published as one record per URL
    /// ([`identity::ledger_per_url`](crate::identity::ledger_per_url)), so that a batch done
    /// again, whatever its records, enters each URL once.
    pub async fn send(&mut self, line: &str) -> Result<(), QueueError> {
        match ledger_per_url(line) {
            Some(pieces) => {
                for piece in pieces {
                    self.send_one(&piece).await?;
                }
                Ok(())
            }
            None => self.send_one(line).await,
        }
    }

    /// Publishes a run's output, `records` in order (each line with its head), with each
    /// URL's ledger entry in one message with the URL's outcome ([`crate::pairs`]): a
    /// first-round URL costs the broker one message, not two.
    pub(crate) async fn send_run(
        &mut self,
        records: Vec<(String, Head)>,
    ) -> Result<(), QueueError> {
        for piece in pieces(records, self.max_payload) {
            match piece {
                Piece::One { line, head } => self.send_record(&line, head).await?,
                Piece::Pair {
                    entry,
                    entry_head,
                    outcome,
                    outcome_head,
                } => {
                    let id = entry_head.message_id(&entry);
                    *self.by_kind.entry(entry_head.kind).or_default() += 1;
                    *self.by_kind.entry(outcome_head.kind).or_default() += 1;
                    let payload = Bytes::from(format!("{entry}\n{outcome}"));
                    self.enqueue(outcome_head.url.as_deref(), id, payload, 2)
                        .await?;
                }
            }
        }
        Ok(())
    }

    async fn send_one(&mut self, line: &str) -> Result<(), QueueError> {
        self.send_record(line, Head::of(line)).await
    }

    /// Publishes the record on `line`, whose head is `head`.
    async fn send_record(&mut self, line: &str, head: Head) -> Result<(), QueueError> {
        let Some(fitted) = fit(line, self.max_payload) else {
            self.counts.dropped += 1;
            eprintln!(
                "rip-queue: a record of {} bytes without a URL is over the broker's maximum \
                 message of {} bytes: not published (raise the server's max_payload)",
                line.len(),
                self.max_payload
            );
            return Ok(());
        };
        let head = match fitted {
            Cow::Owned(ref failure) => {
                self.counts.too_large += 1;
                Head::of(failure)
            }
            Cow::Borrowed(_) => head,
        };
        let id = head.message_id(&fitted);
        *self.by_kind.entry(head.kind).or_default() += 1;
        let payload = Bytes::from(fitted.into_owned());
        self.send_as(head.url.as_deref(), id, payload).await
    }

    /// Publishes `payload` (not read: any bytes) under the message id `id`, on the partition
    /// of `url`'s host; as [`send`](Self::send), a window of acknowledgements in flight.
    pub async fn send_as(
        &mut self,
        url: Option<&str>,
        id: String,
        payload: Bytes,
    ) -> Result<(), QueueError> {
        self.enqueue(url, id, payload, 1).await
    }

    /// [`send_as`](Self::send_as) for a message holding `records` records.
    async fn enqueue(
        &mut self,
        url: Option<&str>,
        id: String,
        payload: Bytes,
        records: u64,
    ) -> Result<(), QueueError> {
        let subject = match self.partitions {
            0 => self.subject.clone(),
            n => format!("{}.{}", self.subject, partition::of_url(url, n)),
        };
        let id = match &self.run {
            Some(run) => format!("{run}:{id}"),
            None => id,
        };
        let ack = self.publish(&subject, &payload, &id).await?;
        self.pending.push_back(Pending {
            ack,
            subject,
            payload,
            id,
            records,
        });
        while self.pending.len() > WINDOW {
            self.settle_oldest().await?;
        }
        Ok(())
    }

    /// Waits until the broker has stored every record sent; returns the counts.
    pub async fn flush(&mut self) -> Result<Published, QueueError> {
        while !self.pending.is_empty() {
            self.settle_oldest().await?;
        }
        Ok(self.counts)
    }

    /// The records sent so far, by kind, as published (a ledger split into one record per
    /// URL counts each; a record too large counts as the failure that stands for it).
    pub fn sent_by_kind(&self) -> &BTreeMap<String, u64> {
        &self.by_kind
    }

    async fn publish(
        &self,
        subject: &str,
        payload: &Bytes,
        id: &str,
    ) -> Result<PublishAckFuture, QueueError> {
        let js = self.broker.jetstream();
        self.broker
            .patiently("publish a record", || {
                let mut message = PublishMessage::build()
                    .payload(payload.clone())
                    .message_id(id);
                if let Some(run) = &self.run {
                    message = message.header(RUN_HEADER, run.as_str());
                }
                js.send_publish(subject.to_owned(), message)
            })
            .await
    }

    async fn settle_oldest(&mut self) -> Result<(), QueueError> {
        let Some(Pending {
            ack,
            subject,
            payload,
            id,
            records,
        }) = self.pending.pop_front()
        else {
            return Ok(());
        };
        let start = Instant::now();
        let mut answer: Result<_, PublishError> = ack.await;
        loop {
            match answer {
                Ok(ack) if ack.duplicate => self.counts.duplicates += records,
                Ok(_) => self.counts.stored += records,
                Err(e) => {
                    // Not acknowledged: the broker may have it or not. The same identity
                    // again stores it at most once.
                    if start.elapsed() < Duration::from_millis(300) {
                        self.broker
                            .say_waiting("a record was not acknowledged", &e, false);
                    }
                    self.give_up_after(start, &e)?;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    answer = self.publish(&subject, &payload, &id).await?.await;
                    continue;
                }
            }
            return Ok(());
        }
    }

    fn give_up_after(&self, start: Instant, e: &PublishError) -> Result<(), QueueError> {
        if start.elapsed() < self.broker.patience() {
            return Ok(());
        }
        Err(self.broker.gone("publish a record", &e.to_string()))
    }
}
