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
//! documentation no page fell back and none differed. With a page's hrefs and texts in
//! one string ([`Extracted`]) and its buffers sized up front: 116–125 → 86–94 µs a page.
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
use std::ops::Range;

/// The largest link text kept, in characters.
pub const MAX_LINK_TEXT: usize = 500;
/// Links read from one page at most; the rest are ignored (and counted).
pub const MAX_LINKS_PER_PAGE: usize = 100_000;

/// A link as found on the page: a view into its [`Extracted`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawLink<'a> {
    /// The `href` attribute, entities decoded, not resolved.
    pub href: &'a str,
    /// The link text, whitespace collapsed (or the `alt` of an image inside, or `title`).
    pub text: &'a str,
    /// `rel` contains `nofollow`.
    pub nofollow: bool,
    /// Context found around the link by [context rules](crate::context).
    pub raw: &'a Map<String, Value>,
}

/// A link's place in [`Extracted`]'s strings, and what else it holds.
#[derive(Debug, Clone)]
pub(crate) struct LinkAt {
    pub href: Range<usize>,
    pub text: Range<usize>,
    pub nofollow: bool,
    pub raw: Map<String, Value>,
}

/// What a page holds for the crawler. A page's links keep their hrefs and texts in one
/// string (a page of the Rust documentation has ~370 links: two allocations a link
/// otherwise), read through [`Extracted::links`].
#[derive(Debug, Clone, Default)]
pub struct Extracted {
    /// The first `<base href>`, as written.
    pub base: Option<String>,
    /// The links' hrefs and texts, in document order.
    strings: String,
    links: Vec<LinkAt>,
    /// `<meta name="robots" content="nofollow">` (or `none`): no link on the page is followed.
    pub nofollow_page: bool,
    /// Links past [`MAX_LINKS_PER_PAGE`] that were ignored.
    pub dropped: usize,
}

impl PartialEq for Extracted {
    fn eq(&self, other: &Self) -> bool {
        self.base == other.base
            && self.nofollow_page == other.nofollow_page
            && self.dropped == other.dropped
            && self.links().eq(other.links())
    }
}

impl Extracted {
    /// The links, in document order.
    pub fn links(&self) -> impl ExactSizeIterator<Item = RawLink<'_>> {
        self.links.iter().map(|l| self.view(l))
    }

    /// The `i`th link (`None` past the last).
    pub fn link(&self, i: usize) -> Option<RawLink<'_>> {
        self.links.get(i).map(|l| self.view(l))
    }

    /// How many links the page has.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// True when the page has no link.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Adds a link whose text is known.
    pub fn push(&mut self, href: &str, text: &str, nofollow: bool, raw: Map<String, Value>) {
        let i = self.open(href, nofollow);
        let from = self.mark();
        self.strings.push_str(text);
        self.set_text(i, from);
        self.links[i].raw = raw;
    }

    /// The strings and the links' places in them, for a caller that takes each link's
    /// context by value.
    pub(crate) fn into_parts(self) -> (String, Vec<LinkAt>) {
        (self.strings, self.links)
    }

    /// Room for `links` more links and `bytes` more bytes of their strings.
    fn reserve(&mut self, links: usize, bytes: usize) {
        self.links.reserve(links);
        self.strings.reserve(bytes);
    }

    /// Opens a link whose text comes later ([`Extracted::set_text`]); its index.
    fn open(&mut self, href: &str, nofollow: bool) -> usize {
        let start = self.strings.len();
        self.strings.push_str(href);
        let href = start..self.strings.len();
        let at = self.strings.len();
        self.links.push(LinkAt {
            href,
            text: at..at,
            nofollow,
            raw: Map::new(),
        });
        self.links.len() - 1
    }

    /// The strings' end, where [`Extracted::set_text`]'s text starts.
    fn mark(&self) -> usize {
        self.strings.len()
    }

    /// Link `i`'s text is what was added to the strings since `from` ([`Extracted::mark`]).
    fn set_text(&mut self, i: usize, from: usize) {
        self.links[i].text = from..self.strings.len();
    }

    fn view<'a>(&'a self, l: &'a LinkAt) -> RawLink<'a> {
        RawLink {
            href: &self.strings[l.href.clone()],
            text: &self.strings[l.text.clone()],
            nofollow: l.nofollow,
            raw: &l.raw,
        }
    }

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
    let mut out = String::new();
    collapse_ws_onto(s, &mut out);
    out
}

/// [`collapse_ws`] appended to `out`.
pub fn collapse_ws_onto(s: &str, out: &mut String) {
    if is_collapsed(s.as_bytes()) {
        out.push_str(s);
        return;
    }
    let start = out.len();
    for (n, word) in s.split_whitespace().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() - start > MAX_LINK_TEXT * 4 {
            break;
        }
    }
    if let Some((i, _)) = out[start..].char_indices().nth(MAX_LINK_TEXT) {
        out.truncate(start + i);
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
