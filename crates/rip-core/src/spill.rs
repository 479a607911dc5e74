//! [`SpillFile`]: items queued past a memory budget, waiting on disk.
//!
//! A stage that queues work (rip-fetch's refs waiting for their host, rip-discover's
//! frontier) keeps what fits its budget in memory and appends the rest here: one anonymous
//! temporary file (in `TMPDIR`, unlinked as soon as it is made, so the system removes it
//! however the process ends), written through a buffer and read back where the caller
//! says, each entry once. When no entry waits any more the file is emptied, so it holds at
//! most what waits at once.
//!
//! An entry is a 4-byte little-endian length, a caller's 8-byte tag (a sequence number,
//! a dispatch order: what the item's JSON does not carry), and the item as JSON. The
//! caller keeps where each entry starts ([`SpillFile::write`] says); adjacent entries can
//! be read one after the other ([`SpillFile::read`] says where the next starts).
//!
//! Errors are `io::Error`s naming the spill file and what failed (creating it, writing,
//! reading an entry back), for the caller to report: a spill that cannot be written leaves
//! items in memory, one that cannot be read back is a lost item, counted by the caller.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Bytes before an entry's JSON: its length and tag.
pub const HEADER: u64 = 12;

/// The write buffer: entries reach the file in blocks of this size (or before a read).
const BUFFER: usize = 1 << 16;

/// An item encoded for a [`SpillFile`], not written yet: the caller can see its length
/// (and where it would go, [`SpillFile::end`]) before deciding to write it.
#[derive(Debug)]
pub struct Entry(Vec<u8>);

impl Entry {
    /// `item` as JSON after its header, with `tag`.
    pub fn new<T: Serialize>(tag: u64, item: &T) -> io::Result<Self> {
        let mut bytes = vec![0; HEADER as usize];
        serde_json::to_writer(&mut bytes, item).map_err(io::Error::other)?;
        let len = u32::try_from(bytes.len() as u64 - HEADER).map_err(|_| {
            io::Error::other(format!(
                "spill file: an item of {} bytes is too long for an entry",
                bytes.len()
            ))
        })?;
        bytes[..4].copy_from_slice(&len.to_le_bytes());
        bytes[4..HEADER as usize].copy_from_slice(&tag.to_le_bytes());
        Ok(Self(bytes))
    }

    /// The entry's bytes in the file, header included.
    pub fn len(&self) -> u64 {
        self.0.len() as u64
    }

    /// Never true: an entry holds at least its header.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Items of type `T` waiting on disk; the file is made at the first write.
#[derive(Debug)]
pub struct SpillFile<T> {
    /// Where the file is made (`None`: the system's temporary folder).
    dir: Option<PathBuf>,
    file: Option<BufWriter<File>>,
    /// The file's length: where the next entry goes.
    len: u64,
    /// Entries written and not read back.
    waiting: u64,
    /// Entries written over the run.
    written: u64,
    item: PhantomData<fn(T) -> T>,
}

impl<T> Default for SpillFile<T> {
    fn default() -> Self {
        Self {
            dir: None,
            file: None,
            len: 0,
            waiting: 0,
            written: 0,
            item: PhantomData,
        }
    }
}

impl<T: Serialize + DeserializeOwned> SpillFile<T> {
    /// A spill file in the system's temporary folder (`TMPDIR`).
    pub fn new() -> Self {
        Self::default()
    }

