//! warcio (PyPI), installed by `scripts/setup test` into a venv under `target/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `warcio` program; a test fails naming the command to install it when it is missing.
pub fn program() -> PathBuf {
    rip_testkit::test_tool("warcio")
}

/// Runs `warcio ARGS…` and returns its output.
pub fn run(args: &[&str], file: &Path) -> Output {
    Command::new(program())
        .args(args)
        .arg(file)
        .output()
        .expect("warcio runs")
}

/// `warcio check -v FILE`: asserts it passes and returns what it printed.
pub fn check(file: &Path) -> String {
    let out = run(&["check", "-v"], file);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "warcio check failed on {}: {text}{}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// One line of `warcio index`.
#[derive(Debug, serde::Deserialize)]
pub struct Entry {
    /// `WARC-Type`.
    #[serde(rename = "warc-type")]
    pub kind: String,
    /// `WARC-Target-URI`, when the record has one.
    #[serde(rename = "warc-target-uri", default)]
    pub uri: Option<String>,
    /// Where the record's gzip member starts.
    #[serde(deserialize_with = "number")]
    pub offset: u64,
    /// The member's length.
    #[serde(deserialize_with = "number")]
    pub length: u64,
}

fn number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    match v {
        serde_json::Value::Number(n) => n.as_u64().ok_or_else(|| serde::de::Error::custom("u64")),
        serde_json::Value::String(s) => s.parse().map_err(serde::de::Error::custom),
        other => Err(serde::de::Error::custom(format!("not a number: {other}"))),
    }
}

use serde::Deserialize as _;

/// `warcio index` of `file`: every record, in order.
pub fn index(file: &Path) -> Vec<Entry> {
    let out = run(
        &["index", "-f", "warc-type,warc-target-uri,offset,length"],
        file,
    );
    assert!(
        out.status.success(),
        "warcio index failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}
