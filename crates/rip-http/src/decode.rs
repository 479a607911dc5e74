//! Turning response bytes into text: which charset, learned from where, or binary.
//!
//! Order: a byte-order mark wins; binary content (by `Content-Type`, or by magic bytes and
//! NULs whatever the label says) is not decoded; then the `Content-Type` charset, unless it
//! claims UTF-8 for bytes that are not (a wrong label); then `<meta charset>` or
//! `<meta http-equiv="Content-Type">` in the first 1024 bytes; then valid UTF-8 is UTF-8
//! (`sniffed`); anything else is windows-1252 (`default`), which maps every byte.

use encoding_rs::{Encoding, UTF_8, WINDOWS_1252};
use rip_core::CharsetSource;

/// A body, decoded or found to be binary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyText {
    /// Text, decoded to UTF-8.
    Text {
        /// The decoded text.
        text: String,
        /// The WHATWG name of the charset, lower case (`utf-8`, `windows-1252`, …).
        charset: String,
        /// Where the charset was learned.
        source: CharsetSource,
    },
    /// Not text: the caller encodes it (base64).
    Binary,
}

/// The `charset` parameter of a `Content-Type` value.
pub fn header_charset(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| v.trim().trim_matches(['"', '\'']))
    })
}

/// True when a `Content-Type` names text (HTML, XML, JSON, JavaScript, CSS, `text/*`).
pub fn is_textual(content_type: &str) -> bool {
    let mime = rip_core::media_type(content_type);
    mime.starts_with("text/")
        || mime.ends_with("+xml")
        || mime.ends_with("+json")
        || matches!(
            mime.as_str(),
            "application/xml"
                | "application/json"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-javascript"
                | "application/xhtml+xml"
                | "application/rss+xml"
                | "application/atom+xml"
                | "application/ld+json"
        )
}

/// True when the bytes are recognisably binary: a known file signature, or a NUL byte in
/// the first 1024 bytes.
pub fn looks_binary(body: &[u8]) -> bool {
    const MAGIC: &[&[u8]] = &[
        b"\x89PNG",
        b"GIF8",
        b"\xff\xd8\xff",
        b"%PDF-",
        b"PK\x03\x04",
        b"\x1f\x8b",
        b"RIFF",
        b"\x00\x00\x01\x00",
        b"wOFF",
        b"wOF2",
    ];
    MAGIC.iter().any(|m| body.starts_with(m)) || body[..body.len().min(1024)].contains(&0)
}

