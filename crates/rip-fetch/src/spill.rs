//! Refs queued past the memory budget, on disk: one anonymous temporary file (in `TMPDIR`,
//! deleted by the system when the process ends, however it ends), appended to as refs are
//! spilled and read back where each host's queue says.
//!
//! An entry is a 4-byte little-endian length, the ref's 8-byte sequence number, and the
//! ref as JSON. A host's queue keeps [`Run`]s, not offsets per ref: refs of one host that
//! follow each other in the file (grouped input, the case that needs spilling) are one run
//! of a few bytes in memory whatever their number. When every spilled ref has been read
//! back, the file is emptied, so it holds at most what is queued at once.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

use rip_core::Ref;

/// Bytes before the JSON of an entry: its length and sequence number.
const HEADER: u64 = 12;

/// Consecutive entries of one host in the spill file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    /// Where the next entry to read starts.
    next: u64,
    /// Where the run ends (the file's end when it was last extended).
    end: u64,
}

impl Run {
    /// True when every entry of the run has been read.
    pub(crate) fn is_empty(&self) -> bool {
        self.next >= self.end
    }
}

/// The spill file, created at the first spill.
#[derive(Debug, Default)]
pub(crate) struct Spill {
    file: Option<BufWriter<File>>,
    /// The file's length: where the next entry goes.
    len: u64,
    /// Entries written and not read back.
    held: u64,
    /// Entries written over the run.
    pub(crate) spilled: u64,
}

impl Spill {
    /// Appends `r`; extends `last` when it ends where the file does, else returns a new run
    /// (the caller pushes it).
    pub(crate) fn write(
        &mut self,
        seq: u64,
        r: &Ref,
        last: Option<&mut Run>,
    ) -> io::Result<Option<Run>> {
        let json = serde_json::to_vec(r).map_err(io::Error::other)?;
        let file = match &mut self.file {
            Some(f) => f,
            None => self
                .file
                .insert(BufWriter::with_capacity(1 << 16, tempfile::tempfile()?)),
        };
        let start = self.len;
        let len = u32::try_from(json.len()).map_err(io::Error::other)?;
        file.write_all(&len.to_le_bytes())?;
        file.write_all(&seq.to_le_bytes())?;
        file.write_all(&json)?;
        self.len += HEADER + json.len() as u64;
        self.held += 1;
        self.spilled += 1;
        match last {
            Some(run) if run.end == start => {
                run.end = self.len;
                Ok(None)
            }
            _ => Ok(Some(Run {
                next: start,
                end: self.len,
            })),
        }
    }

    /// Reads the next entry of `run` and moves the run past it.
    pub(crate) fn read(&mut self, run: &mut Run) -> io::Result<(u64, Ref)> {
        let Some(buffered) = &mut self.file else {
            return Err(io::Error::other("read from a spill file never written"));
        };
        buffered.flush()?;
        let file = buffered.get_ref();
        let mut header = [0u8; HEADER as usize];
        file.read_exact_at(&mut header, run.next)?;
        let len = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as u64;
        let seq = u64::from_le_bytes(header[4..].try_into().expect("8 bytes"));
        let mut json = vec![0u8; len as usize];
        file.read_exact_at(&mut json, run.next + HEADER)?;
        let r: Ref = serde_json::from_slice(&json).map_err(io::Error::other)?;
        run.next += HEADER + len;
        self.held -= 1;
        if self.held == 0 {
            self.empty()?;
        }
        Ok((seq, r))
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

    /// Entries on disk now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> u64 {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(url: &str) -> Ref {
        let mut r = Ref::new(url);
        r.attempt = 2;
        r.extra
            .insert("site".into(), serde_json::json!({"from": [1, 2]}));
        r
    }

    #[test]
    fn runs_read_back_in_order_and_adjacent_entries_share_a_run() {
        let mut spill = Spill::default();
        let mut a = spill.write(0, &r("http://a/0"), None).unwrap().unwrap();
        assert_eq!(
            spill.write(1, &r("http://a/1"), Some(&mut a)).unwrap(),
            None
        );
        let mut b = spill.write(2, &r("http://b/0"), None).unwrap().unwrap();
        // a's run no longer ends at the file's end: a new run.
        let mut a2 = spill
            .write(3, &r("http://a/2"), Some(&mut a))
            .unwrap()
            .unwrap();
        assert_eq!(spill.read(&mut a).unwrap().1.url, "http://a/0");
        assert_eq!(spill.read(&mut b).unwrap(), (2, r("http://b/0")));
        assert_eq!(spill.read(&mut a).unwrap().0, 1);
        assert!(a.is_empty() && b.is_empty());
        assert_eq!(spill.held(), 1);
        assert_eq!(spill.read(&mut a2).unwrap().1.url, "http://a/2");
        // All read: the file starts over.
        assert_eq!((spill.held(), spill.len, spill.spilled), (0, 0, 4));
        let mut c = spill.write(9, &r("http://c/"), None).unwrap().unwrap();
        assert_eq!(c.next, 0);
        assert_eq!(spill.read(&mut c).unwrap().0, 9);
    }
}
