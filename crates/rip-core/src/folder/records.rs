//! [`RecordFiles`]: the record files of a folder in name order, in little memory however
//! many there are.
//!
//! A folder of a million record files has a million names (~50 bytes each); as paths in a
//! vector they took ~130 MB. Here the names are gathered in runs of up to [`RUN_BYTES`]
//! bytes; a folder whose names fit in one run keeps them in memory, sorted. Otherwise each
//! run is sorted and written to an anonymous temporary file (in `$TMPDIR`, gone when the
//! process ends), and every walk over the files merges the runs as it reads them (32 KiB
//! of buffer a run: ~0.6 MiB a million files).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::FolderError;

/// The most bytes of names held in memory at once while listing.
pub const RUN_BYTES: usize = 4 << 20;

/// The record files of a folder, sorted by name (see the module docs).
#[derive(Debug)]
pub struct RecordFiles {
    dir: PathBuf,
    /// Bytes of names gathered before a run is written ([`RUN_BYTES`]).
    run_bytes: usize,
    /// The names of the run being gathered (all of them when nothing was written).
    names: Vec<u8>,
    /// `(start, end)` of each name in `names`.
    ranges: Vec<(u32, u32)>,
    /// The runs written so far: `(start, end)` byte offsets in `file`.
    runs: Vec<(u64, u64)>,
    file: Option<File>,
    len: usize,
}

impl Default for RecordFiles {
    fn default() -> Self {
        Self::new(Path::new(""))
    }
}

impl RecordFiles {
    /// An empty list of files in `dir`.
    pub(super) fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_owned(),
            run_bytes: RUN_BYTES,
            names: Vec::new(),
            ranges: Vec::new(),
            runs: Vec::new(),
            file: None,
            len: 0,
        }
    }

    /// Adds a file by its name.
    pub(super) fn push(&mut self, name: &OsStr) -> io::Result<()> {
        let start = self.names.len();
        self.names.extend_from_slice(name.as_bytes());
        self.ranges.push((start as u32, self.names.len() as u32));
        self.len += 1;
        if self.names.len() >= self.run_bytes {
            self.write_run()?;
        }
        Ok(())
    }

    /// Sorts what is gathered; when runs were written, writes it as the last one.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        if self.runs.is_empty() {
            let names = &self.names;
            let name = |&(s, e): &(u32, u32)| &names[s as usize..e as usize];
            self.ranges.sort_unstable_by(|a, b| name(a).cmp(name(b)));
            Ok(())
        } else {
            self.write_run()
        }
    }

    /// The number of files.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there is no file.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The files' paths, in name order. Reading the names back can fail (an I/O error on
    /// the temporary file, [`FolderError::Spill`]), once: the walk ends there.
    pub fn iter(&self) -> impl Iterator<Item = Result<PathBuf, FolderError>> + '_ {
        let merged = (!self.runs.is_empty()).then(|| Merge::new(self));
        let in_memory = self
            .ranges
            .iter()
            .filter(move |_| self.runs.is_empty())
            .map(|&(s, e)| Ok(self.path(&self.names[s as usize..e as usize])));
        let spill = |source| FolderError::Spill {
            path: self.dir.clone(),
            source,
        };
        in_memory.chain(merged.into_iter().flatten().map(move |r| r.map_err(spill)))
    }

    fn path(&self, name: &[u8]) -> PathBuf {
        self.dir.join(OsStr::from_bytes(name))
    }

    /// Sorts the gathered names and appends them to the file as one run: each name as
    /// its length (2 bytes, little-endian) and its bytes (a file name has at most 255).
    fn write_run(&mut self) -> io::Result<()> {
        let names = std::mem::take(&mut self.names);
        let name = |&(s, e): &(u32, u32)| &names[s as usize..e as usize];
        self.ranges.sort_unstable_by(|a, b| name(a).cmp(name(b)));
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        let start = self.runs.last().map_or(0, |r| r.1);
        let mut out = io::BufWriter::new(&*file);
        let mut end = start;
        for r in self.ranges.drain(..) {
            let n = name(&r);
            let len = u16::try_from(n.len()).map_err(|_| io::Error::other("file name too long"))?;
            out.write_all(&len.to_le_bytes())?;
            out.write_all(n)?;
            end += 2 + n.len() as u64;
        }
        out.flush()?;
        self.runs.push((start, end));
        self.names = names;
        self.names.clear();
        Ok(())
    }
}

