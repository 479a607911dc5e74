//! `--state DIR`: the crawl persisted as it goes, so that after a `kill -9` the same
//! command continues where it stopped.
//!
//! The folder holds `params.json` (what defines the crawl: start URLs, scope, depth, …; a
//! different command on the same folder is refused), `journal.ndjson` and a lock (one
//! crawler per folder). The journal is append-only, one line per event:
//!
//! - `{"e":ITEM}`: an item was enqueued (its key joins the visited set);
//! - `{"s":KEY}`: a key seen without an item (where a redirect led);
//! - `{"d":KEY}` / `{"d":KEY,"t":true}`: an item is done, and its record is **already
//!   written and flushed** on stdout (`t`: it was written as a target `ref`, which
//!   `--sorted` needs to rebuild its final list).
//!
//! Lines are buffered in memory and appended only after stdout was flushed, so a `d` line
//! never claims a record that a crash lost. On resume, the visited set is every `e` and
//! `s` key; the frontier is every `e` item without a `d`, in journal order. An item that
//! was in flight at the kill is processed again: its page comes from the shared cache
//! (written before its record), so the network does not see it twice. A torn last line
//! (killed mid-write) is ignored.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::frontier::{IdHasher, Item, Visited};

/// What a state folder could not do.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// An I/O error on a file of the folder.
    #[error("state folder {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Another process holds the folder.
    #[error(
        "state folder {0} is in use by another rip-discover (hint: wait for it, or use another --state folder)"
    )]
    Locked(PathBuf),
    /// The folder belongs to a different crawl.
    #[error(
        "state folder {path} belongs to a different crawl: it was started with {was}, this command asks for {now} (hint: rerun the same command to resume, or use a new --state folder)"
    )]
    Mismatch {
        /// The folder.
        path: PathBuf,
        /// Its parameters.
        was: String,
        /// This command's.
        now: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StateError + '_ {
    move |source| StateError::Io {
        path: path.to_owned(),
        source,
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Line {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    e: Option<Item>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    s: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    d: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    t: bool,
}

/// What a journal held.
#[derive(Debug, Default)]
pub struct Replay {
    /// Every key seen.
    pub visited: Visited,
    /// Items enqueued and not done, in journal order.
    pub pending: Vec<Item>,
    /// Items done as targets (for `--sorted`), in journal order.
    pub targets: Vec<Item>,
    /// Items done.
    pub done: u64,
    /// Items done as targets (written), kept or not.
    pub targets_done: u64,
    /// Torn or unreadable lines skipped.
    pub bad_lines: u64,
}

/// An open state folder.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
    _lock: File,
}

impl Journal {
    /// Opens (or creates) the folder, takes its lock, checks `params` against the folder's
    /// and replays the journal. `keep_targets` keeps the done targets (for `--sorted`).
    pub fn open(
        dir: &Path,
        params: &str,
        keep_targets: bool,
    ) -> Result<(Self, Replay), StateError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let lock_path = dir.join("lock");
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io_err(&lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StateError::Locked(dir.to_owned()));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io_err(&lock_path)(e)),
        }
        let params_path = dir.join("params.json");
        match std::fs::read_to_string(&params_path) {
            Ok(was) if was.trim() != params.trim() => {
                return Err(StateError::Mismatch {
                    path: dir.to_owned(),
                    was: was.trim().to_owned(),
                    now: params.trim().to_owned(),
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let tmp = dir.join("params.json.tmp");
                std::fs::write(&tmp, params).map_err(io_err(&tmp))?;
                std::fs::rename(&tmp, &params_path).map_err(io_err(&params_path))?;
            }
            Err(e) => return Err(io_err(&params_path)(e)),
        }
        let path = dir.join("journal.ndjson");
        let replay = match File::open(&path) {
            Ok(f) => replay(BufReader::new(f), keep_targets).map_err(io_err(&path))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Replay::default(),
            Err(e) => return Err(io_err(&path)(e)),
        };
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        // A torn last line must not glue itself to the next one.
        if file.metadata().map(|m| m.len()).unwrap_or(0) > 0 && !ends_with_newline(&path) {
            file.write_all(b"\n").map_err(io_err(&path))?;
        }
        Ok((
            Self {
                path,
                file,
                buf: Vec::with_capacity(64 << 10),
                _lock: lock,
            },
            replay,
        ))
    }

    fn push(&mut self, line: &Line) {
        serde_json::to_writer(&mut self.buf, line).expect("journal lines serialise");
        self.buf.push(b'\n');
    }

    /// Records an enqueued item (buffered until [`Journal::commit`]).
    pub fn enqueued(&mut self, item: &Item) {
        self.push(&Line {
            e: Some(item.clone()),
            ..Line::default()
        });
    }

    /// Records a key seen without an item.
    pub fn seen(&mut self, key: u64) {
        self.push(&Line {
            s: Some(key),
            ..Line::default()
        });
    }

    /// Records an item done; call only once its record is written to the output buffer,
    /// and [`Journal::commit`] only after that buffer was flushed.
    pub fn done(&mut self, key: u64, target: bool) {
        self.push(&Line {
            d: Some(key),
            t: target,
            ..Line::default()
        });
    }

    /// Appends the buffered lines to the journal file. Call after flushing the output.
    pub fn commit(&mut self) -> Result<(), StateError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.file.write_all(&self.buf).map_err(io_err(&self.path))?;
        self.buf.clear();
        Ok(())
    }
}

