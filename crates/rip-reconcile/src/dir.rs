//! Folder mode: the output folder of `rip-write` (`<out>/<target>/<slug>.json`), each
//! file one doc or one error document, compact or pretty-printed.
//!
//! As in the reference's `reconcile:identity`, every `*.json` file directly in the folder
//! is read (sub-folders such as `raw/` are not), and partitioned: `_type` `error` is a
//! failure; `_type` `doc`, or no `_type` but a `url`, is a doc; anything else (the
//! reports `crawl-health.json` and `failures.json`, arrays, other kinds) is left alone.
//! Each verdict is written into its error document's own file, atomically (a temporary
//! file in the same folder, then a rename), keeping the file's permissions and its
//! compact or pretty layout; a file whose verdict did not change is not rewritten.
//! `*.jsonl` files (`rip-write --jsonl`: `docs.jsonl`, `errors.jsonl`, …) are read as
//! streams of records, and a JSONL file holding error documents is rewritten the same
//! way, every other line kept byte for byte.
//! Like the stream mode, it reads docs twice and keeps only what the index needs. The
//! record files are read in the order they lie on the disk (`rip_core::folder`), and a
//! failure's candidates are listed by URL, so that the verdicts do not depend on it.

use rip_core::folder::{self, Folder, FolderError, RecordFile, RecordFiles};
use rip_core::ndjson::MalformedLine;
use rip_core::{DecodeError, Kind, Line, ReadError, Record, Resolution, Status, Summary};
use std::collections::BTreeMap;
use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::reconciler::{Index, Reconciler};
use crate::{Error, count_verdicts, pick};

/// A record file that could not be read or given its verdict: reported, counted as a bad
/// line, and skipped (the rest of the folder is reconciled).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read, or is not JSON.
    #[error(transparent)]
    Folder(#[from] FolderError),
    /// A `*.json` file says it is an error document but does not decode as one.
    #[error("{}: bad `error` record: {source}", path.display())]
    BadErrorFile {
        /// The file.
        path: PathBuf,
        /// What the decoder said.
        source: serde_json::Error,
    },
    /// An error document on a line of a JSONL file does not decode.
    #[error("{}:{line}: {error}", path.display())]
    BadErrorLine {
        /// The file.
        path: PathBuf,
        /// The 1-based line number.
        line: u64,
        /// What the decoder found wrong.
        error: Box<DecodeError>,
    },
    /// The file changed between reading it and writing its verdict.
    #[error("{}: changed while reconciling; not rewritten", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
    },
    /// The error document with its verdict could not be encoded.
    #[error("{}: {source}", path.display())]
    Encode {
        /// The file.
        path: PathBuf,
        /// What the encoder said.
        source: serde_json::Error,
    },
    /// The file could not be rewritten.
    #[error("{}: cannot write the verdict: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// The record files and JSONL files of `dir`; a folder whose records are all in
/// sub-folders is an error with a hint.
fn folder_files(dir: &Path) -> Result<Folder, Error> {
    let folder = Folder::list(dir)?;
    if folder.records_are_in_subfolders() {
        return Err(Error::NoRecords {
            dir: dir.to_owned(),
        });
    }
    Ok(folder)
}

/// The verdicts with their candidates sorted: the record files are read in the order
/// they lie on the disk, which two copies of a folder do not share.
fn in_url_order(mut verdicts: Vec<Resolution>) -> Vec<Resolution> {
    for v in &mut verdicts {
        if let Resolution::Missing { candidates } = v {
            candidates.sort_unstable();
        }
    }
    verdicts
}

/// Hands each line of a JSONL file to `f` (malformed lines as `Err`).
fn each_line(path: &Path, mut f: impl FnMut(Result<Line, MalformedLine>)) -> Result<(), Error> {
    for item in folder::open_stream(path)? {
        match item {
            Ok(line) => f(Ok(line)),
            Err(ReadError::Malformed(m)) => f(Err(m)),
            Err(e) => return Err(Error::Read(e)),
        }
    }
    Ok(())
}

/// Reconciles the folder `dir` in place, then writes this stage's summary record to
/// `output`. Bad files are reported on stderr and counted; the run goes on.
pub fn run_dir<W: Write>(reconciler: &Reconciler, dir: &Path, output: W) -> Result<Summary, Error> {
    let started_at = chrono::Utc::now();
    let folder = folder_files(dir)?;
    let mut run = DirRun::new(reconciler);
    run.index_error_files(&folder.records)?;
    run.index_jsonl_errors(&folder.jsonl)?;
    run.show_docs(&folder)?;
    let verdicts = in_url_order(run.index.verdicts());
    let written = run.write_verdicts(&verdicts);
    let summary = run.summary(dir, started_at, &verdicts, written);
    let mut w = rip_core::NdjsonWriter::new(output);
    w.write(&Record::Summary(summary.clone()))
        .and_then(|()| w.flush())
        .map_err(Error::Output)?;
    Ok(summary)
}

