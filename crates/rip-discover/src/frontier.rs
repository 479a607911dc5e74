//! The crawl's memory: [`Item`]s waiting to be processed, by depth ([`Frontier`]), and
//! every URL ever enqueued as a 64-bit hash ([`Visited`]).
//!
//! The visited set and the index of waiting items are one map (a [`rip_keystore::Store`]:
//! a sorted array with a small hash map of new keys), 16 bytes a URL: its key, and 8 bytes
//! saying whether it was visited and where its item waits if it does (`visited`). A
//! waiting URL costs 8 bytes more, its key in its host's queue (`level`); its item waits
//! in memory within the frontier's budget, else in a temporary file (`spill`). So 24
//! bytes a waiting URL and 16 a URL seen and done, with the store's new keys (up to an
//! eighth of them, in a hash table) adding up to ~40% to the map while they are merged into
//! the array. Measured (`scripts/bench/scale/frontier`: one level of waiting URLs over a
//! thousand hosts, 32 MiB budget; `docs/benchmarks-log.md`): a million waiting URLs peak at
//! 68 MB, ten million at 350 MB.
//!
//! Two URLs share a 64-bit XXH3 hash with probability ~n²/2⁶⁵: about 3·10⁻⁸ for a million
//! URLs, 3·10⁻⁶ for ten million.

use std::collections::BTreeMap;
use std::hash::Hasher;

use rip_core::Ref;
use serde::{Deserialize, Serialize};

mod held;
mod level;
mod spill;
mod visited;
use held::{Held, weight};
use level::Level;
use spill::Spill;
pub use visited::Visited;
use visited::Waiting;

/// The default memory budget of waiting items (estimated); past it they wait on disk.
pub const DEFAULT_FRONTIER_MEMORY: usize = 32 << 20;

/// The visited-set key of a canonical URL (stable across runs and versions: XXH3-64).
pub fn key(canonical: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(canonical.as_bytes())
}

/// The key of a non-page item (a sitemap, a robots.txt seed), in its own namespace.
pub fn key_in(namespace: &str, s: &str) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(namespace.as_bytes());
    h.update(b"\0");
    h.update(s.as_bytes());
    h.digest()
}

/// What an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub enum ItemKind {
    /// A page: fetched, written as a `ref` when it is a target, its links followed.
    #[default]
    Page,
    /// An origin whose robots.txt `Sitemap:` lines (or `/sitemap.xml`) seed the crawl.
    Seed,
    /// A sitemap file; `level` 0 is named by robots.txt or guessed, 1 is listed by an index…
    Sitemap {
        /// Index nesting level.
        level: u32,
        /// Named by robots.txt or an index (a guessed `/sitemap.xml` that fails is quiet).
        declared: bool,
    },
}

/// One unit of crawl work, as journalled in the state folder.
///
/// The journal keeps its one-letter field names (`r`, `h`, `k`, `s`, `t`), so that its lines
/// stay compact and state folders written before still resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    /// The ref (URL, depth, parent, link text, raw context) written when it is a target.
    #[serde(rename = "r")]
    pub record: Ref,
    /// The visited-set key ([`key`] of the canonical URL, or [`key_in`] a namespace).
    #[serde(rename = "h")]
    pub key: u64,
    /// What it is.
    #[serde(rename = "k", default, skip_serializing_if = "is_page")]
    pub kind: ItemKind,
    /// A start URL (its failure means "not ready").
    #[serde(rename = "s", default, skip_serializing_if = "is_false")]
    pub is_start: bool,
    /// A target: written as a `ref` once fetched.
    #[serde(rename = "t", default, skip_serializing_if = "is_false")]
    pub is_target: bool,
    /// While waiting: the dispatch order of the page it was found on (lower: earlier in
    /// BFS order), which decides which of several parents at one depth a URL keeps. Once
    /// dispatched: its own dispatch order. Not journalled.
    #[serde(skip)]
    pub dispatch_order: u64,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_page(k: &ItemKind) -> bool {
    *k == ItemKind::Page
}

