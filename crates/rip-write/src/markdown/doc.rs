//! A doc as Markdown: a generic doc is its page, a rules doc a readable list of its fields.

use serde_json::{Map, Value};
use std::fmt::Write as _;

use super::{errors, extracted, line_of, provenance, text};

/// A string value longer than this (or of more than one line) is a section of its own.
const SHORT: usize = 100;

/// A generic doc of an HTML page: concept `page` (rip-parse without rules), with its
/// content (`markdown` or `text`), and not a wiki page's (whose `infobox` and `sections`
/// read best as fields). Whatever other fields it has (metadata, links) stay in its JSON.
pub(super) fn is_generic(record: &Map<String, Value>) -> bool {
    let has = |k: &str| record.contains_key(k);
    record.get("concept").and_then(Value::as_str) == Some("page")
        && (has("markdown") || has("text"))
        && !has("infobox")
        && !has("sections")
}

/// A generic doc's page: a front matter of its metadata, then the page's Markdown, or its
/// text without it. The front matter is YAML whose strings are JSON's (YAML's
/// double-quoted strings and flow sequences): `title` (the `headline`, else the `name`),
/// `url`, `authors`, `published`, `modified`, `siteName`, `lang`, `excerpt`, `image`, each
/// when the doc has it.
pub(super) fn page(record: &Map<String, Value>) -> String {
    let mut out = String::from("---\n");
    let title = record.get("headline").or_else(|| record.get("name"));
    if let Some(v) = title {
        let _ = writeln!(out, "title: {}", Value::String(line_of(v)));
    }
    for key in [
        "url",
        "authors",
        "published",
        "modified",
        "siteName",
        "lang",
        "excerpt",
        "image",
    ] {
        match record.get(key) {
            Some(Value::Array(items)) if !items.is_empty() => {
                let items: Vec<Value> = items.iter().map(|v| Value::String(line_of(v))).collect();
                let _ = writeln!(out, "{key}: {}", Value::Array(items));
            }
            Some(v @ (Value::String(_) | Value::Number(_))) => {
                let _ = writeln!(out, "{key}: {}", Value::String(line_of(v)));
            }
            _ => {}
        }
    }
    out.push_str("---\n\n");
    let body = ["markdown", "text"]
        .iter()
        .find_map(|k| record.get(*k).and_then(Value::as_str))
        .unwrap_or_default();
    out.push_str(body.trim_end());
    out.push('\n');
    out
}

/// A rules doc (or a wiki page's): its name, where it came from, then its fields.
pub(super) fn fields(record: &Map<String, Value>) -> String {
    let mut out = String::new();
    let url = record.get("url").map(line_of).unwrap_or_default();
    let title = record.get("name").map(line_of).unwrap_or(url);
    let _ = writeln!(out, "# {title}\n");
    provenance(&mut out, record);
    let (long, short): (Vec<_>, Vec<_>) = extracted(record).partition(|(_, v)| is_long(v));
    if !short.is_empty() || !long.is_empty() {
        let _ = writeln!(out, "\n## Fields\n");
    }
    for (k, v) in &short {
        item(&mut out, 0, Some(k), v);
    }
    for (k, v) in long {
        let _ = writeln!(out, "\n### {k}\n\n{}", text(v).trim_end());
    }
    errors(&mut out, record);
    out
}

/// A string too long or too many lines for a list item.
fn is_long(v: &Value) -> bool {
    matches!(v, Value::String(s) if s.len() > SHORT || s.contains('\n'))
}

/// A value as a list item at `indent` spaces, labelled `**key:**` in an object: scalars on
/// its line, lists and objects as a list below it.
fn item(out: &mut String, indent: usize, key: Option<&str>, v: &Value) {
    let pad = " ".repeat(indent);
    let label = key.map(|k| format!("**{k}:** ")).unwrap_or_default();
    match v {
        Value::Array(items) if items.is_empty() => {
            let _ = writeln!(out, "{pad}- {label}(none)");
        }
        Value::Array(items) => {
            let _ = writeln!(out, "{pad}- {}", label.trim_end());
            for v in items {
                element(out, indent + 2, v);
            }
        }
        Value::Object(map) => {
            let _ = writeln!(out, "{pad}- {}", label.trim_end());
            for (k, v) in map {
                item(out, indent + 2, Some(k), v);
            }
        }
        scalar => {
            let _ = writeln!(out, "{pad}- {label}{}", scalar_text(scalar));
        }
    }
}

/// An element of a list: an object's scalar members on one line (`**k:** v · …`), its
/// lists and objects below; anything else as [`item`] writes it.
fn element(out: &mut String, indent: usize, v: &Value) {
    let Value::Object(map) = v else {
        return item(out, indent, None, v);
    };
    let (nested, scalars): (Vec<_>, Vec<_>) = map
        .iter()
        .partition(|(_, v)| matches!(v, Value::Array(_) | Value::Object(_)));
    let line: Vec<String> = scalars
        .iter()
        .map(|(k, v)| format!("**{k}:** {}", scalar_text(v)))
        .collect();
    let _ = writeln!(out, "{}- {}", " ".repeat(indent), line.join(" · "));
    for (k, v) in nested {
        item(out, indent + 2, Some(k), v);
    }
}

/// A scalar on one line; `null` (a value the page did not show) as a dash.
fn scalar_text(v: &Value) -> String {
    match v {
        Value::Null => "—".to_owned(),
        other => line_of(other),
    }
}
