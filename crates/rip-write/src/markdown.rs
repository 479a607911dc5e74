//! Markdown renderings of terminal records (`--markdown`): a page per doc or error
//! document, for people reading the output folder.
//!
//! - A generic doc (`rip-parse` without rules: concept `page`, with its `markdown` or
//!   `text`; not a wiki page's) is the page itself: its `markdown` (`rip-parse
//!   --markdown`), else its `text`, under a small front matter of title and URL
//!   (`doc::page`). Its other fields (links, metadata) are in its JSON.
//! - A doc of a rules file (or a wiki page) is a readable document: a title, where it came
//!   from, then its extracted fields, short values as a list and long ones, lists and
//!   objects as sections of their own (`doc::fields`). The bookkeeping fields are
//!   rip-core's [`DOC_RESERVED_FIELDS`], not a copy of them.
//! - An error document or an `expected` record: what failed (or is a known gap), where the
//!   URL was found, and every error of its history.

mod doc;

use rip_core::DOC_RESERVED_FIELDS;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// A value as text: strings as they are, the rest as JSON.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A value on one line.
fn line_of(v: &Value) -> String {
    text(v).replace(['\n', '\r'], " ")
}

/// The Markdown page of a `doc`, `error` or `expected` record.
pub fn render(kind: &str, record: &Map<String, Value>) -> String {
    if kind == "doc" {
        if doc::is_generic(record) {
            return doc::page(record);
        }
        return doc::fields(record);
    }
    let url = record.get("url").map(line_of).unwrap_or_default();
    let mut out = String::new();
    match kind {
        "error" => {
            let _ = writeln!(out, "# Error: {url}\n");
        }
        _ => {
            let _ = writeln!(out, "# Expected gap: {url}\n");
        }
    }
    provenance(&mut out, record);
    errors(&mut out, record);
    out
}

/// The header list: the URL, then where the record came from and what it is (the round
/// when it is not the first).
fn provenance(out: &mut String, record: &Map<String, Value>) {
    let url = record.get("url").map(line_of).unwrap_or_default();
    let _ = writeln!(out, "- URL: <{url}>");
    for (key, label) in [
        ("concept", "Concept"),
        ("id", "Id"),
        ("resolves", "Stands in for"),
        ("status", "Status"),
        ("category", "Category"),
        ("phase", "Phase"),
        ("reason", "Reason"),
        ("attempt", "Round"),
        ("parent", "Found on"),
        ("linkText", "Link text"),
    ] {
        if let Some(v) = record.get(key)
            && !(key == "attempt" && v.as_u64() == Some(0))
        {
            let _ = writeln!(out, "- {label}: {}", line_of(v));
        }
    }
}

/// The `errors` of a record's history, numbered, under their own heading.
fn errors(out: &mut String, record: &Map<String, Value>) {
    let Some(Value::Array(errors)) = record.get("errors") else {
        return;
    };
    if errors.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Errors\n");
    for (i, e) in errors.iter().enumerate() {
        let get = |k: &str| e.get(k).map(line_of).unwrap_or_default();
        let _ = writeln!(
            out,
            "{}. `{}`: {} ({})",
            i + 1,
            get("code"),
            get("message"),
            get("operation")
        );
    }
}

/// The fields of a doc that are extracted, not bookkeeping, in their order.
fn extracted(record: &Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    record
        .iter()
        .filter(|(k, _)| !DOC_RESERVED_FIELDS.contains(&k.as_str()))
}

#[cfg(test)]
mod tests;
