//! A record's identity, the message id that stores a record published twice once.
//!
//! The record contract gives every URL one outcome per kind and round (`docs/records.md`:
//! one outcome per URL; `url` is an identity), so a record of a URL is named by its kind, its
//! `attempt` and its URL. A worker killed after publishing part of its output and before
//! acknowledging its input does the work again; what it publishes the second time has the
//! same identities and is stored once. A record without a URL (`ledger`, `summary`, a kind of
//! the user's) is named by its whole text.

use serde_json::Value;
use xxhash_rust::xxh3::xxh3_128;

/// The `Nats-Msg-Id` of the record on `line`: `<kind>:<attempt>:<hash of url>`, or
/// `<kind>:line:<hash of line>` for a record without a URL. Short and header-safe whatever the
/// URL holds.
pub fn message_id(line: &str) -> String {
    Head::of(line).message_id(line)
}

/// The `_type` of the record on `line` (`unknown` when it has none).
pub fn kind_of(line: &str) -> String {
    Head::of(line).kind
}

/// What a publisher needs of a record, read from its line once: its kind, URL and attempt
/// (its identity and its host's partition), and a ledger's stage and single URL.
pub(crate) struct Head {
    /// The `_type` (`unknown` when it has none or it is not a plain name).
    pub(crate) kind: String,
    /// The `url`, when it has one.
    pub(crate) url: Option<String>,
    attempt: u64,
    /// A ledger's stage, and its URL when it names exactly one.
    stage: String,
    entered_one: Option<String>,
}

impl Head {
    /// The head of the record on `line` (of `unknown` kind when it is not a JSON object).
    pub(crate) fn of(line: &str) -> Self {
        let value: Value = serde_json::from_str(line).unwrap_or(Value::Null);
        let text = |field: &str| value.get(field).and_then(Value::as_str).map(str::to_owned);
        Head {
            kind: text("_type")
                .filter(|k| {
                    k.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                })
                .unwrap_or_else(|| "unknown".to_owned()),
            url: text("url"),
            attempt: value.get("attempt").and_then(Value::as_u64).unwrap_or(0),
            stage: text("stage").unwrap_or_default(),
            entered_one: match value.get("entered").and_then(Value::as_array) {
                Some(urls) if text("_type").as_deref() == Some("ledger") && urls.len() == 1 => {
                    urls[0].as_str().map(str::to_owned)
                }
                _ => None,
            },
        }
    }

    /// The URL of a ledger record that names exactly one.
    pub(crate) fn entered_one(&self) -> Option<&str> {
        self.entered_one.as_deref()
    }

    /// The message id of this record, whose line is `line` (see [`message_id`]).
    pub(crate) fn message_id(&self, line: &str) -> String {
        if let Some(url) = &self.entered_one {
            return format!("ledger:{}:{:032x}", self.stage, xxh3_128(url.as_bytes()));
        }
        match &self.url {
            Some(url) => format!(
                "{}:{}:{:032x}",
                self.kind,
                self.attempt,
                xxh3_128(url.as_bytes())
            ),
            None => format!("{}:line:{:032x}", self.kind, xxh3_128(line.as_bytes())),
        }
    }
}

/// A `ledger` record naming more than one URL, as one ledger record per URL (the other
/// fields kept); `None` for any other record.
pub fn ledger_per_url(line: &str) -> Option<Vec<String>> {
    if !line.contains("\"ledger\"") {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    if value.get("_type")?.as_str()? != "ledger" {
        return None;
    }
    let urls = value.get("entered")?.as_array()?;
    if urls.len() < 2 {
        return None;
    }
    let pieces = urls
        .iter()
        .map(|url| {
            let mut one = value.clone();
            one["entered"] = Value::Array(vec![url.clone()]);
            one.to_string()
        })
        .collect();
    Some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_record_of_a_url_has_one_id_whatever_else_differs() {
        let a = r#"{"_type":"page","url":"http://h/a","attempt":0,"fetchedAt":"1"}"#;
        let b = r#"{"_type":"page","url":"http://h/a","attempt":0,"fetchedAt":"2"}"#;
        assert_eq!(message_id(a), message_id(b));
    }

    #[test]
    fn kind_attempt_and_url_each_make_another_record() {
        let base = message_id(r#"{"_type":"ref","url":"http://h/a","attempt":0}"#);
        for other in [
            r#"{"_type":"page","url":"http://h/a","attempt":0}"#,
            r#"{"_type":"ref","url":"http://h/a","attempt":1}"#,
            r#"{"_type":"ref","url":"http://h/b","attempt":0}"#,
        ] {
            assert_ne!(message_id(other), base, "{other}");
        }
    }

    #[test]
    fn a_url_entering_twice_is_one_ledger_record() {
        let batch =
            r#"{"_type":"ledger","stage":"rip-fetch","entered":["http://h/a","http://h/b"]}"#;
        let again =
            r#"{"_type":"ledger","stage":"rip-fetch","entered":["http://h/c","http://h/a"]}"#;
        let ids = |line| -> Vec<String> {
            ledger_per_url(line)
                .unwrap()
                .iter()
                .map(|l| message_id(l))
                .collect()
        };
        let (first, second) = (ids(batch), ids(again));
        assert_eq!(first.len(), 2);
        assert_eq!(first[0], second[1], "http://h/a has one identity");
        assert_ne!(first[1], second[0]);
        let one: Value = serde_json::from_str(&ledger_per_url(batch).unwrap()[1]).unwrap();
        assert_eq!(one["entered"], serde_json::json!(["http://h/b"]));
        assert_eq!(one["stage"], "rip-fetch");
    }

    #[test]
    fn records_without_a_url_are_named_by_their_text() {
        let a = message_id(r#"{"_type":"summary","stage":"rip-fetch","pid":1}"#);
        let b = message_id(r#"{"_type":"summary","stage":"rip-fetch","pid":2}"#);
        assert_ne!(a, b);
        assert!(a.starts_with("summary:line:"), "{a}");
        assert!(message_id("not json").starts_with("unknown:line:"));
    }
}
