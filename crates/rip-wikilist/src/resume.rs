//! `--state DIR` in the MediaWiki mode: the listing persisted as it goes, so that after a
//! `kill -9` the same command continues with the answer after the last one whose refs were
//! written, and writes no title twice.
//!
//! The folder holds `params.json` (the API, the lists, the page size: another listing on the
//! same folder is refused), a lock (one rip-discover per folder) and `wiki.ndjson`, one line
//! per answer of a list, appended only after the refs of its new titles were written and
//! flushed: `{"l": LIST, "c": CONTINUE, "t": [TITLES]}` (`c` null: that list is done), and
//! `{"end": true}` once every list is. On resume, the titles of every line are the ones
//! already written (neither written again nor counted twice for `--max-pages`), and the
//! listing goes on from the last line's list and `continue`. An answer in flight at the kill
//! is asked again; its titles were not journaled, so they are written (again, if the kill
//! came between the flush and the journal line: at most one answer's worth). A torn last
//! line is ignored. A finished listing resumed writes nothing.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use rip_mediawiki::Continue;
use serde::{Deserialize, Serialize};

use rip_core::state_folder::{StateError, io_err, open_append, open_folder};

/// One line of `wiki.ndjson`.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Line {
    #[serde(rename = "l", default)]
    list: usize,
    #[serde(rename = "c", default)]
    cont: Option<Continue>,
    #[serde(rename = "t", default, skip_serializing_if = "Vec::is_empty")]
    titles: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    end: bool,
}

/// Where a listing resumes.
#[derive(Debug, Default)]
pub struct Resumed {
    /// Titles written before, in order.
    pub titles: Vec<String>,
    /// The list to go on with.
    pub list: usize,
    /// The `continue` of that list's next answer.
    pub cont: Continue,
    /// Every list was read to its end.
    pub ended: bool,
    /// Torn or unreadable lines skipped.
    pub bad_lines: u64,
}

/// An open state folder of a listing.
#[derive(Debug)]
pub struct WikiJournal {
    path: PathBuf,
    file: File,
    _lock: File,
}

impl WikiJournal {
    /// Opens (or creates) the folder, checks `params`, and reads where to resume.
    pub fn open(dir: &Path, params: &str) -> Result<(Self, Resumed), StateError> {
        let lock = open_folder(dir, params)?;
        let path = dir.join("wiki.ndjson");
        let resumed = match File::open(&path) {
            Ok(f) => replay(BufReader::new(f)).map_err(io_err(&path))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Resumed::default(),
            Err(e) => return Err(io_err(&path)(e)),
        };
        let file = open_append(&path)?;
        let journal = Self {
            path,
            file,
            _lock: lock,
        };
        Ok((journal, resumed))
    }

    /// Records an answer of list `list` whose new `titles` were written and flushed; `cont`
    /// is the `continue` of the next answer (`None`: the list is done).
    pub fn answer(
        &mut self,
        list: usize,
        cont: Option<&Continue>,
        titles: &[String],
    ) -> Result<(), StateError> {
        self.append(&Line {
            list,
            cont: cont.cloned(),
            titles: titles.to_vec(),
            end: false,
        })
    }

    /// Records that every list was read to its end.
    pub fn end(&mut self) -> Result<(), StateError> {
        self.append(&Line {
            end: true,
            ..Line::default()
        })
    }

    fn append(&mut self, line: &Line) -> Result<(), StateError> {
        let mut text = serde_json::to_vec(line).expect("journal lines serialise");
        text.push(b'\n');
        self.file.write_all(&text).map_err(io_err(&self.path))
    }
}

fn replay(input: impl BufRead) -> std::io::Result<Resumed> {
    let mut r = Resumed::default();
    for line in input.lines() {
        let Ok(line) = serde_json::from_str::<Line>(&line?) else {
            r.bad_lines += 1;
            continue;
        };
        if line.end {
            r.ended = true;
            continue;
        }
        r.titles.extend(line.titles);
        match line.cont {
            Some(cont) => (r.list, r.cont) = (line.list, cont),
            None => (r.list, r.cont) = (line.list + 1, Continue::new()),
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_resumes_after_its_last_journaled_answer() {
        let dir = tempfile::tempdir().unwrap();
        let cont = Continue::from([("apcontinue".to_owned(), "M".to_owned())]);
        {
            let (mut j, r) = WikiJournal::open(dir.path(), "{\"api\":1}").unwrap();
            assert_eq!((r.list, r.titles.len(), r.ended), (0, 0, false));
            j.answer(0, None, &["A".into(), "B".into()]).unwrap();
            j.answer(1, Some(&cont), &["C".into()]).unwrap();
            // Killed mid-line.
            j.file.write_all(b"{\"l\":1,\"c\":nu").unwrap();
        }
        let (mut j, r) = WikiJournal::open(dir.path(), "{\"api\":1}").unwrap();
        assert_eq!((r.list, &r.cont, r.bad_lines), (1, &cont, 1));
        assert_eq!(r.titles, ["A", "B", "C"]);
        j.answer(1, None, &["D".into()]).unwrap();
        j.end().unwrap();
        drop(j);
        let (_, r) = WikiJournal::open(dir.path(), "{\"api\":1}").unwrap();
        assert!(r.ended);
        assert_eq!((r.list, r.titles.len()), (2, 4));
        let refused = WikiJournal::open(dir.path(), "{\"api\":2}").unwrap_err();
        assert!(matches!(refused, StateError::Mismatch { .. }), "{refused}");
    }
}
