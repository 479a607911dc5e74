//! Decoding only the fields we need from a record, skipping the rest without building it.
//!
//! A doc can carry a large body (main text, Markdown, raw HTML); the reconciler needs a
//! few short fields of it. [`pick`] walks the JSON object once and keeps only the
//! top-level keys it is asked for; every other value is skipped by the parser
//! (`IgnoredAny`), so no memory is spent on it.

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// The top-level fields of the JSON object `text` whose names are in `wanted`.
pub fn pick(text: &str, wanted: &[&str]) -> Result<Map<String, Value>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let map = Picker { wanted }.deserialize(&mut de)?;
    de.end()?;
    Ok(map)
}

/// The value at `path` in a picked object: a top-level name, or a JSON pointer
/// (`/meta/title`) whose first segment was picked.
pub fn lookup<'a>(fields: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    match path.strip_prefix('/') {
        None => fields.get(path),
        Some(rest) => {
            let (first, tail) = rest.split_once('/').unwrap_or((rest, ""));
            let value = fields.get(&unescape(first))?;
            if tail.is_empty() {
                Some(value)
            } else {
                value.pointer(&format!("/{tail}"))
            }
        }
    }
}

/// The top-level field name a path (name or JSON pointer) needs picked.
pub fn top_field(path: &str) -> String {
    match path.strip_prefix('/') {
        None => path.to_owned(),
        Some(rest) => unescape(rest.split('/').next().unwrap_or("")),
    }
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

struct Picker<'w> {
    wanted: &'w [&'w str],
}

impl<'de> DeserializeSeed<'de> for Picker<'_> {
    type Value = Map<String, Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Picker<'_> {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if self.wanted.contains(&key.as_str()) {
                out.insert(key, map.next_value::<Value>()?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_wanted_fields_and_follows_pointers() {
        let text = r#"{"url":"u","body":{"huge":[1,2,3]},"meta":{"title":"T | S"},"name":"N"}"#;
        let f = pick(text, &["url", "meta", "name"]).unwrap();
        assert_eq!(f.len(), 3);
        assert!(!f.contains_key("body"));
        assert_eq!(lookup(&f, "/meta/title"), Some(&Value::from("T | S")));
        assert_eq!(lookup(&f, "name"), Some(&Value::from("N")));
        assert_eq!(top_field("/meta/title"), "meta");
        assert!(pick("[1]", &["url"]).is_err());
    }
}
