//! Wikitext, charset decoding and rules files: readers of text.

use std::path::Path;

use rip_http::decode::{BodyText, decode_body, header_charset, is_textual, looks_binary};
use rip_parse::rules::Rules;

use crate::input::{split_nul, text};

/// A title, a NUL, then wikitext: parsing never panics, twice gives the same page, and
/// every infobox field reads back by its key (empty ones as none) and as a number.
pub(crate) fn wikitext(data: &[u8]) {
    let (title, body) = split_nul(data);
    let (title, body) = (text(title), text(body));
    let page = rip_wikitext::parse(&title, &body);
    assert_eq!(rip_wikitext::parse(&title, &body), page);
    if let Some(infobox) = &page.infobox {
        let _ = infobox.kind();
        for (key, value) in &infobox.fields {
            let shown = Some(value.as_str()).filter(|v| !v.is_empty());
            assert_eq!(page.infobox_field(key), shown, "field {key:?}");
            let _ = page.infobox_number(key);
        }
    }
    for section in &page.sections {
        assert!(page.section(&section.title).is_some());
    }
}

/// A `Content-Type` value, a NUL, then a body: decoding never panics, and a body that is
/// UTF-8 (no byte-order mark) and decoded as UTF-8 is kept as it is.
pub(crate) fn charset(data: &[u8]) {
    let (content_type, body) = split_nul(data);
    let content_type = text(content_type);
    let _ = (header_charset(&content_type), is_textual(&content_type));
    let _ = looks_binary(body);
    for ct in [Some(&*content_type), None] {
        if let BodyText::Text { text, charset, .. } = decode_body(ct, body) {
            let plain = std::str::from_utf8(body)
                .ok()
                .filter(|s| !s.starts_with('\u{feff}'));
            if let (Some(plain), "utf-8") = (plain, charset.as_str()) {
                assert_eq!(text, plain);
            }
        }
    }
}

/// A rules file (TOML): compiling never panics, and its problems name lines of the file.
pub(crate) fn rules(data: &[u8]) {
    let source = text(data);
    let path = Path::new("/nonexistent-rip-fuzz/site.rules.toml");
    match Rules::parse(&source, path) {
        Ok(rules) => {
            if let Some(plan) = rules.stream_plan("http://site.test/a/b.html") {
                for concept in plan {
                    assert_eq!(concept.streams(), concept.needs_tree().is_none());
                }
            }
        }
        Err(e) => {
            let lines = source.lines().count().max(1);
            if let rip_parse::rules::RulesError::Invalid { problems, .. } = &e {
                for p in problems {
                    assert!(p.line >= 1 && p.line <= lines + 1, "{p:?} of {lines} lines");
                }
            }
            let _ = e.to_string();
        }
    }
}
