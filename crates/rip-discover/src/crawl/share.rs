//! A crawl shared with other processes through the broker (`--broker`, `--crawl NAME`).
//!
//! The frontier lives in the broker ([`rip_queue::frontier`]), partitioned by host; this
//! process owns some partitions among the live members of the crawl ([`Membership`]): it
//! takes their URLs, keeps their visited sets (rebuilt from the broker when it takes a
//! partition over), fetches them through its own HTTP stack (so a host's robots.txt,
//! politeness, Retry-After and circuit breaker are in one place), writes their records on its
//! stdout, and publishes the links it finds to their owners. A URL is acknowledged once its
//! records are flushed and its links stored by the broker, so a process killed at any moment
//! leaves its URLs to the process that takes its partitions over.
//!
//! The budgets are counters on the broker ([`Counter`]): `--max-pages` and `--max-requests`
//! hold for the crawl as a whole, each process claiming a few at a time for what it is about
//! to start. The crawl ends when no partition has anything waiting or unfinished
//! ([`SharedFrontier::finished_everywhere`]).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Write;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rip_queue::broker::Absence;
use rip_queue::frontier::{Delivery, SharedFrontier};
use rip_queue::members::Membership;
use rip_queue::table::{Counter, Table};
use rip_queue::{Broker, QueueError};
use rip_url::Url;

use super::Crawl;
use crate::frontier::{Item, ItemKind, Visited};
use crate::{DiscoverError, SharedConfig};

/// URLs taken from the broker at once, and the local frontier's low-water mark.
const TAKE: usize = 256;

/// This process's part in a shared crawl.
pub(super) struct Share {
    broker: Broker,
    frontier: SharedFrontier,
    members: Membership,
    budgets: Table,
    /// Each host's hold (a Retry-After, an open circuit) as a deadline in Unix milliseconds,
    /// so that a host changing owner stays held by its new one.
    holds: Table,
    /// Hosts whose hold this process has read (once each, before fetching from them).
    hosts_read: HashSet<String>,
    /// Hosts taken and not yet read.
    hosts_unread: HashSet<String>,
    /// Holds to publish at the next settle, and the deadline last published per host.
    holds_out: HashMap<String, u64>,
    holds_published: HashMap<String, u64>,
    /// Holds shorter than this are not passed on: the hand-over wait covers them.
    handover_wait: Duration,
    /// The visited set of each partition taken over.
    seen: HashMap<u32, Visited>,
    /// Items taken and not finished: where to acknowledge them, and their hosts.
    inbox: HashMap<u64, (u32, u64)>,
    inbox_hosts: HashMap<u64, String>,
    /// Items found, to publish at the next settle.
    outbox: Vec<Item>,
    /// `--max-pages` claimed and not yet used.
    pages: Budget,
    /// `--max-requests` claimed and not yet used.
    requests: Budget,
    last_take: Option<Instant>,
    last_check: Option<Instant>,
    absence: Absence,
    /// Partitions this process took over, for the summary.
    pub(super) taken_over: u64,
}

impl Share {
    /// Joins the crawl `cfg.crawl` on the broker.
    pub(super) async fn join(cfg: &SharedConfig) -> Result<Self, DiscoverError> {
        let broker = Broker::connect(&cfg.broker).await?;
        let frontier =
            SharedFrontier::open(&broker, &cfg.crawl, cfg.partitions, cfg.ack_wait).await?;
        if frontier.ack_wait() != cfg.ack_wait {
            rip_core::stderr::say(format_args!(
                "rip-discover: the crawl {} waits {:?} for an acknowledgement, not the {:?} asked \
                 (--ack-wait is fixed when a crawl is created)",
                cfg.crawl,
                frontier.ack_wait(),
                cfg.ack_wait
            ));
        }
        let group = format!("crawl_{}", cfg.crawl);
        let members =
            Membership::join(&broker, &group, frontier.partitions(), cfg.handover_wait).await?;
        let budgets = Table::open(&broker, &format!("crawl_{}_budgets", cfg.crawl), None).await?;
        let holds = Table::open(&broker, &format!("crawl_{}_holds", cfg.crawl), None).await?;
        Ok(Self {
            broker,
            frontier,
            members,
            budgets,
            holds,
            hosts_read: HashSet::new(),
            hosts_unread: HashSet::new(),
            holds_out: HashMap::new(),
            holds_published: HashMap::new(),
            handover_wait: cfg.handover_wait,
            seen: HashMap::new(),
            inbox: HashMap::new(),
            inbox_hosts: HashMap::new(),
            outbox: Vec::new(),
            pages: Budget::new("pages"),
            requests: Budget::new("requests"),
            last_take: None,
            last_check: None,
            absence: Absence::default(),
            taken_over: 0,
        })
    }

