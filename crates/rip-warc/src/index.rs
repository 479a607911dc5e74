//! `rip-warc index`: a CDXJ index of WARC files, as pywb and `cdxj-indexer` write it, so a
//! replay tool finds each capture: one line per `response`, `revisit`, `resource` and
//! `metadata` record, `<SURT key> <14-digit timestamp> <JSON>`, the JSON holding `url`,
//! `mime`, `status`, `digest` (the payload's, else the block's), `length`, `offset` (those
//! of the record's gzip member) and `filename`; the lines sorted, as a replay tool's binary
//! search needs. Checked against `cdxj-indexer` (PyPI), line for line.
//!
//! ```text
//! com,example)/blog?a=1&b=2 20261201090000 {"url":"https://www.example.com/blog?b=2&a=1","mime":"text/html","status":"200","digest":"sha1:…","length":"1043","offset":"2210","filename":"crawl.warc.gz"}
//! ```
//!
//! The lines are sorted in memory (about 250 bytes a record); a damaged record is reported
//! through `on_damage` with its file and offset and left out.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::read::{Item, Limits, RawRecord, parse_head, read_archive, target_uri};
use crate::record::field;

/// What `rip-warc index` reads.
#[derive(Debug, Clone)]
pub struct IndexConfig {
    /// The WARC files (plain or gzip).
    pub inputs: Vec<PathBuf>,
    /// The bounds of a record.
    pub limits: Limits,
}

/// What an index run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexSummary {
    /// Records read.
    pub records: u64,
    /// Lines written.
    pub indexed: u64,
    /// Damaged records, left out.
    pub damaged: u64,
}

/// What stops an index run.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// An input that cannot be opened or read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The input.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The index could not be written.
    #[error("cannot write the index: {0}")]
    Write(#[source] io::Error),
}

#[derive(Serialize)]
struct Entry<'a> {
    url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    mime: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    digest: Option<&'a str>,
    length: String,
    offset: String,
    filename: &'a str,
}

/// Indexes every input into `out`; `on_damage` hears of each damaged record
/// (`file: record at offset N: what`).
pub fn index(
    config: &IndexConfig,
    mut out: impl Write,
    mut on_damage: impl FnMut(&str),
) -> Result<IndexSummary, IndexError> {
    let mut lines = Vec::new();
    let mut summary = IndexSummary::default();
    for path in &config.inputs {
        let read_error = |source| IndexError::Read {
            path: path.clone(),
            source,
        };
        let file = File::open(path).map_err(read_error)?;
        let filename = filename(path);
        read_archive(file, &config.limits, &mut |item| {
            summary.records += 1;
            match item {
                Item::Record(record) => lines.extend(line(&record, &filename)),
                Item::Damaged(d) => {
                    summary.damaged += 1;
                    on_damage(&format!(
                        "{}: record at offset {}: {}",
                        path.display(),
                        d.offset,
                        d.error
                    ));
                }
            }
            true
        })
        .map_err(read_error)?;
    }
    lines.sort_unstable();
    for l in &lines {
        writeln!(out, "{l}").map_err(IndexError::Write)?;
    }
    out.flush().map_err(IndexError::Write)?;
    summary.indexed = lines.len() as u64;
    Ok(summary)
}

/// The CDXJ line of `record`, when it is a capture (a response, revisit, resource or
/// metadata record: what `cdxj-indexer` indexes; not a request or warcinfo).
fn line(record: &RawRecord, filename: &str) -> Option<String> {
    let kind = record.header.get(field::TYPE)?.to_ascii_lowercase();
    let url = target_uri(record)?;
    let (mime, status) = match kind.as_str() {
        "response" | "revisit" => {
            let head = parse_head(&record.block).ok();
            let status = head.as_ref().map(|h| h.status.to_string());
            let mime = if kind == "revisit" {
                Some("warc/revisit".to_owned())
            } else {
                head.and_then(|h| h.headers.into_iter().find(|(k, _)| k == "content-type"))
                    .map(|(_, v)| rip_core::media_type(&v))
            };
            (mime, status)
        }
        "resource" | "metadata" => (
            record
                .header
                .get(field::CONTENT_TYPE)
                .map(rip_core::media_type),
            None,
        ),
        _ => return None,
    };
    let entry = Entry {
        url,
        mime,
        status,
        digest: record
            .header
            .get(field::PAYLOAD_DIGEST)
            .or_else(|| record.header.get(field::BLOCK_DIGEST)),
        length: record.length.to_string(),
        offset: record.offset.to_string(),
        filename,
    };
    let json = serde_json::to_string(&entry).ok()?;
    let date = timestamp(record.header.get(field::DATE)?)?;
    Some(format!("{} {date} {json}", surt(url)))
}

/// `2026-12-01T09:00:00.125Z` → `20261201090000`.
fn timestamp(date: &str) -> Option<String> {
    let digits: String = date.chars().filter(char::is_ascii_digit).take(14).collect();
    (digits.len() == 14).then_some(digits)
}

/// The SURT key of `url`, as pywb writes it: no scheme, the host's labels reversed
/// (`www.` dropped; an address's numbers too), a port other than the scheme's kept, then
/// `)`, the path without its trailing slash and the query with its arguments sorted, all
/// in lower case.
#[must_use]
pub fn surt(url: &str) -> String {
    let Ok(u) = url::Url::parse(url) else {
        return url.to_ascii_lowercase();
    };
    let host = match u.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.');
            let d = d.strip_prefix("www.").unwrap_or(d);
            d.split('.').rev().collect::<Vec<_>>().join(",")
        }
        // surt reverses the labels of an address too: 127.0.0.1 is 1,0,0,127.
        Some(h) => h.to_string().split('.').rev().collect::<Vec<_>>().join(","),
        None => String::new(),
    };
    let mut key = host;
    if let Some(port) = u.port() {
        key.push_str(&format!(":{port}"));
    }
    key.push(')');
    let path = u.path();
    key.push_str(if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    });
    if let Some(q) = u.query() {
        let mut args: Vec<&str> = q.split('&').collect();
        args.sort_unstable();
        key.push('?');
        key.push_str(&args.join("&"));
    }
    key.to_ascii_lowercase()
}

/// The file name a path gives an index line.
#[must_use]
pub fn filename(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surt_keys_as_pywb_writes_them() {
        assert_eq!(
            surt("https://www.Example.com/Blog?b=2&a=1#x"),
            "com,example)/blog?a=1&b=2"
        );
        assert_eq!(surt("http://example.com"), "com,example)/");
        assert_eq!(surt("http://127.0.0.1:8080/a/"), "1,0,0,127:8080)/a");
        assert_eq!(surt("https://example.com:443/"), "com,example)/");
        assert_eq!(
            timestamp("2026-12-01T09:00:00.125Z").as_deref(),
            Some("20261201090000")
        );
    }
}
