//! warcio (PyPI, [`crate::test_tool`]) on the WARC files a test wrote: the ecosystem's own
//! reader as the judge of what the stages archive.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `warcio ARGS… FILE`: what it printed. Panics with its output when it fails.
pub fn warcio(args: &[&str], file: &Path) -> String {
    let out = Command::new(crate::test_tool("warcio"))
        .args(args)
        .arg(file)
        .output()
        .expect("warcio runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "warcio {args:?} {}: {text}{}",
        file.display(),
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
        for l in warcio(&["index", "-f", "warc-type,warc-target-uri"], f).lines() {
            let v: serde_json::Value = serde_json::from_str(l).expect("warcio index: JSON");
            let kind = v["warc-type"].as_str().unwrap_or_default().to_owned();
            let uri = v["warc-target-uri"].as_str().unwrap_or_default().to_owned();
            *m.entry((kind, uri)).or_insert(0) += 1;
        }
    }
    m
}
