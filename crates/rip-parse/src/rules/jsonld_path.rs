//! `jsonld = "Product.offers.price"`: a field read from the page's JSON-LD.
//!
//! A path is a schema.org type, then property names, joined by dots. The type picks
//! the nodes (every JSON-LD item, `@graph` flattened, and the nodes nested in them, in
//! document order) whose `@type` is it (`*`: any node); each property steps into the
//! value, through arrays (every element) and `{"@id": …}` references to other items.
//! The strings, numbers and booleans reached are the field's values, in order (the
//! first, or all with `list = true`), then go through `regex` and `type` as a
//! selector's do.

use serde_json::{Map, Value};

use crate::generic::meta::jsonld;

/// A parsed `jsonld` path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonLdPath {
    /// The `@type` of the nodes read (`*`: any).
    pub node_type: String,
    /// The properties to step through.
    pub props: Vec<String>,
}

impl std::fmt::Display for JsonLdPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.node_type, self.props.join("."))
    }
}

impl JsonLdPath {
    /// Parses `Type.prop.prop`; the error says what is wrong.
    pub fn parse(path: &str) -> Result<Self, String> {
        let hint = "(hint: a schema.org type then properties, like \"Product.offers.price\", \
                    or \"*.name\" for any node)";
        let mut parts = path.trim().split('.');
        let node_type = parts.next().unwrap_or_default().to_owned();
        let props: Vec<String> = parts.map(str::to_owned).collect();
        if node_type.is_empty() || props.is_empty() {
            return Err(format!(
                "`jsonld = \"{path}\"` needs a type and a property {hint}"
            ));
        }
        for part in std::iter::once(&node_type).chain(&props) {
            if part.is_empty() {
                return Err(format!(
                    "`jsonld = \"{path}\"` has an empty name (two dots, or a dot at an end) {hint}"
                ));
            }
            if part.chars().any(|c| c.is_whitespace() || c == '"') {
                return Err(format!(
                    "`jsonld = \"{path}\"`: `{part}` is not a type or property name {hint}"
                ));
            }
        }
        Ok(Self { node_type, props })
    }

    /// The values the path reaches in the items of a page's JSON-LD blocks.
    pub fn values(&self, blocks: &[String]) -> Vec<String> {
        let (items, _) = jsonld::parse_blocks(blocks);
        let mut nodes = Vec::new();
        for item in &items {
            nodes_of(item, 0, &mut nodes);
        }
        let mut out = Vec::new();
        for node in nodes {
            if self.node_type == "*" || jsonld::types(node).any(|t| t == self.node_type) {
                step(&Value::Object(node.clone()), &self.props, &items, &mut out);
            }
        }
        out
    }
}

fn nodes_of<'v>(v: &'v Value, depth: usize, out: &mut Vec<&'v Map<String, Value>>) {
    if depth > 8 {
        return;
    }
    match v {
        Value::Object(m) => {
            if m.contains_key("@type") {
                out.push(m);
            }
            m.values().for_each(|v| nodes_of(v, depth + 1, out));
        }
        Value::Array(a) => a.iter().for_each(|v| nodes_of(v, depth + 1, out)),
        _ => {}
    }
}

fn step(v: &Value, props: &[String], items: &[Value], out: &mut Vec<String>) {
    let v = jsonld::deref(v, items);
    match (v, props.split_first()) {
        (Value::Array(a), _) => a.iter().for_each(|v| step(v, props, items, out)),
        (Value::Object(m), Some((p, rest))) => {
            if let Some(v) = m.get(p) {
                step(v, rest, items, out);
            }
        }
        (Value::String(s), None) => out.push(s.trim().to_owned()),
        (Value::Number(n), None) => out.push(n.to_string()),
        (Value::Bool(b), None) => out.push(b.to_string()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_reach_through_arrays_and_references() {
        let blocks = vec![
            r##"{"@graph":[{"@type":"Product","name":"Lamp","offers":[{"@type":"Offer","price":12.5},
               {"@type":"Offer","price":"11"}],"brand":{"@id":"#b"}},{"@id":"#b","@type":"Brand","name":"Luxo"}]}"##
                .to_owned(),
            "{broken".to_owned(),
        ];
        let p = |s| JsonLdPath::parse(s).unwrap().values(&blocks);
        assert_eq!(p("Product.offers.price"), ["12.5", "11"]);
        assert_eq!(p("Product.brand.name"), ["Luxo"]);
        assert_eq!(p("Offer.price"), ["12.5", "11"]);
        assert_eq!(p("*.name"), ["Lamp", "Luxo"]);
        assert!(p("Event.name").is_empty());
    }

    #[test]
    fn bad_paths_say_why() {
        for bad in [
            "",
            "Product",
            "Product.",
            ".price",
            "Product..price",
            "Product.the price",
        ] {
            let e = JsonLdPath::parse(bad).unwrap_err();
            assert!(
                e.contains("hint: a schema.org type then properties"),
                "{bad}: {e}"
            );
        }
    }
}