    /// An item found: published to its owner at the next settle.
    pub(super) fn publish(&mut self, item: Item) {
        self.outbox.push(item);
    }

    /// An item this process took is finished (its records written).
    pub(super) fn finished(&mut self, key: u64) {
        if let Some((p, seq)) = self.inbox.remove(&key) {
            self.frontier.done(p, seq);
        }
        self.inbox_hosts.remove(&key);
    }

    /// A target taken from the local frontier to start: uses one page of the budget.
    pub(super) fn start_target(&mut self) {
        self.pages.left = self.pages.left.saturating_sub(1);
    }

    /// A fetch starting: uses one request of the budget.
    pub(super) fn start_request(&mut self) {
        self.requests.left = self.requests.left.saturating_sub(1);
    }

    /// Pages of the budget claimed and not used.
    pub(super) fn pages_left(&self) -> u64 {
        self.pages.left
    }

    /// Requests of the budget claimed and not used.
    pub(super) fn requests_left(&self) -> u64 {
        self.requests.left
    }

    /// Nothing of this process's is waiting to be published or acknowledged.
    fn settled(&self) -> bool {
        self.outbox.is_empty() && self.inbox.is_empty()
    }
}

impl<W: Write> Crawl<W> {
    /// One round of the shared crawl's bookkeeping: says this process is alive and takes
    /// over the partitions it now owns, publishes what was found, acknowledges what is
    /// finished, claims budget, and takes URLs when the local frontier runs low.
    pub(super) async fn sync_share(&mut self, tick: bool) -> Result<(), DiscoverError> {
        let Some(share) = &mut self.share else {
            return Ok(());
        };
        if share.members.due() {
            // Taken and not acknowledged: what is not finished yet is among it.
            let busy: BTreeSet<u32> = share.frontier.unacknowledged().collect();
            if let Err(e) = share.members.beat(&busy).await {
                rip_core::stderr::say(format_args!("rip-discover: {e}"));
            }
            share
                .absence
                .check(&share.broker, "keep the crawl's membership")?;
            self.note_holds();
        }
        let outbox = self.share.as_ref().map_or(0, |s| s.outbox.len());
        if tick || outbox >= TAKE || self.tasks.is_empty() {
            self.settle().await?;
        }
        self.claim_budgets().await?;
        if self.frontier.len() < TAKE && self.take_due() {
            self.take().await?;
        }
        Ok(())
    }

    fn take_due(&mut self) -> bool {
        let Some(share) = &mut self.share else {
            return false;
        };
        let due = self.tasks.is_empty()
            || share
                .last_take
                .is_none_or(|t| t.elapsed() >= Duration::from_millis(20));
        if due {
            share.last_take = Some(Instant::now());
        }
        due
    }

    /// Writes out what finished items caused (records flushed, found URLs stored by the
    /// broker), then acknowledges them.
    async fn settle(&mut self) -> Result<(), DiscoverError> {
        self.commit()?;
        let Some(share) = &mut self.share else {
            return Ok(());
        };
        for item in std::mem::take(&mut share.outbox) {
            let payload = Bytes::from(serde_json::to_vec(&item).expect("items serialize"));
            share
                .frontier
                .publish(&item.record.url, item.key, payload)
                .await?;
        }
        share.frontier.flush().await?;
        share.frontier.acknowledge().await;
        for (host, deadline) in std::mem::take(&mut share.holds_out) {
            let payload = Bytes::from(deadline.to_string());
            share.holds.put(&hold_key(&host), payload, None).await?;
            share.holds_published.insert(host, deadline);
        }
        Ok(())
    }