impl Item {
    /// An item of `kind` waiting for dispatch: not a start, not a target.
    pub fn new(record: Ref, key: u64, kind: ItemKind) -> Self {
        Self {
            record,
            key,
            kind,
            is_start: false,
            is_target: false,
            dispatch_order: 0,
        }
    }

    /// The crawl depth (the ref's `depth`).
    pub fn depth(&self) -> u32 {
        self.record.context.depth
    }
}

/// A hasher for keys that are hashes already.
#[derive(Default, Clone, Copy)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Items waiting, by depth; breadth-first, and within a depth host by host in turn. A
/// waiting item can be found by key and updated (a better parent for it turned up before it
/// was dispatched).
///
/// The frontier holds the crawl's visited set ([`Frontier::visit`]): one map says of a key
/// whether it was visited and where its item waits. An item can wait without its key being
/// visited (a shared crawl's item from another process), and a key stays visited once its
/// item is taken.
///
/// Waiting items are kept in memory up to a budget (estimated bytes; see
/// [`Frontier::with_memory`]); past it they wait in a temporary file (`spill`), 24 bytes
/// each in memory with their keys (see the module docs), and are read back when served or
/// updated. A level of ten million items (a site with ten million pages one click below a
/// listing) then costs a few hundred megabytes, not gigabytes. An item too long for the
/// file's places (a MiB of JSON), or past its first TiB, waits in memory. An item that
/// cannot be read back (the temporary file failed) is counted as [`Frontier::lost`], and
/// the crawl says so.
#[derive(Debug)]
pub struct Frontier {
    levels: BTreeMap<u32, Level>,
    /// Every key visited, and where each waiting item is.
    visited: Visited,
    /// The items waiting in memory.
    held: Held,
    /// Entries in the levels (an item lost on disk until its entry is reached).
    len: usize,
    targets: usize,
    /// The budget of `held`'s estimated bytes.
    budget: usize,
    spill: Spill,
    spill_failed: bool,
}

impl Default for Frontier {
    fn default() -> Self {
        Self::with_memory(DEFAULT_FRONTIER_MEMORY)
    }
}

impl Frontier {
    /// A frontier keeping at most about `budget` bytes of waiting items in memory.
    pub fn with_memory(budget: usize) -> Self {
        Self::with_visited(budget, Visited::default())
    }

    /// A frontier as [`Frontier::with_memory`], whose visited set starts as `visited` (a
    /// resumed crawl's).
    pub fn with_visited(budget: usize, visited: Visited) -> Self {
        Self {
            levels: BTreeMap::new(),
            visited,
            held: Held::default(),
            len: 0,
            targets: 0,
            budget,
            spill: Spill::default(),
            spill_failed: false,
        }
    }

    /// Adds a key to the visited set; true when it is new.
    pub fn visit(&mut self, key: u64) -> bool {
        self.visited.insert(key)
    }

    /// The visited set.
    pub fn visited(&self) -> &Visited {
        &self.visited
    }

    /// Queues an item at its depth (replacing a waiting item with the same key). Its key
    /// is not marked visited ([`Frontier::visit`] does).
    pub fn push(&mut self, item: Item) {
        let (key, target) = (item.key, usize::from(item.is_target));
        let mut item = Some(item);
        let replaced = self.update(key, |waiting| {
            let was = usize::from(waiting.is_target);
            *waiting = item.take().expect("replaced once");
            was
        });
        match replaced {
            Some(was) => self.targets = self.targets + target - was,
            // Not waiting (or lost: the spill file failed): queued anew.
            None => self.push_new(item.expect("not taken when not replaced")),
        }
    }

    /// Queues an item whose key is not waiting.
    fn push_new(&mut self, item: Item) {
        self.targets += usize::from(item.is_target);
        let (depth, key) = (item.depth(), item.key);
        let level = self.levels.entry(depth).or_default();
        level.push(key, &item.record.url);
        let waiting = self.place_for(item);
        self.visited.set_waiting(key, waiting);
        self.len += 1;
    }

