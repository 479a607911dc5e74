//! Links on a page: `<a href>`, the first `<base href>`, `rel=nofollow`,
//! `<meta name=robots content=nofollow>`, and each link's text (whitespace collapsed; an
//! image's `alt` or the link's `title` when it has no text).
//!
//! A page is read first by [`rip_html`]'s streaming tokenizer (`links/stream.rs`), which
//! gives up on markup it does not model; such a page (and a UTF-8 body that is not valid
//! UTF-8) is read by a real HTML tokenizer ([`html5gum`], WHATWG-compliant: it passes
//! html5lib's tokenizer tests) with an emitter that keeps only the tokens links need
//! (`links/scan.rs`). Both hand their tokens to one collector (`links/collect.rs`), and
//! a test checks that they give the same [`Extracted`] on every page the fast path reads.
//! On the Rust std documentation (2,475 pages, ~300 links each) extraction went from
//! ~304 to ~196 µs a page (`examples/extract_speed.rs`); over the whole Rust
//! documentation no page fell back and none differed.
//!
//! Character references are decoded as the spec says (the attribute-value rules
//! included). Links inside `<script>`, `<style>`, `<textarea>`, `<noscript>` and other
//! raw-text elements, or inside comments, are not links, and both readers know it.
//! html5gum replaced `lol_html`, which rewrites (re-serialises) every token it reads: on
//! the crawl benchmark's pages extraction went from ~65 to ~33 µs per page.
//!
//! Hrefs are returned as written (entities decoded), not resolved: `<base href>` applies
//! to the whole document even when it comes after a link, so resolution happens once the
//! page is parsed ([`Extracted::base_url`]).

use encoding_rs::Encoding;
use html5gum::Tokenizer;
use rip_url::Url;
use serde_json::{Map, Value};

/// The largest link text kept, in characters.
pub const MAX_LINK_TEXT: usize = 500;
/// Links read from one page at most; the rest are ignored (and counted).
pub const MAX_LINKS_PER_PAGE: usize = 100_000;

/// A link as found on the page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawLink {
    /// The `href` attribute, entities decoded, not resolved.
    pub href: String,
    /// The link text, whitespace collapsed (or the `alt` of an image inside, or `title`).
    pub text: String,
    /// `rel` contains `nofollow`.
    pub nofollow: bool,
    /// Context found around the link by [context rules](crate::context).
    pub raw: Map<String, Value>,
}

/// What a page holds for the crawler.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Extracted {
    /// The first `<base href>`, as written.
    pub base: Option<String>,
    /// The links, in document order.
    pub links: Vec<RawLink>,
    /// `<meta name="robots" content="nofollow">` (or `none`): no link on the page is followed.
    pub nofollow_page: bool,
    /// Links past [`MAX_LINKS_PER_PAGE`] that were ignored.
    pub dropped: usize,
}

impl Extracted {
    /// The URL links resolve against: `<base href>` resolved against the page URL when
    /// there is a valid one, else the page URL.
    pub fn base_url(&self, page: &Url) -> Url {
        self.base
            .as_deref()
            .and_then(|b| page.join(b.trim()).ok())
            .filter(|b| matches!(b.scheme(), "http" | "https"))
            .unwrap_or_else(|| page.clone())
    }
}

/// Collapses runs of whitespace into one space and trims, cutting at `MAX_LINK_TEXT`.
pub fn collapse_ws(s: &str) -> String {
    if is_collapsed(s.as_bytes()) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len().min(MAX_LINK_TEXT));
    for (n, word) in s.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > MAX_LINK_TEXT * 4 {
            break;
        }
    }
    match out.char_indices().nth(MAX_LINK_TEXT) {
        Some((i, _)) => out[..i].to_owned(),
        None => out,
    }
}

/// True for the common case, checked in one pass: short ASCII text with no blank at
/// either end, no blank but single spaces, and no control characters.
fn is_collapsed(b: &[u8]) -> bool {
    if b.len() > MAX_LINK_TEXT || b.first() == Some(&b' ') || b.last() == Some(&b' ') {
        return false;
    }
    let mut prev_space = false;
    for &c in b {
        if c == b' ' {
            if prev_space {
                return false;
            }
            prev_space = true;
        } else if !(b' '..0x7f).contains(&c) {
            return false;
        } else {
            prev_space = false;
        }
    }
    true
}

/// True when a `rel` value lists `nofollow`.
pub fn rel_nofollow(rel: Option<&str>) -> bool {
    rel.is_some_and(|r| {
        r.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case("nofollow"))
    })
}

/// True when a robots `<meta>` content forbids following links.
pub fn meta_nofollow(content: &str) -> bool {
    content.split(',').any(|t| {
        let t = t.trim();
        t.eq_ignore_ascii_case("nofollow") || t.eq_ignore_ascii_case("none")
    })
}

/// Extracts links from an HTML body in `encoding` (any encoding: bodies not in UTF-8 are
/// decoded to UTF-8 first; invalid UTF-8 is replaced, never an error).
pub fn extract(body: &[u8], encoding: &'static Encoding) -> Extracted {
    if encoding != encoding_rs::UTF_8 {
        let (text, _) = encoding.decode_without_bom_handling(body);
        return extract_text(&text);
    }
    match std::str::from_utf8(body) {
        Ok(text) => extract_text(text),
        Err(_) => {
            tracing::debug!("link extraction: html5gum reads a body that is not UTF-8");
            html5gum_scan(body)
        }
    }
}

/// The streaming scan, or html5gum where it gives up.
fn extract_text(text: &str) -> Extracted {
    stream::scan(text).unwrap_or_else(|bail| {
        tracing::debug!(%bail, "link extraction: html5gum reads the page");
        html5gum_scan(text.as_bytes())
    })
}

/// The page read by html5gum with the link emitter.
fn html5gum_scan(body: &[u8]) -> Extracted {
    Tokenizer::new_with_emitter(body, scan::Scanner::default())
        .find_map(Result::ok)
        .unwrap_or_default()
}

/// The charset to parse a body with: a BOM, then the `Content-Type` charset, then
/// `<meta charset>` in the first 1024 bytes, else UTF-8.
pub fn charset_for(content_type: Option<&str>, body: &[u8]) -> &'static Encoding {
    if let Some((enc, _)) = Encoding::for_bom(body) {
        return enc;
    }
    content_type
        .and_then(rip_http::decode::header_charset)
        .and_then(|l| Encoding::for_label(l.as_bytes()))
        .or_else(|| rip_http::decode::meta_charset(body))
        .unwrap_or(encoding_rs::UTF_8)
}

/// True when a response is HTML: by `Content-Type`, or, without one, by its first bytes.
pub fn is_html(content_type: Option<&str>, body: &[u8]) -> bool {
    match content_type {
        Some(ct) => {
            let mime = ct.split(';').next().unwrap_or("").trim();
            mime.eq_ignore_ascii_case("text/html")
                || mime.eq_ignore_ascii_case("application/xhtml+xml")
        }
        None => {
            let head = &body[..body.len().min(512)];
            let start = head
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(head.len());
            let lower: Vec<u8> = head[start..]
                .iter()
                .take(15)
                .map(u8::to_ascii_lowercase)
                .collect();
            lower.starts_with(b"<!doctype html") || lower.starts_with(b"<html")
        }
    }
}

mod collect;
#[cfg(test)]
mod differential;
mod scan;
mod stream;
#[cfg(test)]
pub(crate) mod tests;
