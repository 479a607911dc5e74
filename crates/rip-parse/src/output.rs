//! Outcomes as output lines: a doc or a failure serialised on the worker that made it.
//!
//! A doc's fields (its text, its links: most of the line) are written straight into the
//! line's buffer, byte for byte as `serde_json` writes them ([`Record::Doc`]), without
//! `serde_json`'s string escaping loop, which looks at one byte at a time: [`escaped`]
//! copies the runs between the bytes JSON escapes, found eight bytes at a time
//! ([`next_escape`]). The doc's other members (URL, context, errors…) still go through
//! `serde_json`.

use rip_core::ndjson::next_escape;
use rip_core::{Doc, Kind, Line, Record};
use serde_json::Value;

use crate::generic::{Heading, Links, Typed};

/// A doc's line: as [`Record::Doc`] writes it, its typed fields (if any) in the place
/// [`Typed::put_into`] gives them among its fields: `headings` before `text`, `links` and
/// `markdown`, `links` before `markdown`.
pub fn doc_line(mut doc: Doc, typed: &Typed) -> Line {
    let fields = std::mem::take(&mut doc.fields);
    let links = typed.links.as_ref();
    let mut out = serde_json::to_string(&Record::Doc(doc)).expect("a record serialises");
    out.reserve(
        fields_size(&fields) + links.map_or(0, links_size) + headings_size(&typed.headings),
    );
    // `{…}` with no fields yet: they follow its last member, as a flattened map's do.
    debug_assert!(out.ends_with('}'));
    out.pop();
    let mut headings = Some(&typed.headings[..]).filter(|h| !h.is_empty());
    let mut markdown = None;
    for (key, value) in &fields {
        if matches!(key.as_str(), "text" | "markdown")
            && let Some(h) = headings.take()
        {
            member(&mut out, "headings");
            headings_json(&mut out, h);
        }
        if key == "markdown" && links.is_some() {
            markdown = Some(value);
            continue;
        }
        member(&mut out, key);
        value_json(&mut out, value);
    }
    if let Some(h) = headings {
        member(&mut out, "headings");
        headings_json(&mut out, h);
    }
    if let Some(links) = links {
        member(&mut out, "links");
        links_json(&mut out, links);
    }
    if let Some(md) = markdown {
        member(&mut out, "markdown");
        value_json(&mut out, md);
    }
    out.push('}');
    // One object: serde_json's, with members written as it writes them.
    Line::from_trusted(Kind::Doc, out)
}

/// A record as a line.
pub fn serialised(record: &Record) -> Line {
    let text = serde_json::to_string(record).expect("a record serialises");
    Line::from_trusted(record.kind(), text)
}

/// About how many bytes `fields` take as JSON (their strings' lengths), to size the line.
fn fields_size(fields: &serde_json::Map<String, Value>) -> usize {
    fields
        .iter()
        .map(|(k, v)| {
            k.len()
                + 4
                + match v {
                    Value::String(s) => s.len() + s.len() / 8,
                    _ => 64,
                }
        })
        .sum()
}

fn headings_size(headings: &[Heading]) -> usize {
    headings
        .iter()
        .map(|h| h.text.len() + h.id.as_ref().map_or(0, |i| i.len() + 8) + 24)
        .sum()
}

fn links_size(links: &Links) -> usize {
    links.text_len() + links.len() * 32
}

/// `,"key":`.
fn member(out: &mut String, key: &str) {
    out.push(',');
    escaped(out, key);
    out.push(':');
}

/// A field's value as `serde_json` writes it: strings and arrays here, the rest (numbers,
/// booleans, null, objects: small) by `serde_json`.
fn value_json(out: &mut String, value: &Value) {
    match value {
        Value::String(s) => escaped(out, s),
        Value::Array(items) => array(out, items, value_json),
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                escaped(out, k);
                out.push(':');
                value_json(out, v);
            }
            out.push('}');
        }
        other => out.push_str(&serde_json::to_string(other).expect("a value serialises")),
    }
}

/// `items` as a JSON array, each written by `item`.
fn array<T>(
    out: &mut String,
    items: impl IntoIterator<Item = T>,
    mut item: impl FnMut(&mut String, T),
) {
    out.push('[');
    for (i, x) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        item(out, x);
    }
    out.push(']');
}

/// The doc's `headings`, as their `Serialize` writes them: `{"level","text","id"?}`.
fn headings_json(out: &mut String, headings: &[Heading]) {
    array(out, headings, |out, h: &Heading| {
        out.push_str("{\"level\":");
        // `Display` writes a number as serde_json does.
        out.push_str(&h.level.to_string());
        out.push_str(",\"text\":");
        escaped(out, &h.text);
        if let Some(id) = &h.id {
            out.push_str(",\"id\":");
            escaped(out, id);
        }
        out.push('}');
    });
}

/// The doc's `links`, as their `Serialize` writes them: `{"href","text","rel"?}`.
fn links_json(out: &mut String, links: &Links) {
    array(out, links.iter(), |out, link| {
        out.push_str("{\"href\":");
        escaped(out, link.href);
        out.push_str(",\"text\":");
        escaped(out, link.text);
        if let Some(rel) = link.rel {
            out.push_str(",\"rel\":");
            escaped(out, rel);
        }
        out.push('}');
    });
}

