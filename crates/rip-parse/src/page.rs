//! From a `page` record to something to parse: is it HTML, what is its text, what is
//! its base URL.
//!
//! This is where a page's flavour is decided: HTML, which the extractors read;
//! MediaWiki wikitext (`text/x-wiki`, as `rip-fetch` writes wiki pages), which
//! [`crate::wiki`] reads; and everything else (images, PDFs, JSON, plain text), which
//! becomes a `parse.notHtml` failure (or, with `--keep-other`, an `unknown` doc) that
//! says what it was.

use base64::Engine as _;
use rip_core::{BodyEncoding, Page};
use std::borrow::Cow;
use url::Url;

/// What a page's body is.
#[derive(Debug)]
pub enum Body<'a> {
    /// HTML text, ready to parse.
    Html(Cow<'a, str>),
    /// MediaWiki wikitext (`text/x-wiki`).
    Wiki(Cow<'a, str>),
    /// Not HTML nor wikitext: nothing to extract.
    Other {
        /// The media type (lower case, no parameters), or `unknown`.
        media_type: String,
        /// The body's size in bytes (decoded).
        bytes: usize,
    },
}

/// Why a page's body cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BodyError {
    /// `bodyEncoding: base64` with a body that is not base64.
    #[error("the body is not valid base64: {0}")]
    Base64(String),
    /// An HTML media type, but the body holds NUL bytes: binary data, not HTML.
    #[error("the body is labelled {0} but holds binary data (NUL bytes)")]
    Binary(String),
    /// The body is larger than the limit.
    #[error("the body is {bytes} bytes, over the {limit}-byte limit (hint: raise --max-body)")]
    TooLarge {
        /// The body's size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
}

pub use rip_core::media_type;

fn is_html_type(media_type: &str) -> bool {
    matches!(media_type, "text/html" | "application/xhtml+xml")
}

/// The media type MediaWiki gives wikitext (`contentformat`), which `rip-fetch` keeps.
pub const WIKITEXT: &str = "text/x-wiki";

/// True when text with no declared type looks like markup.
fn looks_like_html(text: &[u8]) -> bool {
    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
    let start = text.iter().position(|b| !b.is_ascii_whitespace());
    start.is_some_and(|i| text[i] == b'<')
}

fn has_nul(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(1024)].contains(&0)
}

/// Reads a page's body: its flavour and, for HTML, its text.
pub fn body(page: &Page, max_bytes: usize) -> Result<Body<'_>, BodyError> {
    let bytes: Cow<'_, [u8]> = match page.body_encoding {
        BodyEncoding::Text => Cow::Borrowed(page.body.as_bytes()),
        BodyEncoding::Base64 => Cow::Owned(
            base64::engine::general_purpose::STANDARD
                .decode(page.body.trim())
                .map_err(|e| BodyError::Base64(e.to_string()))?,
        ),
    };
    if bytes.len() > max_bytes {
        return Err(BodyError::TooLarge {
            bytes: bytes.len(),
            limit: max_bytes,
        });
    }
    let declared = page.content_type.as_deref().map(media_type);
    if declared.as_deref() == Some(WIKITEXT) {
        if has_nul(&bytes) {
            return Err(BodyError::Binary(WIKITEXT.into()));
        }
        return Ok(Body::Wiki(match bytes {
            Cow::Borrowed(_) => Cow::Borrowed(page.body.as_str()),
            Cow::Owned(raw) => Cow::Owned(decode(&raw, page.charset.as_deref().or(Some("utf-8")))),
        }));
    }
    let html = match &declared {
        Some(t) if !t.is_empty() => is_html_type(t),
        _ => looks_like_html(&bytes) && !has_nul(&bytes),
    };
    if !html {
        return Ok(Body::Other {
            media_type: declared
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "unknown".to_owned()),
            bytes: bytes.len(),
        });
    }
    if has_nul(&bytes) {
        return Err(BodyError::Binary(declared.unwrap_or_else(|| "html".into())));
    }
    Ok(Body::Html(match bytes {
        Cow::Borrowed(_) => Cow::Borrowed(page.body.as_str()),
        Cow::Owned(raw) => Cow::Owned(decode(&raw, page.charset.as_deref())),
    }))
}

/// Decodes raw HTML bytes: the page's declared charset, else a BOM, else a
/// `<meta charset>` in the first 1,024 bytes, else UTF-8. Bytes that are invalid in
/// the charset become U+FFFD, as in a browser.
fn decode(raw: &[u8], declared: Option<&str>) -> String {
    let encoding = declared
        .and_then(|l| encoding_rs::Encoding::for_label(l.as_bytes()))
        .or_else(|| encoding_rs::Encoding::for_bom(raw).map(|(e, _)| e))
        .or_else(|| meta_charset(&raw[..raw.len().min(1024)]))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(raw);
    text.into_owned()
}

