//! [`Books`]: what every stage's loop keeps account of, whatever reads its input.
//!
//! A stage's books are what lets `rip-health` prove that no URL vanished: the input read,
//! by record kind; the bad lines (each said on stderr as `<input>:<line>: <what is wrong>`,
//! the first ten of a process, then how many more; with `strict` the first one ends the
//! run); the URLs that entered here (`ledger` records); the output written and passed
//! through; and the closing `summary` with the run's [`Status`]. The synchronous stages
//! keep them through a [`Pipe`](crate::Pipe), the async ones (rip-fetch, rip-discover's
//! crawl) hold a `Books` in their own loop: one set of rules for all.
//!
//! The status, unless the stage gives one: `interrupted` when the stop flag ended the run;
//! else the worst of what the stage raised ([`Books::raise`]) and `partial` when a record
//! failed ([`Books::mark_partial`]) or a line was bad; else `complete`.

use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::accounting::{Ledger, Summary};
use crate::exit::Status;
use crate::live::{BooksSnapshot, LiveStage, PUBLISH_EVERY};
use crate::ndjson::{
    Line, MalformedLine, NdjsonWriter, ReadError, report_bad_line, report_unshown_bad_lines,
};
use crate::record::Record;
use crate::stream::{PipeError, PipeOptions};

/// How many entered URLs a `ledger` record holds at most.
pub const LEDGER_BATCH: usize = 1000;

/// A stage's output and its account of the run (see the module docs).
pub struct Books<W: Write> {
    stage: String,
    input_name: Arc<str>,
    strict: bool,
    stop: Option<Arc<AtomicBool>>,
    out: NdjsonWriter<W>,
    started_at: DateTime<Utc>,
    input_counts: BTreeMap<String, u64>,
    bad_lines: u64,
    partial: bool,
    interrupted: bool,
    raised: Status,
    counters: BTreeMap<String, u64>,
    notes: Vec<String>,
    ledger: Vec<String>,
    live: Arc<LiveStage>,
    published_at: Instant,
}

impl<W: Write> Books<W> {
    /// Books for the stage `opts` names, writing to `out`; the run starts now.
    pub fn new(opts: &PipeOptions, out: NdjsonWriter<W>) -> Self {
        Self {
            stage: opts.stage.clone(),
            input_name: opts.input_name.as_str().into(),
            strict: opts.strict,
            stop: opts.stop.clone(),
            out,
            started_at: Utc::now(),
            input_counts: BTreeMap::new(),
            bad_lines: 0,
            partial: false,
            interrupted: false,
            raised: Status::Complete,
            counters: BTreeMap::new(),
            notes: Vec::new(),
            ledger: Vec::new(),
            live: crate::live::stage(&opts.stage),
            published_at: Instant::now(),
        }
    }

    /// The same books, for a run that started at `at` (before its stage was built), as
    /// the summary's `startedAt` says.
    pub fn starting_at(mut self, at: DateTime<Utc>) -> Self {
        self.started_at = at;
        self
    }

