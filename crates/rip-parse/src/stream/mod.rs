//! Reading a page in one streaming pass, with no tree: a tokenizer
//! ([`scan`]) and the tree construction rules of ordinary pages run on a stack of
//! open elements ([`build`]), giving a [`Visitor`] the same events a walk over
//! html5ever's tree would give. On a page whose markup needs what the pass does not
//! model (misnested formatting, content a table would move, framesets, MathML, a
//! bogus comment…), [`walk`] stops with a [`Bail`] naming why, and the caller reads
//! the page from a tree instead: the pass is an optimisation, never a second opinion.

mod build;
mod entity;
mod kind;
mod scan;
pub mod select;

use std::borrow::Cow;

use crate::dom::ParseLimits;
use crate::visit::Visitor;

/// Why the streaming pass gave a page up (the tree path reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bail(pub &'static str);

impl std::fmt::Display for Bail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Bail {
    /// The pass took longer than the time budget: the page fails as the tree path's
    /// would ([`crate::dom::DomError::TooSlow`]) rather than spending a second budget.
    pub const TOO_SLOW: Bail = Bail("parsing took longer than the time budget");
}

/// Gives `visitor` the events of the page `text`, within `limits` (nesting near
/// `max_depth` goes to the tree path, which refuses it; past the time budget,
/// [`Bail::TOO_SLOW`]). The visitor may have seen part of the page when this fails.
pub fn walk(text: &str, limits: ParseLimits, visitor: &mut impl Visitor) -> Result<(), Bail> {
    let text = preprocess(text)?;
    build::Builder::new(&text, limits, visitor).run()
}

/// The input stream as the tokenizer sees it: a leading BOM dropped, CR LF and CR
/// made LF. NUL characters are left to the tree path.
fn preprocess(text: &str) -> Result<Cow<'_, str>, Bail> {
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
