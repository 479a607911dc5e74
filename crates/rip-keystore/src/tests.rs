use super::*;

fn key(i: u64) -> u128 {
    xxhash_rust::xxh3::xxh3_128(&i.to_le_bytes())
}

/// Against a plain map, across several merges: every key found with its last value,
/// new keys said to be new, absent keys absent.
#[test]
fn holds_what_a_map_holds_across_merges() {
    let mut store = Store::default();
    let mut map = HashMap::new();
    let n = 5 * MIN_RECENT as u64;
    for i in 0..n {
        for k in [key(i), key(i / 3)] {
            let new = store.update(k, |b: &mut u8| *b = b.wrapping_add(1));
            let v = map.entry(k).or_insert(0u8);
            assert_eq!(new, *v == 0, "key {i}");
            *v = v.wrapping_add(1);
        }
    }
    assert!(!store.sorted.is_empty(), "merged at least once");
    assert_holds(&store, map);
    assert_eq!(store.get(key(n + 1)), None);
}

/// `store` holds what `map` holds: each key with its value, in a sorted array and a map of
/// new keys.
fn assert_holds<V, K>(store: &Store<V, K>, map: HashMap<K, V>)
where
    V: Copy + Ord + Debug,
    K: Key + Ord + Hash + Debug,
{
    assert_eq!(store.len(), map.len());
    for (&k, &v) in &map {
        assert_eq!(store.get(k), Some(v), "key {k:?}");
    }
    let mut all: Vec<(K, V)> = store.iter().collect();
    all.sort_unstable();
    let mut want: Vec<(K, V)> = map.into_iter().collect();
    want.sort_unstable();
    assert_eq!(all, want);
    assert!(store.sorted.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn keys_alike_in_their_top_bits_are_told_apart() {
    let mut store = Store::default();
    let n = 3 * MIN_RECENT as u128;
    for i in 0..n {
        store.update(i, |b: &mut u8| *b = (i % 251) as u8);
        store.update(u128::MAX - i, |b| *b = 7);
    }
    for i in (0..n).step_by(97) {
        assert_eq!(store.get(i), Some((i % 251) as u8));
        assert_eq!(store.get(u128::MAX - i), Some(7));
    }
    assert_eq!(store.get(n), None);
}

/// Wider values: `insert` overwrites and says whether the key was new, `modify` changes
/// only keys that are there, in the map of new keys and in the sorted array alike.
#[test]
fn insert_and_modify_wide_values_in_both_halves() {
    let mut store: Store<[u8; 18]> = Store::default();
    let n = 2 * MIN_RECENT as u64 + 1000;
    for i in 0..n {
        assert!(store.insert(key(i), [(i % 200) as u8; 18]));
    }
    assert!(!store.sorted.is_empty() && !store.recent.is_empty());
    for i in (0..n).step_by(13) {
        assert!(!store.insert(key(i), [1; 18]), "{i} is not new");
        assert!(store.modify(key(i), |v| v[17] = 9));
        assert_eq!(store.get(key(i)).map(|v| (v[0], v[17])), Some((1, 9)));
    }
    assert!(!store.modify(key(n), |v| v[0] = 1));
    assert_eq!(store.get(key(n)), None);
    assert_eq!(store.len(), n as usize);
}

/// The point of the store: an entry costs little more than its key and value. A million
/// keys with a u64 each, 24 bytes of entry, take under 30 bytes a key in the array, the
/// directory and the map of new keys together.
#[test]
fn a_million_keys_take_about_their_own_size() {
    let mut store: Store<u64> = Store::default();
    for i in 0..1_000_000u64 {
        store.insert(key(i), i);
    }
    let bytes = store.sorted.capacity() * size_of::<([u8; 16], u64)>()
        + store.slots.capacity() * 4
        + store.recent.capacity() * (size_of::<([u8; 16], u64)>() + 1);
    assert!(bytes < 30_000_000, "{bytes} bytes");
    assert_eq!(store.heap_bytes(), bytes);
    assert_eq!(store.get(key(765_432)), Some(765_432));
}

fn key64(i: u64) -> u64 {
    xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes())
}

/// 64-bit keys, against a plain map across several merges, and keys that share their top
/// bits (the directory's) with many others.
#[test]
fn sixty_four_bit_keys_hold_what_a_map_holds() {
    let mut store: Store<u32, u64> = Store::default();
    let mut map = HashMap::new();
    let n = 3 * MIN_RECENT as u64;
    for i in 0..n {
        for k in [key64(i), key64(i / 3), i, u64::MAX - i] {
            let new = store.update(k, |v| *v += 1);
            let v = map.entry(k).or_insert(0u32);
            assert_eq!(new, *v == 0, "key {k:#x}");
            *v += 1;
        }
    }
    assert!(!store.sorted.is_empty() && store.bits > 10, "merged");
    assert_holds(&store, map);
    assert_eq!(store.get(key64(n + 1)), None);
    assert_eq!(store.get(u64::MAX - n), None);
    assert!(!store.modify(n, |v| *v = 0));
}

/// A 64-bit key and a u64 value: 16 bytes an entry, no padding, and a million of them in
/// under 20 bytes a key all told.
#[test]
fn a_million_sixty_four_bit_keys_take_about_their_own_size() {
    assert_eq!(size_of::<(<u64 as Key>::Bytes, u64)>(), 16);
    let mut store: Store<u64, u64> = Store::default();
    for i in 0..1_000_000u64 {
        store.insert(key64(i), i);
    }
    let bytes = store.heap_bytes();
    assert!(bytes < 20_000_000, "{bytes} bytes");
    assert_eq!(store.get(key64(765_432)), Some(765_432));
}
