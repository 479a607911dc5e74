//! A crawl's frontier shared through the broker, partitioned by host.
//!
//! Every URL a crawl finds is published to the partition of its host (`xxh3(host:port) % N`)
//! of the stream `crawl_NAME`, under the message id `f:KEY` (its visited-set key), so the
//! broker stores a URL found by several processes within its deduplication window once. The
//! process that owns a partition ([`crate::members`]) takes its URLs through the partition's
//! durable consumer, keeps its visited set, fetches, and publishes what it finds.
//!
//! A partition's URLs are acknowledged in stream order (acknowledgement policy *all*): the
//! consumer's acknowledgement floor is the exact line between done and not done. A process
//! that takes a partition over rebuilds the partition's visited set from the message ids at
//! or below the floor ([`SharedFrontier::seen_before`], headers only), and is delivered
//! everything above it again: what its dead owner was doing is done again, nothing is lost,
//! and nothing done before the floor is done twice.
//!
//! The URLs the previous owner had taken and not acknowledged come again only after the
//! acknowledgement wait, and an acknowledgement (policy *all*) of a later URL would
//! acknowledge them too, undone. So a process that takes a partition over while another still
//! holds some of its URLs takes nothing of it for one acknowledgement wait (then they come
//! again first), and acknowledges nothing of it until none is held elsewhere (they came again
//! and were done, or their holder, only slow, acknowledged them itself).

use crate::{Broker, Publisher, QueueError};
use async_nats::jetstream::consumer::{self, AckPolicy, DeliverPolicy, PullConsumer, pull};
use async_nats::jetstream::stream::Stream;
use async_nats::jetstream::{AckKind, Message};
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// URLs a process holds of one partition at most (taken and not yet acknowledged).
pub const WINDOW: usize = 2048;

/// One URL taken from a partition.
#[derive(Debug)]
pub struct Delivery {
    /// The partition.
    pub partition: u32,
    /// Its place in the stream (what [`SharedFrontier::done`] is told).
    pub seq: u64,
    /// Its visited-set key (from the message id), when it has one.
    pub key: Option<u64>,
    /// What was published.
    pub payload: Bytes,
}

/// The URLs of one partition taken and not yet acknowledged, in stream order.
#[derive(Default)]
struct Taken {
    open: BTreeMap<u64, (Message, bool)>,
    /// When this process took the partition over while another held some of its URLs.
    inherited: Option<Inherited>,
}

/// URLs of a partition another process held when this one took the partition over: they
/// come again after the acknowledgement wait, before any later URL, and are worked on;
/// nothing of the partition is acknowledged while another process holds some.
#[derive(Clone, Copy)]
struct Inherited {
    /// The last stream sequence delivered at the takeover (the others' URLs are at or below).
    up_to: u64,
    /// The takeover.
    at: Instant,
}

/// A crawl's frontier on the broker.
pub struct SharedFrontier {
    broker: Broker,
    stream: Stream,
    name: String,
    partitions: u32,
    ack_wait: Duration,
    publisher: Publisher,
    consumers: HashMap<u32, PullConsumer>,
    taken: HashMap<u32, Taken>,
    quiet_at: Option<u64>,
}

impl SharedFrontier {
    /// The frontier of the crawl `crawl`, created with `partitions` when new (an existing
    /// crawl with other partitions is an error); a URL taken and not acknowledged within
    /// `ack_wait` (its process died) is delivered again.
    pub async fn open(
        broker: &Broker,
        crawl: &str,
        partitions: u32,
        ack_wait: Duration,
    ) -> Result<Self, QueueError> {
        let name = format!("crawl_{crawl}");
        let stream = broker.stream_with(&name, Some(partitions.max(1))).await?;
        let publisher = Publisher::new(broker, &name, partitions.max(1));
        let mut frontier = Self {
            broker: broker.clone(),
            stream,
            name,
            partitions: partitions.max(1),
            ack_wait,
            publisher,
            consumers: HashMap::new(),
            taken: HashMap::new(),
            quiet_at: None,
        };
        for p in 0..frontier.partitions {
            frontier.consumer(p).await?;
        }
        Ok(frontier)
    }

    /// The partitions.
    pub fn partitions(&self) -> u32 {
        self.partitions
    }

    /// The partition of `url`.
    pub fn partition_of(&self, url: &str) -> u32 {
        crate::partition::of_url(Some(url), self.partitions)
    }

    /// Publishes a URL found (its key and what its owner needs, `payload`); stored once
    /// however often it is found within the deduplication window.
    pub async fn publish(&mut self, url: &str, key: u64, payload: Bytes) -> Result<(), QueueError> {
        self.publisher
            .send_as(Some(url), format!("f:{key:016x}"), payload)
            .await
    }

