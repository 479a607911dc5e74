//! Who works on which partitions. The live workers of a group are the keys of a small table
//! ([`Table`]: a stream keeping one message per subject, a key-value bucket by another name),
//! each refreshed every [`BEAT`] and gone [`LIFETIME`] after its worker stops
//! refreshing it. A partition's owner is chosen among them by rendezvous hashing
//! ([`partition::owner`]), so a worker joining or leaving moves only the partitions it wins or
//! held. A worker works on a partition only while it holds the partition's lease, a key it
//! creates only when absent (create-if-absent settles two workers that both think they own
//! it) and releases when it no longer owns the partition and its batches of it are done: a
//! host is never worked on by two workers at once, even while it changes owner.
//!
//! A lease is renewed every beat at the revision its holder last wrote (update-at-revision),
//! and the broker keeps it however long it goes unrenewed ([`LEASE_KEPT`]). Another worker
//! takes a lease from a holder that stopped renewing it only after watching it unchanged for
//! [`LIFETIME`] of beats that all had answers (at the revision it watched: one writer wins).
//! So a lease outlives an election in the broker cluster, when nobody can write it: its
//! holder, which stopped working on the partition when it could not renew the lease in time
//! (it cannot tell an election from its own machine cut off), renews it at its revision once
//! the cluster answers again and goes on where it was; had another taken it, the revision
//! moved, and the holder gives the partition up.

