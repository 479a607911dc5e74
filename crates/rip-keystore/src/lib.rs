//! [`Store`]: a map from 64- or 128-bit keys (hashes) to a small `Copy` value, in about the
//! size of a key and its value.
//!
//! Most keys sit in one array sorted by key, found through a directory of where each run
//! of leading key bits starts (about eight keys a run: half a byte a key). The newest keys
//! wait in a hash map; when it holds an eighth as many keys as the array (at least
//! [`MIN_RECENT`]), they are sorted and merged into the array from its end, in place. The
//! array grows by `realloc`, which for an allocation this size moves pages instead of
//! copying them, so growing never holds two copies; the map and the merge's sorted batch
//! add about an eighth each.
//!
//! A hash map of the same entries would take their size at a load between 0.44 and 0.875,
//! and twice that while it grows. Keys are expected to be uniform (hashes): the directory
//! and the map's hasher rely on it for their speed, not for correctness.
//!
//! Used where a stage keeps something per URL for the whole run: `rip-health`'s ledger (a
//! byte of state a URL), `rip-write`'s outcomes and file names, `rip-http`'s cache index
//! (128-bit keys), and `rip-discover`'s visited set and frontier index (64-bit keys).

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A key width: `u128` (the default) or `u64`. A key is kept as its big-endian bytes, so
/// that byte order is key order and an entry has no padding.
pub trait Key: Copy {
    /// The key's big-endian bytes.
    type Bytes: Copy + Ord + Hash + Debug;
    /// The key as bytes.
    fn to_bytes(self) -> Self::Bytes;
    /// The key of bytes written by [`Key::to_bytes`].
    fn from_bytes(bytes: Self::Bytes) -> Self;
    /// The key's top `bits` bits (1 to 31) as a number.
    fn top_bits(self, bits: u32) -> usize;
}

/// `Key` for an unsigned integer type of `$bytes` bytes.
macro_rules! key_of_width {
    ($int:ty, $bytes:literal) => {
        impl Key for $int {
            type Bytes = [u8; $bytes];
            fn to_bytes(self) -> Self::Bytes {
                self.to_be_bytes()
            }
            fn from_bytes(bytes: Self::Bytes) -> Self {
                Self::from_be_bytes(bytes)
            }
            fn top_bits(self, bits: u32) -> usize {
                (self >> (Self::BITS - bits)) as usize
            }
        }
    };
}

key_of_width!(u128, 16);
key_of_width!(u64, 8);

/// The fewest keys the map of new keys holds before a merge.
pub const MIN_RECENT: usize = 1 << 16;

/// Keys per directory slot, on average.
const PER_SLOT: usize = 8;

/// Keys (`u128` unless `K` says `u64`) to a value each (see the crate docs). Use a value
/// type without padding (bytes, byte arrays, or integers whose alignment divides the key's
/// size) to keep entries at the sum of their parts.
#[derive(Debug)]
pub struct Store<V, K: Key = u128> {
    sorted: Vec<(K::Bytes, V)>,
    /// `slots[b]`: the index in `sorted` of the first key whose top `bits` bits are `b` or
    /// more; one more slot at the end (`sorted.len()`).
    slots: Vec<u32>,
    bits: u32,
    recent: HashMap<K::Bytes, V, BuildHasherDefault<KeyHasher>>,
}

impl<V, K: Key> Default for Store<V, K> {
    fn default() -> Self {
        Self {
            sorted: Vec::new(),
            slots: Vec::new(),
            bits: 0,
            recent: HashMap::default(),
        }
    }
}

impl<V: Copy, K: Key> Store<V, K> {
    /// The number of keys.
    pub fn len(&self) -> usize {
        self.sorted.len() + self.recent.len()
    }

    /// True when no key is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value of `key`, if stored.
    pub fn get(&self, key: K) -> Option<V> {
        let k = key.to_bytes();
        if let Some(&v) = self.recent.get(&k) {
            return Some(v);
        }
        self.find(&k).map(|i| self.sorted[i].1)
    }

