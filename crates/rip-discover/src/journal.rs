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
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::frontier::{IdHasher, Item, Visited};

pub use rip_core::state_folder::StateError;
pub(crate) use rip_core::state_folder::{io_err, open_append, open_folder};

/// One line of the journal: one event. The one-letter names on disk keep the journal
/// compact (and readable by every version that wrote one).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Event {
    /// `e`: an item was enqueued.
    #[serde(rename = "e", default, skip_serializing_if = "Option::is_none")]
    enqueued: Option<Item>,
    /// `s`: a key seen without an item (where a redirect led).
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    seen: Option<u64>,
    /// `d`: the item with this key is done, its record flushed.
    #[serde(rename = "d", default, skip_serializing_if = "Option::is_none")]
    done: Option<u64>,
    /// `t`: the done item was written as a target `ref`.
    #[serde(rename = "t", default, skip_serializing_if = "std::ops::Not::not")]
    target_written: bool,
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
        let lock = open_folder(dir, params)?;
        let path = dir.join("journal.ndjson");
        let replay = match File::open(&path) {
            Ok(f) => replay(BufReader::new(f), keep_targets).map_err(io_err(&path))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Replay::default(),
            Err(e) => return Err(io_err(&path)(e)),
        };
        let file = open_append(&path)?;
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

    fn push(&mut self, event: &Event) {
        serde_json::to_writer(&mut self.buf, event).expect("journal lines serialise");
        self.buf.push(b'\n');
    }

    /// Records an enqueued item (buffered until [`Journal::commit`]).
    pub fn enqueued(&mut self, item: &Item) {
        self.push(&Event {
            enqueued: Some(item.clone()),
            ..Event::default()
        });
    }

    /// Records a key seen without an item.
    pub fn seen(&mut self, key: u64) {
        self.push(&Event {
            seen: Some(key),
            ..Event::default()
        });
    }

    /// Records an item done; call only once its record is written to the output buffer,
    /// and [`Journal::commit`] only after that buffer was flushed.
    pub fn done(&mut self, key: u64, target: bool) {
        self.push(&Event {
            done: Some(key),
            target_written: target,
            ..Event::default()
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
        let Ok(event) = serde_json::from_slice::<Event>(&line) else {
            r.bad_lines += 1;
            continue;
        };
        if let Some(item) = event.enqueued {
            r.visited.insert(item.key);
            seq += 1;
            pending.insert(item.key, (seq, item));
        }
        if let Some(k) = event.seen {
            r.visited.insert(k);
        }
        if let Some(k) = event.done {
            r.done += 1;
            r.targets_done += u64::from(event.target_written);
            if let Some(entry) = pending.remove(&k)
                && event.target_written
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
    use std::fs::OpenOptions;

    fn item(url: &str) -> Item {
        Item {
            is_target: true,
            ..Item::new(Ref::new(url), key(url), ItemKind::Page)
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
        let pending: Vec<&str> = r.pending.iter().map(|i| i.record.url.as_str()).collect();
        assert_eq!(pending, ["http://h/2"]);
        let targets: Vec<&str> = r.targets.iter().map(|i| i.record.url.as_str()).collect();
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

    /// A journal as rip-discover wrote it before its fields had names (the first four lines
    /// and the `d` lines are from a real state folder; the seed, sitemap and `s` lines
    /// follow the same derive): it must still resume, and be written back byte for byte.
    const JOURNAL_V1: &str = r#"{"e":{"r":{"url":"http://127.0.0.1:39531/","depth":0,"attempt":0},"h":11442355155499050140,"s":true,"t":true}}
{"d":11442355155499050140,"t":true}
{"e":{"r":{"url":"http://127.0.0.1:39531/items/","depth":1,"parent":"http://127.0.0.1:39531/","linkText":"Items","attempt":0},"h":17740151132819126219,"t":true}}
{"e":{"r":{"url":"http://127.0.0.1:39531/about.html","depth":1,"parent":"http://127.0.0.1:39531/","linkText":"About","attempt":0},"h":17476880536425164265,"t":true}}
{"e":{"r":{"url":"http://127.0.0.1:39531/","depth":0,"attempt":0},"h":42,"k":"seed"}}
{"e":{"r":{"url":"http://127.0.0.1:39531/sitemap.xml","depth":0,"parent":"http://127.0.0.1:39531/","attempt":0},"h":43,"k":{"sitemap":{"level":0,"declared":true}}}}
{"s":44}
{"d":17740151132819126219,"t":true}
{"d":42}
"#;

    #[test]
    fn a_journal_of_the_first_format_resumes_and_is_written_the_same() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("journal.ndjson"), JOURNAL_V1).unwrap();
        let (_, r) = Journal::open(dir.path(), "{\"a\":1}", true).unwrap();
        assert_eq!((r.bad_lines, r.done, r.targets_done), (0, 3, 2));
        assert_eq!(r.visited.len(), 6);
        assert!(r.visited.contains(44), "`s` lines join the visited set");
        let pending: Vec<(&str, ItemKind, bool, bool)> = r
            .pending
            .iter()
            .map(|i| (i.record.url.as_str(), i.kind, i.is_start, i.is_target))
            .collect();
        assert_eq!(
            pending,
            [
                (
                    "http://127.0.0.1:39531/about.html",
                    ItemKind::Page,
                    false,
                    true
                ),
                (
                    "http://127.0.0.1:39531/sitemap.xml",
                    ItemKind::Sitemap {
                        level: 0,
                        declared: true
                    },
                    false,
                    false
                ),
            ]
        );
        assert_eq!(
            r.pending[0].record.context.link_text.as_deref(),
            Some("About")
        );
        assert_eq!(r.pending[0].key, 17476880536425164265);
        let targets: Vec<(&str, bool)> = r
            .targets
            .iter()
            .map(|i| (i.record.url.as_str(), i.is_start))
            .collect();
        assert_eq!(
            targets,
            [
                ("http://127.0.0.1:39531/", true),
                ("http://127.0.0.1:39531/items/", false)
            ]
        );
        for line in JOURNAL_V1.lines() {
            let event: Event = serde_json::from_str(line).unwrap();
            assert_eq!(serde_json::to_string(&event).unwrap(), line);
        }
    }

    #[test]
    fn a_different_crawl_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(Journal::open(dir.path(), "{\"a\":1}", false).unwrap());
        let err = Journal::open(dir.path(), "{\"a\":2}", false).unwrap_err();
        assert!(err.to_string().contains("different crawl"), "{err}");
    }
}
