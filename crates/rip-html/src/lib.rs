#![deny(missing_docs)]
//! `rip-html`: a streaming HTML tokenizer for ordinary pages, read straight from the
//! page text with `memchr`, building nothing.
//!
//! [`Scanner`] gives [`Token`]s: start tags (attributes, names lower case, values with
//! character references decoded as the HTML tokenizer decodes them), end tags, text,
//! comments and the doctype; [`Scanner::raw_text`] reads the content of an element the
//! caller knows to be raw text (`script`, `style`, `title`, `textarea`, …) up to its end
//! tag. Bogus comments (`<?xml …?>`, `<![if IE]>`, `</ …>`) are comments, and a page
//! that ends inside a comment, doctype or tag ends as the WHATWG tokenizer ends it.
//! Markup it does not read the way that tokenizer would (CDATA, which is text in SVG
//! and a comment elsewhere; an ambiguous character reference; a NUL…) is a [`Bail`]
//! naming why: the caller reads that page with a complete tokenizer or tree builder
//! instead. The tokenizer is an optimisation, never a second opinion. html5lib's
//! tokenizer tests hold it to that (`tests/it/html5lib.rs`).
//!
//! It knows no tree construction: which elements hold raw text, foreign content and
//! the like are the caller's business. Used by `rip-parse`'s streaming pass (with the
//! tree construction rules of ordinary pages) and `rip-discover`'s link extraction.

use std::borrow::Cow;

mod entity;
mod scan;
pub mod words;

pub use scan::{Quirks, Scanner, Token, byte_table};

/// An attribute as the tokenizer read it: name (lower case) and value (decoded).
pub type Attr<'a> = (Cow<'a, str>, Cow<'a, str>);

/// Why a streaming reader gave a page up (a complete parser reads it instead).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bail(pub &'static str);

impl std::fmt::Display for Bail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Bail {
    /// The reading took longer than its time budget: for a caller with one, the page
    /// fails as the complete parser's would rather than spending a second budget.
    pub const TOO_SLOW: Bail = Bail("parsing took longer than the time budget");
}

/// The input stream as the tokenizer sees it: a leading BOM dropped, CR LF and CR
/// made LF. A NUL character is a [`Bail`] (left to the complete parser).
pub fn preprocess(text: &str) -> Result<Cow<'_, str>, Bail> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let b = text.as_bytes();
    if memchr::memchr(0, b).is_some() {
        return Err(Bail("a NUL character"));
    }
    if memchr::memchr(b'\r', b).is_none() {
        return Ok(Cow::Borrowed(text));
    }
    Ok(Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n")))
}