fn ends_with_newline(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = File::open(path) else {
        return true;
    };
    if f.seek(SeekFrom::End(-1)).is_err() {
        return true;
    }
    let mut b = [0u8; 1];
    f.read_exact(&mut b).is_err() || b[0] == b'\n'
}

fn replay(input: impl BufRead, keep_targets: bool) -> io::Result<Replay> {
    let mut r = Replay::default();
    let mut pending: HashMap<u64, (u64, Item), std::hash::BuildHasherDefault<IdHasher>> =
        HashMap::default();
    let mut targets: Vec<(u64, Item)> = Vec::new();
    let mut seq = 0u64;
    for line in input.split(b'\n') {
        let line = line?;
        if line.is_empty() {
            continue;
        }
        let Ok(l) = serde_json::from_slice::<Line>(&line) else {
            r.bad_lines += 1;
            continue;
        };
        if let Some(item) = l.e {
            r.visited.insert(item.h);
            seq += 1;
            pending.insert(item.h, (seq, item));
        }
        if let Some(k) = l.s {
            r.visited.insert(k);
        }
        if let Some(k) = l.d {
            r.done += 1;
            r.targets_done += u64::from(l.t);
            if let Some(entry) = pending.remove(&k)
                && l.t
                && keep_targets
            {
                targets.push(entry);
            }
        }
    }
    let mut pending: Vec<(u64, Item)> = pending.into_values().collect();
    pending.sort_by_key(|(s, _)| *s);
    r.pending = pending.into_iter().map(|(_, i)| i).collect();
    r.targets = targets.into_iter().map(|(_, i)| i).collect();
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontier::{ItemKind, key};
    use rip_core::Ref;

    fn item(url: &str) -> Item {
        Item {
            r: Ref::new(url),
            h: key(url),
            k: ItemKind::Page,
            s: false,
            t: true,
            o: 0,
        }
    }

    #[test]
    fn resume_sees_pending_items_and_done_targets() {
        let dir = tempfile::tempdir().unwrap();
        {
            let (mut j, r) = Journal::open(dir.path(), "{\"a\":1}", true).unwrap();
            assert!(r.pending.is_empty());
            for u in ["http://h/1", "http://h/2", "http://h/3"] {
                j.enqueued(&item(u));
            }
            j.done(key("http://h/1"), true);
            j.done(key("http://h/3"), false);
            j.seen(42);
            j.commit().unwrap();
            // Buffered, never committed: lost with the process, as designed.
            j.done(key("http://h/2"), true);
            // The lock holds while the journal is open.
            assert!(matches!(
                Journal::open(dir.path(), "{\"a\":1}", true),
                Err(StateError::Locked(_))
            ));
        }
        // A torn line at the end, as after a kill mid-write.
        let path = dir.path().join("journal.ndjson");
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"e\":{\"r\":{\"url\":\"http://h/4").unwrap();
        drop(f);

        let (mut j, r) = Journal::open(dir.path(), "{\"a\":1}", true).unwrap();
        assert_eq!(r.bad_lines, 1);
        assert_eq!(r.done, 2);
        let pending: Vec<&str> = r.pending.iter().map(|i| i.r.url.as_str()).collect();
        assert_eq!(pending, ["http://h/2"]);
        let targets: Vec<&str> = r.targets.iter().map(|i| i.r.url.as_str()).collect();
        assert_eq!(targets, ["http://h/1"]);
        assert!(r.visited.contains(42) && r.visited.contains(key("http://h/3")));
        // Appending after the torn line starts a fresh line.
        j.done(key("http://h/2"), true);
        j.commit().unwrap();
        drop(j);
        let (_, r) = Journal::open(dir.path(), "{\"a\":1}", false).unwrap();
        assert!(r.pending.is_empty());
        assert!(r.targets.is_empty(), "not kept without --sorted");
    }

    #[test]
    fn a_different_crawl_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(Journal::open(dir.path(), "{\"a\":1}", false).unwrap());
        let err = Journal::open(dir.path(), "{\"a\":2}", false).unwrap_err();
        assert!(err.to_string().contains("different crawl"), "{err}");
    }
}
