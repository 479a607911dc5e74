//! Who works on which partitions. The live workers of a group are the keys of a small table
//! ([`Table`]: a stream keeping one message per subject, a key-value bucket by another name),
//! each refreshed every [`BEAT`] and gone [`LIFETIME`] after its worker stops
//! refreshing it. A partition's owner is chosen among them by rendezvous hashing
//! ([`partition::owner`]), so a worker joining or leaving moves only the partitions it wins or
//! held. A worker works on a partition only while it holds the partition's lease, a key it
//! creates only when absent (create-if-absent settles two workers that both think they own
//! it) and releases when it no longer owns the partition and its batches of it are done: a
//! host is never worked on by two workers at once, even while it changes owner.

use crate::table::Table;
use crate::{Broker, QueueError, partition};
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How often a worker says it is alive and looks at who else is.
pub const BEAT: Duration = Duration::from_secs(1);
/// How long a worker that stopped saying so is still counted (and holds its leases).
pub const LIFETIME: Duration = Duration::from_secs(5);
/// How long before its lease can run out a worker stops working on a partition whose
/// lease it could not renew: the lease lasts [`LIFETIME`] from when the broker stored its
/// last renewal, later than the worker sent it, and another worker that takes it waits its
/// hand-over wait besides.
pub const LEASE_MARGIN: Duration = Duration::from_millis(1500);

/// A worker's place in its group.
pub struct Membership {
    me: String,
    /// The partitions this worker owns among the live members at the last beat.
    wanted: BTreeSet<u32>,
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
    /// When each held lease was last written (taken or renewed), as sent: the lease lasts
    /// at least [`LIFETIME`] from then.
    renewed: BTreeMap<u32, Instant>,
}

impl Membership {
    /// Joins `group` on a stream of `partitions`.
    pub async fn join(
        broker: &Broker,
        group: &str,
        partitions: u32,
        handover_wait: Duration,
    ) -> Result<Self, QueueError> {
        let members = Table::open(broker, &format!("members_{group}"), Some(LIFETIME)).await?;
        let leases = Table::open(broker, &format!("leases_{group}"), Some(LIFETIME)).await?;
        Ok(Self {
            me: member_name(),
            wanted: BTreeSet::new(),
            members,
            leases,
            partitions,
            held: BTreeMap::new(),
            taken: BTreeMap::new(),
            handover_wait,
            last_beat: None,
            renewed: BTreeMap::new(),
        })
    }

    /// The partitions this worker may work on now: held, and for at least the hand-over
    /// wait.
    pub fn held(&self) -> impl Iterator<Item = u32> + '_ {
        self.held.keys().copied().filter(|p| {
            self.taken
                .get(p)
                .is_none_or(|t| t.elapsed() >= self.handover_wait)
        })
    }

    /// The partitions this worker may work on now and still owns: [`held`](Self::held)
    /// without those it keeps only to finish what it took of them.
    pub fn owned(&self) -> impl Iterator<Item = u32> + '_ {
        self.held().filter(|p| self.wanted.contains(p))
    }

    /// Whether this worker may no longer hold the lease of `p`, or soon may not: it was not
    /// renewed for [`LIFETIME`] less [`LEASE_MARGIN`] (the broker away, or cut off), or
    /// another worker has it. A lease it cannot renew is a lease it no longer holds: its run
    /// on `p` must stop before another worker can take the host.
    pub fn lease_at_risk(&self, p: u32) -> bool {
        Instant::now() >= self.lease_deadline(p)
    }

    /// When [`lease_at_risk`](Self::lease_at_risk) becomes true for `p` unless its lease is
    /// renewed meanwhile (now, when it is not held).
    pub fn lease_deadline(&self, p: u32) -> Instant {
        let renewed = self.renewed.get(&p).filter(|_| self.held.contains_key(&p));
        renewed.map_or_else(Instant::now, |&t| t + (LIFETIME - LEASE_MARGIN))
    }

    /// Whether it is time for [`beat`](Self::beat).
    pub fn due(&self) -> bool {
        self.last_beat.is_none_or(|t| t.elapsed() >= BEAT)
    }

    /// Says this worker is alive, then releases the leases of partitions it no longer owns
    /// (unless `busy` with them), refreshes the others, and takes the leases of partitions it
    /// now owns that nobody holds.
    pub async fn beat(&mut self, busy: &BTreeSet<u32>) -> Result<(), QueueError> {
        self.last_beat = Some(Instant::now());
        self.members.put(&self.me, Bytes::new(), None).await?;
        let live = self.members.keys().await?;
        let wanted: BTreeSet<u32> = (0..self.partitions)
            .filter(|&p| partition::owner(&live, p) == Some(self.me.as_str()))
            .collect();
        for (p, revision) in std::mem::take(&mut self.held) {
            if !wanted.contains(&p) && !busy.contains(&p) {
                self.leases.delete(&lease(p)).await.ok();
                self.renewed.remove(&p);
                continue;
            }
            let sent = Instant::now();
            if let Ok(revision) = self
                .leases
                .put(&lease(p), Bytes::new(), Some(revision))
                .await
            {
                self.held.insert(p, revision);
                self.renewed.insert(p, sent);
            }
        }
        for &p in &wanted {
            if self.held.contains_key(&p) {
                continue;
            }
            let sent = Instant::now();
            if let Ok(revision) = self.leases.put(&lease(p), Bytes::new(), Some(0)).await {
                self.held.insert(p, revision);
                self.taken.insert(p, Instant::now());
                self.renewed.insert(p, sent);
            }
        }
        self.wanted = wanted;
        Ok(())
    }

    /// Leaves the group at once: its leases and its name are deleted, so the others take its
    /// partitions at their next beat instead of after [`LIFETIME`].
    pub async fn leave(&mut self) {
        for p in std::mem::take(&mut self.held).into_keys() {
            self.leases.delete(&lease(p)).await.ok();
        }
        self.renewed.clear();
        self.members.delete(&self.me).await.ok();
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
