//! The fast path: the page read by [`rip_html`]'s streaming tokenizer (`memchr` over the
//! text, no state machine per byte), with the same [`Collector`] as the html5gum
//! emitter. Where that tokenizer would not read the page as html5gum does (CDATA, an
//! ambiguous character reference, a raw-text element left open, a NUL) or where the two could differ in what they keep (a link
//! text past [`MAX_RAW_TEXT`] bytes, an end tag name past [`MAX_NAME`]), it gives up
//! with a [`Bail`] and [`crate::extract`] reads the page with html5gum.

use rip_html::{Bail, Scanner, Token};

use super::Extracted;
use super::collect::{Attr, Collector, MAX_NAME, MAX_RAW_TEXT, RawContent, Tag, Values};

/// The links of `text`, or why the page needs html5gum.
pub(super) fn scan(text: &str) -> Result<Extracted, Bail> {
    let text = rip_html::preprocess(text)?;
    let mut scan = Scanner::new(&text);
    // Only these tags' attributes, and only a link's text, are of use.
    scan.set_attributes_of(|name| Tag::of(name.as_bytes()) != Tag::Other);
    let mut found = Collector::for_page(text.len());
    let mut attrs = Vec::new();
    loop {
        attrs.clear();
        scan.set_decode_text(found.in_link());
        match scan.next(&mut attrs)? {
            Token::Eof => return Ok(found.finish()),
            Token::Text(t) => text_in(&mut found, t.as_bytes())?,
            Token::Start { name, self_closing } => {
                let tag = Tag::of(name.as_bytes());
                found.start_tag(tag, &mut kept(tag, &mut attrs));
                match found.enter_content(name.as_bytes(), self_closing) {
                    None => {}
                    Some(RawContent::PlainText) => return Ok(found.finish()),
                    Some(_) => {
                        // Raw text is no link text: read past it, undecoded, and its end tag.
                        scan.raw_text(&name, false)?;
                        found.end_tag(tag, name.as_bytes());
                    }
                }
            }
            Token::End(name) => {
                if name.len() > MAX_NAME {
                    return Err(Bail("a long end tag name"));
                }
                found.end_tag(Tag::of(name.as_bytes()), name.as_bytes());
            }
            Token::Comment | Token::Doctype(_) => {}
        }
    }
}

/// Text in markup: the open link's. html5gum cuts link text at [`MAX_RAW_TEXT`] bytes
/// at the end of one of its own chunks; rather than guess where, a longer text bails.
fn text_in(found: &mut Collector, text: &[u8]) -> Result<(), Bail> {
    if !found.in_link() {
        return Ok(());
    }
    if found.text_len() + text.len() > MAX_RAW_TEXT {
        return Err(Bail("a link text past the bound"));
    }
    found.text(text);
    Ok(())
}

/// The attributes of a `tag` that links need, taken from what the tokenizer read.
fn kept<'a>(tag: Tag, attrs: &mut Vec<rip_html::Attr<'a>>) -> Values<'a> {
    let mut values = Values::default();
    if tag == Tag::Other {
        return values;
    }
    for (name, value) in attrs.drain(..) {
        if let Some(a) = Attr::of(tag, name.as_bytes()) {
            values.keep(a, || value);
        }
    }
    values
}
