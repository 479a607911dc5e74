#![allow(clippy::print_stdout)] // a measuring tool: its report is its output
//! One owner process of a simulated shared crawl, for `docs/scale-out.md` ("Checked by
//! simulation") and `scripts/bench/scale-sim/run`.
//!
//! The crawl is the one `rip-discover --broker --crawl NAME` runs (`crawl/share.rs`), with
//! the network left out: a [`SharedFrontier`] partitioned by host, a [`Membership`] deciding
//! which partitions this process owns, a visited set per owned partition (rebuilt with
//! `seen_before` on takeover), a process-wide set of the links already published, and a
//! stand-in fetcher: a page's links are computed from its URL ([`Graph`]).
//!
//! The graph is `hosts × pages-per-host` pages, every one reachable from page 0 of host 0
//! (page `i` of a host links to pages `2i+1` and `2i+2` of it; page 0 of host `h` to page 0
//! of hosts `2h+1` and `2h+2`), plus links chosen by hashing (host, page, j) up to `--links`
//! per page, `--cross-host-percent` of them to a page of another host. So a crawl from the
//! one seed must process exactly `hosts × pages-per-host` pages, each once.
//!
//! ```text
//! crawl_sim --broker nats://127.0.0.1:4222 seed    # creates the crawl, publishes the seed
//! crawl_sim --broker nats://127.0.0.1:4222 own     # one owner (start several), until the end
//! crawl_sim --broker nats://127.0.0.1:4222 info    # the stream's state, the graph's sizes
//! crawl_sim check owner*.keys     # which pages the owners' --keys-file hold: missing, twice
//! ```
//!
//! Each prints one JSON line; `own` prints what it did and its peak RSS (VmHWM).

use std::collections::{BTreeSet, HashMap};
use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use clap::{Parser, Subcommand};
use rip_core::Ref;
use rip_discover::frontier::{Visited, key};
use rip_queue::frontier::{Delivery, SharedFrontier};
use rip_queue::members::Membership;
use rip_queue::{Broker, BrokerOptions};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64;

/// URLs taken from each owned partition at once (`rip-discover`'s `TAKE`).
const TAKE: usize = 256;
/// How often an idle owner asks whether the crawl is over (as `rip-discover`).
const FINISH_CHECK_EVERY: Duration = Duration::from_millis(500);
/// The pause of an owner that found nothing to take.
const IDLE_PAUSE: Duration = Duration::from_millis(20);

/// One owner process of a simulated shared crawl (see the source's documentation).
#[derive(Parser)]
struct Args {
    /// The broker.
    #[arg(long, env = "RIP_BROKER", default_value = "nats://127.0.0.1:4222")]
    broker: String,
    /// The prefix of streams and subjects.
    #[arg(long, default_value = "rip")]
    prefix: String,
    /// The crawl's name (its stream is `<prefix>_crawl_<NAME>`).
    #[arg(long, default_value = "sim")]
    crawl: String,
    /// Partitions of the frontier (fixed when `seed` creates it).
    #[arg(long, default_value_t = 64)]
    partitions: u32,
    /// How long the broker remembers message ids (fixed when `seed` creates the stream).
    #[arg(long, default_value = "20m", value_parser = humantime::parse_duration)]
    dedupe_window: Duration,
    #[command(flatten)]
    graph: Graph,
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Subcommand)]
enum Mode {
    /// Creates the crawl's frontier and publishes its one start URL.
    Seed,
    /// Owns partitions of the crawl until it is finished everywhere.
    Own(OwnOptions),
    /// The frontier stream's state, and the graph's pages and sizes.
    Info,
    /// Which pages of the graph the owners' `--keys-file`s hold: none missing and none twice
    /// is a crawl that processed every page exactly once.
    Check {
        /// The owners' key files.
        files: Vec<PathBuf>,
    },
}

/// How an owner works.
#[derive(clap::Args, Clone)]
struct OwnOptions {
    /// How long URLs taken by a dead process wait before another gets them.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    ack_wait: Duration,
    /// How long a partition taken over waits before its URLs are taken.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    handover_wait: Duration,
    /// Links published between two settles (flush, acknowledge, beat when due); 256 as
    /// `rip-discover`. A large number settles once per batch taken (up to 256 URLs of each
    /// owned partition), beating only between batches.
    #[arg(long, default_value_t = TAKE)]
    settle_links: usize,
    /// Appends the key of every page processed (8 bytes, little-endian) to this file, written
    /// out before the page is acknowledged: `check` reads the owners' files after the crawl,
    /// a killed owner's too.
    #[arg(long)]
    keys_file: Option<PathBuf>,
}