    /// Where a new item waits: in memory within the budget, else on disk (in memory when
    /// the disk fails, or the item has no place there: memory grows rather than an item
    /// being lost).
    fn place_for(&mut self, item: Item) -> Waiting {
        if self.held.bytes + weight(&item) > self.budget && !self.spill_failed {
            match self.spill.write(&item) {
                Ok(Some(place)) => return Waiting::Away(place),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!("frontier: {e}; waiting items stay in memory");
                    self.spill_failed = true;
                }
            }
        }
        Waiting::Here(self.held.put(item))
    }

    /// Changes the waiting item with this key with `f`; `None` when no item with this key
    /// waits. An item waiting on disk is read for the call and goes back where the budget
    /// says (on disk while the frontier is over it): a crawl whose pages link to items
    /// waiting on disk (related links, listings) would otherwise pull every one of them back
    /// into memory for good (rip-discover at a million pages peaked at 447 MB so, most of
    /// it items read back to be compared with a second parent).
    pub fn update<R>(&mut self, key: u64, f: impl FnOnce(&mut Item) -> R) -> Option<R> {
        match self.visited.waiting(key) {
            Waiting::No => None,
            Waiting::Here(i) => self.held.change(i, f),
            Waiting::Away(place) => {
                let mut item = self.read_back(key, place)?;
                let r = f(&mut item);
                // Written back, not spilled again: `spilled` counts items, not writes.
                let written = self.spill.written;
                let back = self.place_for(item);
                self.spill.written = written;
                self.visited.set_waiting(key, back);
                Some(r)
            }
        }
    }

    /// The item of `key` waiting at `place` on disk, read; `None` when it cannot be (lost:
    /// no longer waiting nor counted as a target; its entry in its level is skipped).
    fn read_back(&mut self, key: u64, place: spill::Place) -> Option<Item> {
        let item = self.spill.take(place);
        if item.is_none() {
            self.visited.set_waiting(key, Waiting::No);
            self.targets -= usize::from(place.target());
        }
        item
    }

    /// The index in memory of the item of `key`, read back if it waits on disk; `None`
    /// when it does not wait.
    fn in_memory(&mut self, key: u64) -> Option<usize> {
        match self.visited.waiting(key) {
            Waiting::No => None,
            Waiting::Here(i) => Some(i),
            Waiting::Away(place) => {
                let item = self.read_back(key, place)?;
                let i = self.held.put(item);
                self.visited.set_waiting(key, Waiting::Here(i));
                Some(i)
            }
        }
    }

    /// The smallest depth waiting.
    pub fn min_depth(&self) -> Option<u32> {
        self.levels.keys().next().copied()
    }

    /// The next item of the smallest depth, if that depth is at most `max_depth`, in memory
    /// (entries of items lost on disk are dropped on the way).
    fn front(&mut self, max_depth: u32) -> Option<&Item> {
        let i = loop {
            let (&depth, level) = self.levels.first_key_value()?;
            let key = level.front().filter(|_| depth <= max_depth)?;
            if let Some(i) = self.in_memory(key) {
                break i;
            }
            self.next_key(depth);
        };
        self.held.get(i)
    }

    /// Takes the next key of the smallest depth, if that depth is at most `max_depth`, out
    /// of its level.
    fn next_key(&mut self, max_depth: u32) -> Option<u64> {
        loop {
            let mut entry = self.levels.first_entry()?;
            if *entry.key() > max_depth {
                return None;
            }
            let key = entry.get_mut().pop();
            if entry.get().is_empty() {
                entry.remove();
            }
            if let Some(key) = key {
                self.len -= 1;
                return Some(key);
            }
        }
    }

    /// Takes the next item of the smallest depth (host by host in turn), if that depth is
    /// at most `max_depth` (the breadth-first barrier: nothing deeper starts while
    /// shallower work is running).
    pub fn pop_up_to(&mut self, max_depth: u32) -> Option<Item> {
        loop {
            let key = self.next_key(max_depth)?;
            if let Some(item) = self.take(key) {
                return Some(item);
            }
        }
    }

    /// The waiting item of a key taken from its level (`None`: it was lost).
    fn take(&mut self, key: u64) -> Option<Item> {
        let item = match self.visited.set_waiting(key, Waiting::No) {
            Waiting::No => return None,
            Waiting::Here(i) => self.held.take(i)?,
            Waiting::Away(place) => {
                let item = self.spill.take(place);
                if item.is_none() {
                    self.targets -= usize::from(place.target());
                }
                item?
            }
        };
        self.targets -= usize::from(item.is_target);
        Some(item)
    }

    /// Takes the next item of the smallest depth, if it satisfies `pred`; else leaves it.
    pub fn pop_if(&mut self, max_depth: u32, pred: impl FnOnce(&Item) -> bool) -> Option<Item> {
        if !self.front(max_depth).is_some_and(pred) {
            return None;
        }
        self.pop_up_to(max_depth)
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Targets waiting.
    pub fn targets(&self) -> usize {
        self.targets
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Items that waited on disk, over the run.
    pub fn spilled(&self) -> u64 {
        self.spill.written
    }

    /// Items that could not be read back from disk (lost: the crawl fails).
    pub fn lost(&self) -> u64 {
        self.spill.lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(url: &str, depth: u32) -> Item {
        let mut r = Ref::new(url);
        r.context.depth = depth;
        Item {
            is_target: true,
            ..Item::new(r, key(url), ItemKind::Page)
        }
    }

    #[test]
    fn waiting_items_can_be_updated() {
        // In memory, and with every item waiting on disk.
        for budget in [DEFAULT_FRONTIER_MEMORY, 0] {
            let mut f = Frontier::with_memory(budget);
            f.push(item("http://h/a", 1));
            f.push(item("http://h/b", 1));
            f.update(key("http://h/b"), |b| {
                b.record.context.link_text = Some("B".into())
            })
            .unwrap();
            let mut again = item("http://h/a", 1);
            again.record.context.link_text = Some("A".into());
            f.push(again);
            assert_eq!((f.len(), f.targets()), (2, 2));
            let a = f.pop_up_to(9).unwrap();
            assert_eq!(f.targets(), 1);
            assert_eq!(a.record.context.link_text.as_deref(), Some("A"));
            assert!(
                f.update(key("http://h/a"), |_| ()).is_none(),
                "gone once taken"
            );
            assert_eq!(
                f.pop_up_to(9).unwrap().record.context.link_text.as_deref(),
                Some("B")
            );
            assert!(f.is_empty() && f.min_depth().is_none());
        }
    }

    #[test]
    fn breadth_first_with_a_barrier() {
        // In memory, and with every item waiting on disk.
        for budget in [DEFAULT_FRONTIER_MEMORY, 0] {
            let mut f = Frontier::with_memory(budget);
            f.push(item("http://h/b", 1));
            f.push(item("http://h/a", 0));
            f.push(item("http://h/c", 1));
            assert_eq!(f.len(), 3);
            assert_eq!(f.pop_up_to(0).unwrap().record.url, "http://h/a");
            assert!(f.pop_up_to(0).is_none(), "depth 1 waits for depth 0");
            assert_eq!(f.pop_up_to(5).unwrap().record.url, "http://h/b");
            assert!(f.pop_if(5, |i| i.record.url.ends_with('x')).is_none());
            assert_eq!(f.pop_up_to(5).unwrap().record.url, "http://h/c");
            assert!(f.is_empty());
        }
    }

    #[test]
    fn within_a_depth_hosts_take_turns() {
        // In memory, and with every item waiting on disk.
        for budget in [DEFAULT_FRONTIER_MEMORY, 0] {
            let mut f = Frontier::with_memory(budget);
            // One large host first, as a crawl that found its links first writes them.
            for i in 0..4 {
                f.push(item(&format!("http://big/{i}"), 1));
            }
            f.push(item("http://small:8080/a", 1));
            f.push(item("http://small:8080/b", 1));
            f.push(item("https://other/x?q=1", 1));
            f.push(item("http://big/shallow", 0));
            // An update in place keeps its turn.
            f.update(key("http://big/1"), |one| {
                one.record.context.link_text = Some("one".into())
            })
            .unwrap();
            let order: Vec<String> = std::iter::from_fn(|| f.pop_up_to(9))
                .map(|i| i.record.url)
                .collect();
            assert_eq!(
                order,
                [
                    "http://big/shallow",
                    "http://big/0",
                    "http://small:8080/a",
                    "https://other/x?q=1",
                    "http://big/1",
                    "http://small:8080/b",
                    "http://big/2",
                    "http://big/3",
                ]
            );
            assert!(f.is_empty() && f.update(key("http://big/1"), |_| ()).is_none());
        }
    }

    #[test]
    fn items_past_the_budget_wait_on_disk_and_come_back_whole() {
        let mut f = Frontier::with_memory(3 * (std::mem::size_of::<Item>() + 200));
        for i in 0..100 {
            let mut it = item(&format!("http://h{}/p{i}", i % 3), 1);
            it.dispatch_order = i;
            it.record.context.link_text = Some(format!("link {i}"));
            it.is_target = i.is_multiple_of(2);
            f.push(it);
        }
        assert!(f.spilled() >= 95, "{} spilled", f.spilled());
        assert_eq!((f.len(), f.targets()), (100, 50));
        // Updated while on disk: read back, changed, and written back. Every item is
        // looked at (as a crawl compares a second parent) and the memory held stays the same:
        // updates do not pull the items on disk into memory.
        let held = f.held.bytes;
        for i in 0..100u64 {
            f.update(key(&format!("http://h{}/p{i}", i % 3)), |it| {
                if i == 97 {
                    it.record.context.link_text = Some("new".into());
                }
            })
            .unwrap();
        }
        assert_eq!(f.held.bytes, held, "items updated on disk stay on disk");
        let spilled = f.spilled();
        assert!(
            (95..=100).contains(&spilled),
            "each item counted once: {spilled}"
        );
        let mut seen = 0;
        while let Some(it) = f.pop_up_to(9) {
            let i: u64 = it.record.url.rsplit('p').next().unwrap().parse().unwrap();
            assert_eq!(it.dispatch_order, i, "not in the JSON, kept beside it");
            assert_eq!(it.is_target, i.is_multiple_of(2));
            let want = if i == 97 {
                "new".to_owned()
            } else {
                format!("link {i}")
            };
            assert_eq!(it.record.context.link_text.as_deref(), Some(want.as_str()));
            seen += 1;
        }
        assert_eq!((seen, f.len(), f.targets(), f.lost()), (100, 0, 0, 0));
        assert_eq!(
            f.spill.len_for_tests(),
            0,
            "emptied once every item was read back"
        );
    }

    /// The spill file fails under its items: each is lost when reached (counted, no
    /// longer a target), the entry of a lost item at the front is passed over, and a key
    /// whose item was lost can wait again.
    #[test]
    fn items_lost_on_disk_are_passed_over_and_their_keys_can_wait_again() {
        let mut f = Frontier::with_memory(0);
        for p in ["a", "b", "c", "d"] {
            f.push(item(&format!("http://h/{p}"), 1));
        }
        f.spill.break_for_tests();
        assert!(f.update(key("http://h/b"), |_| ()).is_none(), "lost");
        assert_eq!((f.lost(), f.len(), f.targets()), (1, 4, 3));
        f.push(item("http://h/b", 1));
        assert_eq!((f.len(), f.targets()), (5, 4));
        let b = f.pop_if(9, |i| i.record.url.ends_with('b'));
        assert_eq!(b.map(|i| i.record.url).as_deref(), Some("http://h/b"));
        assert!(f.pop_up_to(9).is_none(), "c and d lost, b taken");
        assert_eq!((f.lost(), f.len(), f.targets()), (4, 0, 0));
        assert!(f.is_empty() && f.min_depth().is_none());
    }

    /// An item whose JSON takes a MiB has no place on disk: it waits in memory, over the
    /// budget, and comes back whole.
    #[test]
    fn an_item_too_long_for_a_place_waits_in_memory() {
        let mut f = Frontier::with_memory(0);
        let mut long = item("http://h/long", 1);
        long.record.context.link_text = Some("x".repeat(1 << 20));
        f.push(item("http://h/a", 1));
        f.push(long.clone());
        assert_eq!((f.spilled(), f.len(), f.targets()), (1, 2, 2));
        assert!(f.held.bytes > 1 << 20, "{} bytes held", f.held.bytes);
        assert_eq!(f.pop_up_to(9).unwrap().record.url, "http://h/a");
        assert_eq!(f.pop_up_to(9), Some(long));
        assert_eq!((f.held.bytes, f.lost()), (0, 0));
    }

    /// The frontier's visited set shares its map with the waiting items: a key can wait
    /// without being visited (a shared crawl's item from another process), stays visited
    /// once taken, and a resumed crawl's visited set is taken over.
    #[test]
    fn the_frontier_keeps_the_visited_set() {
        for budget in [DEFAULT_FRONTIER_MEMORY, 0] {
            let (a, b) = (key("http://h/a"), key("http://h/b"));
            let mut f = Frontier::with_memory(budget);
            assert!(f.visit(a));
            f.push(item("http://h/a", 1));
            f.push(item("http://h/b", 1));
            assert!(!f.visit(a), "visited while it waits");
            assert!(!f.visited().contains(b) && f.visited().len() == 1);
            assert!(f.visit(b), "waiting is not visited");
            assert_eq!(f.pop_up_to(9).map(|i| i.key), Some(a));
            assert!(f.update(b, |i| i.dispatch_order = 7).is_some());
            assert_eq!((f.len(), f.targets()), (1, 1));
            let taken = f.pop_up_to(9).map(|i| (i.key, i.dispatch_order));
            assert_eq!(taken, Some((b, 7)));
            assert!(f.is_empty() && f.update(a, |_| ()).is_none());
            assert!(f.visited().contains(a) && f.visited().contains(b));
            assert_eq!(f.visited().len(), 2);
        }
        let mut before = Visited::default();
        before.insert(key("http://h/c"));
        let mut f = Frontier::with_visited(0, before);
        assert!(!f.visit(key("http://h/c")) && f.visit(key("http://h/d")));
    }

    #[test]
    fn keys_are_stable_and_namespaced() {
        // Persisted in state folders: must never change.
        assert_eq!(key("http://h/"), xxhash_rust::xxh3::xxh3_64(b"http://h/"));
        assert_ne!(key_in("sitemap", "http://h/"), key("http://h/"));
        let line = serde_json::to_string(&item("http://h/a", 2)).unwrap();
        let back: Item = serde_json::from_str(&line).unwrap();
        assert_eq!(back, item("http://h/a", 2));
        assert!(!line.contains("\"k\""), "pages need no kind: {line}");
    }

    /// The issue's bound: a million URLs within 150 MB. This set holds a million keys in
    /// well under that: 16 bytes a key and the store's map of new keys.
    #[test]
    fn visited_set_of_a_million_urls_is_compact() {
        let mut v = Visited::default();
        for i in 0..1_000_000u32 {
            assert!(v.insert(key(&format!(
                "http://example.com/section-{}/item-{i}",
                i % 7
            ))));
        }
        assert_eq!(v.len(), 1_000_000);
        assert!(!v.insert(key("http://example.com/section-0/item-0")));
        let mb = v.heap_bytes() as f64 / 1e6;
        assert!(mb < 20.0, "{mb:.1} MB");
    }
}