    /// Waits until the broker stored every URL published.
    pub async fn flush(&mut self) -> Result<(), QueueError> {
        self.publisher.flush().await.map(|_| ())
    }

    /// The keys of partition `p` done before (at or below its acknowledgement floor): the
    /// visited set of a process taking the partition over. Read in batches of what the
    /// stream holds now (no waiting for more), by a reader deleted afterwards.
    pub async fn seen_before(&mut self, p: u32) -> Result<Vec<u64>, QueueError> {
        let state = self.state(p).await?;
        let floor = state.ack_floor.stream_sequence;
        if state.num_ack_pending > self.holding(p) {
            self.taken.entry(p).or_default().inherited = Some(Inherited {
                up_to: state.delivered.stream_sequence,
                at: Instant::now(),
            });
        }
        let mut keys = Vec::new();
        if floor == 0 {
            return Ok(keys);
        }
        let config = pull::Config {
            ack_policy: AckPolicy::None,
            deliver_policy: DeliverPolicy::All,
            headers_only: true,
            filter_subject: self.subject(p),
            inactive_threshold: Duration::from_secs(60),
            ..Default::default()
        };
        let doing = format!("read partition {p} of {}", self.name);
        let reader = self
            .broker
            .patiently(&doing, || self.stream.create_consumer(config.clone()))
            .await?;
        let mut last = 0;
        while last < floor {
            // No waiting: a batch waiting for 4,096 messages that a small partition does not
            // have took a second, a takeover of several partitions several seconds without
            // a membership beat.
            let batch = self
                .broker
                .patiently(&doing, || reader.fetch().max_messages(4096).messages())
                .await?;
            let messages = crate::work::received(batch, crate::broker::ATTEMPT_TIMEOUT).await;
            if messages.is_empty() {
                break; // the stream has no more (its messages below the floor were removed)
            }
            for m in messages {
                last = m.info().map(|i| i.stream_sequence).unwrap_or(last);
                if last <= floor {
                    keys.extend(key_of(&m));
                }
            }
        }
        // Not left to its inactivity threshold: every reader of the stream costs the broker
        // work on each message stored while it lives.
        let name = reader.cached_info().name.clone();
        self.stream.delete_consumer(&name).await.ok();
        Ok(keys)
    }

    /// Takes up to `max` URLs of partition `p` that are there now (no waiting). A URL taken
    /// before and not yet acknowledged (delivered again after the acknowledgement wait) is
    /// not given twice.
    pub async fn take(&mut self, p: u32, max: usize) -> Result<Vec<Delivery>, QueueError> {
        let room = WINDOW.saturating_sub(self.holding(p)).min(max);
        let inherited = self.taken.get(&p).and_then(|t| t.inherited);
        if room == 0 || inherited.is_some_and(|i| i.at.elapsed() < self.ack_wait) {
            return Ok(Vec::new());
        }
        let consumer = self.consumer(p).await?.clone();
        let Ok(batch) = consumer.fetch().max_messages(room).messages().await else {
            return Ok(Vec::new());
        };
        let messages = crate::work::received(batch, Duration::from_secs(5)).await;
        let taken = self.taken.entry(p).or_default();
        let inherited_up_to = inherited.map_or(0, |i| i.up_to);
        let mut out = Vec::new();
        for m in messages {
            let Ok(seq) = m.info().map(|i| i.stream_sequence) else {
                continue;
            };
            if taken.open.contains_key(&seq) {
                continue;
            }
            if seq > inherited_up_to && taken.open.first_key_value().is_some_and(|(&s, _)| seq < s)
            {
                m.ack().await.ok(); // done before; its acknowledgement was lost
                continue;
            }
            out.push(Delivery {
                partition: p,
                seq,
                key: key_of(&m),
                payload: m.payload.clone(),
            });
            taken.open.insert(seq, (m, false));
        }
        Ok(out)
    }

    /// URLs of partition `p` taken and not yet acknowledged.
    pub fn holding(&self, p: u32) -> usize {
        self.taken.get(&p).map_or(0, |t| t.open.len())
    }

    /// Marks a URL taken as done: it is acknowledged by [`acknowledge`](Self::acknowledge)
    /// once every URL before it in its partition is done too.
    pub fn done(&mut self, p: u32, seq: u64) {
        if let Some((_, done)) = self.taken.get_mut(&p).and_then(|t| t.open.get_mut(&seq)) {
            *done = true;
        }
    }