/// The charset a `<meta charset=…>` or `<meta http-equiv … content="…; charset=…">`
/// declares, found by a byte scan (the HTML prescan, simplified).
fn meta_charset(head: &[u8]) -> Option<&'static encoding_rs::Encoding> {
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = find(&lower[from..], b"charset") {
        let mut j = from + i + b"charset".len();
        while j < lower.len() && lower[j].is_ascii_whitespace() {
            j += 1;
        }
        if lower.get(j) == Some(&b'=') {
            j += 1;
            while j < lower.len() && matches!(lower[j], b' ' | b'"' | b'\'') {
                j += 1;
            }
            let end = lower[j..]
                .iter()
                .position(|b| {
                    !(b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b':' | b'.'))
                })
                .map_or(lower.len(), |k| j + k);
            if let Some(e) = encoding_rs::Encoding::for_label(&lower[j..end]) {
                // A page that says UTF-16 in ASCII bytes is not UTF-16 (HTML spec).
                return Some(
                    if e == encoding_rs::UTF_16LE || e == encoding_rs::UTF_16BE {
                        encoding_rs::UTF_8
                    } else {
                        e
                    },
                );
            }
        }
        from += i + 1;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The URL relative links on the page resolve against, before any `<base href>`:
/// where the page was served from (`finalUrl`), else its `url`.
pub fn page_url(page: &Page) -> Result<Url, url::ParseError> {
    Url::parse(&page.final_url).or_else(|_| Url::parse(&page.url))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(body: &str, content_type: Option<&str>, encoding: BodyEncoding) -> Page {
        serde_json::from_value(serde_json::json!({
            "url": "http://h/a", "finalUrl": "http://h/a", "status": 200,
            "fetchedAt": "2026-12-01T09:00:00Z", "body": body, "truncated": false,
            "contentType": content_type,
            "bodyEncoding": if encoding == BodyEncoding::Base64 { "base64" } else { "text" },
        }))
        .unwrap()
    }

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    #[test]
    fn html_is_recognised_by_type_or_by_look() {
        let p = page("<p>x", Some("text/html; charset=utf-8"), BodyEncoding::Text);
        assert!(matches!(body(&p, 1 << 20), Ok(Body::Html(_))));
        let p = page("  <!doctype html><p>x", None, BodyEncoding::Text);
        assert!(matches!(body(&p, 1 << 20), Ok(Body::Html(_))));
        let p = page("{\"a\":1}", Some("application/json"), BodyEncoding::Text);
        match body(&p, 1 << 20).unwrap() {
            Body::Other { media_type, bytes } => {
                assert_eq!((media_type.as_str(), bytes), ("application/json", 7))
            }
            other => panic!("{other:?}"),
        }
        let p = page(
            &b64(b"\x89PNG\r\n\x1a\n\0\0"),
            Some("image/png"),
            BodyEncoding::Base64,
        );
        assert!(matches!(
            body(&p, 1 << 20),
            Ok(Body::Other { bytes: 10, .. })
        ));
    }

    #[test]
    fn base64_html_is_decoded_by_its_charset() {
        let raw = b"<meta charset=\"windows-1252\"><title>Caf\xe9 \x80</title>";
        let p = page(&b64(raw), Some("text/html"), BodyEncoding::Base64);
        match body(&p, 1 << 20).unwrap() {
            Body::Html(text) => assert!(text.contains("Café €"), "{text}"),
            other => panic!("{other:?}"),
        }
        // Invalid UTF-8 with no charset anywhere: replacement characters, not a failure.
        let p = page(
            &b64(b"<p>a\xff\xfeb</p>"),
            Some("text/html"),
            BodyEncoding::Base64,
        );
        match body(&p, 1 << 20).unwrap() {
            Body::Html(text) => assert_eq!(text, "<p>a\u{fffd}\u{fffd}b</p>"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unreadable_bodies_are_errors() {
        let p = page("not base64!", Some("text/html"), BodyEncoding::Base64);
        assert!(matches!(body(&p, 1 << 20), Err(BodyError::Base64(_))));
        let p = page(
            &b64(b"<html>\0\0\0"),
            Some("text/html"),
            BodyEncoding::Base64,
        );
        assert!(matches!(body(&p, 1 << 20), Err(BodyError::Binary(_))));
        let p = page("<p>0123456789</p>", Some("text/html"), BodyEncoding::Text);
        assert!(matches!(
            body(&p, 8),
            Err(BodyError::TooLarge {
                bytes: 17,
                limit: 8
            })
        ));
    }
}
