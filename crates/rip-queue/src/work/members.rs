//! Who works on which partitions. The live workers of a group are the keys of a small table
//! ([`Table`]: a stream keeping one message per subject, a key-value bucket by another name),
//! each refreshed every [`BEAT`] and gone [`LIFETIME`] after its worker stops
//! refreshing it. A partition's owner is chosen among them by rendezvous hashing
//! ([`partition::owner`]), so a worker joining or leaving moves only the partitions it wins or
//! held. A worker works on a partition only while it holds the partition's lease, a key it
//! creates only when absent (create-if-absent settles two workers that both think they own
//! it) and releases when it no longer owns the partition and its batches of it are done: a
//! host is never worked on by two workers at once, even while it changes owner.

use crate::{Broker, QueueError, partition};
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::{self, DiscardPolicy, StorageType};
use bytes::Bytes;
use futures::TryStreamExt;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How often a worker says it is alive and looks at who else is.
pub(super) const BEAT: Duration = Duration::from_secs(1);
/// How long a worker that stopped saying so is still counted (and holds its leases).
pub(super) const LIFETIME: Duration = Duration::from_secs(5);

/// A worker's place in its group.
pub(super) struct Membership {
    me: String,
    members: Table,
    leases: Table,
    partitions: u32,
    /// Held leases and their revisions (an update at the wrong revision means it was lost).
    held: BTreeMap<u32, u64>,
    /// When each held lease was taken: a partition is worked on only `handover_wait` later,
    /// so that the host's previous worker (whose politeness state, in its own cache folder,
    /// this one does not see) has its last request a gap behind.
    taken: BTreeMap<u32, Instant>,
    handover_wait: Duration,
    last_beat: Option<Instant>,
}

impl Membership {
    /// Joins `group` on a stream of `partitions`.
    pub(super) async fn join(
        broker: &Broker,
        group: &str,
        partitions: u32,
        handover_wait: Duration,
    ) -> Result<Self, QueueError> {
        let members = Table::open(broker, &format!("members_{group}")).await?;
        let leases = Table::open(broker, &format!("leases_{group}")).await?;
        Ok(Self {
            me: member_name(),
            members,
            leases,
            partitions,
            held: BTreeMap::new(),
            taken: BTreeMap::new(),
            handover_wait,
            last_beat: None,
        })
    }

    /// The partitions this worker may work on now: held, and for at least the hand-over
    /// wait.
    pub(super) fn held(&self) -> impl Iterator<Item = u32> + '_ {
        self.held.keys().copied().filter(|p| {
            self.taken
                .get(p)
                .is_none_or(|t| t.elapsed() >= self.handover_wait)
        })
    }

    /// Whether it is time for [`beat`](Self::beat).
    pub(super) fn due(&self) -> bool {
        self.last_beat.is_none_or(|t| t.elapsed() >= BEAT)
    }

    /// Says this worker is alive, then releases the leases of partitions it no longer owns
    /// (unless `busy` with them), refreshes the others, and takes the leases of partitions it
    /// now owns that nobody holds.
    pub(super) async fn beat(&mut self, busy: &BTreeSet<u32>) -> Result<(), QueueError> {
        self.last_beat = Some(Instant::now());
        self.members.put(&self.me, None).await?;
        let live = self.members.keys().await?;
        let wanted: BTreeSet<u32> = (0..self.partitions)
            .filter(|&p| partition::owner(&live, p) == Some(self.me.as_str()))
            .collect();
        for (p, revision) in std::mem::take(&mut self.held) {
            if !wanted.contains(&p) && !busy.contains(&p) {
                self.leases.delete(&lease(p)).await.ok();
                continue;
            }
            if let Ok(revision) = self.leases.put(&lease(p), Some(revision)).await {
                self.held.insert(p, revision);
            }
        }
        for p in wanted {
            if self.held.contains_key(&p) {
                continue;
            }
            if let Ok(revision) = self.leases.put(&lease(p), Some(0)).await {
                self.held.insert(p, revision);
                self.taken.insert(p, Instant::now());
            }
        }
        Ok(())
    }

    /// Leaves the group at once: its leases and its name are deleted, so the others take its
    /// partitions at their next beat instead of after [`LIFETIME`].
    pub(super) async fn leave(&mut self) {
        for p in std::mem::take(&mut self.held).into_keys() {
            self.leases.delete(&lease(p)).await.ok();
        }
        self.members.delete(&self.me).await.ok();
    }
}

/// A table of keys on a stream that keeps one message per subject for [`LIFETIME`]: a key is
/// present while its last message is younger. `put` with an expected revision is
/// create-if-absent (revision 0) or update-if-unchanged, which settles two writers. (Not
/// async-nats's key-value store: its bucket creation fails against Debian's nats-server 2.9.)
struct Table {
    stream: stream::Stream,
    js: async_nats::jetstream::Context,
    subject: String,
}

impl Table {
    async fn open(broker: &Broker, name: &str) -> Result<Self, QueueError> {
        let subject = format!("{}.{name}", broker.prefix());
        let config = stream::Config {
            name: format!("{}_{name}", broker.prefix()),
            subjects: vec![format!("{subject}.*")],
            max_messages_per_subject: 1,
            max_age: LIFETIME,
            discard: DiscardPolicy::Old,
            storage: StorageType::File,
            ..Default::default()
        };
        let js = broker.jetstream().clone();
        let stream = broker
            .patiently("open the worker group's table", || {
                js.get_or_create_stream(config.clone())
            })
            .await?;
        Ok(Self {
            stream,
            js,
            subject,
        })
    }

    /// Writes `key`; with `expect`, only if its revision is that (0: absent). Returns the new
    /// revision.
    async fn put(&self, key: &str, expect: Option<u64>) -> Result<u64, QueueError> {
        let mut publish = PublishMessage::build().payload(Bytes::new());
        if let Some(revision) = expect {
            publish = publish.expected_last_subject_sequence(revision);
        }
        let subject = format!("{}.{key}", self.subject);
        let ack = self
            .js
            .send_publish(subject, publish)
            .await
            .map_err(|e| QueueError::refused("write the worker group's table", e))?
            .await
            .map_err(|e| QueueError::refused("write the worker group's table", e))?;
        Ok(ack.sequence)
    }

    async fn delete(&self, key: &str) -> Result<(), QueueError> {
        let subject = format!("{}.{key}", self.subject);
        self.stream
            .purge()
            .filter(subject)
            .await
            .map_err(|e| QueueError::refused("write the worker group's table", e))?;
        Ok(())
    }

    /// The keys present, sorted.
    async fn keys(&self) -> Result<Vec<String>, QueueError> {
        let info = self
            .stream
            .info_with_subjects(format!("{}.*", self.subject))
            .await
            .map_err(|e| QueueError::refused("read the worker group's table", e))?;
        let subjects: Vec<(String, usize)> = info
            .try_collect()
            .await
            .map_err(|e| QueueError::refused("read the worker group's table", e))?;
        let prefix = format!("{}.", self.subject);
        let mut keys: Vec<String> = subjects
            .into_iter()
            .filter_map(|(s, _)| s.strip_prefix(&prefix).map(str::to_owned))
            .collect();
        keys.sort();
        Ok(keys)
    }
}

fn lease(p: u32) -> String {
    format!("p{p}")
}

/// `host-pid-random`, in the characters a key may hold.
fn member_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "host".to_owned());
    let host: String = host
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let nonce = xxhash_rust::xxh3::xxh3_64(format!("{:?}", Instant::now()).as_bytes());
    format!("{host}-{}-{:08x}", std::process::id(), nonce as u32)
}