    /// Acknowledges, in each partition, the longest run of done URLs from its oldest taken.
    /// Call it after what those URLs caused (records written, URLs published) is safe.
    pub async fn acknowledge(&mut self) {
        let inherited: Vec<u32> = self
            .taken
            .iter()
            .filter(|(_, t)| t.inherited.is_some() && !t.open.is_empty())
            .map(|(&p, _)| p)
            .collect();
        let mut held_elsewhere = Vec::new();
        for p in inherited {
            match self.state(p).await {
                Ok(state) if state.num_ack_pending <= self.holding(p) => {
                    self.taken.entry(p).or_default().inherited = None;
                }
                _ => held_elsewhere.push(p),
            }
        }
        for (p, taken) in &mut self.taken {
            if held_elsewhere.contains(p) {
                continue;
            }
            let mut last = None;
            while let Some(entry) = taken.open.first_entry() {
                if !entry.get().1 {
                    break;
                }
                last = Some(entry.remove().0);
            }
            if let Some(m) = last {
                // Policy "all": this acknowledges every URL before it too. A lost
                // acknowledgement means the URLs come again, and are found done.
                m.ack().await.ok();
            }
        }
    }

    /// Gives back the URLs taken and not done, so that the partitions' next owners get them
    /// at once, not after the acknowledgement wait (a process leaving: budget spent,
    /// interrupted). What is done is acknowledged first.
    pub async fn release(&mut self) {
        self.acknowledge().await;
        for taken in self.taken.values_mut() {
            for (_, (m, _)) in std::mem::take(&mut taken.open) {
                m.ack_with(AckKind::Nak(None)).await.ok();
            }
        }
    }

    /// True when no partition has a URL waiting or taken and not acknowledged, and nothing
    /// was published in between, at this check and the one before: the crawl is over,
    /// whoever took part in it.
    pub async fn finished_everywhere(&mut self) -> Result<bool, QueueError> {
        let before = self.last_sequence().await?;
        for p in 0..self.partitions {
            let mut consumer = self.consumer(p).await?.clone();
            let unfinished = match consumer.info().await {
                Ok(info) => crate::work::unfinished(info),
                Err(_) => 1,
            };
            if unfinished > 0 {
                self.quiet_at = None;
                return Ok(false);
            }
        }
        let after = self.last_sequence().await?;
        let quiet = before == after && self.quiet_at == Some(after);
        self.quiet_at = (before == after).then_some(after);
        Ok(quiet)
    }

    /// Messages in the stream (URLs published, each once).
    pub async fn last_sequence(&mut self) -> Result<u64, QueueError> {
        let doing = format!("read the stream {}", self.name);
        let stream = &self.stream;
        let last = self
            .broker
            .patiently(&doing, || {
                let mut stream = stream.clone();
                async move { stream.info().await.map(|i| i.state.last_sequence) }
            })
            .await?;
        Ok(last)
    }

    /// The state of partition `p`'s consumer: its acknowledgement floor, the last URL
    /// delivered, the URLs taken and not acknowledged (by any process).
    async fn state(&mut self, p: u32) -> Result<consumer::Info, QueueError> {
        let consumer = self.consumer(p).await?.clone();
        let doing = format!("read partition {p} of {}", self.name);
        self.broker
            .patiently(&doing, || {
                let mut consumer = consumer.clone();
                async move { consumer.info().await.cloned() }
            })
            .await
    }

    fn subject(&self, p: u32) -> String {
        format!("{}.{p}", self.broker.subject(&self.name))
    }

    async fn consumer(&mut self, p: u32) -> Result<&PullConsumer, QueueError> {
        if !self.consumers.contains_key(&p) {
            let name = format!("crawl-p{p}");
            let config = pull::Config {
                durable_name: Some(name.clone()),
                ack_policy: AckPolicy::All,
                ack_wait: self.ack_wait,
                max_ack_pending: WINDOW as i64 * 2,
                filter_subject: self.subject(p),
                ..Default::default()
            };
            let doing = format!("open partition {p} of {}", self.name);
            let stream = &self.stream;
            let consumer = self
                .broker
                .patiently(&doing, || {
                    stream.get_or_create_consumer(&name, config.clone())
                })
                .await?;
            self.consumers.insert(p, consumer);
        }
        Ok(&self.consumers[&p])
    }
}

/// The key in a message id `f:KEY` (16 hexadecimal digits).
fn key_of(m: &Message) -> Option<u64> {
    let id = m.headers.as_ref()?.get("Nats-Msg-Id")?.as_str();
    u64::from_str_radix(id.strip_prefix("f:")?, 16).ok()
}