/// The synthetic link graph.
#[derive(clap::Args, Clone, Copy)]
struct Graph {
    /// Hosts.
    #[arg(long, default_value_t = 10_000)]
    hosts: u32,
    /// Pages of each host.
    #[arg(long, default_value_t = 1_000)]
    pages_per_host: u32,
    /// Links on each page.
    #[arg(long, default_value_t = 10)]
    links: u32,
    /// Percent of the hashed links that go to another host.
    #[arg(long, default_value_t = 20)]
    cross_host_percent: u64,
}

/// A page of the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PageId {
    host: u32,
    index: u32,
}

impl Graph {
    fn total(&self) -> u64 {
        u64::from(self.hosts) * u64::from(self.pages_per_host)
    }

    fn url(&self, p: PageId) -> String {
        format!(
            "https://www.host-{:05}.example.com/section-{}/page-{}.html",
            p.host,
            p.index % 37,
            p.index
        )
    }

    /// The page of one of this graph's URLs.
    fn page_of(&self, url: &str) -> Option<PageId> {
        let rest = url.strip_prefix("https://www.host-")?;
        let (host, rest) = rest.split_once('.')?;
        let (_, page) = rest.rsplit_once("/page-")?;
        let index = page.strip_suffix(".html")?;
        Some(PageId {
            host: host.parse().ok()?,
            index: index.parse().ok()?,
        })
    }

    /// The links of page `p`: its tree links (which make every page reachable), then
    /// hashed ones up to `links`.
    fn links(&self, p: PageId) -> Vec<PageId> {
        let mut out = Vec::with_capacity(self.links as usize + 4);
        for child in [2 * u64::from(p.index) + 1, 2 * u64::from(p.index) + 2] {
            if child < u64::from(self.pages_per_host) {
                out.push(PageId {
                    host: p.host,
                    index: child as u32,
                });
            }
        }
        if p.index == 0 {
            for child in [2 * u64::from(p.host) + 1, 2 * u64::from(p.host) + 2] {
                if child < u64::from(self.hosts) {
                    out.push(PageId {
                        host: child as u32,
                        index: 0,
                    });
                }
            }
        }
        for j in out.len() as u32..self.links {
            out.push(self.hashed_link(p, j));
        }
        out
    }

    fn hashed_link(&self, p: PageId, j: u32) -> PageId {
        let mut seed = [0u8; 12];
        seed[..4].copy_from_slice(&p.host.to_le_bytes());
        seed[4..8].copy_from_slice(&p.index.to_le_bytes());
        seed[8..].copy_from_slice(&j.to_le_bytes());
        let r = xxh3_64(&seed);
        let (hosts, pages) = (u64::from(self.hosts), u64::from(self.pages_per_host));
        let rest = r >> 8;
        if r % 100 < self.cross_host_percent {
            PageId {
                host: (rest % hosts) as u32,
                index: ((rest / hosts) % pages) as u32,
            }
        } else {
            PageId {
                host: p.host,
                index: (rest % pages) as u32,
            }
        }
    }
}

/// What is published for a URL found: `rip-discover`'s frontier item (`{"r":REF,"h":KEY,
/// "t":true}`), so that messages have a real crawl's size.
#[derive(Serialize, Deserialize)]
struct Item {
    #[serde(rename = "r")]
    record: Ref,
    #[serde(rename = "h")]
    key: u64,
    #[serde(rename = "t")]
    is_target: bool,
}

impl Item {
    fn payload(&self) -> Bytes {
        Bytes::from(serde_json::to_vec(self).expect("items serialize"))
    }
}

/// What one owner did.
#[derive(Default, Serialize)]
#[serde(rename_all = "camelCase")]
struct Tally {
    pages: u64,
    duplicates: u64,
    links_found: u64,
    links_published: u64,
    partitions_taken_over: u64,
    take_requests: u64,
    deliveries: u64,
    acknowledgements: u64,
    finish_checks: u64,
    malformed: u64,
    /// The longest time between the starts of two beats, in seconds (a member that does not
    /// beat for 5 s is counted dead by the others).
    longest_beat_gap: f64,
}