use crate::table::Table;
use crate::{Broker, QueueError, partition};
use bytes::Bytes;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// How often a worker says it is alive and looks at who else is.
pub const BEAT: Duration = Duration::from_secs(1);
/// How long a worker that stopped saying so is still counted, and how long another worker
/// watches a lease unchanged before taking it.
pub const LIFETIME: Duration = Duration::from_secs(5);
/// How long the broker keeps a lease nobody renews nor takes (all workers gone): far longer
/// than an election, so that a lease is still there, at its holder's revision, when the
/// cluster answers again.
pub const LEASE_KEPT: Duration = Duration::from_secs(600);
/// How long before its lease can run out a worker stops working on a partition whose
/// lease it could not renew: the lease lasts [`LIFETIME`] from when the broker stored its
/// last renewal, later than the worker sent it, and another worker that takes it waits its
/// hand-over wait besides.
pub const LEASE_MARGIN: Duration = Duration::from_millis(1500);
/// How long one request of a beat is waited for: a request sent while a cluster elects a
/// leader gets no answer, and waiting the client's 5 s for it held a paused run back that
/// long after the cluster answered again.
pub const BEAT_WAIT: Duration = Duration::from_secs(2);

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
    /// Leases of partitions this worker owns but another worker holds: the revision seen,
    /// and since when it was seen (its answer received), beat after beat. Forgotten when a
    /// beat goes unanswered: what was not watched was not seen unchanged.
    watched: BTreeMap<u32, (u64, Instant)>,
    /// When the last beat that had all its answers ended.
    answered: Option<Instant>,
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
        let leases = Table::open(broker, &format!("leases_{group}"), Some(LEASE_KEPT)).await?;
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
            watched: BTreeMap::new(),
            answered: None,
        })
    }

    /// The partitions this worker may work on now: held, for at least the hand-over wait,
    /// and renewed in time (not [`lease_at_risk`](Self::lease_at_risk)).
    pub fn held(&self) -> impl Iterator<Item = u32> + '_ {
        self.held.keys().copied().filter(|&p| {
            let waited = (self.taken.get(&p)).is_none_or(|t| t.elapsed() >= self.handover_wait);
            waited && !self.lease_at_risk(p)
        })
    }

    /// Whether this worker holds the lease of `p` as far as it knows: taken, and neither
    /// released nor found taken by another since (perhaps not renewed in time).
    pub fn holds(&self, p: u32) -> bool {
        self.held.contains_key(&p)
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
    /// (unless `busy` with them), renews the others at their revisions, and takes the leases
    /// of partitions it now owns that nobody holds, or whose holder left them unchanged for
    /// [`LIFETIME`]. A renewal that gets no answer keeps the lease as it was (the run on it
    /// pauses at [`lease_deadline`](Self::lease_deadline)); one at a revision that moved
    /// gives it up.
    pub async fn beat(&mut self, busy: &BTreeSet<u32>) -> Result<(), QueueError> {
        self.last_beat = Some(Instant::now());
        if (self.answered).is_none_or(|t| t.elapsed() > 3 * BEAT) {
            self.watched.clear();
        }
        let beat = self.beat_answered(busy).await;
        match beat {
            Ok(()) => self.answered = Some(Instant::now()),
            Err(_) => self.watched.clear(),
        }
        beat
    }

    async fn beat_answered(&mut self, busy: &BTreeSet<u32>) -> Result<(), QueueError> {
        // The leases first, by the owners of the last beat: a lease renewed does not wait
        // for the members' table, which may be the one with no leader.
        let renewed = self.renew(&self.wanted.clone(), busy).await;
        bounded(self.members.put(&self.me, Bytes::new(), None)).await?;
        let live = bounded(self.members.keys()).await?;
        let wanted: BTreeSet<u32> = (0..self.partitions)
            .filter(|&p| partition::owner(&live, p) == Some(self.me.as_str()))
            .collect();
        self.watched.retain(|p, _| wanted.contains(p));
        self.wanted = wanted;
        renewed?;
        for p in self.wanted.clone() {
            if !self.held.contains_key(&p) {
                self.take(p).await?;
            }
        }
        Ok(())
    }

    /// Renews the held leases (releases those neither wanted nor busy), until one gets no
    /// answer: the others wait for the next beat, as they were.
    async fn renew(
        &mut self,
        wanted: &BTreeSet<u32>,
        busy: &BTreeSet<u32>,
    ) -> Result<(), QueueError> {
        let held: Vec<(u32, u64)> = self.held.iter().map(|(&p, &r)| (p, r)).collect();
        for (p, revision) in held {
            if !wanted.contains(&p) && !busy.contains(&p) {
                // Released by a tombstone, not removed: a key removed would let its former
                // holder, back from a cut, renew it "at its revision" (the broker checks the
                // revision only of a key that has a message).
                bounded(self.leases.update(&lease(p), Bytes::new(), Some(revision)))
                    .await
                    .ok();
                self.held.remove(&p);
                self.renewed.remove(&p);
                continue;
            }
            let sent = Instant::now();
            let mine = self.mine();
            match bounded(self.leases.update(&lease(p), mine, Some(revision))).await? {
                Some(revision) => {
                    self.held.insert(p, revision);
                    self.renewed.insert(p, sent);
                }
                // Not at its revision: a renewal of this worker's stored after it went
                // unanswered (still this worker's, renewed at the next beat), or another
                // worker took it (or it was removed): no longer this worker's.
                None => self.adopt_or_lose(p).await?,
            }
        }
        Ok(())
    }

    /// Takes the lease of `p` if nobody holds it, or if it was watched unchanged for
    /// [`LIFETIME`]; otherwise watches it.
    async fn take(&mut self, p: u32) -> Result<(), QueueError> {
        let expect = match self.watched.get(&p) {
            None => 0,
            Some(&(revision, since)) if since.elapsed() >= LIFETIME => revision,
            Some(_) => match bounded(self.leases.get(&lease(p))).await? {
                Some((revision, holder)) if holder.is_empty() => revision, // released
                Some((revision, _)) => {
                    self.seen(p, revision);
                    return Ok(());
                }
                None => 0,
            },
        };
        let sent = Instant::now();
        let mine = self.mine();
        match bounded(self.leases.update(&lease(p), mine, Some(expect))).await? {
            Some(revision) => {
                self.held.insert(p, revision);
                self.taken.insert(p, Instant::now());
                self.renewed.insert(p, sent);
                self.watched.remove(&p);
            }
            // Held by another worker (watched from now on), or by this one: a take of its
            // stored after it went unanswered.
            None => match bounded(self.leases.get(&lease(p))).await? {
                Some((revision, holder)) if holder == self.mine() => {
                    self.held.insert(p, revision);
                    self.taken.insert(p, Instant::now());
                    self.watched.remove(&p);
                }
                // Released (a tombstone): taken at its revision at the next beat.
                Some((revision, holder)) if holder.is_empty() => {
                    let long_ago = Instant::now().checked_sub(LIFETIME);
                    self.watched
                        .insert(p, (revision, long_ago.unwrap_or_else(Instant::now)));
                }
                Some((revision, _)) => self.seen(p, revision),
                None => {
                    self.watched.remove(&p);
                }
            },
        }
        Ok(())
    }

    /// The payload of this worker's leases: its name.
    fn mine(&self) -> Bytes {
        Bytes::from(self.me.clone())
    }

    /// After a renewal of `p` refused at its revision: keeps the lease at the revision it has
    /// if this worker wrote it last (a renewal stored after it went unanswered; when, this
    /// worker does not know, so the lease is at risk until renewed again), else gives it up.
    async fn adopt_or_lose(&mut self, p: u32) -> Result<(), QueueError> {
        self.renewed.remove(&p);
        match bounded(self.leases.get(&lease(p))).await? {
            Some((revision, holder)) if holder == self.mine() => {
                self.held.insert(p, revision);
            }
            _ => {
                self.held.remove(&p);
            }
        }
        Ok(())
    }

    /// The lease of `p`, held by another worker, was just read at `revision`: watched since
    /// now, unless it was already seen at that revision.
    fn seen(&mut self, p: u32, revision: u64) {
        let since = (self.watched.get(&p))
            .filter(|&&(r, _)| r == revision)
            .map_or_else(Instant::now, |&(_, since)| since);
        self.watched.insert(p, (revision, since));
    }

    /// Leaves the group at once: its leases and its name are deleted, so the others take its
    /// partitions at their next beat instead of after [`LIFETIME`].
    pub async fn leave(&mut self) {
        for (p, revision) in std::mem::take(&mut self.held) {
            let key = lease(p);
            let tombstone = self.leases.update(&key, Bytes::new(), Some(revision));
            tombstone.await.ok();
        }
        self.renewed.clear();
        self.members.delete(&self.me).await.ok();
    }
}

/// `request`, waited for [`BEAT_WAIT`] at most.
async fn bounded<T>(
    request: impl std::future::Future<Output = Result<T, QueueError>>,
) -> Result<T, QueueError> {
    match tokio::time::timeout(BEAT_WAIT, request).await {
        Ok(answer) => answer,
        Err(_) => Err(QueueError::refused(
            "keep the worker group",
            format!("no answer within {BEAT_WAIT:?}"),
        )),
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