    /// Takes URLs from the partitions this process owns, taking a partition over first
    /// (its visited set rebuilt from the broker).
    async fn take(&mut self) -> Result<(), DiscoverError> {
        let Some(share) = &mut self.share else {
            return Ok(());
        };
        let owned: Vec<u32> = share.members.owned().collect();
        share
            .seen
            .retain(|p, _| owned.contains(p) || share.frontier.holding(*p) > 0);
        let mut deliveries = Vec::new();
        for p in owned {
            if !share.seen.contains_key(&p) {
                let mut seen = Visited::default();
                for key in share.frontier.seen_before(p).await? {
                    seen.insert(key);
                }
                share.seen.insert(p, seen);
                share.taken_over += 1;
            }
            deliveries.extend(share.frontier.take(p, TAKE).await?);
        }
        for d in deliveries {
            self.received(d);
        }
        self.read_holds().await
    }

    /// A URL taken from the broker: a duplicate is finished at once, a new one waits in the
    /// local frontier.
    fn received(&mut self, d: Delivery) {
        let Some(share) = &mut self.share else {
            return;
        };
        let item = match serde_json::from_slice::<Item>(&d.payload) {
            Ok(item) if d.key == Some(item.key) => item,
            Ok(_) | Err(_) => {
                rip_core::stderr::say(format_args!(
                    "rip-discover: message {} of partition {} is not a URL of this crawl: skipped",
                    d.seq, d.partition
                ));
                share.frontier.done(d.partition, d.seq);
                return;
            }
        };
        let seen = share.seen.entry(d.partition).or_default();
        if !seen.insert(item.key) {
            self.counters.duplicates += 1;
            share.frontier.done(d.partition, d.seq);
            return;
        }
        share.inbox.insert(item.key, (d.partition, d.seq));
        if let Some(host) = rip_queue::partition::host_key(&item.record.url) {
            if !share.hosts_read.contains(&host) {
                share.hosts_unread.insert(host.clone());
            }
            share.inbox_hosts.insert(item.key, host);
        }
        if item.is_start
            && item.kind == ItemKind::Page
            && let Ok(u) = Url::parse(&item.record.url)
        {
            self.add_scope_start(&u);
        }
        // The network policy: a start's networks, or those of the page that linked here
        // (fetched by a process of the crawl under the same policy).
        if item.kind == ItemKind::Page {
            self.shared.fetcher.admit_ref(&item.record);
        }
        self.frontier.push(item);
    }

    /// Claims, from the crawl's counters, budget for the items waiting here.
    async fn claim_budgets(&mut self) -> Result<(), DiscoverError> {
        let concurrency = self.cfg.concurrency.max(1) as u64;
        let (max_pages, max_requests) = (self.cfg.max_pages, self.cfg.max_requests);
        let waiting = self.frontier.len() as u64;
        let Some(share) = &mut self.share else {
            return Ok(());
        };
        let targets = self.frontier.targets() as u64;
        let mut spent = None;
        if let Some(m) = max_pages
            && share
                .pages
                .top_up(&share.budgets, targets.min(concurrency), m)
                .await?
        {
            spent = Some(format!("maxPages ({m} targets across the crawl)"));
        }
        if let Some(m) = max_requests
            && share
                .requests
                .top_up(&share.budgets, waiting.min(concurrency), m)
                .await?
        {
            spent = Some(format!("maxRequests ({m} fetches across the crawl)"));
        }
        if let Some(e) = spent {
            self.exhaust(e);
        }
        Ok(())
    }

    /// A budget of the crawl that other processes spent (what stays to do is left).
    async fn spent_budget(&self) -> Result<Option<String>, DiscoverError> {
        let Some(share) = &self.share else {
            return Ok(None);
        };
        let budgets = [
            (self.cfg.max_pages, "pages", "maxPages", "targets"),
            (self.cfg.max_requests, "requests", "maxRequests", "fetches"),
        ];
        for (limit, key, name, what) in budgets {
            if let Some(m) = limit
                && Counter::new(&share.budgets, key).value().await? >= m
            {
                return Ok(Some(format!("{name} ({m} {what} across the crawl)")));
            }
        }
        Ok(None)
    }

