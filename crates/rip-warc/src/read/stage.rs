//! The `rip-warc read` stage: archives in, the contract's records out. One `page` per
//! `response` record with a 2xx status (and per `resource` record of HTML), a `failure`
//! per error status and per damaged record, an `expected` per revisit whose original is
//! not in the input; every URL written enters the `ledger`, and a `summary` ends the
//! output, as every stage's.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::hash::{BuildHasher, RandomState};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use regex::Regex;
use rip_core::{Books, NdjsonWriter, PipeError, PipeOptions, Record, Summary};

use super::archive::{Item, RawRecord, read_archive};
use super::header::Limits;
use super::pages::{Made, Origin, convert, damaged, target_uri};
use super::{revisit, wacz};
use crate::record::field;

/// A batch of records handed from the reading thread: about this many bytes of blocks.
const BATCH_BYTES: usize = 256 * 1024;
/// Batches read ahead, at most (with one being filled and one being written: some 1.5 MB,
/// or a few records past the block limit).
const BATCHES: usize = 4;

/// What `rip-warc read` is asked to do.
#[derive(Debug, Clone)]
pub struct Config {
    /// The archives to read, in order; `-` is stdin.
    pub inputs: Vec<PathBuf>,
    /// Only records whose `WARC-Target-URI` this matches.
    pub url: Option<Regex>,
    /// Only records whose media type starts with one of these (`text/html`); all when empty.
    pub mime: Vec<String>,
    /// The bounds of a record.
    pub limits: Limits,
    /// Write every capture of a URL archived more than once (a recrawl), not only the
    /// first: the URL then enters the ledger once a capture.
    pub every_capture: bool,
    /// The stage's name, strictness and stop flag.
    pub pipe: PipeOptions,
}

/// The URLs written so far (hashes), so that a URL archived twice gives one outcome.
#[derive(Debug, Default)]
pub(super) struct Seen {
    hasher: RandomState,
    urls: HashSet<u64>,
}

impl Seen {
    /// True the first time `url` is offered.
    fn first(&mut self, url: &str) -> bool {
        self.urls.insert(self.hasher.hash_one(url))
    }
}

/// What stops the stage.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// An input that cannot be opened (checked before any is read).
    #[error("cannot open {path}: {source} (hint: a WARC, WARC.gz file, or - for stdin)")]
    Open {
        /// The input as named.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The output could not be written.
    #[error(transparent)]
    Pipe(#[from] PipeError),
}

/// One input, opened.
enum Opened {
    Stdin,
    File(PathBuf, File),
}

/// Reads every input (stdin is `stdin`), writing records to `out`.
pub fn run<W: Write>(
    config: Config,
    stdin: impl Read + Send,
    out: W,
) -> Result<Summary, StageError> {
    let mut opened = Vec::with_capacity(config.inputs.len());
    for path in &config.inputs {
        if path.as_os_str() == "-" {
            opened.push(Opened::Stdin);
        } else {
            let file = File::open(path).map_err(|source| StageError::Open {
                path: path.clone(),
                source,
            })?;
            opened.push(Opened::File(path.clone(), file));
        }
    }
    let mut books = Books::new(&config.pipe, NdjsonWriter::new(out));
    let mut seen = Seen::default();
    let mut stdin = Some(stdin);
    for input in opened {
        match input {
            Opened::Stdin => match stdin.take() {
                Some(r) => Reading::new(&config, &mut books, &mut seen).input_beside(
                    stdin_origin(),
                    None,
                    r,
                )?,
                None => continue,
            },
            Opened::File(path, file) if is_wacz(&path) => {
                wacz::read(&config, &mut books, &mut seen, &path, file)?;
            }
            Opened::File(path, file) => {
                let origin = file_origin(&path);
                let reread = Some(Reread { path, base: 0 });
                Reading::new(&config, &mut books, &mut seen).input_beside(origin, reread, file)?;
            }
        }
        books.count("files", 1);
        if books.stop_asked() {
            break;
        }
    }
    Ok(books.finish(None)?)
}

fn stdin_origin() -> Origin {
    Origin {
        name: "-".to_owned(),
        url: "file:///dev/stdin".to_owned(),
    }
}

fn is_wacz(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("wacz"))
}