/// One reconciliation of a folder: pass 1 indexes the failures, pass 2 shows the index
/// the docs, pass 3 writes each verdict into its file.
struct DirRun<'r> {
    reconciler: &'r Reconciler,
    index: Index<'r>,
    /// Records read, by kind.
    input: BTreeMap<String, u64>,
    /// Bad files and lines.
    bad: u64,
    /// The `*.json` files holding error documents, in index order.
    error_files: Vec<PathBuf>,
    /// The JSONL files holding error documents, in index order (after `error_files`).
    jsonl_with_errors: Vec<PathBuf>,
}

impl<'r> DirRun<'r> {
    fn new(reconciler: &'r Reconciler) -> Self {
        Self {
            reconciler,
            index: reconciler.empty_index(),
            input: BTreeMap::new(),
            bad: 0,
            error_files: Vec::new(),
            jsonl_with_errors: Vec::new(),
        }
    }

    fn report(&mut self, problem: impl Display) {
        rip_core::ndjson::report_bad_line(&problem);
        self.bad += 1;
    }

    fn count(&mut self, kind: &str) {
        *self.input.entry(kind.to_owned()).or_default() += 1;
    }

    /// Pass 1, `*.json` files: indexes each error document, counts the docs.
    fn index_error_files(&mut self, files: &RecordFiles) -> Result<(), Error> {
        for path in files.iter() {
            let path = path?;
            match folder::read_record(&path) {
                Err(e) => self.report(e),
                Ok(RecordFile {
                    text,
                    kind: Some(Kind::Error),
                }) => match serde_json::from_str::<Record>(&text) {
                    Ok(Record::Error(e)) => {
                        self.index.push(&e);
                        self.error_files.push(path);
                        self.count("error");
                    }
                    Ok(_) => {}
                    Err(source) => self.report(FileError::BadErrorFile { path, source }),
                },
                Ok(RecordFile {
                    kind: Some(Kind::Doc),
                    ..
                }) => self.count("doc"),
                Ok(_) => {}
            }
        }
        Ok(())
    }

    /// Pass 1, JSONL files: counts every record, indexes the error documents.
    fn index_jsonl_errors(&mut self, jsonl: &[PathBuf]) -> Result<(), Error> {
        for path in jsonl {
            let mut has_errors = false;
            each_line(path, |item| match item {
                Err(m) => self.report(m),
                Ok(line) => {
                    self.count(line.kind().as_str());
                    has_errors |= self.index_error_line(path, &line);
                }
            })?;
            if has_errors {
                self.jsonl_with_errors.push(path.clone());
            }
        }
        Ok(())
    }

    /// Indexes the error document on `line`, if it is one; true when it was.
    fn index_error_line(&mut self, path: &Path, line: &Line) -> bool {
        if line.kind() != &Kind::Error {
            return false;
        }
        match line.decode() {
            Ok(Record::Error(e)) => {
                self.index.push(&e);
                true
            }
            Ok(_) => false,
            Err(error) => {
                self.report(FileError::BadErrorLine {
                    path: path.to_owned(),
                    line: line.number(),
                    error: Box::new(error),
                });
                false
            }
        }
    }

    /// Pass 2: shows the index every doc's key fields, when the reconciler reads docs and
    /// there is a failure to match.
    fn show_docs(&mut self, folder: &Folder) -> Result<(), Error> {
        if !self.reconciler.needs_docs() || self.index.is_empty() {
            return Ok(());
        }
        let fields = self.index.doc_fields();
        let wanted: Vec<&str> = fields.iter().map(String::as_str).collect();
        for path in folder.records.iter() {
            if let Ok(RecordFile {
                text,
                kind: Some(Kind::Doc),
            }) = folder::read_record(&path?)
                && let Ok(fields) = pick::pick(&text, &wanted)
            {
                self.index.add_doc(&fields);
            }
        }
        for path in &folder.jsonl {
            each_line(path, |item| {
                if let Ok(line) = item
                    && line.kind() == &Kind::Doc
                    && let Ok(fields) = pick::pick(line.text(), &wanted)
                {
                    self.index.add_doc(&fields);
                }
            })?;
        }
        Ok(())
    }