/// A walk merging the written runs.
struct Merge<'f> {
    list: &'f RecordFiles,
    readers: Vec<BufReader<Run<'f>>>,
    /// The next name of each run not yet ended, smallest first.
    heads: BinaryHeap<Reverse<(Vec<u8>, usize)>>,
    /// A failed read, given by the next call; the walk ends after it.
    error: Option<io::Error>,
}

impl<'f> Merge<'f> {
    fn new(list: &'f RecordFiles) -> Self {
        let mut merge = Self {
            list,
            readers: Vec::new(),
            heads: BinaryHeap::new(),
            error: None,
        };
        if let Some(file) = &list.file {
            for &(at, end) in &list.runs {
                let run = Run { file, at, end };
                merge.readers.push(BufReader::with_capacity(32 * 1024, run));
            }
        }
        for i in 0..merge.readers.len() {
            if let Err(e) = merge.advance(i) {
                merge.error.get_or_insert(e);
            }
        }
        merge
    }

    /// Puts the next name of run `i`, if any, among the heads.
    fn advance(&mut self, i: usize) -> io::Result<()> {
        let r = &mut self.readers[i];
        if r.fill_buf()?.is_empty() {
            return Ok(());
        }
        let mut len = [0; 2];
        r.read_exact(&mut len)?;
        let mut name = vec![0; usize::from(u16::from_le_bytes(len))];
        r.read_exact(&mut name)?;
        self.heads.push(Reverse((name, i)));
        Ok(())
    }
}

impl Iterator for Merge<'_> {
    type Item = io::Result<PathBuf>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(e) = self.error.take() {
            self.heads.clear();
            return Some(Err(e));
        }
        let Reverse((name, i)) = self.heads.pop()?;
        if let Err(e) = self.advance(i) {
            self.error = Some(e);
        }
        Some(Ok(self.list.path(&name)))
    }
}

/// The bytes `at..end` of a file, read without moving its cursor.
struct Run<'f> {
    file: &'f File,
    at: u64,
    end: u64,
}

impl Read for Run<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min((self.end - self.at) as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..want], self.at)?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.at += n as u64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(list: &RecordFiles) -> Vec<PathBuf> {
        list.iter().map(Result::unwrap).collect()
    }

    /// Names pushed in any order come out sorted, as paths in the folder, whether they fit
    /// in one run (memory) or were written in many (merged from the file).
    #[test]
    fn names_come_out_sorted_from_memory_and_from_runs() {
        let names: Vec<String> = (0..2000u32)
            .map(|i| format!("{}-{i}.json", ["b", "a", "c", "ab"][(i * 7 % 4) as usize]))
            .collect();
        let mut want: Vec<PathBuf> = names.iter().map(|n| Path::new("/d").join(n)).collect();
        want.sort();
        for run_bytes in [RUN_BYTES, 100, 1] {
            let mut list = RecordFiles::new(Path::new("/d"));
            list.run_bytes = run_bytes;
            for n in &names {
                list.push(OsStr::new(n)).unwrap();
            }
            list.finish().unwrap();
            assert_eq!(list.len(), names.len());
            assert_eq!(list.runs.is_empty(), run_bytes == RUN_BYTES);
            assert_eq!(walk(&list), want, "runs of {run_bytes} bytes");
            assert_eq!(walk(&list), want, "a second walk");
        }
        let mut empty = RecordFiles::new(Path::new("/d"));
        empty.finish().unwrap();
        assert!(empty.is_empty() && walk(&empty).is_empty());
    }

    /// A run cut short in the file ends the walk with an error, not a wrong name.
    #[test]
    fn a_run_that_cannot_be_read_back_is_an_error() {
        let mut list = RecordFiles::new(Path::new("/d"));
        list.run_bytes = 10;
        for n in ["c.json", "a.json", "b.json", "d.json"] {
            list.push(OsStr::new(n)).unwrap();
        }
        list.finish().unwrap();
        list.file.as_ref().unwrap().set_len(3).unwrap();
        let walked: Vec<Result<PathBuf, FolderError>> = list.iter().collect();
        let err = walked.last().unwrap().as_ref().unwrap_err().to_string();
        assert!(
            err.starts_with("cannot list /d: the temporary file of its file names failed"),
            "{err}"
        );
        assert!(walked.len() <= 4);
    }
}
