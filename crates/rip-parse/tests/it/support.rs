//! Running the binary, building `page` records from fixture files, golden files.

use base64::Engine as _;
use rip_testkit::Stage;
pub use rip_testkit::{Ran, repo, testdata};
use serde_json::{Value, json};

/// The origin fixture pages of the demo site are served from (the test server
/// substitutes `http://SITE_ORIGIN` with its origin; these fixtures do the same).
pub const ORIGIN: &str = "http://127.0.0.1:8080";

/// `rip-parse args…` with `input` on stdin.
pub fn run(args: &[&str], input: &[u8]) -> Ran {
    Stage::new("rip-parse").args(args).stdin(input).run()
}

/// A `page` record as rip-fetch writes it, for `url` with `body` (text, or base64 when
/// the bytes are not UTF-8 or `base64` is set).
pub fn page(url: &str, content_type: &str, body: &[u8], base64: bool) -> Value {
    let mut p = json!({
        "_type": "page",
        "url": url,
        "finalUrl": url,
        "status": 200,
        "contentType": content_type,
        "fetchedAt": "2026-12-01T09:00:00Z",
        "fromCache": false,
        "httpAttempts": 1,
        "elapsedMs": 5,
        "truncated": false,
        "depth": 2,
        "attempt": 0,
    });
    match std::str::from_utf8(body) {
        Ok(text) if !base64 => p["body"] = json!(text),
        _ => {
            p["body"] = json!(base64::engine::general_purpose::STANDARD.encode(body));
            p["bodyEncoding"] = json!("base64");
        }
    }
    p
}

/// A page of the demo site (`testdata/site/<rel>`), as served at [`ORIGIN`]: the
/// `http://SITE_ORIGIN` placeholder replaced byte for byte, no charset in the
/// Content-Type, non-UTF-8 bodies as base64; with its directory as `parent`.
pub fn site_page(rel: &str) -> Value {
    let bytes = std::fs::read(testdata("site").join(rel)).unwrap();
    let bytes = replace(&bytes, b"http://SITE_ORIGIN", ORIGIN.as_bytes());
    let path = rel.strip_suffix("index.html").unwrap_or(rel);
    let url = format!("{ORIGIN}/{path}");
    let content_type = if rel.ends_with(".png") {
        "image/png"
    } else {
        "text/html"
    };
    let mut p = page(&url, content_type, &bytes, false);
    let dir = match path.trim_end_matches('/').rfind('/') {
        Some(i) => format!("{ORIGIN}/{}/", &path[..i]),
        None => format!("{ORIGIN}/"),
    };
    p["parent"] = json!(dir);
    p
}

fn replace(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

/// Every file of the demo site served as a page, sorted by path (HTML and the PNG).
pub fn site_files() -> Vec<String> {
    rip_testkit::files_below(&testdata("site"))
        .into_iter()
        .filter(|f| f.ends_with(".html") || f.ends_with(".png"))
        .collect()
}

pub fn ndjson(records: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        serde_json::to_writer(&mut out, r).unwrap();
        out.push(b'\n');
    }
    out
}

/// Drops what changes from run to run (`failedAt`), so output can be compared.
pub fn stable(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("failedAt");
    }
    v
}

/// Compares output records with a golden NDJSON file under `testdata/parse/golden/`.
/// `UPDATE_GOLDEN=1` rewrites the file instead (review the diff before committing).
pub fn assert_golden(name: &str, records: &[Value]) {
    let path = testdata("parse/golden").join(name);
    let actual: Vec<Value> = records.iter().cloned().map(stable).collect();
    let text = String::from_utf8(ndjson(&actual)).unwrap();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (hint: UPDATE_GOLDEN=1 cargo test -p rip-parse writes it)",
            path.display()
        )
    });
    let expected: Vec<Value> = expected
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        actual.len(),
        expected.len(),
        "{}: {} records, golden has {}",
        path.display(),
        actual.len(),
        expected.len()
    );
    for (i, (a, e)) in actual.iter().zip(&expected).enumerate() {
        assert_eq!(
            a,
            e,
            "{} record {} ({}) differs from the golden file (hint: UPDATE_GOLDEN=1 rewrites it)",
            path.display(),
            i + 1,
            e["url"]
        );
    }
}
