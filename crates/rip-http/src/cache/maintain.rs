//! Keeping a cache folder over time: what it holds ([`DiskCache::stats`]), whether every
//! entry still reads ([`DiskCache::verify`]), and reclaiming the space of replaced,
//! corrupt or old entries ([`DiskCache::compact`]). `rip-cache` is their command line.
//!
//! All three are safe while other processes read and write the cache (see `pack.rs` for
//! the locks), and a compaction is safe to interrupt at any point, SIGKILL included:
//!
//! 1. It copies the live entries (the last line of each key), checked, to a new pack
//!    (`c-<pid>-<random>.pack`) and writes their lines to `index.compact`. The cache in
//!    use is not touched: killed here, it leaves two files that the next compaction
//!    removes. When every byte of the folder is a live entry that read back (one index
//!    line per entry, packs holding nothing else), the copy is removed and the folder
//!    left as it was: a rewrite would reclaim nothing.
//! 2. It takes the index's exclusive lock (waiting for writers half-way through an
//!    append), copies the lines appended since step 1 as they are (their entries stay in
//!    their packs), syncs, and renames `index.compact` over `index`: one atomic step from
//!    the old index to the new one. Readers and writers notice the old index unlinked and
//!    move to the new one.
//! 3. Still holding the lock, it removes the packs that the new index does not name.
//!    Killed before that, the old packs stay as unnamed garbage (`stats` counts them as
//!    `unreferencedPacks`), and the next compaction removes them.
//!
//! Only one compaction runs on a folder at a time (`compact.lock`); a verify shares that
//! lock, so the packs it reads are not removed under it. Entries of the previous layout
//! (`v1/`) are read by the cache but not touched here.

mod compact;
mod names;
mod snapshot;
mod verify;

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use super::DiskCache;
use super::pack::Loc;
use snapshot::Snapshot;

/// At most this many problems are named in a report (all are counted).
const MAX_NAMED_PROBLEMS: usize = 1000;

/// What a cache folder holds, read from its index and its packs' sizes (no entry is read).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheStats {
    /// The entries folder (`<cache dir>/v2`).
    pub dir: PathBuf,
    /// Entries (URLs) the index names.
    pub entries: u64,
    /// Index lines (each replaced entry left one more).
    pub index_lines: u64,
    /// Index lines that failed their check (torn or altered): skipped by readers.
    pub bad_index_lines: u64,
    /// The index's size in bytes.
    pub index_bytes: u64,
    /// Pack files in the folder.
    pub packs: u64,
    /// Their size in bytes.
    pub pack_bytes: u64,
    /// Bytes of the live entries.
    pub live_bytes: u64,
    /// Pack bytes that are not live entries (replaced entries, garbage of an interrupted
    /// compaction, or entries being written right now): what `compact` would reclaim.
    pub reclaimable_bytes: u64,
    /// Packs the index does not name (an interrupted compaction, or a writer that has not
    /// finished its first entry).
    pub unreferenced_packs: u64,
    /// Packs the index names that are not there: their entries are lost (misses).
    pub missing_packs: u64,
    /// Entries in a missing pack.
    pub entries_in_missing_packs: u64,
}

/// An entry that does not read back, or a pack that is not there.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryProblem {
    /// Where: `<pack>@<offset>`.
    pub place: String,
    /// The entry's URL, when its metadata says it (or, damaged, starts with it), or an
    /// earlier entry of its key in the index does; checked against the index's key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// What is wrong.
    pub why: String,
}

/// What a verify found.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    /// The entries folder.
    pub dir: PathBuf,
    /// Entries checked (every entry the index names).
    pub entries: u64,
    /// Entries that read back whole: metadata, their URL's key, body length and hash.
    pub ok: u64,
    /// Entries that do not (a lookup treats them as misses).
    pub corrupt: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Index lines that failed their check.
    pub bad_index_lines: u64,
    /// The first problems, named.
    pub problems: Vec<EntryProblem>,
}

impl VerifyReport {
    /// True when every entry reads back and every index line is whole.
    pub fn is_clean(&self) -> bool {
        self.corrupt == 0 && self.bad_index_lines == 0
    }
}

/// A step of a compaction, for fault tests that stop it there ([`CompactOptions::at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactPhase {
    /// Half of the live entries are copied to the new pack.
    Copying,
    /// The index's exclusive lock is held; the new index is not yet in place.
    Locked,
    /// The new index is in place; the old packs are not yet removed.
    Renamed,
}

/// What a compaction keeps.
#[derive(Default)]
pub struct CompactOptions<'a> {
    /// Drop entries stored (or last revalidated) longer ago than this (`prune`).
    pub older_than: Option<Duration>,
    /// Called at each [`CompactPhase`] (fault tests pause there to kill the process).
    pub at: Option<&'a dyn Fn(CompactPhase)>,
}

