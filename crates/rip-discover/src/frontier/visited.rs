//! [`Visited`]: every key the crawl has seen and, for a key whose item waits in the
//! [`Frontier`](super::Frontier), where it waits. One map for both, as every waiting key
//! of a crawl is also a visited one: 16 bytes a key (the key and a [`Mark`]) in a
//! [`rip_keystore::Store`].

use rip_keystore::Store;

use super::spill::Place;

/// Where the item of a key waits, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Waiting {
    /// Not waiting: never queued, taken, or lost (the spill file failed).
    No,
    /// In memory, at this index of the frontier's held items.
    Here(usize),
    /// On disk.
    Away(Place),
}

/// A key's entry, 64 bits: visited (the top bit), whether and where its item waits (the
/// next two bits: no, here, away) and the place (the 61 low bits: an index in memory or a
/// [`Place`] on disk). Zero, neither visited nor waiting, is what a key leaves behind when
/// its item is taken without the key being visited (a shared crawl's items from other
/// processes): the store cannot remove a key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Mark(u64);

const VISITED: u64 = 1 << 63;
/// Where the two bits saying where an item waits start.
const WHERE: u32 = 61;
const PLACE: u64 = (1 << WHERE) - 1;
const HERE: u64 = 1;
const AWAY: u64 = 2;
const _: () = assert!(Place::BITS <= WHERE, "a place fits a mark");

impl Mark {
    fn visited(self) -> bool {
        self.0 & VISITED != 0
    }

    fn waiting(self) -> Waiting {
        let place = self.0 & PLACE;
        match (self.0 >> WHERE) & 3 {
            HERE => Waiting::Here(place as usize),
            AWAY => Waiting::Away(Place::from_bits(place)),
            _ => Waiting::No,
        }
    }

    /// The same key, its item waiting as `waiting` says.
    fn with(self, waiting: Waiting) -> Self {
        let rest = match waiting {
            Waiting::No => 0,
            Waiting::Here(i) => {
                let i = i as u64;
                assert!(i <= PLACE, "2⁶¹ items in memory");
                HERE << WHERE | i
            }
            Waiting::Away(place) => AWAY << WHERE | place.bits(),
        };
        Self(self.0 & VISITED | rest)
    }
}

/// Every key ever enqueued (or seen as a redirect's target), in a map shared with the
/// frontier's index of waiting items (about 16 bytes a key; a million keys ~17-19 MB).
#[derive(Debug, Default)]
pub struct Visited {
    marks: Store<Mark, u64>,
    /// Keys visited (the map also holds keys waiting without being visited).
    len: usize,
}

impl Visited {
    /// Adds a key; true when it is new.
    pub fn insert(&mut self, key: u64) -> bool {
        let mut new = false;
        self.marks.update(key, |mark| {
            new = !mark.visited();
            mark.0 |= VISITED;
        });
        self.len += usize::from(new);
        new
    }

    /// True when the key was seen.
    pub fn contains(&self, key: u64) -> bool {
        self.marks.get(key).is_some_and(Mark::visited)
    }

    /// Keys seen.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing was seen.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Approximate heap bytes held (the map's, waiting places included).
    pub fn heap_bytes(&self) -> usize {
        self.marks.heap_bytes()
    }

    /// Where the item of `key` waits.
    pub(super) fn waiting(&self, key: u64) -> Waiting {
        self.marks.get(key).map_or(Waiting::No, Mark::waiting)
    }

    /// Says where the item of `key` waits (whether the key is visited stays as it is);
    /// where it waited before.
    pub(super) fn set_waiting(&mut self, key: u64, waiting: Waiting) -> Waiting {
        let mut before = Waiting::No;
        let set = |mark: &mut Mark| {
            before = mark.waiting();
            *mark = mark.with(waiting);
        };
        if waiting == Waiting::No {
            // A key not in the map is not waiting already: not added.
            self.marks.modify(key, set);
        } else {
            self.marks.update(key, set);
        }
        before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_keeps_visited_and_waiting_apart() {
        assert_eq!((size_of::<Mark>(), size_of::<([u8; 8], Mark)>()), (8, 16));
        let place = Place::from_bits(u64::MAX);
        for visited in [Mark(0), Mark(VISITED)] {
            for waiting in [Waiting::No, Waiting::Here(0), Waiting::Here(1 << 60)] {
                let mark = visited.with(Waiting::Away(place)).with(waiting);
                assert_eq!(
                    (mark.visited(), mark.waiting()),
                    (visited.visited(), waiting)
                );
            }
            let away = visited.with(Waiting::Here(5)).with(Waiting::Away(place));
            assert_eq!(away.waiting(), Waiting::Away(place));
            assert_eq!(away.visited(), visited.visited());
        }
        assert_eq!(Mark::default().waiting(), Waiting::No);
    }

    /// A key can wait without being visited (a shared crawl's item from another process),
    /// be visited while it waits, and stays visited once taken; a key taken unvisited is
    /// left neither.
    #[test]
    fn waiting_and_visited_keys_share_one_entry() {
        let mut v = Visited::default();
        assert!(v.insert(1));
        assert_eq!(v.set_waiting(1, Waiting::Here(3)), Waiting::No);
        assert_eq!(v.set_waiting(2, Waiting::Here(4)), Waiting::No);
        assert!(v.contains(1) && !v.contains(2));
        assert_eq!(
            (v.len(), v.waiting(1), v.waiting(2)),
            (1, Waiting::Here(3), Waiting::Here(4))
        );
        assert!(v.insert(2), "waiting, but new to the visited set");
        assert!(!v.insert(2) && v.contains(2));
        assert_eq!(v.waiting(2), Waiting::Here(4), "visiting keeps its place");
        assert_eq!(v.set_waiting(3, Waiting::Here(5)), Waiting::No);
        assert_eq!(v.set_waiting(3, Waiting::No), Waiting::Here(5));
        assert_eq!(v.set_waiting(1, Waiting::No), Waiting::Here(3));
        assert_eq!((v.waiting(1), v.waiting(3)), (Waiting::No, Waiting::No));
        assert!(v.contains(1) && !v.contains(3), "taken: visited as before");
        assert_eq!(v.set_waiting(9, Waiting::No), Waiting::No);
        assert_eq!((v.len(), v.marks.len()), (2, 3), "9 not added");
        assert!(v.insert(3), "a tombstone is not visited");
    }
}
