//! [`Pipe`]: the read-process-write loop every record-at-a-time stage shares.
//!
//! Input is read on its own thread ([`spawn_reader`]) so that the stage can tell when
//! its input is idle: it then flushes its output, so a downstream stage is never
//! starved while this one waits. What it reads and writes goes in its [`Books`] (bad
//! lines, input counts, ledger, the closing [`Summary`] and its status: the same books
//! the async stages keep). Ctrl-C (the `stop` flag) ends input cleanly: what was read is
//! processed and flushed, and the status says `interrupted`.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufReader, Read, Write};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError, sync_channel};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::accounting::Summary;
use crate::books::Books;
use crate::exit::Status;
use crate::ndjson::{Line, MalformedLine, NdjsonReader, NdjsonWriter, ReadError};
use crate::record::Record;

pub use crate::books::LEDGER_BATCH;

/// Reads `input` on a new thread and hands each line (or read error) to `deliver`,
/// until input ends or `deliver` returns false.
pub fn spawn_reader<R, F>(input: R, name: Arc<str>, mut deliver: F) -> io::Result<JoinHandle<()>>
where
    R: Read + Send + 'static,
    F: FnMut(Result<Line, ReadError>) -> bool + Send + 'static,
{
    std::thread::Builder::new()
        .name("ndjson-reader".into())
        .spawn(move || {
            let reader = NdjsonReader::new(BufReader::with_capacity(256 * 1024, input), name);
            for item in reader {
                if !deliver(item) {
                    break;
                }
            }
        })
}