/// One owner of the crawl.
struct Owner {
    frontier: SharedFrontier,
    members: Membership,
    graph: Graph,
    /// The visited set of each partition owned (or taken and not yet acknowledged).
    seen: HashMap<u32, Visited>,
    /// Every link this process published (`rip-discover`'s process-wide visited set).
    published: Visited,
    tally: Tally,
    /// Links published between two settles.
    settle_links: usize,
    /// Where the keys of the pages processed go (`--keys-file`).
    keys_file: Option<std::io::BufWriter<std::fs::File>>,
    /// When it joined, and when (seconds after) it first and last worked on a batch.
    joined: Instant,
    last_beat: Option<Instant>,
    first_work: Option<f64>,
    last_work: f64,
}

impl Owner {
    async fn join(broker: &Broker, args: &Args, options: OwnOptions) -> anyhow::Result<Self> {
        let frontier =
            SharedFrontier::open(broker, &args.crawl, args.partitions, options.ack_wait).await?;
        let group = format!("crawl_{}", args.crawl);
        let members =
            Membership::join(broker, &group, frontier.partitions(), options.handover_wait).await?;
        Ok(Self {
            frontier,
            members,
            graph: args.graph,
            settle_links: options.settle_links,
            keys_file: match &options.keys_file {
                Some(path) => Some(std::io::BufWriter::new(
                    std::fs::File::create(path)
                        .with_context(|| format!("create {}", path.display()))?,
                )),
                None => None,
            },
            seen: HashMap::new(),
            published: Visited::default(),
            tally: Tally::default(),
            joined: Instant::now(),
            last_beat: None,
            first_work: None,
            last_work: 0.0,
        })
    }

    /// Works until the crawl is finished everywhere, then leaves it.
    async fn crawl(&mut self) -> anyhow::Result<()> {
        let mut last_check: Option<Instant> = None;
        loop {
            self.beat_when_due().await;
            let batch = self.take().await?;
            if !batch.is_empty() {
                self.work(batch).await?;
                continue;
            }
            if last_check.is_none_or(|t| t.elapsed() >= FINISH_CHECK_EVERY) {
                last_check = Some(Instant::now());
                self.tally.finish_checks += 1;
                if self.frontier.finished_everywhere().await? {
                    break;
                }
            }
            tokio::time::sleep(IDLE_PAUSE).await;
        }
        self.frontier.release().await;
        self.members.leave().await;
        Ok(())
    }

    async fn beat_when_due(&mut self) {
        if !self.members.due() {
            return;
        }
        let busy: BTreeSet<u32> = self.frontier.unacknowledged().collect();
        let beating = Instant::now();
        if let Err(e) = self.members.beat(&busy).await {
            eprintln!("crawl_sim: {e}");
        }
        let since = self.last_beat.replace(beating);
        let gap = since.map_or(0.0, |t| beating.duration_since(t).as_secs_f64());
        self.tally.longest_beat_gap = self.tally.longest_beat_gap.max(gap);
        if gap > 2.0 || beating.elapsed() > Duration::from_secs(1) {
            eprintln!(
                "crawl_sim: {:.1} s: {gap:.1} s since the last beat, this one took {:.2} s",
                self.joined.elapsed().as_secs_f64(),
                beating.elapsed().as_secs_f64()
            );
        }
    }

    /// Takes URLs from the partitions owned, taking a partition over first (its visited set
    /// rebuilt from the broker).
    async fn take(&mut self) -> anyhow::Result<Vec<Delivery>> {
        let owned: Vec<u32> = self.members.owned().collect();
        let frontier = &self.frontier;
        self.seen
            .retain(|p, _| owned.contains(p) || frontier.holding(*p) > 0);
        let mut deliveries = Vec::new();
        for p in owned {
            if !self.seen.contains_key(&p) {
                self.take_over(p).await?;
            }
            self.tally.take_requests += 1;
            deliveries.extend(self.frontier.take(p, TAKE).await?);
        }
        self.tally.deliveries += deliveries.len() as u64;
        Ok(deliveries)
    }

    /// Takes partition `p` over: its visited set read from the broker.
    async fn take_over(&mut self, p: u32) -> anyhow::Result<()> {
        let reading = Instant::now();
        let mut seen = Visited::default();
        for k in self.frontier.seen_before(p).await? {
            seen.insert(k);
        }
        if !seen.is_empty() {
            eprintln!(
                "crawl_sim: {:.1} s: took partition {p} over, {} keys read in {:.2} s",
                self.joined.elapsed().as_secs_f64(),
                seen.len(),
                reading.elapsed().as_secs_f64()
            );
        }
        self.seen.insert(p, seen);
        self.tally.partitions_taken_over += 1;
        Ok(())
    }