    /// True when the stop flag is set (Ctrl-C): the run is then `interrupted`.
    pub fn stop_asked(&mut self) -> bool {
        if self
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            self.interrupted = true;
        }
        self.interrupted
    }

    /// An item from the input reader: a valid line is counted and given back; a malformed
    /// one is reported, counted and skipped (`None`), or under `strict` ends the run.
    pub fn read(&mut self, item: Result<Line, ReadError>) -> Result<Option<Line>, PipeError> {
        match item {
            Ok(line) => {
                *self
                    .input_counts
                    .entry(line.kind().as_str().to_owned())
                    .or_default() += 1;
                self.publish_now_and_then();
                Ok(Some(line))
            }
            Err(ReadError::Malformed(m)) => self.bad_line(m).map(|()| None),
            Err(e @ ReadError::Io { .. }) => Err(PipeError::Read(e)),
        }
    }

    /// Reports a line that is valid JSON but not a valid record of its kind, as a
    /// malformed line (stderr, counted, partial; under `strict` the end). It stays counted
    /// in the input, by its kind.
    pub fn bad_record(&mut self, line: &Line, message: impl fmt::Display) -> Result<(), PipeError> {
        self.bad_line(MalformedLine {
            input: self.input_name.clone(),
            line: line.number(),
            message: message.to_string(),
        })
    }

    fn bad_line(&mut self, m: MalformedLine) -> Result<(), PipeError> {
        self.bad_lines += 1;
        report_bad_line(&m);
        if self.strict {
            return Err(PipeError::Strict(m));
        }
        Ok(())
    }

    /// Writes a record.
    pub fn emit(&mut self, record: &Record) -> Result<(), PipeError> {
        if let Record::Failure(f) = record
            && crate::live::enabled()
        {
            self.live
                .count_host_failure(&crate::live::host_label(&f.url));
        }
        self.publish_now_and_then();
        Ok(self.out.write(record)?)
    }

    /// Writes a record this stage made, already serialised as a line.
    pub fn emit_line(&mut self, line: &Line) -> Result<(), PipeError> {
        self.publish_now_and_then();
        Ok(self.out.write_line(line)?)
    }

    /// Writes an input line back unchanged (counted as passed through).
    pub fn pass(&mut self, line: &Line) -> Result<(), PipeError> {
        self.publish_now_and_then();
        Ok(self.out.pass(line)?)
    }

    /// Records that `url` entered the pipeline here (see [`Ledger`]).
    pub fn enter(&mut self, url: &str) -> Result<(), PipeError> {
        self.ledger.push(url.to_owned());
        if self.ledger.len() >= LEDGER_BATCH {
            self.flush_ledger()?;
        }
        Ok(())
    }

    fn flush_ledger(&mut self) -> Result<(), PipeError> {
        if self.ledger.is_empty() {
            return Ok(());
        }
        let record = Record::Ledger(Ledger {
            stage: self.stage.clone(),
            entered: std::mem::take(&mut self.ledger),
            extra: Default::default(),
        });
        self.emit(&record)
    }

    /// Flushes pending ledger entries and buffered output.
    pub fn flush(&mut self) -> Result<(), PipeError> {
        self.flush_ledger()?;
        self.publish(false);
        Ok(self.out.flush()?)
    }

    /// Publishes the books to the stage's [live account](crate::live) when the last
    /// publication is older than [`PUBLISH_EVERY`]: a clock read a record, no lock (and
    /// without `--metrics`, an atomic load: nothing is published).
    fn publish_now_and_then(&mut self) {
        if crate::live::enabled() && self.published_at.elapsed() >= PUBLISH_EVERY {
            self.publish(false);
        }
    }

    fn publish(&mut self, finished: bool) {
        if !crate::live::enabled() {
            return;
        }
        self.published_at = Instant::now();
        self.live.publish(BooksSnapshot {
            input: self.input_counts.clone(),
            output: self.out.counts().clone(),
            passed_through: self.out.passed().clone(),
            bad_lines: self.bad_lines,
            counters: self.counters.clone(),
            finished,
        });
    }

    /// Marks the run partial (some record failed), without stopping it.
    pub fn mark_partial(&mut self) {
        self.partial = true;
    }

    /// Raises the run's status to at least `status` (e.g. `not-ready`: a start URL could
    /// not be fetched), without stopping it.
    pub fn raise(&mut self, status: Status) {
        self.raised = self.raised.worst(status);
    }

    /// A task of the stage that ended without its result (it panicked; by design it never
    /// does): said on stderr, `<stage>: internal error in <task>: <what>`, and the run
    /// marked partial, so that it does not pass for complete.
    pub fn internal_error(&mut self, task: &str, what: impl fmt::Display) {
        crate::stderr::say(format_args!(
            "{}: internal error in {task}: {what}",
            self.stage
        ));
        self.mark_partial();
    }

    /// Adds `n` to a stage-specific counter of the summary.
    pub fn count(&mut self, counter: &str, n: u64) {
        *self.counters.entry(counter.to_owned()).or_default() += n;
    }

    /// Adds a stage-level note to the summary.
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// True once input ended because of the stop flag.
    pub fn interrupted(&self) -> bool {
        self.interrupted
    }

    /// Input lines that were not valid records, so far.
    pub fn bad_lines(&self) -> u64 {
        self.bad_lines
    }

    /// Records written so far, by kind.
    pub fn output_counts(&self) -> &BTreeMap<String, u64> {
        self.out.counts()
    }

    /// The input's name in messages (`-` for stdin).
    pub fn input_name(&self) -> &str {
        &self.input_name
    }

    /// The status the stage ends with, unless it decides otherwise (see the module docs).
    pub fn status(&self) -> Status {
        if self.interrupted {
            Status::Interrupted
        } else if self.partial || self.bad_lines > 0 {
            self.raised.worst(Status::Partial)
        } else {
            self.raised
        }
    }

    /// Writes the closing `summary` record (with `status`, or [`Books::status`] when
    /// `None`) after the pending ledger, says how many bad lines went unshown, flushes, and
    /// returns the summary.
    pub fn finish(&mut self, status: Option<Status>) -> Result<Summary, PipeError> {
        self.flush_ledger()?;
        report_unshown_bad_lines(&self.stage);
        // The live account gets the summary's numbers (this summary itself not counted,
        // as in its `output`).
        self.publish(true);
        let summary = Summary {
            stage: self.stage.clone(),
            pid: std::process::id(),
            started_at: self.started_at,
            ended_at: Utc::now(),
            input: std::mem::take(&mut self.input_counts),
            output: self.out.counts().clone(),
            passed_through: self.out.passed().clone(),
            bad_lines: self.bad_lines,
            status: status.unwrap_or_else(|| self.status()),
            counters: std::mem::take(&mut self.counters),
            notes: std::mem::take(&mut self.notes),
            peak_rss_bytes: crate::peak_rss_bytes(),
            extra: Default::default(),
        };
        self.out.write(&Record::Summary(summary.clone()))?;
        self.out.flush()?;
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn books(strict: bool) -> Books<Vec<u8>> {
        let mut opts = PipeOptions::new("rip-test");
        opts.strict = strict;
        Books::new(&opts, NdjsonWriter::new(Vec::new()))
    }

    fn line(text: &str) -> Line {
        Line::from_text(text).unwrap()
    }

    #[test]
    fn the_status_is_the_worst_raised_unless_interrupted() {
        let mut b = books(false);
        assert_eq!(b.status(), Status::Complete);
        b.mark_partial();
        assert_eq!(b.status(), Status::Partial);
        b.raise(Status::NotReady);
        assert_eq!(b.status(), Status::NotReady);
        b.raise(Status::Partial);
        assert_eq!(b.status(), Status::NotReady, "never lowered");
        b.raise(Status::Failed);
        assert_eq!(b.status(), Status::Failed);
        b.interrupted = true;
        assert_eq!(b.status(), Status::Interrupted);
    }

    #[test]
    fn a_bad_record_is_a_bad_line() {
        let mut b = books(false);
        let l = b.read(Ok(line("{\"_type\":\"ref\"}"))).unwrap().unwrap();
        b.bad_record(&l, "no url").unwrap();
        let summary = b.finish(None).unwrap();
        assert_eq!((summary.bad_lines, summary.input.get("ref")), (1, Some(&1)));
        assert_eq!(summary.status, Status::Partial);

        let mut b = books(true);
        let l = b.read(Ok(line("{\"_type\":\"ref\"}"))).unwrap().unwrap();
        let err = b.bad_record(&l, "no url").unwrap_err().to_string();
        assert_eq!(err, "-:0: no url (stopping: --strict)");
    }

    #[test]
    fn an_internal_error_makes_the_run_partial() {
        let mut b = books(false);
        b.internal_error("a fetch task", "task 7 panicked");
        assert_eq!(b.finish(None).unwrap().status, Status::Partial);
    }
}