/// Where the records of an input can be read again (a revisit's original): the file,
/// and where the WARC starts in it (a WACZ's stored entry starts past its zip header).
#[derive(Debug, Clone)]
pub(super) struct Reread {
    /// The file.
    pub path: PathBuf,
    /// Where the WARC starts in it.
    pub base: u64,
}

pub(super) fn file_origin(path: &Path) -> Origin {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let url = url::Url::from_file_path(&abs)
        .map_or_else(|()| format!("file://{}", abs.display()), String::from);
    Origin {
        name: path.display().to_string(),
        url,
    }
}

/// One input being read: where the records it made go, and where its pages are, for
/// the revisits that refer to them.
pub(super) struct Reading<'a, W: Write> {
    config: &'a Config,
    books: &'a mut Books<W>,
    hasher: RandomState,
    /// Record ids and payload digests of its responses → their offsets.
    originals: HashMap<u64, u64>,
    seen: &'a mut Seen,
    /// A page's line is made here (see [`page_line`](super::line::page_line)).
    scratch: Vec<u8>,
}

impl<'a, W: Write> Reading<'a, W> {
    pub(super) fn new(config: &'a Config, books: &'a mut Books<W>, seen: &'a mut Seen) -> Self {
        Self {
            config,
            books,
            hasher: RandomState::new(),
            originals: HashMap::new(),
            seen,
            scratch: Vec::new(),
        }
    }

    /// Reads the archive `r`, named by `origin`, re-readable from `reread`.
    pub(super) fn input(
        &mut self,
        origin: Origin,
        reread: Option<Reread>,
        r: impl Read,
    ) -> Result<(), PipeError> {
        let mut result = Ok(());
        let limits = self.config.limits;
        let read = read_archive(r, &limits, &mut |item| {
            if self.books.stop_asked() {
                return false;
            }
            result = self.item(item, &origin, reread.as_ref());
            result.is_ok()
        });
        result?;
        self.end(read, &origin)
    }

    /// [`input`](Self::input), the archive read (inflated and framed) on a thread of its
    /// own while this one makes and writes the records: in file order, in batches of
    /// about [`BATCH_BYTES`], at most [`BATCHES`] of them ahead.
    pub(super) fn input_beside(
        &mut self,
        origin: Origin,
        reread: Option<Reread>,
        r: impl Read + Send,
    ) -> Result<(), PipeError> {
        let limits = self.config.limits;
        let (tx, rx) = mpsc::sync_channel::<Vec<Item>>(BATCHES);
        std::thread::scope(|scope| {
            let reader = scope.spawn(move || {
                let mut batch = Vec::new();
                let mut bytes = 0;
                let read = read_archive(r, &limits, &mut |item| {
                    bytes += match &item {
                        Item::Record(r) => r.block.len() + 512,
                        Item::Damaged(_) => 512,
                    };
                    batch.push(item);
                    if bytes < BATCH_BYTES {
                        return true;
                    }
                    bytes = 0;
                    tx.send(std::mem::take(&mut batch)).is_ok()
                });
                if !batch.is_empty() {
                    // The other side gone, it stopped: nothing is left to tell it.
                    let _ = tx.send(batch);
                }
                read
            });
            let result = self.take_batches(rx, &origin, reread.as_ref());
            let read = reader
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            result?;
            self.end(read, &origin)
        })
    }