    /// Processes a batch: each new URL "fetched" and its links published. As `rip-discover`
    /// does, every `settle_links` links published (and at the end) it settles: once the broker
    /// stored them, the URLs finished are acknowledged; and it beats when due in between.
    async fn work(&mut self, batch: Vec<Delivery>) -> anyhow::Result<()> {
        let started = self.joined.elapsed().as_secs_f64();
        self.first_work.get_or_insert(started);
        let mut finished = Vec::new();
        let mut unsettled_links = 0;
        for d in batch {
            finished.push((d.partition, d.seq));
            if let Some(item) = self.new_item(&d) {
                unsettled_links += self.expand(&item).await?;
            }
            if unsettled_links >= self.settle_links {
                self.settle(&mut finished).await?;
                unsettled_links = 0;
                self.beat_when_due().await;
            }
        }
        self.settle(&mut finished).await?;
        self.last_work = self.joined.elapsed().as_secs_f64();
        Ok(())
    }

    /// Waits until the broker stored every link published, then acknowledges `finished`.
    async fn settle(&mut self, finished: &mut Vec<(u32, u64)>) -> anyhow::Result<()> {
        self.frontier.flush().await?;
        if let Some(file) = &mut self.keys_file {
            file.flush()?;
        }
        // Each URL is acknowledged on its own (policy explicit).
        self.tally.acknowledgements += finished.len() as u64;
        for (p, seq) in finished.drain(..) {
            self.frontier.done(p, seq);
        }
        self.frontier.acknowledge().await;
        Ok(())
    }

    /// The item delivered, unless its partition saw its key before.
    fn new_item(&mut self, d: &Delivery) -> Option<Item> {
        let item = match serde_json::from_slice::<Item>(&d.payload) {
            Ok(item) if d.key == Some(item.key) => item,
            _ => {
                self.tally.malformed += 1;
                return None;
            }
        };
        if !self.seen.entry(d.partition).or_default().insert(item.key) {
            self.tally.duplicates += 1;
            return None;
        }
        Some(item)
    }

    /// The stand-in fetch: the page's links, from its URL; each not published by this
    /// process before is published to its owner. Returns how many were.
    async fn expand(&mut self, item: &Item) -> anyhow::Result<usize> {
        let url = &item.record.url;
        let page = self
            .graph
            .page_of(url)
            .with_context(|| format!("{url} is not a page of the graph"))?;
        self.tally.pages += 1;
        if let Some(file) = &mut self.keys_file {
            file.write_all(&item.key.to_le_bytes())?;
        }
        let mut published = 0;
        for link in self.graph.links(page) {
            self.tally.links_found += 1;
            let link_url = self.graph.url(link);
            let key = key(&link_url);
            if !self.published.insert(key) {
                continue;
            }
            let mut record = Ref::new(link_url);
            record.context.depth = item.record.context.depth + 1;
            record.context.parent = Some(url.clone());
            let found = Item {
                record,
                key,
                is_target: true,
            };
            self.frontier
                .publish(&found.record.url, key, found.payload())
                .await?;
            self.tally.links_published += 1;
            published += 1;
        }
        Ok(published)
    }
}

/// What `own` prints at the end.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OwnerReport {
    #[serde(flatten)]
    tally: Tally,
    seconds: f64,
    /// Seconds after joining when it started its first batch and finished its last.
    first_work_seconds: f64,
    last_work_seconds: f64,
    /// Keys in the visited sets of the partitions held at the end.
    seen_keys: usize,
    seen_heap_bytes: usize,
    /// Keys in the process-wide set of links published.
    published_keys: usize,
    published_heap_bytes: usize,
    peak_rss_kb: u64,
}

async fn own(broker: &Broker, args: &Args, options: OwnOptions) -> anyhow::Result<()> {
    let start = Instant::now();
    let mut owner = Owner::join(broker, args, options).await?;
    owner.crawl().await?;
    let report = OwnerReport {
        seconds: start.elapsed().as_secs_f64(),
        first_work_seconds: owner.first_work.unwrap_or_default(),
        last_work_seconds: owner.last_work,
        seen_keys: owner.seen.values().map(Visited::len).sum(),
        seen_heap_bytes: owner.seen.values().map(Visited::heap_bytes).sum(),
        published_keys: owner.published.len(),
        published_heap_bytes: owner.published.heap_bytes(),
        peak_rss_kb: rip_core::peak_rss_bytes().map_or(0, |b| b / 1024),
        tally: owner.tally,
    };
    println!("{}", serde_json::to_string(&report)?);
    Ok(())
}

