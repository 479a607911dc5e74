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
//! Like the stream mode, it reads docs twice and keeps only what the index needs.

use rip_core::ndjson::MalformedLine;
use rip_core::{Kind, Line, NdjsonReader, ReadError, Record, Resolution, Status, Summary};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::reconciler::Reconciler;
use crate::{Error, count_verdicts, pick};

/// Files over this size are not records and are skipped (with a message).
pub const MAX_FILE: u64 = 256 << 20;

/// File names in an output folder that are reports, not records.
pub const REPORT_FILES: &[&str] = &["crawl-health.json", "failures.json"];

/// What one file in the folder holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A doc (a "concept").
    Doc,
    /// An error document.
    Error,
    /// Something else: a report, an array, another record kind.
    Other,
}

/// The `*.json` files directly in `dir`, sorted by name, reports excluded.
pub fn record_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    Ok(folder_files(dir)?.0)
}

/// The `*.json` record files and the `*.jsonl` files directly in `dir`, each sorted.
fn folder_files(dir: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>), Error> {
    let io = |source| Error::Io {
        path: dir.to_owned(),
        source,
    };
    let mut files = Vec::new();
    let mut jsonl = Vec::new();
    let mut subdirs_with_json = false;
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ty = entry.file_type().map_err(io)?;
        if ty.is_dir() {
            subdirs_with_json |= has_json(&path);
        } else if name.ends_with(".json") && !REPORT_FILES.contains(&name.as_ref()) {
            files.push(path);
        } else if name.ends_with(".jsonl") {
            jsonl.push(path);
        }
    }
    if files.is_empty() && jsonl.is_empty() && subdirs_with_json {
        return Err(Error::NoRecords {
            dir: dir.to_owned(),
        });
    }
    files.sort();
    jsonl.sort();
    Ok((files, jsonl))
}

/// Hands each line of a JSONL file to `f` (malformed lines as `Err`).
fn each_line(path: &Path, mut f: impl FnMut(Result<Line, MalformedLine>)) -> Result<(), Error> {
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    let name = path.display().to_string();
    for item in NdjsonReader::new(std::io::BufReader::new(file), name.as_str()) {
        match item {
            Ok(line) => f(Ok(line)),
            Err(ReadError::Malformed(m)) => f(Err(m)),
            Err(e) => return Err(Error::Read(e)),
        }
    }
    Ok(())
}

fn has_json(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|it| {
        it.flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".json"))
    })
}

