//! Folder mode: an output folder written by `rip-write` (`<out>/<target>/`).
//!
//! Every `*.json` file directly in the folder holding one record is read as that
//! record: `_type` `doc` or `error` (or `expected`), or, as in the reference, no `_type`
//! but a `url` (a doc). Reports (`crawl-health.json`, `failures.json`) and anything that
//! is not a record object are skipped. `*.jsonl` files (`rip-write --jsonl`: `docs.jsonl`,
//! `errors.jsonl`, `expected.jsonl`) are read as streams of records. The folder holds no
//! bookkeeping of its own, so from `*.ndjson` files in it only `ledger` and `summary`
//! records are read (a stream saved beside the files, for instance); without them the
//! ledger cannot be checked (see `--no-ledger`).

use rip_core::{Kind, NdjsonReader, ReadError};
use serde::Deserialize;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::{Error, Tally};

/// Files over this size are skipped with a message.
pub const MAX_FILE: u64 = 256 << 20;

const REPORT_FILES: &[&str] = &["crawl-health.json", "failures.json"];

#[derive(Deserialize)]
struct Peek {
    #[serde(rename = "_type", default)]
    kind: Option<String>,
    #[serde(default)]
    url: Option<serde_json::Value>,
}

/// Reads the folder `dir` into `tally`. Bad files and lines are reported and skipped,
/// or with `strict` stop the reading ([`Error::Strict`]).
pub fn tally_dir(dir: &Path, tally: &mut Tally, strict: bool) -> Result<(), Error> {
    let io = |source| Error::Io {
        path: dir.to_owned(),
        source,
    };
    let mut json: Vec<PathBuf> = Vec::new();
    let mut ndjson: Vec<PathBuf> = Vec::new();
    let mut jsonl: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        if !entry.file_type().map_err(io)?.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".ndjson") {
            ndjson.push(entry.path());
        } else if name.ends_with(".jsonl") {
            jsonl.push(entry.path());
        } else if name.ends_with(".json") && !REPORT_FILES.contains(&name.as_str()) {
            json.push(entry.path());
        }
    }
    json.sort();
    ndjson.sort();
    jsonl.sort();
    let mut doc_files = 0;
    for path in &json {
        match record_file(path) {
            Ok(Some((kind, text))) => {
                if kind == Kind::Doc {
                    doc_files += 1;
                }
                if let Err(m) = tally.text(&kind, &text) {
                    tally.bad_input(format!("{}: {m}", path.display()), strict)?;
                }
            }
            Ok(None) => {}
            Err(m) => tally.bad_input(m, strict)?,
        }
    }
    for path in &jsonl {
        let f = std::fs::File::open(path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        let docs_before = tally.records.get("doc").copied().unwrap_or(0);
        crate::tally_stream(f, &path.display().to_string(), tally, strict)?;
        doc_files += tally.records.get("doc").copied().unwrap_or(0) - docs_before;
    }
    tally.doc_files = Some(doc_files);
    for path in &ndjson {
        let f = std::fs::File::open(path).map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        let name = path.display().to_string();
        for item in NdjsonReader::new(BufReader::new(f), name.as_str()) {
            match item {
                Ok(line) if matches!(line.kind(), Kind::Ledger | Kind::Summary) => {
                    if let Err(m) = tally.line(&line) {
                        tally.bad_input(format!("{name}:{}: {m}", line.number()), strict)?;
                    }
                }
                Ok(_) => {}
                Err(ReadError::Malformed(m)) => tally.bad_input(m.to_string(), strict)?,
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}

/// One record file: its kind and text, `None` when it holds no record.
fn record_file(path: &Path) -> Result<Option<(Kind, String)>, String> {
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
    let peek: Peek = match serde_json::from_str(&text) {
        Ok(p) => p,
        Err(e) if e.is_data() => return Ok(None), // valid JSON, not a record object
        Err(e) => return Err(format!("{shown}: not JSON: {e}")),
    };
    let kind = match peek.kind.as_deref() {
        Some("doc") => Kind::Doc,
        Some("error") => Kind::Error,
        Some("expected") => Kind::Expected,
        None if peek.url.as_ref().is_some_and(serde_json::Value::is_string) => Kind::Doc,
        _ => return Ok(None),
    };
    Ok(Some((kind, text)))
}