/// Creates the crawl's frontier and publishes page 0 of host 0.
async fn seed(broker: &Broker, args: &Args) -> anyhow::Result<()> {
    let mut frontier = SharedFrontier::open(
        broker,
        &args.crawl,
        args.partitions,
        Duration::from_secs(30),
    )
    .await?;
    let url = args.graph.url(PageId { host: 0, index: 0 });
    let key = key(&url);
    let start = Item {
        record: Ref::new(url),
        key,
        is_target: true,
    };
    frontier
        .publish(&start.record.url, key, start.payload())
        .await?;
    frontier.flush().await?;
    println!(
        "{}",
        serde_json::json!({"seeded": start.record.url, "partition": frontier.partition_of(&start.record.url)})
    );
    Ok(())
}

/// The frontier stream's state, and the graph's pages and their mean URL and item sizes (an
/// item as published, its parent taken as long as its URL).
async fn info(broker: &Broker, args: &Args) -> anyhow::Result<()> {
    let mut stream = broker
        .existing_stream(&format!("crawl_{}", args.crawl))
        .await?;
    let state = stream
        .info()
        .await
        .context("read the stream's state")?
        .state
        .clone();
    let g = args.graph;
    let (mut url_bytes, mut payload_bytes) = (0u64, 0u64);
    for host in 0..g.hosts {
        for index in 0..g.pages_per_host {
            let url = g.url(PageId { host, index });
            let key = key(&url);
            url_bytes += url.len() as u64;
            let mut record = Ref::new(url.clone());
            record.context.depth = 10;
            record.context.parent = Some(url);
            payload_bytes += Item {
                record,
                key,
                is_target: true,
            }
            .payload()
            .len() as u64;
        }
    }
    let total = g.total().max(1);
    println!(
        "{}",
        serde_json::json!({
            "messages": state.messages, "bytes": state.bytes, "lastSeq": state.last_sequence,
            "consumers": state.consumer_count, "expectedPages": g.total(),
            "meanUrlBytes": url_bytes as f64 / total as f64,
            "meanPayloadBytes": payload_bytes as f64 / total as f64,
        })
    );
    Ok(())
}

/// Compares the keys of the owners' key files with the graph's pages.
fn check(graph: &Graph, partitions: u32, files: &[PathBuf]) -> anyhow::Result<()> {
    let mut processed = Vec::new();
    for path in files {
        let bytes = std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
        processed.extend(
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
        );
    }
    processed.sort_unstable();
    let mut expected: Vec<u64> = (0..graph.hosts)
        .flat_map(|host| (0..graph.pages_per_host).map(move |index| PageId { host, index }))
        .map(|p| key(&graph.url(p)))
        .collect();
    expected.sort_unstable();
    let mut distinct = processed.clone();
    distinct.dedup();
    let twice = processed.len() - distinct.len();
    let missing = expected
        .iter()
        .filter(|k| distinct.binary_search(k).is_err())
        .count();
    // Where the missing pages are: per partition, and a few of them.
    let mut by_partition: std::collections::BTreeMap<u32, usize> = Default::default();
    let mut examples = Vec::new();
    for page in (0..graph.hosts)
        .flat_map(|host| (0..graph.pages_per_host).map(move |index| PageId { host, index }))
    {
        let url = graph.url(page);
        if distinct.binary_search(&key(&url)).is_err() {
            *by_partition
                .entry(rip_queue::partition::of_url(Some(&url), partitions))
                .or_default() += 1;
            if examples.len() < 5 {
                examples.push(url);
            }
        }
    }
    let unknown = distinct
        .iter()
        .filter(|k| expected.binary_search(k).is_err())
        .count();
    println!(
        "{}",
        serde_json::json!({
            "expected": expected.len(), "processed": processed.len(), "distinct": distinct.len(),
            "processedAgain": twice, "missing": missing, "unknown": unknown,
            "missingByPartition": by_partition, "missingExamples": examples,
        })
    );
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    match &args.mode {
        Mode::Seed => seed(&connect(&args).await?, &args).await,
        Mode::Own(options) => own(&connect(&args).await?, &args, options.clone()).await,
        Mode::Info => info(&connect(&args).await?, &args).await,
        Mode::Check { files } => check(&args.graph, args.partitions, files),
    }
}

async fn connect(args: &Args) -> anyhow::Result<Broker> {
    let mut options = BrokerOptions::new(args.broker.clone());
    options.prefix = args.prefix.clone();
    options.dedupe_window = args.dedupe_window;
    Ok(Broker::connect(&options).await?)
}