/// `s` as a JSON string, escaped as `serde_json` escapes it: `\"`, `\\`, `\b`, `\f`,
/// `\n`, `\r`, `\t`, other control characters as `\u00xx`, everything else as is.
pub fn escaped(out: &mut String, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push('"');
    let mut start = 0;
    while let Some(i) = next_escape(b, start) {
        // Before an ASCII byte: a character boundary.
        out.push_str(&s[start..i]);
        match b[i] {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x08 => out.push_str("\\b"),
            0x0C => out.push_str("\\f"),
            c => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(char::from(HEX[usize::from(c >> 4)]));
                out.push(char::from(HEX[usize::from(c & 0xF)]));
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generic::Link;

    fn serde(s: &str) -> String {
        serde_json::to_string(s).unwrap()
    }

    fn ours(s: &str) -> String {
        let mut out = String::new();
        escaped(&mut out, s);
        out
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut cases: Vec<String> = vec![
            String::new(),
            "plain text longer than eight bytes".into(),
            "a\"b\\c\nd\te\rf\u{8}g\u{c}h\u{1}i\u{1f}j\u{7f}k".into(),
            "héllo wörld — ☃ 𝄞 \u{2028}\u{2029}".into(),
            "\"\"\"\"\"\"\"\"\"\\".into(),
        ];
        // Every byte below 0x80 at every place in a 17-byte string (across the 8-byte
        // chunks), and next to multi-byte characters.
        for c in 0u8..0x80 {
            for at in 0..17 {
                let mut s: Vec<char> = "abcdefghijklmnopq".chars().collect();
                s[at] = char::from(c);
                cases.push(s.iter().collect());
                cases.push(format!("é{}€", char::from(c)));
            }
        }
        for s in &cases {
            assert_eq!(ours(s), serde(s), "{s:?}");
        }
    }

    #[test]
    fn a_doc_line_is_byte_identical_to_serde_jsons() {
        let mut fields = serde_json::Map::new();
        fields.insert("canonical".into(), "http://h/\"x\"".into());
        fields.insert("keywords".into(), serde_json::json!(["a", "b\n"]));
        fields.insert(
            "headings".into(),
            serde_json::json!([{"level": 1, "text": "T", "id": "t"}, {"level": 2, "text": "U"}]),
        );
        fields.insert("text".into(), "one\ntwo \"three\"".into());
        fields.insert(
            "nested".into(),
            serde_json::json!({"n": 1.5, "b": true, "z": null}),
        );
        fields.insert("markdown".into(), "# T\n\n[x](http://h/)".into());
        let doc = Doc {
            url: "http://h/a".into(),
            concept: "page".into(),
            id: None,
            name: Some("Ti\"tle".into()),
            context: Default::default(),
            attempt: 1,
            http_attempts: Some(2),
            elapsed_ms: Some(3),
            site_fetch: None,
            errors: Vec::new(),
            fields,
        };
        let mut links = Links::default();
        links.push(Link {
            href: "http://h/b",
            text: "B \\ b",
            rel: None,
        });
        links.push(Link {
            href: "http://h/c",
            text: "",
            rel: Some("nofollow"),
        });
        let typed = Typed {
            headings: Vec::new(),
            links: Some(links),
        };
        let mut whole = doc.clone();
        whole.fields.insert(
            "links".into(),
            crate::generic::links_value(typed.links.as_ref().unwrap()),
        );
        let markdown = whole.fields.shift_remove("markdown").unwrap();
        whole.fields.insert("markdown".into(), markdown);
        let expected = serde_json::to_string(&Record::Doc(whole)).unwrap();
        assert_eq!(doc_line(doc.clone(), &typed).text(), expected);
        // Without links: the fields in their own order.
        let expected = serde_json::to_string(&Record::Doc(doc.clone())).unwrap();
        assert_eq!(doc_line(doc, &Typed::default()).text(), expected);
    }

    /// A generic doc with or without each of its fields: written with its headings and
    /// links typed, it is the line of the doc whose fields are all JSON values (and
    /// `Typed::put_into` puts them back where `into_fields` has them).
    #[test]
    fn typed_headings_and_links_are_written_in_their_place() {
        use crate::generic::Generic;
        for present in 0u32..64 {
            let has = |bit: u32| present & (1 << bit) != 0;
            let generic = || Generic {
                title: Some("T".into()),
                canonical: has(0).then(|| "http://h/c".into()),
                lang: Some("en".into()),
                description: None,
                keywords: if has(1) {
                    vec!["k\"".into()]
                } else {
                    Vec::new()
                },
                headings: if has(2) {
                    vec![
                        Heading {
                            level: 1,
                            text: "One \"1\"".into(),
                            id: Some("one".into()),
                        },
                        Heading {
                            level: 6,
                            text: String::new(),
                            id: None,
                        },
                    ]
                } else {
                    Vec::new()
                },
                text: if has(3) { "a\nb".into() } else { String::new() },
                links: {
                    let mut links = Links::default();
                    if has(4) {
                        links.push(Link {
                            href: "http://h/x",
                            text: "x\\",
                            rel: Some("nofollow"),
                        });
                    }
                    links
                },
                markdown: has(5).then(|| "# One".into()),
                ..Default::default()
            };
            let doc = |fields| Doc {
                url: "http://h/a".into(),
                concept: "page".into(),
                id: None,
                name: Some("T".into()),
                context: Default::default(),
                attempt: 1,
                http_attempts: None,
                elapsed_ms: None,
                site_fetch: None,
                errors: Vec::new(),
                fields,
            };
            let whole = doc(generic().into_fields());
            let expected = serde_json::to_string(&Record::Doc(whole.clone())).unwrap();
            let (fields, typed) = generic().into_fields_and_typed();
            assert_eq!(
                doc_line(doc(fields.clone()), &typed).text(),
                expected,
                "{present:b}"
            );
            let mut put = fields;
            typed.put_into(&mut put);
            assert_eq!(
                serde_json::to_string(&Record::Doc(doc(put))).unwrap(),
                expected,
                "{present:b}"
            );
        }
    }
}
