//! JSON-LD blocks: parsed, `@graph` flattened, and read as schema.org nodes.
//!
//! Every `<script type="application/ld+json">` body is parsed as JSON (as extruct
//! does: control characters inside strings are tolerated, a wrapping `<!-- -->` or
//! `<![CDATA[ ]]>` is dropped). A block that still does not parse is a warning naming
//! the block and serde's message, never a failure. A block's items are the block
//! itself, the elements of a top-level array, or the nodes of its `@graph`.

use serde_json::{Map, Value};

/// The items of the blocks, and a warning for each block that does not parse
/// (`jsonLd block 2: expected ',' at line 1 column 40`, blocks counted from 1).
pub fn parse_blocks(blocks: &[String]) -> (Vec<Value>, Vec<String>) {
    let mut items = Vec::new();
    let mut warnings = Vec::new();
    for (i, body) in blocks.iter().enumerate() {
        match parse_block(body) {
            Ok(Some(v)) => flatten(v, &mut items),
            Ok(None) => {}
            Err(e) => warnings.push(format!("jsonLd block {}: {e}", i + 1)),
        }
    }
    (items, warnings)
}

/// One block's value; `None` for an empty block.
fn parse_block(body: &str) -> Result<Option<Value>, serde_json::Error> {
    let mut s = body.trim();
    for (open, close) in [
        ("<!--", "-->"),
        ("<![CDATA[", "]]>"),
        ("//<![CDATA[", "//]]>"),
    ] {
        if let Some(inner) = s.strip_prefix(open) {
            s = inner.strip_suffix(close).unwrap_or(inner).trim();
        }
    }
    if s.is_empty() {
        return Ok(None);
    }
    match serde_json::from_str(s) {
        Ok(v) => Ok(Some(v)),
        Err(first) => {
            // Raw newlines and tabs in strings are common; outside strings they are
            // white space anyway.
            let spaced: String = s
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            serde_json::from_str(&spaced).map(Some).map_err(|_| first)
        }
    }
}

fn flatten(v: Value, items: &mut Vec<Value>) {
    match v {
        Value::Array(a) => a.into_iter().for_each(|v| flatten(v, items)),
        Value::Object(mut m) => match m.remove("@graph") {
            Some(graph) => flatten(graph, items),
            None => items.push(Value::Object(m)),
        },
        _ => {}
    }
}

/// The `@type`s of a node (a string or an array of them), without a schema.org prefix.
pub fn types(node: &Map<String, Value>) -> impl Iterator<Item = &str> {
    let t = node.get("@type");
    let one = t.and_then(Value::as_str);
    let many = t.and_then(Value::as_array).into_iter().flatten();
    one.into_iter()
        .chain(many.filter_map(Value::as_str))
        .map(|t| t.rsplit(['/', ':']).next().unwrap_or(t))
}

/// True for the types an article's metadata is read from.
pub fn is_article(t: &str) -> bool {
    t.ends_with("Article")
        || t.ends_with("Posting")
        || matches!(
            t,
            "Report" | "Review" | "Recipe" | "HowTo" | "Blog" | "Thesis"
        )
}

/// True for a page's own type (`WebPage`, `AboutPage`, …).
pub fn is_page(t: &str) -> bool {
    t.ends_with("Page")
}

/// The schema.org nodes to read metadata from: every item and the nodes inside them
/// (to a small depth: `mainEntity`, `hasPart`, …), articles first, then pages.
pub fn article_nodes(items: &[Value]) -> Vec<&Map<String, Value>> {
    let mut all = Vec::new();
    for item in items {
        collect_nodes(item, 0, &mut all);
    }
    let mut nodes: Vec<_> = all
        .iter()
        .copied()
        .filter(|n| types(n).any(is_article))
        .collect();
    nodes.extend(all.iter().copied().filter(|n| types(n).any(is_page)));
    nodes
}

