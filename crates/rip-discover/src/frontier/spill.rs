//! Waiting items past the frontier's memory budget, on disk: one anonymous temporary file
//! (in `TMPDIR`, removed by the system however the process ends), each item as JSON at a
//! [`Place`] the frontier keeps (its slot: 24 bytes in memory instead of the item). Emptied when no
//! item waits in it any more, so it holds at most what waits at once.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use super::Item;

/// Where a spilled item is, and what the frontier must know of it without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Place {
    at: u64,
    len: u32,
    /// The item is a target (the frontier counts them).
    pub target: bool,
}

/// Bytes before an item's JSON in the file: its `dispatch_order` (not in its JSON).
const ORDER: usize = 8;

/// The spill file, created at the first spill.
#[derive(Debug, Default)]
pub(super) struct Spill {
    file: Option<File>,
    len: u64,
    /// Items in the file not read back.
    waiting: u64,
    /// Items written over the run.
    pub written: u64,
    /// Items that could not be read back.
    pub lost: u64,
}

impl Spill {
    /// Writes `item`; where it is.
    pub fn write(&mut self, item: &Item) -> io::Result<Place> {
        let mut json = item.dispatch_order.to_le_bytes().to_vec();
        serde_json::to_writer(&mut json, item).map_err(io::Error::other)?;
        let len = u32::try_from(json.len()).map_err(io::Error::other)?;
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        file.write_all_at(&json, self.len)?;
        let place = Place {
            at: self.len,
            len,
            target: item.is_target,
        };
        self.len += u64::from(len);
        self.waiting += 1;
        self.written += 1;
        Ok(place)
    }

    /// The item at `place` (each place once); `None`, logged and counted in
    /// [`Spill::lost`], when it cannot be read back.
    pub fn take(&mut self, place: Place) -> Option<Item> {
        match self.read(place) {
            Ok(item) => Some(item),
            Err(e) => {
                tracing::error!("frontier spill file: an item cannot be read back: {e}");
                self.lost += 1;
                None
            }
        }
    }

    fn read(&mut self, place: Place) -> io::Result<Item> {
        let file = self
            .file
            .as_ref()
            .ok_or_else(|| io::Error::other("no spill file"))?;
        let mut json = vec![0; place.len as usize];
        file.read_exact_at(&mut json, place.at)?;
        self.waiting = self.waiting.saturating_sub(1);
        if self.waiting == 0 {
            file.set_len(0)?;
            self.len = 0;
        }
        let (order, json) = json.split_at(ORDER);
        let mut item: Item = serde_json::from_slice(json).map_err(io::Error::other)?;
        item.dispatch_order = u64::from_le_bytes(order.try_into().map_err(io::Error::other)?);
        Ok(item)
    }
}

#[cfg(test)]
impl Spill {
    /// The file's length.
    pub fn len_for_tests(&self) -> u64 {
        self.len
    }
}