    /// A spill file in `dir`.
    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: Some(dir.into()),
            ..Self::default()
        }
    }

    /// Where the next entry goes.
    pub fn end(&self) -> u64 {
        self.len
    }

    /// Entries written and not read back.
    pub fn waiting(&self) -> u64 {
        self.waiting
    }

    /// Entries written over the run.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Appends `item` with `tag`; where its entry starts.
    pub fn write(&mut self, tag: u64, item: &T) -> io::Result<u64> {
        self.append(&Entry::new(tag, item)?)
    }

    /// Appends an entry made by [`Entry::new`]; where it starts.
    pub fn append(&mut self, entry: &Entry) -> io::Result<u64> {
        let file = match &mut self.file {
            Some(f) => f,
            None => {
                let made = match &self.dir {
                    Some(dir) => tempfile::tempfile_in(dir),
                    None => tempfile::tempfile(),
                };
                let file = made.map_err(|e| self.error(format!("cannot be made: {e}"), &e))?;
                self.file.insert(BufWriter::with_capacity(BUFFER, file))
            }
        };
        let at = self.len;
        if let Err(e) = file.write_all(&entry.0) {
            return Err(self.error(format!("cannot be written: {e}"), &e));
        }
        self.len += entry.len();
        self.waiting += 1;
        self.written += 1;
        Ok(at)
    }

    /// The entry starting at `at` (each entry once): its tag, its item, and where the
    /// entry after it starts. When it was the last one waiting, the file is emptied.
    pub fn read(&mut self, at: u64) -> io::Result<(u64, T, u64)> {
        let (tag, json) = self.read_bytes(at).map_err(|e| {
            self.error(
                format!("the entry at byte {at} cannot be read back: {e}"),
                &e,
            )
        })?;
        self.waiting = self.waiting.saturating_sub(1);
        if self.waiting == 0 {
            self.empty()
                .map_err(|e| self.error(format!("cannot be emptied: {e}"), &e))?;
        }
        let item = serde_json::from_slice(&json).map_err(|e| {
            io::Error::other(format!(
                "spill file: the entry at byte {at} is not what was written: {e}"
            ))
        })?;
        Ok((tag, item, at + HEADER + json.len() as u64))
    }

    fn read_bytes(&mut self, at: u64) -> io::Result<(u64, Vec<u8>)> {
        let Some(buffered) = &mut self.file else {
            return Err(io::Error::other("nothing was written"));
        };
        buffered.flush()?;
        let file = buffered.get_ref();
        let mut header = [0u8; HEADER as usize];
        file.read_exact_at(&mut header, at)?;
        let [l0, l1, l2, l3, tag @ ..] = header;
        let len = u64::from(u32::from_le_bytes([l0, l1, l2, l3]));
        if at + HEADER + len > self.len {
            return Err(io::Error::other(format!(
                "its length ({len} bytes) goes past the file's end (byte {})",
                self.len
            )));
        }
        let mut json = vec![0u8; len as usize];
        file.read_exact_at(&mut json, at + HEADER)?;
        Ok((u64::from_le_bytes(tag), json))
    }

    /// Nothing left to read: the file starts over, its blocks given back.
    fn empty(&mut self) -> io::Result<()> {
        if let Some(buffered) = &mut self.file {
            buffered.flush()?;
            let file = buffered.get_mut();
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
        }
        self.len = 0;
        Ok(())
    }

    /// `spill file (in <dir>): <what>`, of the kind of `source`.
    fn error(&self, what: String, source: &io::Error) -> io::Error {
        let dir = match &self.dir {
            Some(dir) => dir.clone(),
            None => std::env::temp_dir(),
        };
        io::Error::new(
            source.kind(),
            format!("spill file (in {}): {what}", dir.display()),
        )
    }

    /// Empties the file under the entries waiting in it, so that none can be read back:
    /// for the tests of what keeps a spill file (a disk that lost its data).
    #[doc(hidden)]
    pub fn break_for_tests(&mut self) {
        if let Some(buffered) = &mut self.file {
            buffered.flush().expect("flushed");
            buffered.get_ref().set_len(0).expect("truncated");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, serde::Deserialize)]
    struct Item {
        url: String,
        pad: String,
    }

    fn item(i: usize) -> Item {
        Item {
            url: format!("http://h/{i}"),
            pad: "p".repeat(1000),
        }
    }

    /// Entries read back in any order with their tags; adjacent ones one after the other;
    /// the file emptied once none waits, and written from its start again.
    #[test]
    fn entries_come_back_with_their_tags_and_the_file_is_emptied() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = SpillFile::in_dir(dir.path());
        let a = spill.write(7, &item(0)).unwrap();
        let b = spill.write(8, &item(1)).unwrap();
        let c = spill.write(9, &item(2)).unwrap();
        assert_eq!(a, 0);
        let (tag, it, next) = spill.read(b).unwrap();
        assert_eq!((tag, it, next), (8, item(1), c));
        assert_eq!(spill.read(a).unwrap().0, 7);
        assert_eq!((spill.waiting(), spill.end()), (1, c + (c - b)));
        assert_eq!(spill.read(c).unwrap().1, item(2));
        assert_eq!((spill.waiting(), spill.end(), spill.written()), (0, 0, 3));
        assert_eq!(spill.write(1, &item(3)).unwrap(), 0);
        assert_eq!(spill.read(0).unwrap(), (1, item(3), spill_len(&item(3))));
    }

    fn spill_len(item: &Item) -> u64 {
        Entry::new(0, item).unwrap().len()
    }

    /// What is written is on disk, not in memory (the file holds every byte, beyond the
    /// write buffer), and the file has no name: nothing is left in its folder.
    #[test]
    fn items_wait_on_disk_in_a_file_without_a_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = SpillFile::in_dir(dir.path());
        let mut starts = Vec::new();
        for i in 0..20_000 {
            starts.push(spill.write(i as u64, &item(i)).unwrap());
        }
        let on_disk = spill
            .file
            .as_ref()
            .unwrap()
            .get_ref()
            .metadata()
            .unwrap()
            .len();
        assert!(
            on_disk + BUFFER as u64 >= spill.end(),
            "{on_disk} bytes on disk"
        );
        assert!(spill.end() > 20_000_000, "{} bytes", spill.end());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "the spill file has no name: {names:?}");
        for (i, at) in starts.into_iter().enumerate().rev() {
            assert_eq!(spill.read(at).unwrap().1, item(i));
        }
        assert_eq!(spill.end(), 0);
    }

    /// A spill that cannot be made, and entries that cannot be read back: errors naming
    /// the spill file and what failed, never a panic.
    #[test]
    fn disk_errors_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let mut spill = SpillFile::<Item>::in_dir(&gone);
        let err = spill.write(0, &item(0)).unwrap_err().to_string();
        assert!(err.starts_with("spill file (in "), "{err}");
        assert!(err.contains("gone): cannot be made: "), "{err}");

        let mut spill = SpillFile::in_dir(dir.path());
        let at = spill.write(0, &item(0)).unwrap();
        spill.write(1, &item(1)).unwrap();
        spill.break_for_tests();
        let err = spill.read(at).unwrap_err().to_string();
        assert!(
            err.contains("the entry at byte 0 cannot be read back"),
            "{err}"
        );
        assert_eq!(spill.waiting(), 2, "still waiting, not read");
        let err = spill.read(12345).unwrap_err().to_string();
        assert!(err.contains("cannot be read back"), "{err}");
    }

    /// A length that says more than the file holds is an error, not a huge allocation.
    #[test]
    fn a_bad_length_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut spill = SpillFile::in_dir(dir.path());
        spill.write(0, &item(0)).unwrap();
        let file = spill.file.as_mut().unwrap();
        file.flush().unwrap();
        file.get_ref()
            .write_all_at(&u32::MAX.to_le_bytes(), 0)
            .unwrap();
        let err = spill.read(0).unwrap_err().to_string();
        assert!(err.contains("goes past the file's end"), "{err}");
    }
}
