//! Markdown renderings of terminal records (`--markdown`): a page per doc or error
//! document, for people reading the output folder.

use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Fields shown in the header list rather than the field table.
const HEADER_FIELDS: &[&str] = &[
    "_type",
    "url",
    "concept",
    "id",
    "name",
    "resolves",
    "attempt",
    "httpAttempts",
    "errors",
    "depth",
    "parent",
    "linkText",
    "raw",
    "title",
];

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One table cell: pipes escaped, newlines as `<br>`.
fn cell(v: &Value) -> String {
    text(v)
        .replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace("\r\n", "<br>")
        .replace('\n', "<br>")
}

fn line_of(v: &Value) -> String {
    text(v).replace(['\n', '\r'], " ")
}

/// The Markdown page of a `doc`, `error` or `expected` record.
pub fn render(kind: &str, record: &Map<String, Value>) -> String {
    let mut out = String::new();
    let url = record.get("url").map(line_of).unwrap_or_default();
    let title = match kind {
        "doc" => record
            .get("name")
            .map(line_of)
            .unwrap_or_else(|| url.clone()),
        "error" => format!("Error: {url}"),
        _ => format!("Expected gap: {url}"),
    };
    let _ = writeln!(out, "# {title}\n");
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
        if let Some(v) = record.get(key) {
            let _ = writeln!(out, "- {label}: {}", line_of(v));
        }
    }
    if let Some(Value::Array(errors)) = record.get("errors")
        && !errors.is_empty()
    {
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
    if kind == "doc" {
        let fields: Vec<_> = record
            .iter()
            .filter(|(k, _)| !HEADER_FIELDS.contains(&k.as_str()))
            .collect();
        if !fields.is_empty() {
            let _ = writeln!(out, "\n| field | value |\n|---|---|");
            for (k, v) in fields {
                let _ = writeln!(out, "| {} | {} |", cell(&Value::String(k.clone())), cell(v));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_doc_page_has_its_name_and_an_escaped_field_table() {
        let Value::Object(doc) = json!({"_type":"doc","url":"http://h/a","concept":"item","name":"Rope",
            "attempt":1,"price":"3 gp","note":"a | b\nc","tags":["x","y"]})
        else {
            unreachable!()
        };
        let md = render("doc", &doc);
        assert!(
            md.starts_with("# Rope\n\n- URL: <http://h/a>\n- Concept: item\n"),
            "{md}"
        );
        assert!(md.contains("- Round: 1\n"));
        assert!(md.contains("| price | 3 gp |\n"));
        assert!(md.contains("| note | a \\| b<br>c |\n"), "{md}");
        assert!(md.contains("| tags | [\"x\",\"y\"] |\n"));
    }

    #[test]
    fn an_error_page_lists_every_error() {
        let Value::Object(e) = json!({"_type":"error","url":"http://h/x","status":404,
            "errors":[{"code":"httpError.transient","message":"HTTP 503","operation":"rip-fetch"},
                      {"code":"httpError.permanent","message":"HTTP 404","operation":"rip-fetch"}]})
        else {
            unreachable!()
        };
        let md = render("error", &e);
        assert!(md.starts_with("# Error: http://h/x\n"));
        assert!(md.contains("- Status: 404\n"));
        assert!(
            md.contains("1. `httpError.transient`: HTTP 503 (rip-fetch)\n2. `httpError.permanent`"),
            "{md}"
        );
    }
}