    /// Makes and writes the records of every batch `rx` brings, until the reader ends, an
    /// error, or a stop asked (dropping `rx` then stops the reader).
    fn take_batches(
        &mut self,
        rx: mpsc::Receiver<Vec<Item>>,
        origin: &Origin,
        reread: Option<&Reread>,
    ) -> Result<(), PipeError> {
        for batch in rx {
            for item in batch {
                if self.books.stop_asked() {
                    return Ok(());
                }
                self.item(item, origin, reread)?;
            }
        }
        Ok(())
    }

    /// The end of an input: a stream that could not be read on is a failure naming it.
    fn end(&mut self, read: io::Result<()>, origin: &Origin) -> Result<(), PipeError> {
        if let Err(e) = read {
            let damage = super::archive::Damage {
                offset: 0,
                error: super::archive::ReadError::Gzip(e),
                target_uri: None,
            };
            let mut failure = damaged(&damage, origin);
            failure.url = origin.url.clone();
            failure.errors[0].message =
                format!("{}: cannot read on: {}", origin.name, damage.error);
            self.emit(Record::Failure(failure))?;
        }
        self.books.flush()
    }

    fn item(
        &mut self,
        item: Item,
        origin: &Origin,
        reread: Option<&Reread>,
    ) -> Result<(), PipeError> {
        self.books.count("records", 1);
        let record = match item {
            Item::Damaged(damage) => {
                self.books.count("damaged", 1);
                return self.emit(Record::Failure(damaged(&damage, origin)));
            }
            Item::Record(record) => record,
        };
        if let Some(re) = &self.config.url
            && !target_uri(&record).is_some_and(|u| re.is_match(u))
        {
            self.books.count("filtered", 1);
            return Ok(());
        }
        let made = match convert(&record, origin, &self.config.limits) {
            Made::Revisit => revisit::resolve(
                &record,
                origin,
                reread,
                &self.originals,
                &self.hasher,
                &self.config.limits,
            ),
            made => {
                self.remember(&record);
                made
            }
        };
        match made {
            Made::Record(r) if !self.wanted(&r) => {
                self.books.count("filtered", 1);
                Ok(())
            }
            Made::Record(r) if !self.config.every_capture && !self.first_capture(&r) => {
                self.books.count("duplicates", 1);
                Ok(())
            }
            Made::Record(r) => self.emit(*r),
            Made::Skip(what) => {
                self.books.count(what, 1);
                Ok(())
            }
            Made::Revisit => Ok(()),
        }
    }

    /// Notes a response's id and payload digest, for the revisits after it.
    fn remember(&mut self, record: &RawRecord) {
        if record.header.get(field::TYPE) != Some("response") {
            return;
        }
        for name in [field::RECORD_ID, field::PAYLOAD_DIGEST] {
            if let Some(key) = record.header.get(name) {
                self.originals
                    .insert(self.hasher.hash_one(key), record.offset);
            }
        }
    }

    /// True when `record` is its URL's first capture.
    fn first_capture(&mut self, record: &Record) -> bool {
        record.url().is_none_or(|url| self.seen.first(url))
    }

    fn wanted(&self, record: &Record) -> bool {
        if self.config.mime.is_empty() {
            return true;
        }
        let ct = match record {
            Record::Page(p) => p.content_type.as_deref(),
            Record::Failure(f) => f.content_type.as_deref(),
            _ => return true,
        };
        let essence = rip_core::media_type(ct.unwrap_or(""));
        self.config
            .mime
            .iter()
            .any(|m| essence.starts_with(&m.to_ascii_lowercase()))
    }

    fn emit(&mut self, record: Record) -> Result<(), PipeError> {
        if let Some(url) = record.url() {
            let url = url.to_owned();
            self.books.enter(&url)?;
        }
        match record {
            Record::Page(page) => {
                let line = super::line::page_line(page, &mut self.scratch)
                    .map_err(std::io::Error::from)?;
                self.books.emit_line(&line)
            }
            Record::Failure(_) => {
                self.books.mark_partial();
                self.books.emit(&record)
            }
            record => self.books.emit(&record),
        }
    }
}