fn collect_nodes<'v>(v: &'v Value, depth: usize, out: &mut Vec<&'v Map<String, Value>>) {
    if depth > 4 {
        return;
    }
    match v {
        Value::Object(m) => {
            if m.contains_key("@type") {
                out.push(m);
            }
            for (k, v) in m {
                if !matches!(k.as_str(), "author" | "publisher" | "creator" | "image") {
                    collect_nodes(v, depth + 1, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| collect_nodes(v, depth + 1, out)),
        _ => {}
    }
}

/// A node referred to by `{"@id": …}` alone, looked up among the items; the node itself
/// otherwise.
pub fn deref<'v>(v: &'v Value, items: &'v [Value]) -> &'v Value {
    let Some(m) = v.as_object() else { return v };
    match m.get("@id").and_then(Value::as_str) {
        Some(id) if m.len() == 1 => items
            .iter()
            .find(|i| i.get("@id").and_then(Value::as_str) == Some(id))
            .unwrap_or(v),
        _ => v,
    }
}

/// The names in a value that is a string, a node with a `name` (a Person, an
/// Organization), or an array of those; references resolved against `items`.
pub fn names(v: &Value, items: &[Value]) -> Vec<String> {
    match deref(v, items) {
        Value::String(s) => vec![s.trim().to_owned()],
        Value::Array(a) => a.iter().flat_map(|v| names(v, items)).collect(),
        Value::Object(m) => m
            .get("name")
            .and_then(|n| match n {
                Value::Array(a) => a.first().and_then(Value::as_str),
                n => n.as_str(),
            })
            .map(|n| vec![n.trim().to_owned()])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
    .into_iter()
    .filter(|n| !n.is_empty())
    .collect()
}

/// The URL in a value that is a string, an ImageObject (`url` or `contentUrl`), or an
/// array of those (its first).
pub fn url_of<'v>(v: &'v Value, items: &'v [Value]) -> Option<&'v str> {
    match deref(v, items) {
        Value::String(s) => Some(s.as_str()),
        Value::Array(a) => a.iter().find_map(|v| url_of(v, items)),
        Value::Object(m) => m
            .get("url")
            .or_else(|| m.get("contentUrl"))
            .and_then(|u| url_of(u, items)),
        _ => None,
    }
    .map(str::trim)
    .filter(|u| !u.is_empty())
}

/// A string value (the first of an array of strings).
pub fn string<'v>(m: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    match m.get(key)? {
        Value::String(s) => Some(s.trim()),
        Value::Array(a) => a.iter().find_map(Value::as_str).map(str::trim),
        _ => None,
    }
    .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn graphs_flatten_arrays_spread_and_broken_blocks_are_warnings() {
        let blocks = [
            r#"{"@context":"https://schema.org","@graph":[{"@type":"WebSite","name":"S"},{"@type":"Article","headline":"H"}]}"#,
            r#"{"@type":"Person", "name": "A",}"#,
            "[{\"@type\":\"Thing\",\"name\":\"two\nlines\"}, {\"@type\":\"Event\"}]",
            "<!-- {\"@type\":\"Recipe\"} -->",
            "  ",
        ]
        .map(str::to_owned);
        let (items, warnings) = parse_blocks(&blocks);
        assert_eq!(
            items,
            vec![
                json!({"@type":"WebSite","name":"S"}),
                json!({"@type":"Article","headline":"H"}),
                json!({"@type":"Thing","name":"two lines"}),
                json!({"@type":"Event"}),
                json!({"@type":"Recipe"}),
            ]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("jsonLd block 2: trailing comma at line 1"),
            "{warnings:?}"
        );
    }

    #[test]
    fn authors_are_strings_people_arrays_or_references() {
        let items = vec![json!({"@id":"#p","@type":"Person","name":"Ann Lee"})];
        for (v, want) in [
            (json!("Bo"), vec!["Bo"]),
            (json!({"@type":"Person","name":"Cy"}), vec!["Cy"]),
            (
                json!([{"name":"Di"}, "Ed", {"@id":"#p"}]),
                vec!["Di", "Ed", "Ann Lee"],
            ),
            (json!({"@id":"#nobody"}), vec![]),
        ] {
            assert_eq!(names(&v, &items), want, "{v}");
        }
    }
}