/// What a compaction did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactReport {
    /// The entries folder.
    pub dir: PathBuf,
    /// Entries the index named when the compaction started.
    pub entries_before: u64,
    /// Entries copied to the new pack.
    pub kept: u64,
    /// Entries dropped for being older than `--older-than`.
    pub dropped_old: u64,
    /// Entries dropped because they do not read back (named in `problems`).
    pub dropped_corrupt: u64,
    /// Index lines other processes appended while the compaction ran, kept as they are.
    pub appended_meanwhile: u64,
    /// Pack files removed.
    pub packs_removed: u64,
    /// Bytes of packs and index before.
    pub bytes_before: u64,
    /// Bytes of packs and index after.
    pub bytes_after: u64,
    /// The first problems, named.
    pub problems: Vec<EntryProblem>,
}

/// Why a maintenance command could not run.
#[derive(Debug, thiserror::Error)]
pub enum MaintainError {
    /// Another compaction (or, for a compaction, a verify) holds the folder.
    #[error("{}: another rip-cache compact or verify is running on this folder", .0.display())]
    Busy(PathBuf),
    /// Reading or writing the folder failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

impl DiskCache {
    /// What the cache holds (no entry is read; no lock is taken).
    pub fn stats(&self) -> Result<CacheStats, MaintainError> {
        let dir = self.packs.dir();
        let snap = Snapshot::of_folder(dir)?;
        snap.stats(dir)
    }

    /// Reads every entry the index names and checks it. A cache with no entries folder
    /// has nothing to check (and none is made).
    pub fn verify(&self) -> Result<VerifyReport, MaintainError> {
        let dir = self.packs.dir();
        if !dir.is_dir() {
            return Ok(VerifyReport {
                dir: dir.to_owned(),
                ..VerifyReport::default()
            });
        }
        let _lock = FolderLock::take(dir, false)?;
        verify::run(dir)
    }

    /// Rewrites the cache with its live entries only (see the module docs). A cache with
    /// no entries folder has nothing to compact (and none is made).
    pub fn compact(&self, options: &CompactOptions) -> Result<CompactReport, MaintainError> {
        let dir = self.packs.dir();
        if !dir.is_dir() {
            return Ok(CompactReport {
                dir: dir.to_owned(),
                ..CompactReport::default()
            });
        }
        let _lock = FolderLock::take(dir, true)?;
        compact::run(dir, options)
    }
}

/// `compact.lock`, held exclusive by a compaction and shared by a verify.
struct FolderLock {
    _held: File,
}

impl FolderLock {
    fn take(dir: &Path, exclusive: bool) -> Result<Self, MaintainError> {
        let path = dir.join("compact.lock");
        let io_err = |source| MaintainError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io_err)?;
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io_err)?;
        let taken = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match taken {
            Ok(()) => Ok(Self { _held: file }),
            Err(TryLockError::WouldBlock) => Err(MaintainError::Busy(dir.to_owned())),
            Err(TryLockError::Error(e)) => Err(io_err(e)),
        }
    }
}

/// `e` with the path it concerns.
fn at(path: &Path) -> impl FnOnce(io::Error) -> MaintainError + '_ {
    move |source| MaintainError::Io {
        path: path.to_owned(),
        source,
    }
}

/// The problems of a run, named (the first [`MAX_NAMED_PROBLEMS`]), and those whose URL
/// their own bytes did not say, for [`Problems::finish`] to look for elsewhere.
#[derive(Default)]
struct Problems {
    named: Vec<EntryProblem>,
    /// Each one's place in `named`, key, pack name and offset.
    unnamed: Vec<(usize, u128, String, u64)>,
}

impl Problems {
    /// Adds the problem of the entry of `key` at `loc` (in `snap`'s packs) unless
    /// [`MAX_NAMED_PROBLEMS`] are named already.
    fn add(&mut self, snap: &snapshot::Snapshot, key: u128, loc: Loc, problem: EntryProblem) {
        if self.named.len() >= MAX_NAMED_PROBLEMS {
            return;
        }
        if problem.url.is_none() {
            let pack = snap.packs.name(loc.pack).to_owned();
            self.unnamed.push((self.named.len(), key, pack, loc.offset));
        }
        self.named.push(problem);
    }

    /// The named problems, each with its URL where an earlier entry of its key in the
    /// index of `dir` says it.
    fn finish(mut self, dir: &Path) -> Vec<EntryProblem> {
        names::from_earlier_entries(dir, &mut self.named, &self.unnamed);
        self.named
    }
}