/// Reads one record file: its text and what it holds. A file that is not a JSON object,
/// or too large, is an error naming it (the caller reports it and goes on).
pub fn read_record(path: &Path) -> Result<(String, FileKind), String> {
    let shown = path.display();
    let len = std::fs::metadata(path)
        .map_err(|e| format!("{shown}: {e}"))?
        .len();
    if len > MAX_FILE {
        return Err(format!(
            "{shown}: {len} bytes, over the {MAX_FILE}-byte limit; skipped"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    let kind = match serde_json::from_str::<Value>(&text).map(|_| ()) {
        Err(e) => return Err(format!("{shown}: not JSON: {e}")),
        Ok(()) => match pick::pick(&text, &["_type", "url"]) {
            Err(_) => FileKind::Other,
            Ok(f) => match f.get("_type").map(|t| t.as_str()) {
                Some(Some("error")) => FileKind::Error,
                Some(Some("doc")) => FileKind::Doc,
                None if f.get("url").is_some_and(Value::is_string) => FileKind::Doc,
                _ => FileKind::Other,
            },
        },
    };
    Ok((text, kind))
}

/// Reconciles the folder `dir` in place, then writes this stage's summary record to
/// `output`. Bad files are reported on stderr and counted; the run goes on.
pub fn run_dir<W: Write>(reconciler: &Reconciler, dir: &Path, output: W) -> Result<Summary, Error> {
    let started_at = chrono::Utc::now();
    let (files, jsonl) = folder_files(dir)?;
    let mut bad = 0u64;
    let mut input: BTreeMap<String, u64> = BTreeMap::new();
    let report = |message: String, bad: &mut u64| {
        rip_core::ndjson::report_bad_line(&message);
        *bad += 1;
    };

    // Pass 1: the failures.
    let mut index = reconciler.empty_index();
    let mut error_files = Vec::new();
    for path in &files {
        match read_record(path) {
            Err(m) => report(m, &mut bad),
            Ok((text, FileKind::Error)) => match serde_json::from_str::<Record>(&text) {
                Ok(Record::Error(e)) => {
                    index.push(&e);
                    error_files.push(path.clone());
                    *input.entry("error".into()).or_default() += 1;
                }
                Ok(_) => {}
                Err(e) => report(
                    format!("{}: bad `error` record: {e}", path.display()),
                    &mut bad,
                ),
            },
            Ok((_, FileKind::Doc)) => *input.entry("doc".into()).or_default() += 1,
            Ok((_, FileKind::Other)) => {}
        }
    }

    let mut jsonl_with_errors = Vec::new();
    for path in &jsonl {
        let mut has_errors = false;
        each_line(path, |item| match item {
            Err(m) => report(m.to_string(), &mut bad),
            Ok(line) => {
                *input.entry(line.kind().to_string()).or_default() += 1;
                if line.kind() == &Kind::Error {
                    match line.decode() {
                        Ok(Record::Error(e)) => {
                            index.push(&e);
                            has_errors = true;
                        }
                        Ok(_) => {}
                        Err(m) => report(
                            format!("{path}:{}: {m}", line.number(), path = path.display()),
                            &mut bad,
                        ),
                    }
                }
            }
        })?;
        if has_errors {
            jsonl_with_errors.push(path.clone());
        }
    }

    // Pass 2: the docs.
    if reconciler.needs_docs() && !index.is_empty() {
        let fields = index.doc_fields();
        let wanted: Vec<&str> = fields.iter().map(String::as_str).collect();
        for path in &files {
            if let Ok((text, FileKind::Doc)) = read_record(path)
                && let Ok(fields) = pick::pick(&text, &wanted)
            {
                index.add_doc(&fields);
            }
        }
        for path in &jsonl {
            each_line(path, |item| {
                if let Ok(line) = item
                    && line.kind() == &Kind::Doc
                    && let Ok(fields) = pick::pick(line.text(), &wanted)
                {
                    index.add_doc(&fields);
                }
            })?;
        }
    }

    // Pass 3: each verdict into its file.
    let verdicts = index.verdicts();
    let mut written = 0u64;
    for (path, verdict) in error_files.iter().zip(&verdicts) {
        match write_verdict(path, verdict) {
            Ok(true) => written += 1,
            Ok(false) => {}
            Err(m) => report(m, &mut bad),
        }
    }
    let mut rest = verdicts.get(error_files.len()..).unwrap_or_default();
    for path in &jsonl_with_errors {
        match write_jsonl_verdicts(path, &mut rest) {
            Ok(true) => written += 1,
            Ok(false) => {}
            Err(m) => report(m, &mut bad),
        }
    }

    let mut counters: BTreeMap<String, u64> = count_verdicts(&verdicts)
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    counters.insert("filesWritten".into(), written);
    let summary = Summary {
        stage: "rip-reconcile".into(),
        pid: std::process::id(),
        started_at,
        ended_at: chrono::Utc::now(),
        input,
        output: BTreeMap::new(),
        passed_through: BTreeMap::new(),
        bad_lines: bad,
        status: if bad > 0 {
            Status::Partial
        } else {
            Status::Complete
        },
        counters,
        notes: vec![format!("reconciled folder {}", dir.display())],
        extra: Default::default(),
    };
    let mut w = rip_core::NdjsonWriter::new(output);
    w.write(&Record::Summary(summary.clone()))
        .and_then(|()| w.flush())
        .map_err(Error::Output)?;
    Ok(summary)
}

/// Rewrites the JSONL file at `path` with the next verdicts of `verdicts` given to its
/// error documents, in order, atomically. Returns false when nothing changed.
fn write_jsonl_verdicts(path: &Path, verdicts: &mut &[Resolution]) -> Result<bool, String> {
    let shown = path.display();
    let mut out = Vec::new();
    let mut changed = false;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))?;
    for raw in text.lines() {
        let decoded = Line::from_text(raw)
            .ok()
            .filter(|l| l.kind() == &Kind::Error)
            .map(|l| l.decode());
        match decoded {
            Some(Ok(Record::Error(mut e))) => {
                let (verdict, rest) = verdicts
                    .split_first()
                    .ok_or_else(|| format!("{shown}: changed while reconciling; not rewritten"))?;
                *verdicts = rest;
                if e.resolution.as_ref() != Some(verdict) {
                    changed = true;
                    e.resolution = Some(verdict.clone());
                }
                serde_json::to_writer(&mut out, &Record::Error(e))
                    .map_err(|e| format!("{shown}: {e}"))?;
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
fn write_verdict(path: &Path, verdict: &Resolution) -> Result<bool, String> {
    let shown = path.display();
    let (text, _) = read_record(path)?;
    let Ok(Record::Error(mut e)) = serde_json::from_str::<Record>(&text) else {
        return Err(format!("{shown}: changed while reconciling; not rewritten"));
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
    .map_err(|e| format!("{shown}: {e}"))?;
    if text.ends_with('\n') {
        bytes.push(b'\n');
    }
    replace_file(path, &bytes)?;
    Ok(true)
}

/// Replaces the file at `path` by `bytes` atomically (a temporary file in the same
/// folder, synced, then renamed over it), keeping its permissions.
fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let shown = path.display();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let fail = |e: std::io::Error| format!("{shown}: cannot write the verdict: {e}");
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(bytes).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions()).map_err(fail)?;
    }
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