/// Finds a charset declared by `<meta>` in the first 1024 bytes (a simplified WHATWG
/// prescan: `<meta charset=…>` and `<meta http-equiv=… content="…; charset=…">`).
pub fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(1024)];
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(i) = find(&lower[from..], b"<meta") {
        let start = from + i + 5;
        let end = lower[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(j) = find(tag, b"charset") {
            let rest = &tag[j + 7..];
            let rest = trim_start(rest);
            if let Some(rest) = rest.strip_prefix(b"=") {
                let rest = trim_start(rest);
                let rest = rest
                    .strip_prefix(b"\"")
                    .or(rest.strip_prefix(b"'"))
                    .unwrap_or(rest);
                let label_end = rest
                    .iter()
                    .position(|&b| matches!(b, b'"' | b'\'' | b';' | b' ' | b'/' | b'>'))
                    .unwrap_or(rest.len());
                if let Some(enc) = Encoding::for_label(&rest[..label_end]) {
                    // A page cannot declare itself UTF-16 from inside ASCII bytes.
                    return Some(
                        if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
                            UTF_8
                        } else {
                            enc
                        },
                    );
                }
            }
        }
        from = end.min(lower.len());
        if from >= lower.len() {
            break;
        }
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn trim_start(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &s[n..]
}

fn text(enc: &'static Encoding, body: &[u8], source: CharsetSource) -> BodyText {
    let (cow, _) = enc.decode_without_bom_handling(body);
    BodyText::Text {
        text: cow.into_owned(),
        charset: enc.name().to_ascii_lowercase(),
        source,
    }
}

/// Decodes `body` given its `Content-Type` (see the module docs for the order).
pub fn decode_body(content_type: Option<&str>, body: &[u8]) -> BodyText {
    if let Some((enc, bom_len)) = Encoding::for_bom(body) {
        return text(enc, &body[bom_len..], CharsetSource::Bom);
    }
    if looks_binary(body) || content_type.is_some_and(|ct| !is_textual(ct)) {
        return BodyText::Binary;
    }
    let declared = content_type
        .and_then(header_charset)
        .and_then(|l| Encoding::for_label(l.as_bytes()));
    let utf8 = std::str::from_utf8(body).ok();
    let utf8_ok = utf8.is_some();
    if let Some(enc) = declared
        && (enc != UTF_8 || utf8_ok)
    {
        if enc == UTF_8 {
            // Already validated: one copy, no second decoding pass.
            return BodyText::Text {
                text: utf8.unwrap_or_default().to_owned(),
                charset: "utf-8".to_owned(),
                source: CharsetSource::Header,
            };
        }
        return text(enc, body, CharsetSource::Header);
    }
    if let Some(enc) = meta_charset(body)
        && (enc != UTF_8 || utf8_ok)
    {
        return text(enc, body, CharsetSource::Meta);
    }
    if utf8_ok {
        return text(UTF_8, body, CharsetSource::Sniffed);
    }
    let source = if declared.is_some() {
        // The label said UTF-8 and the bytes disagreed: our guess, not a default.
        CharsetSource::Sniffed
    } else {
        CharsetSource::Default
    };
    text(WINDOWS_1252, body, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CP1252: &[u8] = b"<p>Caf\xe9 \x80 5</p>";

    fn decoded(ct: Option<&str>, body: &[u8]) -> (String, String, CharsetSource) {
        match decode_body(ct, body) {
            BodyText::Text {
                text,
                charset,
                source,
            } => (text, charset, source),
            BodyText::Binary => panic!("binary"),
        }
    }

    #[test]
    fn header_then_meta_then_sniffing() {
        let (t, c, s) = decoded(Some("text/html; charset=ISO-8859-1"), CP1252);
        assert_eq!(
            (t.as_str(), c.as_str(), s),
            ("<p>Café € 5</p>", "windows-1252", CharsetSource::Header)
        );
        let (t, _, s) = decoded(Some("text/html; charset=utf-8"), CP1252);
        assert_eq!((t.as_str(), s), ("<p>Café € 5</p>", CharsetSource::Sniffed));
        let meta = b"<meta charset=\"windows-1252\"><p>Caf\xe9</p>";
        let (t, c, s) = decoded(Some("text/html"), meta);
        assert!(t.ends_with("Café</p>"));
        assert_eq!((c.as_str(), s), ("windows-1252", CharsetSource::Meta));
        let equiv =
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\">\xe9";
        assert_eq!(decoded(None, equiv).2, CharsetSource::Meta);
        let (t, c, s) = decoded(Some("text/html"), "é".as_bytes());
        assert_eq!(
            (t.as_str(), c.as_str(), s),
            ("é", "utf-8", CharsetSource::Sniffed)
        );
        assert_eq!(decoded(None, CP1252).2, CharsetSource::Default);
    }

    #[test]
    fn bom_wins_and_binary_is_binary() {
        let (t, c, s) = decoded(
            Some("text/html; charset=windows-1252"),
            b"\xef\xbb\xbfhi \xc3\xa9",
        );
        assert_eq!(
            (t.as_str(), c.as_str(), s),
            ("hi é", "utf-8", CharsetSource::Bom)
        );
        assert_eq!(decode_body(Some("image/png"), b"abc"), BodyText::Binary);
        assert_eq!(
            decode_body(Some("text/html; charset=utf-8"), b"\x89PNG\r\n\x1a\n"),
            BodyText::Binary
        );
        assert_eq!(
            header_charset("text/html; Charset=\"UTF-8\""),
            Some("UTF-8")
        );
    }
}
