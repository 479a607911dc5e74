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
        let key = path.to_string_lossy().into_owned();
        let entry = {
            let mut files = lock(&self.files);
            if let Some(entry) = files.get(&key) {
                entry.clone()
            } else {
                if files.len() >= self.capacity {
                    files.clear();
                }
                let entry = Arc::new(Mutex::new(Opened {
                    file: open(path)?,
                    at: Instant::now(),
                }));
                files.insert(key, entry.clone());
                entry
            }
        };
        let mut opened = lock(&entry);
        if opened.at.elapsed() >= REOPEN_AFTER {
            *opened = Opened {
                file: open(path)?,
                at: Instant::now(),
            };
        }
        f(&opened.file)
    }
}

fn open(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}