    /// In a shared crawl, whether the crawl is over everywhere (checked at most twice a
    /// second); in a crawl not shared, true.
    pub(super) async fn over_everywhere(&mut self) -> Result<bool, DiscoverError> {
        let exhausted = self.exhausted.is_some();
        let Some(share) = &mut self.share else {
            return Ok(true);
        };
        if exhausted {
            // What was taken and not started stays unacknowledged: a later run with a
            // larger budget is given it again.
            return Ok(true);
        }
        if !share.settled() {
            return Ok(false);
        }
        if share
            .last_check
            .is_some_and(|t| t.elapsed() < Duration::from_millis(500))
        {
            return Ok(false);
        }
        share.last_check = Some(Instant::now());
        if let Some(spent) = self.spent_budget().await? {
            self.exhaust(spent);
            return Ok(true);
        }
        let Some(share) = &mut self.share else {
            return Ok(true);
        };
        Ok(share.frontier.finished_everywhere().await?)
    }
}

impl From<QueueError> for DiscoverError {
    fn from(e: QueueError) -> Self {
        DiscoverError::Broker(e)
    }
}

impl<W: Write> Crawl<W> {
    /// At the end of a shared crawl: what was finished is published and acknowledged, then
    /// this process leaves (its partitions go to the others at their next beat).
    pub(super) async fn leave_share(&mut self) -> Result<(), DiscoverError> {
        if self.share.is_none() {
            return Ok(());
        }
        self.settle().await?;
        if let Some(share) = &mut self.share {
            share.frontier.release().await;
            share.members.leave().await;
        }
        Ok(())
    }
}

/// One budget of a shared crawl: a counter on the broker, and what this process claimed of
/// it and has not used.
struct Budget {
    key: &'static str,
    left: u64,
}

impl Budget {
    fn new(key: &'static str) -> Self {
        Self { key, left: 0 }
    }

    /// Claims up to `want` in all (never past `limit` across the crawl); true when nothing
    /// is left here and nothing more could be claimed while something waits.
    async fn top_up(&mut self, table: &Table, want: u64, limit: u64) -> Result<bool, QueueError> {
        if self.left < want {
            self.left += Counter::new(table, self.key)
                .claim(want - self.left, limit)
                .await?;
        }
        Ok(self.left == 0 && want > 0)
    }
}

impl<W: Write> Crawl<W> {
    /// The holds the broker has for hosts this process is about to fetch from for the
    /// first time, put on its own schedule: a host that was told to wait (Retry-After, an
    /// open circuit) under its previous owner waits as long under this one.
    async fn read_holds(&mut self) -> Result<(), DiscoverError> {
        let Some(share) = &mut self.share else {
            return Ok(());
        };
        for host in std::mem::take(&mut share.hosts_unread) {
            if let Some((_, payload)) = share.holds.get(&hold_key(&host)).await? {
                let deadline: u64 = std::str::from_utf8(&payload)
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                let left = deadline.saturating_sub(unix_ms());
                if left > 0 {
                    self.shared.fetcher.hold(&host, Duration::from_millis(left));
                }
            }
            share.hosts_read.insert(host);
        }
        Ok(())
    }

    /// The holds on the hosts of the items taken here that are longer than the hand-over
    /// wait are passed on (published at the next settle): checked at every beat, so a host
    /// told to wait is known held within a second, whoever has it next.
    fn note_holds(&mut self) {
        let Some(share) = &mut self.share else {
            return;
        };
        let hosts: HashSet<&String> = share.inbox_hosts.values().collect();
        for host in hosts {
            let held = self.shared.fetcher.held_for(host);
            if held <= share.handover_wait {
                continue;
            }
            let deadline = unix_ms() + held.as_millis() as u64;
            let published = share.holds_published.get(host).copied().unwrap_or(0);
            if deadline > published + 1000 {
                share.holds_out.insert(host.clone(), deadline);
            }
        }
    }
}

/// A host's key in the holds table (a subject token: no dots).
fn hold_key(host: &str) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(host.as_bytes()))
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
