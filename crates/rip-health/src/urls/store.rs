//! [`Store`]: a map from 128-bit keys to one byte, in about 18 bytes a key.
//!
//! Most keys sit in one array sorted by key, 17 bytes each (the key big-endian, then the
//! byte), found through a directory of where each run of leading key bits starts (about
//! eight keys a run: half a byte a key). The newest keys wait in a hash map; when it holds
//! an eighth as many keys as the array (at least [`MIN_RECENT`]), they are sorted and
//! merged into the array from its end, in place. The array grows by `realloc`, which for
//! an allocation this size moves pages instead of copying them, so growing never holds two
//! copies; the map and the merge's sorted batch add about an eighth each.
//!
//! A hash map of the keys alone would take 18 bytes a slot at a load between 0.44 and
//! 0.875, and twice that while it grows. Keys are expected to be uniform (hashes): the
//! directory and the map's hasher rely on it for their speed, not for correctness.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// One key and its byte, as stored in the sorted array.
type Entry = [u8; 17];

/// The fewest keys the map of new keys holds before a merge.
const MIN_RECENT: usize = 1 << 16;

/// Keys per directory slot, on average.
const PER_SLOT: usize = 8;

/// 128-bit keys to one byte each (see the module docs).
#[derive(Debug, Default)]
pub struct Store {
    sorted: Vec<Entry>,
    /// `slots[b]`: the index in `sorted` of the first key whose top `bits` bits are `b` or
    /// more; one more slot at the end (`sorted.len()`).
    slots: Vec<u32>,
    bits: u32,
    recent: HashMap<[u8; 16], u8, BuildHasherDefault<KeyHasher>>,
}

impl Store {
    /// The number of keys.
    pub fn len(&self) -> usize {
        self.sorted.len() + self.recent.len()
    }

    /// True when no key is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The byte of `key`, if stored.
    pub fn get(&self, key: u128) -> Option<u8> {
        let k = key.to_be_bytes();
        if let Some(&b) = self.recent.get(&k) {
            return Some(b);
        }
        self.find(&k).map(|i| self.sorted[i][16])
    }

    /// Changes the byte of `key` with `f` (a new key starts at 0). True when the key is
    /// new.
    pub fn update(&mut self, key: u128, f: impl FnOnce(&mut u8)) -> bool {
        let k = key.to_be_bytes();
        if let Some(b) = self.recent.get_mut(&k) {
            f(b);
            return false;
        }
        if let Some(i) = self.find(&k) {
            f(&mut self.sorted[i][16]);
            return false;
        }
        let mut b = 0;
        f(&mut b);
        self.recent.insert(k, b);
        if self.recent.len() >= MIN_RECENT.max(self.sorted.len() / 8) {
            self.merge();
        }
        true
    }

    /// Every key and its byte, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u128, u8)> + '_ {
        let sorted = self.sorted.iter().map(|e| (key_of(e), e[16]));
        let recent = self
            .recent
            .iter()
            .map(|(k, &b)| (u128::from_be_bytes(*k), b));
        sorted.chain(recent)
    }

    /// The index of `k` in the sorted array.
    fn find(&self, k: &[u8; 16]) -> Option<usize> {
        if self.sorted.is_empty() {
            return None;
        }
        let slot = self.slot(u128::from_be_bytes(*k));
        let (start, end) = (self.slots[slot] as usize, self.slots[slot + 1] as usize);
        self.sorted[start..end]
            .binary_search_by(|e| e[..16].cmp(k))
            .ok()
            .map(|i| start + i)
    }

    fn slot(&self, key: u128) -> usize {
        if self.bits == 0 {
            0
        } else {
            (key >> (128 - self.bits)) as usize
        }
    }

    /// Moves the new keys into the sorted array and rebuilds the directory.
    fn merge(&mut self) {
        let mut batch: Vec<Entry> = self
            .recent
            .drain()
            .map(|(k, b)| {
                let mut e = [0; 17];
                e[..16].copy_from_slice(&k);
                e[16] = b;
                e
            })
            .collect();
        batch.sort_unstable();
        let old = self.sorted.len();
        self.sorted.reserve_exact(batch.len());
        self.sorted.resize(old + batch.len(), [0; 17]);
        // From the end, so that no key of the array is overwritten before it moves.
        let (mut i, mut w) = (old, self.sorted.len());
        while let Some(&last) = batch.last() {
            w -= 1;
            if i > 0 && self.sorted[i - 1] > last {
                self.sorted[w] = self.sorted[i - 1];
                i -= 1;
            } else {
                self.sorted[w] = last;
                batch.pop();
            }
        }
        self.index();
    }

    /// Rebuilds the directory: about [`PER_SLOT`] keys a slot.
    fn index(&mut self) {
        let n = self.sorted.len();
        self.bits = (n / PER_SLOT).max(1).ilog2().min(31);
        let slots = 1usize << self.bits;
        self.slots.clear();
        self.slots.reserve_exact(slots + 1);
        let mut i = 0;
        for slot in 0..slots {
            while i < n && self.slot(key_of(&self.sorted[i])) < slot {
                i += 1;
            }
            self.slots.push(i as u32);
        }
        self.slots.push(n as u32);
    }
}

fn key_of(e: &Entry) -> u128 {
    let mut k = [0; 16];
    k.copy_from_slice(&e[..16]);
    u128::from_be_bytes(k)
}

/// A hasher for keys that are hashes already: the two halves of the key XORed, times a
/// constant (Fibonacci hashing), so that keys differing in a few bits still spread.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut half = [0; 8];
            half[8 - chunk.len()..].copy_from_slice(chunk);
            self.0 ^= u64::from_be_bytes(half);
        }
    }

    fn write_usize(&mut self, _: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> u128 {
        xxhash_rust::xxh3::xxh3_128(&i.to_le_bytes())
    }

    /// Against a plain map, across several merges: every key found with its last byte,
    /// new keys said to be new, absent keys absent.
    #[test]
    fn holds_what_a_map_holds_across_merges() {
        let mut store = Store::default();
        let mut map = HashMap::new();
        let n = 5 * MIN_RECENT as u64;
        for i in 0..n {
            for k in [key(i), key(i / 3)] {
                let new = store.update(k, |b| *b = b.wrapping_add(1));
                let v = map.entry(k).or_insert(0u8);
                assert_eq!(new, *v == 0, "key {i}");
                *v = v.wrapping_add(1);
            }
        }
        assert!(!store.sorted.is_empty(), "merged at least once");
        assert_eq!(store.len(), map.len());
        for (&k, &v) in &map {
            assert_eq!(store.get(k), Some(v));
        }
        assert_eq!(store.get(key(n + 1)), None);
        let mut all: Vec<(u128, u8)> = store.iter().collect();
        all.sort_unstable();
        let mut want: Vec<(u128, u8)> = map.into_iter().collect();
        want.sort_unstable();
        assert_eq!(all, want);
        assert!(store.sorted.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn keys_alike_in_their_top_bits_are_told_apart() {
        let mut store = Store::default();
        let n = 3 * MIN_RECENT as u128;
        for i in 0..n {
            store.update(i, |b| *b = (i % 251) as u8);
            store.update(u128::MAX - i, |b| *b = 7);
        }
        for i in (0..n).step_by(97) {
            assert_eq!(store.get(i), Some((i % 251) as u8));
            assert_eq!(store.get(u128::MAX - i), Some(7));
        }
        assert_eq!(store.get(n), None);
    }
}
