//! warcio (PyPI, [`crate::test_tool`]) on the WARC files a test wrote: the ecosystem's own
//! reader as the judge of what the stages archive.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `warcio ARGS… FILE`: what it printed. Panics with its output when it fails.
pub fn warcio(args: &[&str], file: &Path) -> String {
    let mut all: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    all.push(file.as_os_str());
    run(&all)
}

/// `warcio index -f FIELDS FILE`: a JSON object per record, with those fields.
pub fn warcio_index(file: &Path, fields: &str) -> Vec<serde_json::Value> {
    warcio(&["index", "-f", fields], file)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("warcio index: {e}: {l}")))
        .collect()
}

/// `warcio extract --payload FILE OFFSET`: the payload of the record at `offset`.
pub fn warcio_payload(file: &Path, offset: &str) -> String {
    run(&[
        OsStr::new("extract"),
        OsStr::new("--payload"),
        file.as_os_str(),
        OsStr::new(offset),
    ])
}

/// `warcio ARGS…`: what it printed. Panics with its output when it fails.
fn run(args: &[&OsStr]) -> String {
    let out = Command::new(crate::test_tool("warcio"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("warcio runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "warcio {args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// `warcio check -v` on each of `files` (panics naming the one that fails), then `warcio
/// index`: how many records of each `(WARC-Type, WARC-Target-URI)` the files hold together
/// (`warcinfo` records under an empty target).
pub fn checked_records(files: &[PathBuf]) -> BTreeMap<(String, String), usize> {
    let mut m = BTreeMap::new();
    for f in files {
        let report = warcio(&["check", "-v"], f);
        assert!(!report.contains("fail"), "{}: {report}", f.display());
        for v in warcio_index(f, "warc-type,warc-target-uri") {
            let kind = v["warc-type"].as_str().unwrap_or_default().to_owned();
            let uri = v["warc-target-uri"].as_str().unwrap_or_default().to_owned();
            *m.entry((kind, uri)).or_insert(0) += 1;
        }
    }
    m
}