/// Reads the one record at `offset` of the archive `reread` names.
pub(super) fn record_at(reread: &Reread, offset: u64, limits: &Limits) -> Option<RawRecord> {
    let mut file = File::open(&reread.path).ok()?;
    file.seek(SeekFrom::Start(reread.base + offset)).ok()?;
    let mut found = None;
    read_archive(file, limits, &mut |item| {
        if let Item::Record(mut r) = item {
            r.offset += offset;
            found = Some(r);
        }
        false
    })
    .ok()?;
    found
}

/// The line `rip-warc read` says on stderr at the end:
/// `rip-warc: 2 files, 1204 records: 400 pages, 3 failed (1 damaged), 0 expected; skipped 800 (…); 1.2s, 1003 records/s`.
#[must_use]
pub fn summary_line(s: &Summary) -> String {
    let c = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let records = c("records");
    let secs = (s.ended_at - s.started_at).num_milliseconds().max(1) as f64 / 1000.0;
    let skipped: Vec<String> = [
        "warcinfo",
        "requests",
        "redirects",
        "informational",
        "resources",
        "notHttp",
        "otherRecords",
        "filtered",
        "duplicates",
    ]
    .iter()
    .filter(|k| c(k) > 0)
    .map(|k| format!("{} {k}", c(k)))
    .collect();
    format!(
        "{}: {} files, {records} records: {} pages, {} failed ({} damaged), {} expected; skipped {}; {secs:.1}s, {:.0} records/s",
        s.stage,
        c("files"),
        s.made("page"),
        s.made("failure"),
        c("damaged"),
        s.made("expected"),
        if skipped.is_empty() {
            "none".to_owned()
        } else {
            skipped.join(", ")
        },
        records as f64 / secs,
    )
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn member(n: usize) -> Vec<u8> {
        let http = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>page {n}</p>");
        let record = format!(
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://t.test/{n}\r\n\
             WARC-Date: 2026-12-01T09:00:00Z\r\nWARC-Record-ID: <urn:uuid:{n}>\r\n\
             Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n\
             {http}\r\n\r\n",
            http.len()
        );
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(record.as_bytes()).expect("in memory");
        e.finish().expect("in memory")
    }

    /// Many batches through the reading thread: every record, in file order, the damaged
    /// member in the middle a failure at its offset and the ones after it read.
    #[test]
    fn records_read_beside_come_out_in_file_order() {
        let (n, bad) = (3_000, 1_500);
        let mut file = Vec::new();
        let mut bad_offset = 0;
        for i in 0..n {
            let mut m = member(i);
            if i == bad {
                bad_offset = file.len();
                let mid = m.len() / 2;
                m[mid..].iter_mut().for_each(|b| *b = !*b);
            }
            file.extend_from_slice(&m);
        }
        let config = Config {
            inputs: vec!["-".into()],
            url: None,
            mime: Vec::new(),
            limits: Limits::default(),
            every_capture: false,
            pipe: PipeOptions::new(super::super::pages::STAGE),
        };
        let mut out = Vec::new();
        run(config, &file[..], &mut out).expect("read");
        let urls: Vec<String> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice::<serde_json::Value>(l).expect("json"))
            .filter(|v| matches!(v["_type"].as_str(), Some("page" | "failure")))
            .map(|v| v["url"].as_str().unwrap_or_default().to_owned())
            .collect();
        let want: Vec<String> = (0..n)
            .map(|i| match i {
                i if i == bad => format!("file:///dev/stdin#offset={bad_offset}"),
                i => format!("http://t.test/{i}"),
            })
            .collect();
        assert_eq!(urls.len(), want.len());
        assert!(urls == want, "first difference: {:?}", {
            let i = urls.iter().zip(&want).position(|(a, b)| a != b);
            i.map(|i| (&urls[i], &want[i]))
        });
    }
}
