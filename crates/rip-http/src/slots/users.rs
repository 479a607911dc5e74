//! Who uses a folder of host schedules: its sole user keeps them in memory; two or
//! more share them through the host files.
//!
//! The host files cost the sole user about a quarter of its CPU a request (three
//! locked updates) and, in a new folder, the creation of a file per new host before its
//! first request (issue 22; measured in `docs/benchmarks-log.md`, many hosts at the
//! politeness limit). They are only needed when another process takes turns on the same
//! hosts, so a process keeps its schedules in memory for as long as it is the folder's
//! only user, and writes them to the files the moment another arrives.
//!
//! The protocol, on `<dir>/.users` (never a host file's name: those never start with a
//! dot) and `<dir>/.join`:
//! - A process starting tries an exclusive `flock` on `.users`. Granted: it is the sole user and
//!   writes `A <pid>` there ("schedules in A's memory").
//! - Otherwise it tries a shared one. Granted: others share the files, and so does it.
//! - Otherwise another process is the sole user: the newcomer appends a byte to `.join` and tries the
//!   shared lock again every [`RETRY`]. The sole user looks at `.join`'s length every
//!   [`WATCH`]; when it grew, it writes every schedule it changed to the host files, marks
//!   `.users` as written (`-`), drops its exclusive lock and takes a shared one. Both now
//!   use the files. A process that once shared stays on the files for its life.
//! - A sole user that ends writes its schedules and marks `.users` written. One that
//!   died without writing them (killed) leaves `A`: the next process to take a lock there
//!   does not know when the dead one last asked each host, so it acts as if it had asked
//!   every host at that moment (the *floor*, kept in `.users` for later arrivals): each
//!   host's next request waits one gap from then. A request the dead process sent reached
//!   the site before it died, so no gap is broken.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often the sole user looks whether another one wants to join.
pub(super) const WATCH: Duration = Duration::from_millis(5);

/// How often a newcomer tries the shared lock again while it waits.
const RETRY: Duration = Duration::from_millis(2);

/// After this long waiting to join, a newcomer says whom it waits for (once).
const SLOW_JOIN: Duration = Duration::from_secs(2);

/// The length of `.users`' text.
const TEXT_LEN: usize = 2 + 10 + 1 + 20 + 1;

/// What a process is to the folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// The only user: keeps its schedules in memory.
    Sole,
    /// One of several, or the folder cannot be locked: the host files hold the schedules.
    Sharing,
}

/// This process's place among the folder's users (its lock on `.users` lives as long as
/// this does).
#[derive(Debug)]
pub(super) struct Users {
    file: Option<File>,
    join: PathBuf,
    /// `.join`'s length when this process became the sole user.
    join_seen: u64,
    /// No host may start before a gap after this (Unix µs; 0: none): see the module doc.
    pub(super) floor: u64,
}

impl Users {
    /// Joins the users of `dir`, waiting (every [`RETRY`]) while the sole user writes its
    /// schedules out. A folder that cannot be locked is shared through its files, as if
    /// others used it, with a warning.
    pub(super) fn join(dir: &Path, now_us: impl Fn() -> u64) -> (Self, Role) {
        let join = dir.join(".join");
        match Self::lock(dir, &join, &now_us) {
            Ok(joined) => joined,
            Err(e) => {
                tracing::warn!(
                    "cannot lock {}: {e}; sharing the host schedules through their files",
                    dir.join(".users").display()
                );
                let users = Self {
                    file: None,
                    join,
                    join_seen: 0,
                    floor: 0,
                };
                (users, Role::Sharing)
            }
        }
    }

    fn lock(dir: &Path, join: &Path, now_us: &impl Fn() -> u64) -> io::Result<(Self, Role)> {
        let path = dir.join(".users");
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        let role = match file.try_lock() {
            Ok(()) => Role::Sole,
            Err(TryLockError::WouldBlock) => {
                wait_shared(&file, join, &path)?;
                Role::Sharing
            }
            Err(TryLockError::Error(e)) => return Err(e),
        };
        let mut users = Self {
            file: Some(file),
            join: join.to_owned(),
            join_seen: 0,
            floor: 0,
        };
        users.floor = users.settle_floor(now_us())?;
        if role == Role::Sole {
            // Nobody waits now (or they append again within a retry): start the count over.
            let _ = std::fs::write(join, b"");
            users.join_seen = len(join);
            users.mark('A')?;
        }
        Ok((users, role))
    }

    /// The floor: the one kept in `.users`, or now when the process that was the sole user there
    /// died without writing its schedules (written down for those who come after).
    fn settle_floor(&self, now: u64) -> io::Result<u64> {
        let (state, kept) = self.read();
        if state == '-' {
            return Ok(kept);
        }
        let floor = kept.max(now);
        self.write('-', floor)?;
        Ok(floor)
    }

    /// Whether another process asked to join since this one became the sole user.
    pub(super) fn someone_waits(&self) -> bool {
        len(&self.join) != self.join_seen
    }

    /// Marks the schedules written to the host files (this process's were, all of them)
    /// and takes a shared lock instead of the exclusive one: call with every schedule
    /// written and no update running.
    pub(super) fn share(&mut self) -> io::Result<()> {
        self.mark('-')?;
        let Some(file) = &self.file else {
            return Ok(());
        };
        file.unlock()?;
        let path = self.join.with_file_name(".users");
        wait_shared(file, &self.join, &path)
    }

    /// Marks the schedules written, as a sole user that ends does.
    pub(super) fn leave(&self) -> io::Result<()> {
        self.mark('-')
    }

    fn mark(&self, state: char) -> io::Result<()> {
        self.write(state, self.floor)
    }

    fn read(&self) -> (char, u64) {
        let mut buf = [0u8; TEXT_LEN];
        let n = match &self.file {
            Some(f) => f.read_at(&mut buf, 0).unwrap_or(0),
            None => return ('-', 0),
        };
        let text = String::from_utf8_lossy(&buf[..n]);
        let mut words = text.split_whitespace();
        match words.next() {
            // A new file: nobody was the sole user here.
            None => ('-', 0),
            Some("-") => {
                let floor = words.nth(1).and_then(|w| w.parse().ok()).unwrap_or(0);
                ('-', floor)
            }
            // `A`, or a torn or foreign text: a sole user may have died.
            Some(_) => ('A', words.nth(1).and_then(|w| w.parse().ok()).unwrap_or(0)),
        }
    }

    fn write(&self, state: char, floor: u64) -> io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let pid = std::process::id();
        let text = format!("{state} {pid:>10} {floor:>20}\n");
        file.write_all_at(text.as_bytes(), 0)
    }
}

/// Takes a shared lock on `file` (`.users` at `path`), asking the sole user, if any,
/// to write its schedules out, and waiting until it has.
fn wait_shared(file: &File, join: &Path, path: &Path) -> io::Result<()> {
    let started = Instant::now();
    let mut warned = false;
    loop {
        match file.try_lock_shared() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(e),
        }
        OpenOptions::new()
            .append(true)
            .create(true)
            .open(join)?
            .write_all(b".")?;
        if !warned && started.elapsed() > SLOW_JOIN {
            warned = true;
            let holder = std::fs::read_to_string(path).unwrap_or_default();
            tracing::warn!(
                "waiting for the sole user of {} ({}) to share its host schedules",
                path.display(),
                holder.trim()
            );
        }
        std::thread::sleep(RETRY);
    }
}

fn len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}
