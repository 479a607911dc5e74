//! Host files kept open between updates: a request reads or updates its host's file three
//! or four times (ready, reserve, commit, answered), and opening and closing it each time
//! was eight of the twenty file system calls a request cost (`strace -c`, 1,000 hosts).
//!
//! A file is opened again once it has been open [`REOPEN_AFTER`], so a host folder
//! removed or replaced meanwhile is seen within that time. At most a quarter of the
//! process's open-file limit stays open (between 16 and 4,096); past that, the cache starts
//! over. Each file has its own lock, so two tasks of this process never update one host's
//! file at once; `flock` on it keeps other processes out.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::lock;

/// How long a file stays open before it is opened again.
pub(super) const REOPEN_AFTER: Duration = Duration::from_secs(1);

#[derive(Debug)]
struct Opened {
    file: File,
    at: Instant,
}

/// The open host files, by file name.
#[derive(Debug)]
pub(super) struct OpenFiles {
    files: Mutex<HashMap<String, Arc<Mutex<Opened>>>>,
    capacity: usize,
}

impl OpenFiles {
    /// An empty cache sized by the open-file limit.
    pub(super) fn new() -> Self {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        let capacity = limit.map_or(1024, |l| l / 4).clamp(16, 4096) as usize;
        Self {
            files: Mutex::new(HashMap::new()),
            capacity,
        }
    }

    /// Runs `f` on the file at `path` (created when missing), holding its lock.
    pub(super) fn with<T>(
        &self,
        path: &Path,
        f: impl FnOnce(&File) -> io::Result<T>,
    ) -> io::Result<T> {
        self.with_file(path, true, f)
    }

    /// Runs `f` on the file at `path` when it exists (an error of kind `NotFound` when
    /// not): a read creates nothing. Creating a file can take a millisecond on ext4 (after
    /// a mass delete), and the scheduler reads every host's file on its one thread before
    /// the host's first request: creating a thousand files there held back the first
    /// requests of a thousand hosts by as much (issue 22).
    pub(super) fn with_existing<T>(
        &self,
        path: &Path,
        f: impl FnOnce(&File) -> io::Result<T>,
    ) -> io::Result<T> {
        self.with_file(path, false, f)
    }

    fn with_file<T>(
        &self,
        path: &Path,
        create: bool,
        f: impl FnOnce(&File) -> io::Result<T>,
    ) -> io::Result<T> {
        let entry = self.entry(path, create)?;
        let mut opened = lock(&entry);
        if opened.at.elapsed() >= REOPEN_AFTER {
            *opened = Opened {
                file: open(path, create)?,
                at: Instant::now(),
            };
        }
        f(&opened.file)
    }

    /// The cached entry of `path`, opened (outside the map's lock, so that a slow create
    /// holds up only its own host) and cached when not there yet.
    fn entry(&self, path: &Path, create: bool) -> io::Result<Arc<Mutex<Opened>>> {
        let key = path.to_string_lossy().into_owned();
        if let Some(entry) = lock(&self.files).get(&key) {
            return Ok(entry.clone());
        }
        let opened = Arc::new(Mutex::new(Opened {
            file: open(path, create)?,
            at: Instant::now(),
        }));
        let mut files = lock(&self.files);
        if let Some(entry) = files.get(&key) {
            // Another task opened it meanwhile: one entry per file, so that its lock
            // keeps this process's updates of the host in turn.
            return Ok(entry.clone());
        }
        if files.len() >= self.capacity {
            files.clear();
        }
        files.insert(key, opened.clone());
        Ok(opened)
    }
}

/// Opens a host's file without updating its access time on reads: a schedule is read
/// (`pread`) right after each update and `relatime` then writes the inode's atime, which
/// was about 3 % of rip-fetch's CPU at 1,000 hosts (perf: `touch_atime`). `O_NOATIME` is
/// for the file's owner only: another user's file in a shared cache folder is opened
/// without it.
fn open(path: &Path, create: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(create)
        .truncate(false);
    let noatime = rustix::fs::OFlags::NOATIME.bits() as i32;
    match options.clone().custom_flags(noatime).open(path) {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => options.open(path),
        opened => opened,
    }
}