    /// Changes the value of `key` with `f`, if stored; false when it is not.
    pub fn modify(&mut self, key: K, f: impl FnOnce(&mut V)) -> bool {
        let k = key.to_bytes();
        if let Some(v) = self.recent.get_mut(&k) {
            f(v);
            return true;
        }
        match self.find(&k) {
            Some(i) => {
                f(&mut self.sorted[i].1);
                true
            }
            None => false,
        }
    }

    /// Sets the value of `key`; true when the key is new.
    pub fn insert(&mut self, key: K, value: V) -> bool {
        let mut value = Some(value);
        if self.modify(key, |v| *v = value.take().expect("set once")) {
            return false;
        }
        self.add(key.to_bytes(), value.expect("not set"));
        true
    }

    /// Changes the value of `key` with `f`, a new key starting at `V::default()`; true when
    /// the key is new.
    pub fn update(&mut self, key: K, f: impl FnOnce(&mut V)) -> bool
    where
        V: Default,
    {
        let mut f = Some(f);
        if self.modify(key, |v| (f.take().expect("called once"))(v)) {
            return false;
        }
        let mut v = V::default();
        (f.expect("not called"))(&mut v);
        self.add(key.to_bytes(), v);
        true
    }

    /// Every key and its value, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (K, V)> + '_ {
        let sorted = self.sorted.iter().map(|(k, v)| (K::from_bytes(*k), *v));
        let recent = self.recent.iter().map(|(k, v)| (K::from_bytes(*k), *v));
        sorted.chain(recent)
    }

    /// Bytes allocated: the sorted array, its directory, and the map of new keys (an entry
    /// and a control byte a bucket).
    pub fn heap_bytes(&self) -> usize {
        let entry = size_of::<(K::Bytes, V)>();
        self.sorted.capacity() * entry
            + self.slots.capacity() * size_of::<u32>()
            + self.recent.capacity() * (entry + 1)
    }

    fn add(&mut self, k: K::Bytes, v: V) {
        self.recent.insert(k, v);
        if self.recent.len() >= MIN_RECENT.max(self.sorted.len() / 8) {
            self.merge();
        }
    }

    /// The index of `k` in the sorted array.
    fn find(&self, k: &K::Bytes) -> Option<usize> {
        if self.sorted.is_empty() {
            return None;
        }
        let slot = self.slot(K::from_bytes(*k));
        let (start, end) = (self.slots[slot] as usize, self.slots[slot + 1] as usize);
        self.sorted[start..end]
            .binary_search_by(|(e, _)| e.cmp(k))
            .ok()
            .map(|i| start + i)
    }

    fn slot(&self, key: K) -> usize {
        if self.bits == 0 {
            0
        } else {
            key.top_bits(self.bits)
        }
    }

    /// Moves the new keys into the sorted array and rebuilds the directory.
    fn merge(&mut self) {
        let mut batch: Vec<(K::Bytes, V)> = self.recent.drain().collect();
        batch.sort_unstable_by_key(|e| e.0);
        let old = self.sorted.len();
        let Some(&filler) = batch.first() else {
            return;
        };
        self.sorted.reserve_exact(batch.len());
        self.sorted.resize(old + batch.len(), filler);
        // From the end, so that no key of the array is overwritten before it moves.
        let (mut i, mut w) = (old, self.sorted.len());
        while let Some(&last) = batch.last() {
            w -= 1;
            if i > 0 && self.sorted[i - 1].0 > last.0 {
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
            while i < n && self.slot(K::from_bytes(self.sorted[i].0)) < slot {
                i += 1;
            }
            self.slots.push(i as u32);
        }
        self.slots.push(n as u32);
    }
}

/// A hasher for keys that are hashes already: the key's 64-bit halves XORed (a 64-bit key
/// as it is), times a constant (Fibonacci hashing), so that keys differing in a few bits
/// still spread.
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
mod tests;
