//! The text of a JSON Schema the workspace publishes for one of its configuration files
//! (`docs/schemas/*.schema.json`), generated from the Rust types with schemars.
//!
//! An optional key of a configuration file is simply left out (TOML has no null, and our
//! JSON files leave optional fields out too), so the published schema says "T", not
//! schemars' "T or null" with `default: null`.

use serde_json::Value;

/// The published text of `schema`: nulls dropped as above, pretty-printed, ending with a
/// newline (as committed).
pub fn publish(mut schema: Value) -> String {
    drop_null(&mut schema);
    let mut text = serde_json::to_string_pretty(&schema).expect("a JSON value serialises");
    text.push('\n');
    text
}

/// Rewrites "T or null" as "T", recursively, and drops `default: null`.
pub fn drop_null(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.get("default") == Some(&Value::Null) {
                map.remove("default");
            }
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(any)) = map.get_mut("anyOf") {
                any.retain(|s| s.get("type") != Some(&Value::String("null".into())));
                if any.len() == 1 {
                    let only = any.remove(0);
                    map.remove("anyOf");
                    if let Value::Object(inner) = only {
                        for (k, v) in inner {
                            map.entry(k).or_insert(v);
                        }
                    }
                }
            }
            map.values_mut().for_each(drop_null);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn optional_types_lose_their_null() {
        let text = publish(json!({
            "properties": {
                "a": {"type": ["string", "null"], "default": null},
                "b": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}], "description": "b"},
                "c": {"type": ["string", "integer", "null"]},
                "d": {"items": [{"type": ["boolean", "null"]}]}
            }
        }));
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["properties"]["a"], json!({"type": "string"}));
        assert_eq!(
            v["properties"]["b"],
            json!({"$ref": "#/$defs/B", "description": "b"})
        );
        assert_eq!(v["properties"]["c"], json!({"type": ["string", "integer"]}));
        assert_eq!(v["properties"]["d"]["items"][0], json!({"type": "boolean"}));
        assert!(text.ends_with("}\n"));
    }
}