    /// Pass 3: each verdict into its file. Returns the number of files rewritten.
    fn write_verdicts(&mut self, verdicts: &[Resolution]) -> u64 {
        let mut written = 0u64;
        let error_files = std::mem::take(&mut self.error_files);
        for (path, verdict) in error_files.iter().zip(verdicts) {
            match write_verdict(path, verdict) {
                Ok(changed) => written += u64::from(changed),
                Err(e) => self.report(e),
            }
        }
        let mut rest = verdicts.get(error_files.len()..).unwrap_or_default();
        for path in std::mem::take(&mut self.jsonl_with_errors) {
            match write_jsonl_verdicts(&path, &mut rest) {
                Ok(changed) => written += u64::from(changed),
                Err(e) => self.report(e),
            }
        }
        written
    }

    /// This stage's summary: what was read, the verdicts, the files rewritten.
    fn summary(
        self,
        dir: &Path,
        started_at: chrono::DateTime<chrono::Utc>,
        verdicts: &[Resolution],
        written: u64,
    ) -> Summary {
        let mut counters: BTreeMap<String, u64> = count_verdicts(verdicts)
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        counters.insert("filesWritten".into(), written);
        Summary {
            stage: "rip-reconcile".into(),
            pid: std::process::id(),
            started_at,
            ended_at: chrono::Utc::now(),
            input: self.input,
            output: BTreeMap::new(),
            passed_through: BTreeMap::new(),
            bad_lines: self.bad,
            status: if self.bad > 0 {
                Status::Partial
            } else {
                Status::Complete
            },
            counters,
            notes: vec![format!("reconciled folder {}", dir.display())],
            peak_rss_bytes: rip_core::peak_rss_bytes(),
            extra: Default::default(),
        }
    }
}

/// Rewrites the JSONL file at `path` with the next verdicts of `verdicts` given to its
/// error documents, in order, atomically. Returns false when nothing changed.
fn write_jsonl_verdicts(path: &Path, verdicts: &mut &[Resolution]) -> Result<bool, FileError> {
    let text = std::fs::read_to_string(path).map_err(|source| FolderError::Read {
        path: path.to_owned(),
        source,
    })?;
    let mut out = Vec::new();
    let mut changed = false;
    for raw in text.lines() {
        let decoded = Line::from_text(raw)
            .ok()
            .filter(|l| l.kind() == &Kind::Error)
            .map(|l| l.decode());
        match decoded {
            Some(Ok(Record::Error(mut e))) => {
                let (verdict, rest) = verdicts.split_first().ok_or_else(|| FileError::Changed {
                    path: path.to_owned(),
                })?;
                *verdicts = rest;
                if e.resolution.as_ref() != Some(verdict) {
                    changed = true;
                    e.resolution = Some(verdict.clone());
                }
                serde_json::to_writer(&mut out, &Record::Error(e)).map_err(|source| {
                    FileError::Encode {
                        path: path.to_owned(),
                        source,
                    }
                })?;
            }
            _ => out.extend_from_slice(raw.as_bytes()),
        }
        out.push(b'\n');
    }
    if changed {
        replace_file(path, &out)?;
    }
    Ok(changed)
}

/// Writes `verdict` into the error document at `path`, atomically. Returns false when
/// the file already held that verdict.
fn write_verdict(path: &Path, verdict: &Resolution) -> Result<bool, FileError> {
    let RecordFile { text, .. } = folder::read_record(path)?;
    let Ok(Record::Error(mut e)) = serde_json::from_str::<Record>(&text) else {
        return Err(FileError::Changed {
            path: path.to_owned(),
        });
    };
    if e.resolution.as_ref() == Some(verdict) {
        return Ok(false);
    }
    e.resolution = Some(verdict.clone());
    let record = Record::Error(e);
    let pretty = text.trim_end().contains('\n');
    let mut bytes = if pretty {
        serde_json::to_vec_pretty(&record)
    } else {
        serde_json::to_vec(&record)
    }
    .map_err(|source| FileError::Encode {
        path: path.to_owned(),
        source,
    })?;
    if text.ends_with('\n') {
        bytes.push(b'\n');
    }
    replace_file(path, &bytes)?;
    Ok(true)
}

/// Replaces the file at `path` by `bytes` atomically (a temporary file in the same
/// folder, synced, then renamed over it), keeping its permissions.
fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let fail = |source: std::io::Error| FileError::Write {
        path: path.to_owned(),
        source,
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions()).map_err(fail)?;
    }
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
