//! Waiting items past the frontier's memory budget, on disk: a [`SpillFile`] (an
//! anonymous temporary file, emptied when no item waits in it), each item at a [`Place`]
//! the frontier keeps (61 bits of its key's entry in the visited map instead of the item).

use std::io;

use rip_core::spill::{Entry, SpillFile};

use super::Item;

/// Where a spilled item is, and what the frontier must know of it without reading it (a
/// target: the frontier counts them), in [`Place::BITS`] bits: its offset in the file
/// ([`AT_BITS`] bits) and its length ([`LEN_BITS`] bits). An item that would lie past the
/// file's first TiB, or whose JSON takes a MiB or more, has no place: it is not written, and
/// waits in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Place(u64);

/// Bits of a place's offset: the file's first TiB.
const AT_BITS: u32 = 40;
/// Bits of a place's length: under a MiB.
const LEN_BITS: u32 = 20;

impl Place {
    /// Bits a place takes: offset, length and the target bit.
    pub const BITS: u32 = AT_BITS + LEN_BITS + 1;

    /// The place of `len` bytes at `at`, if both fit.
    fn new(at: u64, len: usize, target: bool) -> Option<Self> {
        let len = u64::try_from(len).ok()?;
        if at >> AT_BITS != 0 || len >> LEN_BITS != 0 {
            return None;
        }
        Some(Self(
            at | len << AT_BITS | u64::from(target) << (AT_BITS + LEN_BITS),
        ))
    }

    fn at(self) -> u64 {
        self.0 & ((1 << AT_BITS) - 1)
    }

    fn len(self) -> usize {
        (self.0 >> AT_BITS) as usize & ((1 << LEN_BITS) - 1)
    }

    /// The item is a target.
    pub fn target(self) -> bool {
        self.0 >> (AT_BITS + LEN_BITS) & 1 == 1
    }

    /// The place as its [`Place::BITS`] low bits.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// The place of bits from [`Place::bits`] (bits above [`Place::BITS`] ignored).
    pub fn from_bits(bits: u64) -> Self {
        Self(bits & ((1 << Self::BITS) - 1))
    }
}

/// The frontier's spill file: items tagged with their `dispatch_order` (not in their JSON).
#[derive(Debug, Default)]
pub(super) struct Spill {
    file: SpillFile<Item>,
    /// Items written over the run (the frontier does not count an item written back).
    pub written: u64,
    /// Items that could not be read back.
    pub lost: u64,
}

impl Spill {
    /// Writes `item`; where it is, or `None` (nothing written) when it would have no
    /// [`Place`]: too long, or past the file's first TiB.
    pub fn write(&mut self, item: &Item) -> io::Result<Option<Place>> {
        let entry = Entry::new(item.dispatch_order, item)?;
        let Ok(len) = usize::try_from(entry.len()) else {
            return Ok(None);
        };
        let Some(place) = Place::new(self.file.end(), len, item.is_target) else {
            return Ok(None);
        };
        self.file.append(&entry)?;
        self.written += 1;
        Ok(Some(place))
    }

    /// The item at `place` (each place once); `None`, logged and counted in
    /// [`Spill::lost`], when it cannot be read back.
    pub fn take(&mut self, place: Place) -> Option<Item> {
        match self.file.read(place.at()) {
            Ok((order, mut item, next)) => {
                debug_assert_eq!(next - place.at(), place.len() as u64);
                item.dispatch_order = order;
                Some(item)
            }
            Err(e) => {
                tracing::error!("frontier: a waiting item is lost: {e}");
                self.lost += 1;
                None
            }
        }
    }
}

#[cfg(test)]
impl Spill {
    /// The file's length.
    pub fn len_for_tests(&self) -> u64 {
        self.file.end()
    }

    /// Empties the file under the items waiting in it: none can be read back.
    pub fn break_for_tests(&mut self) {
        self.file.break_for_tests();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::ItemKind;

    #[test]
    fn a_place_keeps_its_parts_up_to_its_bounds() {
        let (at_max, len_max) = ((1u64 << AT_BITS) - 1, (1usize << LEN_BITS) - 1);
        for (at, len, target) in [(0, 9, false), (at_max, len_max, true), (12345, 678, true)] {
            let place = Place::new(at, len, target).expect("fits");
            let back = Place::from_bits(place.bits() | 7 << Place::BITS);
            assert_eq!((back.at(), back.len(), back.target()), (at, len, target));
            assert!(place.bits() >> Place::BITS == 0, "{:#x}", place.bits());
        }
        assert_eq!(Place::new(at_max + 1, 9, false), None, "past the first TiB");
        assert_eq!(Place::new(0, len_max + 1, false), None, "a MiB long");
    }

    #[test]
    fn an_item_without_a_place_is_not_written() {
        let item = Item::new(rip_core::Ref::new("http://h/a"), 1, ItemKind::Page);
        let mut spill = Spill::default();
        let place = spill.write(&item).unwrap().expect("a place");
        let long = Item::new(
            rip_core::Ref::new("x".repeat(1 << LEN_BITS)),
            2,
            ItemKind::Page,
        );
        assert_eq!(spill.write(&long).unwrap(), None, "too long");
        assert_eq!(
            (spill.written, spill.file.waiting()),
            (1, 1),
            "nothing written"
        );
        assert_eq!(spill.len_for_tests(), place.len() as u64);
        assert_eq!(spill.take(place), Some(item));
    }
}
