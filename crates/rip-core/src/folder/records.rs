//! [`RecordFiles`]: the record files of a folder in the order they lie on the disk, in
//! little memory however many there are.
//!
//! **Order.** The files are walked by inode number (names breaking ties), which the
//! listing gives without a `stat`. ext4 and xfs keep inodes in tables in that order and
//! place a file's data near its inode, in the order the files were written, so the walk
//! reads the disk forwards. In name order (or the directory's own, by hash), each file
//! is somewhere else on the disk: on ext4 reading an inode reads the 32 inode-table blocks
//! around it (`inode_readahead_blks`), so a folder whose blocks are no longer cached reads
//! several times more from the disk a file, and is read an order of magnitude slower, by
//! name than by inode (`docs/benchmarks-log.md`, figures moved from module docs). Readers
//! whose output must not depend on the order (it differs between two copies of a folder)
//! sort what they report.
//!
//! **Memory.** A folder of a million record files has a million names (~50 bytes each);
//! as paths in a vector they would take ~130 MB. Here the names are gathered in runs of up to
//! [`RUN_BYTES`] bytes; a folder whose names fit in one run keeps them in memory, sorted.
//! Otherwise each run is sorted and written to an anonymous temporary file (in `$TMPDIR`,
//! gone when the process ends), and every walk over the files merges the runs as it reads
//! them (32 KiB of buffer a run: ~0.6 MiB a million files).

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

/// The record files of a folder, by inode number (see the module docs).
#[derive(Debug)]
pub struct RecordFiles {
    dir: PathBuf,
    /// Bytes of names gathered before a run is written ([`RUN_BYTES`]).
    run_bytes: usize,
    /// The names of the run being gathered (all of them when nothing was written), each
    /// relative to `dir` (`a.json`, or `3f/a.json` in a shard).
    names: Vec<u8>,
    /// The inode number and `(start, end)` in `names` of each file.
    ranges: Vec<Listed>,
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

    /// Adds a file by its inode number and its path relative to the folder.
    pub(super) fn push(&mut self, ino: u64, name: &[u8]) -> io::Result<()> {
        let start = self.names.len() as u32;
        self.names.extend_from_slice(name);
        self.ranges.push(Listed {
            ino,
            start,
            end: self.names.len() as u32,
        });
        self.len += 1;
        if self.names.len() >= self.run_bytes {
            self.write_run()?;
        }
        Ok(())
    }

    /// Sorts what is gathered; when runs were written, writes it as the last one.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        if self.runs.is_empty() {
            sort(&mut self.ranges, &self.names);
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

    /// The files' paths, by inode number. Reading the names back can fail (an I/O error on
    /// the temporary file, [`FolderError::Spill`]), once: the walk ends there.
    pub fn iter(&self) -> impl Iterator<Item = Result<PathBuf, FolderError>> + '_ {
        let merged = (!self.runs.is_empty()).then(|| Merge::new(self));
        let in_memory = self
            .ranges
            .iter()
            .filter(move |_| self.runs.is_empty())
            .map(|l| Ok(self.path(l.name(&self.names))));
        let spill = |source| FolderError::Spill {
            path: self.dir.clone(),
            source,
        };
        in_memory.chain(merged.into_iter().flatten().map(move |r| r.map_err(spill)))
    }

    fn path(&self, name: &[u8]) -> PathBuf {
        self.dir.join(OsStr::from_bytes(name))
    }

    /// Sorts the gathered names and appends them to the file as one run: each file as its
    /// inode number (8 bytes), its name's length (2 bytes, both little-endian) and the
    /// name's bytes (a shard's two digits, `/` and a file name of at most 255).
    fn write_run(&mut self) -> io::Result<()> {
        let names = std::mem::take(&mut self.names);
        sort(&mut self.ranges, &names);
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        let start = self.runs.last().map_or(0, |r| r.1);
        let mut out = io::BufWriter::new(&*file);
        let mut end = start;
        for l in self.ranges.drain(..) {
            let n = l.name(&names);
            let len = u16::try_from(n.len()).map_err(|_| io::Error::other("file name too long"))?;
            out.write_all(&l.ino.to_le_bytes())?;
            out.write_all(&len.to_le_bytes())?;
            out.write_all(n)?;
            end += 10 + n.len() as u64;
        }
        out.flush()?;
        self.runs.push((start, end));
        self.names = names;
        self.names.clear();
        Ok(())
    }
}

/// A file gathered in a run: its inode number and where its name is.
#[derive(Debug, Clone, Copy)]
struct Listed {
    ino: u64,
    start: u32,
    end: u32,
}

impl Listed {
    fn name<'n>(&self, names: &'n [u8]) -> &'n [u8] {
        &names[self.start as usize..self.end as usize]
    }
}

/// Sorts `files` by inode number, then name.
fn sort(files: &mut [Listed], names: &[u8]) {
    files.sort_unstable_by(|a, b| (a.ino, a.name(names)).cmp(&(b.ino, b.name(names))));
}

/// A walk merging the written runs.
struct Merge<'f> {
    list: &'f RecordFiles,
    readers: Vec<BufReader<Run<'f>>>,
    /// The next file (inode number, name) of each run not yet ended, smallest first.
    heads: BinaryHeap<Reverse<(u64, Vec<u8>, usize)>>,
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
        let mut ino = [0; 8];
        r.read_exact(&mut ino)?;
        let mut len = [0; 2];
        r.read_exact(&mut len)?;
        let mut name = vec![0; usize::from(u16::from_le_bytes(len))];
        r.read_exact(&mut name)?;
        self.heads.push(Reverse((u64::from_le_bytes(ino), name, i)));
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
        let Reverse((_, name, i)) = self.heads.pop()?;
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

    /// Files pushed in any order come out by inode number, then name (hard links share an
    /// inode), as paths in the folder (shards' too), whether they fit in one run (memory)
    /// or were written in many (merged from the file).
    #[test]
    fn files_come_out_by_inode_from_memory_and_from_runs() {
        let files: Vec<(u64, String)> = (0..2000u64)
            .map(|i| {
                let shard = if i % 3 == 0 { "3f/" } else { "" };
                let name = ["b", "a", "c", "ab"][(i * 7 % 4) as usize];
                (i * 7919 % 1500, format!("{shard}{name}-{i}.json"))
            })
            .collect();
        let mut sorted = files.clone();
        sorted.sort();
        let want: Vec<PathBuf> = sorted
            .iter()
            .map(|(_, n)| Path::new("/d").join(n))
            .collect();
        assert_ne!(
            want.windows(2).filter(|w| w[0] > w[1]).count(),
            0,
            "inode order is not name order here"
        );
        for run_bytes in [RUN_BYTES, 100, 1] {
            let mut list = RecordFiles::new(Path::new("/d"));
            list.run_bytes = run_bytes;
            for (ino, n) in &files {
                list.push(*ino, n.as_bytes()).unwrap();
            }
            list.finish().unwrap();
            assert_eq!(list.len(), files.len());
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
        for (ino, n) in [(4, "c.json"), (1, "a.json"), (2, "b.json"), (3, "d.json")] {
            list.push(ino, n.as_bytes()).unwrap();
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
