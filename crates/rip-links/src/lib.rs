#![deny(missing_docs)]
//! `rip-links`: the links on an HTML page, as a crawler follows them.
//!
//! [`extract`] gives a page's `<a href>` links in document order ([`Extracted`]): each
//! href as written (character references decoded, not resolved), its text (whitespace
//! collapsed and bounded; an image's `alt` or the link's `title` when it has none) and
//! whether `rel` says `nofollow`; with them the page's first `<base href>` and whether a
//! robots `<meta>` forbids following any link. Links inside `<script>`, `<style>`,
//! `<textarea>`, `<noscript>` and the other raw-text elements, or inside comments, are no
//! links; SVG and MathML are foreign content, as a browser reads them.
//!
//! One extractor: [`rip_html`]'s streaming tokenizer reads the page (`stream.rs`) and
//! hands its tokens to the one collector (`collect.rs`) where those rules live. That
//! tokenizer gives up on markup it does not model (CDATA, a NUL, an ambiguous character
//! reference, a raw text element left open…), and a body sent as UTF-8 may not be valid
//! UTF-8: such a page is tokenized by [`html5gum`] (WHATWG-compliant) with an emitter
//! (`scan.rs`) that feeds the same collector. The fallback is kept because pages need
//! it: of 781 HTML files found on a Debian machine (its packages' documentation,
//! Mozilla's readability test pages, …), 128 needed it (98 for an `<?xml` prolog, a bogus
//! comment the tokenizer has read since as the standard does, which they all stream with
//! now; 24 not valid UTF-8); the Rust documentation and the demo site need it on none. A differential test (`differential.rs`) holds the two tokenizers to the same
//! [`Extracted`] on every page the streaming one reads.
//!
//! [Context rules](context) read a listing page's rows with a tree builder and attach a
//! row's fields to the links [`extract`] found in it.
//!
//! Hrefs are returned as written, not resolved: `<base href>` applies to the whole
//! document even when it comes after a link, so resolution happens once the page is
//! read ([`Extracted::base_url`]).

use encoding_rs::Encoding;
use html5gum::Tokenizer;
use serde_json::{Map, Value};
use std::ops::Range;
use url::Url;

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

/// A link's place in [`Extracted`]'s strings, and what else it holds
/// ([`Extracted::into_parts`]).
#[derive(Debug, Clone)]
pub struct LinkAt {
    /// Where the `href` is in the strings.
    pub href: Range<usize>,
    /// Where the link text is in the strings.
    pub text: Range<usize>,
    /// `rel` contains `nofollow`.
    pub nofollow: bool,
    /// Context found around the link by [context rules](crate::context).
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

    /// Sets the context of link `i` (found by [context rules](crate::context)); nothing
    /// past the last link.
    pub fn set_context(&mut self, i: usize, raw: Map<String, Value>) {
        if let Some(l) = self.links.get_mut(i) {
            l.raw = raw;
        }
    }

    /// The strings and the links' places in them, for a caller that takes each link's
    /// context by value.
    pub fn into_parts(self) -> (String, Vec<LinkAt>) {
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

mod collect;
pub mod context;
#[cfg(test)]
mod differential;
mod scan;
mod stream;
#[cfg(test)]
mod tests;
