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
//!
//! The record files are read in the order they lie on the disk (`rip_core::folder`), which
//! two copies of a folder do not share; the report does not depend on it (the lists are
//! ordered by URL, then content, a URL's kinds of record by name).

use rip_core::Kind;
use rip_core::folder::{self, Folder, RecordFiles};
use std::path::Path;

use crate::{BadInput, Error, Tally};

/// Reads the folder `dir` into `tally`. Bad files and lines are reported and skipped,
/// or with `strict` stop the reading ([`Error::Strict`]).
pub fn tally_dir(dir: &Path, tally: &mut Tally, strict: bool) -> Result<(), Error> {
    let folder = Folder::list(dir)?;
    tally.folder = true;
    let mut doc_files = tally_record_files(&folder.records, tally, strict)?;
    for path in &folder.jsonl {
        let docs_before = tally.records.get("doc").copied().unwrap_or(0);
        crate::tally_lines(folder::open_stream(path)?, tally, strict, |_| true)?;
        doc_files += tally.records.get("doc").copied().unwrap_or(0) - docs_before;
    }
    tally.doc_files = Some(doc_files);
    // A stream saved beside the files: only its bookkeeping.
    let bookkeeping = |kind: &Kind| matches!(kind, Kind::Ledger | Kind::Summary);
    for path in &folder.ndjson {
        crate::tally_lines(folder::open_stream(path)?, tally, strict, bookkeeping)?;
    }
    tally.settle_folder_order();
    Ok(())
}

/// Reads the `*.json` record files into `tally`; returns how many hold a doc.
fn tally_record_files(files: &RecordFiles, tally: &mut Tally, strict: bool) -> Result<u64, Error> {
    let mut doc_files = 0;
    for path in files.iter() {
        let path = path?;
        let file = match folder::read_record(&path) {
            Ok(file) => file,
            Err(e) => {
                tally.bad_input(e, strict)?;
                continue;
            }
        };
        let Some(kind) = file.kind else { continue };
        doc_files += u64::from(kind == Kind::Doc);
        if let Err(source) = tally.text(&kind, &file.text) {
            tally.bad_input(BadInput::RecordFile { path, source }, strict)?;
        }
    }
    Ok(doc_files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The folder is read as `rip-reconcile --dir` reads it (one reader, in
    /// `rip_core::folder`): a link to a record file is a record, a file cut short is a
    /// bad file, and a `_type` that is not a kind's name is not a doc.
    #[test]
    fn the_folder_is_read_as_rip_reconcile_reads_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, elsewhere) = (tmp.path().join("t"), tmp.path().join("elsewhere"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let doc = r#"{"_type":"doc","url":"http://h/a","concept":"page"}"#;
        std::fs::write(elsewhere.join("a.json"), doc).unwrap();
        std::os::unix::fs::symlink(elsewhere.join("a.json"), dir.join("a.json")).unwrap();
        std::fs::write(dir.join("cut.json"), "[1, 2").unwrap();
        std::fs::write(
            dir.join("null.json"),
            r#"{"_type":null,"url":"http://h/n"}"#,
        )
        .unwrap();

        let mut tally = Tally::default();
        tally_dir(&dir, &mut tally, false).unwrap();
        assert_eq!(tally.doc_files, Some(1));
        assert_eq!(tally.first_url.as_deref(), Some("http://h/a"));
        assert_eq!(tally.bad_lines, 1, "the file cut short");

        let err = tally_dir(&dir, &mut Tally::default(), true).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("cut.json: not JSON: EOF while parsing a list at line 1 column 5 (stopping: --strict)"),
            "{err}"
        );
    }
}
