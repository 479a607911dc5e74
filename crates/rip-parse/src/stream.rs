//! Reading a page in one streaming pass, with no tree: a tokenizer
//! ([`rip_html::Scanner`]) and the tree construction rules of ordinary pages run on a stack of
//! open elements (`build`), giving a [`Visitor`] the same events a walk over
//! html5ever's tree would give. On a page whose markup needs what the pass does not
//! model (misnested formatting, content a table would move, framesets, MathML,
//! CDATA…), [`walk`] stops with a [`Bail`] naming why, and the caller reads
//! the page from a tree instead: the pass is an optimisation, never a second opinion.

mod build;
mod kind;
pub mod select;

pub use rip_html::Bail;

use crate::dom::ParseLimits;
use crate::visit::Visitor;

/// Gives `visitor` the events of the page `text`, within `limits` (nesting near
/// `max_depth` goes to the tree path, which refuses it; past the time budget,
/// [`Bail::TOO_SLOW`], and the page fails as the tree path's would:
/// [`crate::dom::DomError::TooSlow`]). The visitor may have seen part of the page when
/// this fails.
pub fn walk(text: &str, limits: ParseLimits, visitor: &mut impl Visitor) -> Result<(), Bail> {
    let text = rip_html::preprocess(text)?;
    build::Builder::new(&text, limits, visitor).run()
}
