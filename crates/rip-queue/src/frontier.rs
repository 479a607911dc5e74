//! A crawl's frontier shared through the broker, partitioned by host.
//!
//! Every URL a crawl finds is published to the partition of its host (`xxh3(host:port) % N`)
//! of the stream `crawl_NAME`, under the message id `f:KEY` (its visited-set key), so the
//! broker stores a URL found by several processes within its deduplication window once. The
//! process that owns a partition ([`crate::members`]) takes its URLs through the partition's
//! durable consumer, keeps its visited set, fetches, and publishes what it finds.
//!
//! Each URL is acknowledged on its own (acknowledgement policy *explicit*) once what it
//! caused is safe (its records written, its links stored). An acknowledgement never covers
//! another URL: a URL taken by a process that died, one delivered to a pull its process had
//! stopped waiting for, one a stalled process still holds, each stays unacknowledged and
//! comes again after the acknowledgement wait, to whoever owns its partition then. (With
//! policy *all*, one acknowledgement covers every URL before it: a process acknowledging
//! its own later URLs acknowledged those too, undone. The 1 M-URL simulation with an owner
//! killed lost 1,088 pages that way, after three fixes of the bookkeeping that policy needs:
//! `docs/scale-out.md`.)
//!
//! The consumer's acknowledgement floor (every URL at or below it acknowledged) is where a
//! process taking a partition over starts: it rebuilds the partition's visited set from the
//! message ids at or below the floor ([`SharedFrontier::seen_before`], headers only) and is
//! delivered every unacknowledged URL above it, at once if never delivered, after the
//! acknowledgement wait if its previous owner had taken it. It works on later URLs
//! meanwhile. URLs above the floor that were acknowledged are not in the rebuilt visited
//! set: one of them published again after the broker's deduplication window would be
//! fetched again.

use crate::{Broker, Publisher, QueueError};
use async_nats::jetstream::consumer::{self, AckPolicy, DeliverPolicy, PullConsumer, pull};
use async_nats::jetstream::stream::Stream;
use async_nats::jetstream::{AckKind, Message};
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

/// URLs a process holds of one partition at most (taken and not yet acknowledged).
pub const WINDOW: usize = 2048;

/// URLs all processes together may hold of one partition (the consumer's limit): far above
/// what one holds, so that what dead or stalled processes hold does not stop the owner. A
/// pull on a consumer at its limit is not answered until a URL comes again.
const CONSUMER_LIMIT: usize = 16 * WINDOW;

/// How long a pull is waited for at most.
const PULL_BOUND: Duration = Duration::from_secs(1);

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

/// The URLs of one partition taken and not yet acknowledged, in stream order, and whether
/// done; and those acknowledged late (when they may already have come again).
#[derive(Default)]
struct Taken {
    open: BTreeMap<u64, Open>,
    /// Done and not yet acknowledged.
    done: Vec<u64>,
    late: BTreeMap<u64, Instant>,
}

/// A URL taken and not yet acknowledged.
struct Open {
    message: Message,
    taken: Instant,
    done: bool,
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

    /// How long a URL taken and not acknowledged waits before it is delivered again: the
    /// wait the crawl was created with, which may not be the one asked of
    /// [`open`](Self::open).
    pub fn ack_wait(&self) -> Duration {
        self.ack_wait
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
    /// and not yet acknowledged, or acknowledged late, that comes again (after the
    /// acknowledgement wait) is not given twice.
    pub async fn take(&mut self, p: u32, max: usize) -> Result<Vec<Delivery>, QueueError> {
        let room = WINDOW.saturating_sub(self.holding(p)).min(max);
        if room == 0 {
            return Ok(Vec::new());
        }
        let consumer = self.consumer(p).await?.clone();
        let Ok(batch) = consumer.fetch().max_messages(room).messages().await else {
            return Ok(Vec::new());
        };
        // Bounded: a pull on a consumer at its limit is not answered until a URL comes
        // again, and the owner's loop, its beats included, would wait in it. A URL delivered
        // to a pull no longer waited for comes again after the acknowledgement wait.
        let messages = crate::work::received(batch, PULL_BOUND).await;
        let forget_before = Instant::now().checked_sub(2 * self.ack_wait);
        let taken = self.taken.entry(p).or_default();
        if let Some(before) = forget_before {
            taken.late.retain(|_, at| *at >= before);
        }
        let mut out = Vec::new();
        for m in messages {
            let Ok(seq) = m.info().map(|i| i.stream_sequence) else {
                continue;
            };
            if taken.open.contains_key(&seq) || taken.late.contains_key(&seq) {
                continue;
            }
            out.push(Delivery {
                partition: p,
                seq,
                key: key_of(&m),
                payload: m.payload.clone(),
            });
            let open = Open {
                message: m,
                taken: Instant::now(),
                done: false,
            };
            taken.open.insert(seq, open);
        }
        Ok(out)
    }

    /// URLs of partition `p` taken and not yet acknowledged.
    pub fn holding(&self, p: u32) -> usize {
        self.taken.get(&p).map_or(0, |t| t.open.len())
    }

    /// Marks a URL taken as done: [`acknowledge`](Self::acknowledge) acknowledges it.
    pub fn done(&mut self, p: u32, seq: u64) {
        let Some(taken) = self.taken.get_mut(&p) else {
            return;
        };
        if let Some(open) = taken.open.get_mut(&seq)
            && !open.done
        {
            open.done = true;
            taken.done.push(seq);
        }
    }

    /// Acknowledges every URL done. Call it after what those URLs caused (records written,
    /// URLs published) is safe.
    pub async fn acknowledge(&mut self) {
        let late_after = self.ack_wait / 2;
        for taken in self.taken.values_mut() {
            for seq in std::mem::take(&mut taken.done) {
                let Some(open) = taken.open.remove(&seq) else {
                    continue;
                };
                if open.taken.elapsed() >= late_after {
                    // It may have come again already, and be delivered after this.
                    taken.late.insert(seq, Instant::now());
                }
                // A lost acknowledgement means the URL comes again; its owner's visited set
                // finds it done.
                open.message.ack().await.ok();
            }
        }
    }

    /// Partitions of which this process holds URLs not yet acknowledged: it keeps their
    /// leases until they are.
    pub fn unacknowledged(&self) -> impl Iterator<Item = u32> + '_ {
        self.taken
            .iter()
            .filter(|(_, t)| !t.open.is_empty())
            .map(|(&p, _)| p)
    }

    /// Gives back the URLs taken and not done, so that the partitions' next owners get them
    /// at once, not after the acknowledgement wait (a process leaving: budget spent,
    /// interrupted). What is done is acknowledged first.
    pub async fn release(&mut self) {
        self.acknowledge().await;
        for taken in self.taken.values_mut() {
            for open in std::mem::take(&mut taken.open).into_values() {
                open.message.ack_with(AckKind::Nak(None)).await.ok();
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
                ack_policy: AckPolicy::Explicit,
                ack_wait: self.ack_wait,
                max_ack_pending: CONSUMER_LIMIT as i64,
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
            // Fixed when the crawl was created: a later process asking another gets this.
            self.ack_wait = consumer.cached_info().config.ack_wait;
            if consumer.cached_info().config.ack_policy != AckPolicy::Explicit {
                return Err(QueueError::Refused {
                    doing: format!("share the crawl {}", self.name),
                    reason: "it was created by an earlier version (acknowledgement policy \
                             \"all\"): start a crawl of another name"
                        .to_owned(),
                });
            }
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
