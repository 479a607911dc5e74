//! Publishing records: each under its identity, a window of acknowledgements in flight, and
//! again (under the same identity) while the broker restarts.

use crate::chunks::{self, CHUNK_HEADER, CHUNKS_HEADER};
use crate::identity::{Head, ledger_per_url};
use crate::pairs::{Piece, pieces};
use crate::{Broker, QueueError, partition};
use async_nats::jetstream::context::{PublishAckFuture, PublishError};
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::publish::PublishAck;
use bytes::Bytes;
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
    /// Of those stored or already there, records over the broker's largest message, stored
    /// in chunks ([`crate::chunks`]).
    pub chunked: u64,
}

impl Published {
    /// Adds what `other` counted to these counts.
    pub fn add(&mut self, other: &Published) {
        self.stored += other.stored;
        self.duplicates += other.duplicates;
        self.chunked += other.chunked;
    }
}

/// Publishes records to one stream's subject.
pub struct Publisher {
    broker: Broker,
    /// The stream's name on the broker (`<prefix>_<name>`).
    stream: String,
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
            stream: format!("{}_{stream}", broker.prefix()),
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
        for piece in pieces(records, chunks::room(self.max_payload)) {
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

    /// Publishes the record on `line`, whose head is `head`: in chunks when it is over the
    /// broker's largest message.
    async fn send_record(&mut self, line: &str, head: Head) -> Result<(), QueueError> {
        if line.len() > chunks::room(self.max_payload) {
            return self.send_chunked(line, head).await;
        }
        let id = head.message_id(line);
        *self.by_kind.entry(head.kind).or_default() += 1;
        let payload = Bytes::copy_from_slice(line.as_bytes());
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
        let subject = self.subject_of(url);
        let id = self.run_id(id);
        let ack = self.publish(&subject, &payload, &id, None).await?;
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
    /// URL counts each; a record in chunks counts once, as itself).
    pub fn sent_by_kind(&self) -> &BTreeMap<String, u64> {
        &self.by_kind
    }

    /// The subject of a record of `url`: its host's partition's on a partitioned stream.
    fn subject_of(&self, url: Option<&str>) -> String {
        match self.partitions {
            0 => self.subject.clone(),
            n => format!("{}.{}", self.subject, partition::of_url(url, n)),
        }
    }

    /// The message id `id` of a record of this publisher's run.
    fn run_id(&self, id: String) -> String {
        match &self.run {
            Some(run) => format!("{run}:{id}"),
            None => id,
        }
    }

    /// Publishes `payload` under the message id `id`, with the run's header and `extra`.
    pub(crate) async fn publish(
        &self,
        subject: &str,
        payload: &Bytes,
        id: &str,
        extra: Option<(&'static str, &str)>,
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
                if let Some((name, value)) = extra {
                    message = message.header(name, value);
                }
                js.send_publish(subject.to_owned(), message)
            })
            .await
    }

    /// Waits for `ack` of the message published with [`publish`](Self::publish)'s
    /// arguments, publishing it again (same identity: stored at most once) while the broker
    /// does not acknowledge it, for as long as its patience allows.
    pub(crate) async fn stored(
        &self,
        ack: PublishAckFuture,
        message: (&str, &Bytes, &str, Option<(&'static str, &str)>),
    ) -> Result<PublishAck, QueueError> {
        let (subject, payload, id, extra) = message;
        let start = Instant::now();
        let mut answer = ack.await;
        loop {
            match answer {
                Ok(ack) => return Ok(ack),
                Err(e) => {
                    self.give_up_after(start, &e)?;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    answer = self.publish(subject, payload, id, extra).await?.await;
                }
            }
        }
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
                    answer = self.publish(&subject, &payload, &id, None).await?.await;
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

impl Publisher {
    /// Publishes the record on `line` in chunks, then its head ([`crate::chunks`]), waiting
    /// until the broker has stored them. A head the broker had already (the record stored
    /// before) has the chunks just stored deleted.
    async fn send_chunked(&mut self, line: &str, head: Head) -> Result<(), QueueError> {
        let digest = chunks::digest(line.as_bytes());
        let subject = self.subject_of(head.url.as_deref());
        let id = self.run_id(head.message_id(line));
        let whole = Bytes::copy_from_slice(line.as_bytes());
        let chunk_subject = chunks::subject(&self.subject, &id);
        let (sequences, fresh) = self
            .store_chunks(&chunk_subject, &id, &digest, &whole)
            .await?;
        let value = format!("{digest} {} {}", whole.len(), chunks::ranges(&sequences));
        let stand_in = Bytes::from(chunks::stand_in(line));
        let extra = Some((CHUNKS_HEADER, value.as_str()));
        let ack = self.publish(&subject, &stand_in, &id, extra).await?;
        let stored = self.stored(ack, (&subject, &stand_in, &id, extra)).await?;
        *self.by_kind.entry(head.kind).or_default() += 1;
        self.counts.chunked += 1;
        if stored.duplicate {
            self.counts.duplicates += 1;
            self.delete(&fresh).await;
        } else {
            self.counts.stored += 1;
            let first = sequences.iter().copied().min().unwrap_or(0);
            self.clear_orphans(&chunk_subject, &digest, first).await;
        }
        Ok(())
    }

    /// After a record's head is stored for the first time: deletes the chunks on its chunk
    /// subject, before `first` (the first of its own), that another digest names and that
    /// were stored within the deduplication window. They are a producer's of the same record
    /// killed between its chunks and its head: a head of theirs would have made this one a
    /// duplicate. (Older ones may be a head's of a record published again after the window:
    /// they stay.) One request when there are none.
    async fn clear_orphans(&self, chunk_subject: &str, digest: &str, first: u64) {
        let js = self.broker.jetstream();
        let Ok(stream) = js.get_stream_no_info(&self.stream).await else {
            return;
        };
        let window = i64::try_from(self.broker.dedupe_window().as_secs()).unwrap_or(i64::MAX);
        let since = chrono::Utc::now().timestamp().saturating_sub(window);
        let mut from = 1;
        while let Ok(m) = stream
            .get_first_raw_message_by_subject(chunk_subject, from)
            .await
        {
            if m.sequence >= first {
                break;
            }
            let theirs = m.headers.get(CHUNK_HEADER).map(|v| v.as_str().to_owned());
            let other = theirs.is_some_and(|h| !h.starts_with(digest));
            if other && m.time.unix_timestamp() >= since {
                stream.delete_message(m.sequence).await.ok();
            }
            from = m.sequence + 1;
        }
    }

    /// Stores `whole` in chunks on `subject` (a window of them in flight); returns their
    /// sequences in order, and those of the chunks the broker did not have before.
    async fn store_chunks(
        &self,
        subject: &str,
        id: &str,
        digest: &str,
        whole: &Bytes,
    ) -> Result<(Vec<u64>, Vec<u64>), QueueError> {
        let size = chunks::chunk_size(self.max_payload);
        let mut in_flight = VecDeque::new();
        let (mut sequences, mut fresh) = (Vec::new(), Vec::new());
        let mut settle = async |chunk: Chunk| -> Result<(), QueueError> {
            let header = Some((CHUNK_HEADER, chunk.header.as_str()));
            let message = (subject, &chunk.piece, chunk.id.as_str(), header);
            let stored = self.stored(chunk.ack, message).await?;
            sequences.push(stored.sequence);
            if !stored.duplicate {
                fresh.push(stored.sequence);
            }
            Ok(())
        };
        for (index, start) in (0..whole.len()).step_by(size).enumerate() {
            let piece = whole.slice(start..(start + size).min(whole.len()));
            let (id, header) = (
                format!("{id}~{digest}~{index}"),
                format!("{digest} {index}"),
            );
            let ack = self
                .publish(subject, &piece, &id, Some((CHUNK_HEADER, &header)))
                .await?;
            in_flight.push_back(Chunk {
                ack,
                piece,
                id,
                header,
            });
            if in_flight.len() > CHUNKS_IN_FLIGHT {
                settle(in_flight.pop_front().expect("one in flight")).await?;
            }
        }
        while let Some(chunk) = in_flight.pop_front() {
            settle(chunk).await?;
        }
        Ok((sequences, fresh))
    }

    /// Deletes the messages at `sequences` (chunks no head names); a failure leaves them,
    /// passed over by readers.
    async fn delete(&self, sequences: &[u64]) {
        let Ok(stream) = self
            .broker
            .jetstream()
            .get_stream_no_info(&self.stream)
            .await
        else {
            return;
        };
        for &sequence in sequences {
            stream.delete_message(sequence).await.ok();
        }
    }
}

/// Chunks of one record published before the oldest one's acknowledgement is waited for.
const CHUNKS_IN_FLIGHT: usize = 32;

/// A chunk published, its acknowledgement awaited.
struct Chunk {
    ack: PublishAckFuture,
    piece: Bytes,
    id: String,
    header: String,
}