/// What stops a [`Pipe`].
#[derive(Debug, thiserror::Error)]
pub enum PipeError {
    /// A malformed line under `--strict`.
    #[error("{0} (stopping: --strict)")]
    Strict(MalformedLine),
    /// The input could not be read.
    #[error(transparent)]
    Read(ReadError),
    /// The output could not be written (a broken pipe among others).
    #[error("cannot write output: {0}")]
    Write(#[from] io::Error),
    /// The reader thread could not be started.
    #[error("cannot start the input reader: {0}")]
    Spawn(#[source] io::Error),
}

/// What [`Pipe::poll_line`] found.
#[derive(Debug)]
pub enum Polled {
    /// A valid line.
    Line(Line),
    /// Nothing arrived in the time given; input goes on.
    Idle,
    /// The end of input (or the stop flag).
    End,
}

/// Options of a [`Pipe`].
#[derive(Debug, Clone)]
pub struct PipeOptions {
    /// The stage's name, e.g. `rip-route`, written into its summary and ledger records.
    pub stage: String,
    /// The input's name in messages (`-` for stdin).
    pub input_name: String,
    /// Stop at the first malformed line instead of skipping it.
    pub strict: bool,
    /// Set by a signal handler to end input early.
    pub stop: Option<Arc<AtomicBool>>,
    /// The most bytes of input lines read ahead of the stage (besides the limit of
    /// 1,024 lines); one longer line is still read. Unlimited by default; a stage whose
    /// lines can be large (pages) sets it so that memory stays flat.
    pub read_ahead_bytes: usize,
}

/// Bytes of lines read but not yet taken by the stage, and the limit on them.
struct ReadAhead {
    bytes: Mutex<usize>,
    taken: Condvar,
    limit: usize,
}

impl ReadAhead {
    fn reserve(&self, n: usize) {
        let mut bytes = self.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        while *bytes > 0 && *bytes + n > self.limit {
            bytes = self
                .taken
                .wait(bytes)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *bytes += n;
    }

    fn release(&self, n: usize) {
        let mut bytes = self.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        *bytes = bytes.saturating_sub(n);
        self.taken.notify_all();
    }
}

impl PipeOptions {
    /// Options for `stage` reading stdin, lenient, with no stop flag.
    pub fn new(stage: impl Into<String>) -> Self {
        Self {
            stage: stage.into(),
            input_name: "-".into(),
            strict: false,
            stop: None,
            read_ahead_bytes: usize::MAX,
        }
    }
}

/// The read-process-write loop of a record-at-a-time stage.
pub struct Pipe<W: Write> {
    rx: Receiver<Result<Line, ReadError>>,
    read_ahead: Arc<ReadAhead>,
    books: Books<W>,
}

impl<W: Write> Pipe<W> {
    /// Starts reading `input` and prepares to write `output`.
    pub fn new<R: Read + Send + 'static>(
        opts: PipeOptions,
        input: R,
        output: W,
    ) -> Result<Self, PipeError> {
        let (tx, rx) = sync_channel(1024);
        let read_ahead = Arc::new(ReadAhead {
            bytes: Mutex::new(0),
            taken: Condvar::new(),
            limit: opts.read_ahead_bytes,
        });
        let gate = read_ahead.clone();
        spawn_reader(input, opts.input_name.as_str().into(), move |item| {
            if let Ok(line) = &item {
                gate.reserve(line.text().len());
            }
            tx.send(item).is_ok()
        })
        .map_err(PipeError::Spawn)?;
        Ok(Self {
            rx,
            read_ahead,
            books: Books::new(&opts, NdjsonWriter::new(output)),
        })
    }

    /// The next valid line, or `None` at the end of input (or when stopped).
    /// Malformed lines are reported, counted and skipped here.
    pub fn next_line(&mut self) -> Result<Option<Line>, PipeError> {
        loop {
            if self.books.stop_asked() {
                return Ok(None);
            }
            let item = match self.rx.try_recv() {
                Ok(item) => item,
                Err(TryRecvError::Disconnected) => return Ok(None),
                Err(TryRecvError::Empty) => {
                    self.flush()?;
                    match self.wait_for_input() {
                        Some(item) => item,
                        None => return Ok(None),
                    }
                }
            };
            if let Some(line) = self.accept(item)? {
                return Ok(Some(line));
            }
        }
    }

    /// Like [`Pipe::next_line`], but waits at most `wait` for input, so that a stage
    /// with work in flight (e.g. on a thread pool) can write results while its input
    /// is idle. Output is flushed before waiting, as in `next_line`.
    pub fn poll_line(&mut self, wait: Duration) -> Result<Polled, PipeError> {
        loop {
            if self.books.stop_asked() {
                return Ok(Polled::End);
            }
            let item = match self.rx.try_recv() {
                Ok(item) => item,
                Err(TryRecvError::Disconnected) => return Ok(Polled::End),
                Err(TryRecvError::Empty) => {
                    self.flush()?;
                    match self.rx.recv_timeout(wait) {
                        Ok(item) => item,
                        Err(RecvTimeoutError::Disconnected) => return Ok(Polled::End),
                        Err(RecvTimeoutError::Timeout) => return Ok(Polled::Idle),
                    }
                }
            };
            if let Some(line) = self.accept(item)? {
                return Ok(Polled::Line(line));
            }
        }
    }

    /// Counts a valid line, or reports and counts a malformed one (`None`).
    fn accept(&mut self, item: Result<Line, ReadError>) -> Result<Option<Line>, PipeError> {
        if let Ok(line) = &item {
            self.read_ahead.release(line.text().len());
        }
        self.books.read(item)
    }

    fn wait_for_input(&mut self) -> Option<Result<Line, ReadError>> {
        loop {
            match self.rx.recv_timeout(Duration::from_millis(50)) {
                Ok(item) => return Some(item),
                Err(RecvTimeoutError::Disconnected) => return None,
                Err(RecvTimeoutError::Timeout) if self.books.stop_asked() => return None,
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Reports a line that is valid JSON but not a valid record of its kind (as a
    /// malformed line: stderr, counted, partial). Under `strict` this is an error.
    pub fn bad_record(&mut self, line: &Line, message: impl fmt::Display) -> Result<(), PipeError> {
        self.books.bad_record(line, message)
    }

    /// Writes a record.
    pub fn emit(&mut self, record: &Record) -> Result<(), PipeError> {
        self.books.emit(record)
    }

    /// Writes a record this stage made, already serialised as a line.
    pub fn emit_line(&mut self, line: &Line) -> Result<(), PipeError> {
        self.books.emit_line(line)
    }

    /// Writes an input line back unchanged (counted as passed through).
    pub fn pass(&mut self, line: &Line) -> Result<(), PipeError> {
        self.books.pass(line)
    }

    /// Records that `url` entered the pipeline here (see [`Ledger`](crate::Ledger)).
    pub fn enter(&mut self, url: &str) -> Result<(), PipeError> {
        self.books.enter(url)
    }

    /// Flushes pending ledger entries and buffered output.
    pub fn flush(&mut self) -> Result<(), PipeError> {
        self.books.flush()
    }

    /// Marks the run partial (some record failed), without stopping it.
    pub fn mark_partial(&mut self) {
        self.books.mark_partial();
    }

    /// Adds `n` to a stage-specific counter of the summary.
    pub fn count(&mut self, counter: &str, n: u64) {
        self.books.count(counter, n);
    }

    /// Adds a stage-level note to the summary.
    pub fn note(&mut self, note: impl Into<String>) {
        self.books.note(note);
    }

    /// True once input ended because of the stop flag.
    pub fn interrupted(&self) -> bool {
        self.books.interrupted()
    }

    /// Records written so far, by kind.
    pub fn output_counts(&self) -> &BTreeMap<String, u64> {
        self.books.output_counts()
    }

    /// The status the stage ends with, unless it decides otherwise ([`Books::status`]).
    pub fn status(&self) -> Status {
        self.books.status()
    }

    /// Writes the closing `summary` record (with `status`, or [`Pipe::status`] when
    /// `None`), flushes, and returns the summary.
    pub fn finish(mut self, status: Option<Status>) -> Result<Summary, PipeError> {
        self.books.finish(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn passes_through_and_summarises() {
        let input = "{\"_type\":\"ref\",\"url\":\"u1\"}\nnot json\n{\"_type\":\"odd\",\"k\":1}\n";
        let out = Shared::default();
        let mut pipe =
            Pipe::new(PipeOptions::new("rip-test"), input.as_bytes(), out.clone()).unwrap();
        while let Some(line) = pipe.next_line().unwrap() {
            if line.kind() == &crate::Kind::Ref
                && let Record::Ref(r) = line.decode().unwrap()
            {
                pipe.enter(&r.url).unwrap();
            }
            pipe.pass(&line).unwrap();
        }
        let summary = pipe.finish(None).unwrap();
        assert_eq!(summary.bad_lines, 1);
        assert_eq!(summary.status, Status::Partial);
        assert_eq!(summary.input.get("ref"), Some(&1));
        assert_eq!(summary.output.get("ledger"), Some(&1));
        assert_eq!(summary.passed_through.get("ref"), Some(&1));
        assert_eq!(summary.passed_through.get("ledger"), None);
        assert_eq!((summary.made("ledger"), summary.made("ref")), (1, 0));
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(lines[0], "{\"_type\":\"ref\",\"url\":\"u1\"}");
        // The ledger is flushed whenever input goes idle, so it may come before or
        // after the next passed line, depending on how fast the reader thread is.
        let mut middle = [lines[1], lines[2]];
        middle.sort();
        assert_eq!(middle[1], "{\"_type\":\"odd\",\"k\":1}");
        assert!(middle[0].contains("\"entered\":[\"u1\"]"), "{text}");
        assert!(lines[3].starts_with("{\"_type\":\"summary\",\"stage\":\"rip-test\""));
    }

    #[test]
    fn strict_stops_at_the_first_bad_line() {
        let input =
            "{\"_type\":\"ref\",\"url\":\"u1\"}\n{bad\n{\"_type\":\"ref\",\"url\":\"u2\"}\n";
        let mut opts = PipeOptions::new("rip-test");
        opts.strict = true;
        let mut pipe = Pipe::new(opts, input.as_bytes(), Vec::new()).unwrap();
        assert!(pipe.next_line().unwrap().is_some());
        let err = pipe.next_line().unwrap_err();
        assert!(err.to_string().starts_with("-:2: not JSON"), "{err}");
    }

    #[test]
    fn poll_line_reports_idle_input_and_the_end() {
        let (rx, mut tx) = std::io::pipe().unwrap();
        let mut pipe = Pipe::new(PipeOptions::new("rip-test"), rx, Vec::new()).unwrap();
        assert!(matches!(
            pipe.poll_line(Duration::from_millis(20)).unwrap(),
            Polled::Idle
        ));
        tx.write_all(b"{\"_type\":\"x\"}\nbad\n").unwrap();
        drop(tx);
        let Polled::Line(line) = pipe.poll_line(Duration::from_secs(5)).unwrap() else {
            panic!("a line");
        };
        assert_eq!(line.text(), "{\"_type\":\"x\"}");
        assert!(matches!(
            pipe.poll_line(Duration::from_secs(5)).unwrap(),
            Polled::End
        ));
        assert_eq!(pipe.finish(None).unwrap().bad_lines, 1);
    }

    #[test]
    fn read_ahead_is_bounded_in_bytes() {
        let line = format!("{{\"_type\":\"x\",\"pad\":\"{}\"}}\n", "p".repeat(1000));
        let input = line.repeat(50);
        let mut opts = PipeOptions::new("rip-test");
        opts.read_ahead_bytes = 3000;
        let mut pipe =
            Pipe::new(opts, std::io::Cursor::new(input.into_bytes()), Vec::new()).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // At most 3,000 bytes (two lines) were read ahead, however long the input.
        assert!(pipe.read_ahead.bytes.lock().unwrap().le(&3000));
        let mut n = 0;
        while pipe.next_line().unwrap().is_some() {
            n += 1;
        }
        assert_eq!(n, 50);
    }

    #[test]
    fn stop_flag_ends_input() {
        let stop = Arc::new(AtomicBool::new(true));
        let mut opts = PipeOptions::new("rip-test");
        opts.stop = Some(stop);
        let mut pipe = Pipe::new(opts, "{\"_type\":\"x\"}\n".as_bytes(), Vec::new()).unwrap();
        assert!(pipe.next_line().unwrap().is_none());
        assert_eq!(pipe.finish(None).unwrap().status, Status::Interrupted);
    }
}
