//! The tokenizer: tags, text, comments and the doctype of ordinary HTML, read
//! straight from the page text with `memchr`. What it does not read the way the HTML
//! tokenizer would (CDATA, a raw text element left open, a reference without its
//! semicolon where the rule is subtle…) is a [`Bail`]: the caller reads the page with a
//! complete parser.

use std::borrow::Cow;

use crate::{Attr, Bail, entity, words};

/// Attributes on one element past which the page goes to the complete parser (which
/// has a time budget for such pages).
const MAX_ATTRS: usize = 256;

/// A tag the page ends in (which the HTML tokenizer drops).
const EOF_IN_TAG: Bail = Bail("the page ends in a tag");
/// A quoted attribute value the page ends in (its tag dropped as well).
const EOF_IN_VALUE: Bail = Bail("the page ends in an attribute value");

/// What the page's doctype says of its mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quirks {
    /// `<!DOCTYPE html>`.
    No,
    /// No doctype, or one naming something other than `html`.
    Yes,
    /// A doctype with public or system identifiers: not worked out here.
    Unknown,
}

/// A token. Start tag attributes go to the caller's attribute stack.
#[derive(Debug)]
pub enum Token<'a> {
    /// A start tag: its name (lower case) and whether it ends in `/>`.
    Start {
        /// Lower case.
        name: Cow<'a, str>,
        /// Written `<x/>`.
        self_closing: bool,
    },
    /// An end tag.
    End(Cow<'a, str>),
    /// Text, references decoded.
    Text(Cow<'a, str>),
    /// A comment (no event).
    Comment,
    /// A doctype.
    Doctype(Quirks),
    /// The end of the page.
    Eof,
}

/// Reads tokens from a page's text.
pub struct Scanner<'a> {
    src: &'a str,
    pos: usize,
    /// Text tokens have their references decoded (see [`Scanner::set_decode_text`]).
    decode_text: bool,
    /// The start tags whose attributes are read (see [`Scanner::set_attributes_of`]).
    attributes_of: fn(&str) -> bool,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0C')
}

/// The classes of bytes in an attribute's name: [`END`] for white space, `/`, `>`, `=`.
const ATTR_NAME: [u8; 256] = name_classes(b" \t\n\x0C/>=");
/// The classes of bytes in a tag's name: [`END`] for white space, `/`, `>`.
const TAG_NAME: [u8; 256] = name_classes(b" \t\n\x0C/>");
/// A byte that ends a name.
const END: u8 = 1;
/// An upper case ASCII letter (the name is lower-cased).
const UPPER: u8 = 2;
/// Bytes that end an unquoted attribute value: white space, `>`.
const VALUE_END: [bool; 256] = byte_table(b" \t\n\x0C>");

/// A table of 256 flags, set for the bytes of `bytes`: a byte class looked up in one step.
pub const fn byte_table(bytes: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        t[bytes[i] as usize] = true;
        i += 1;
    }
    t
}

/// Where the first `x` or `y` is in `hay`, for the end of a text run. Most runs are
/// short (three in four of the Rust documentation's are empty: a tag follows a tag),
/// and for them `memchr2`'s set-up costs more than the search: the first 32 bytes are
/// looked at eight at a time (a byte equal to `x` or `y` flagged by one word's
/// arithmetic, the first flag exact), the rest with `memchr2`. (Attribute values are
/// longer, hrefs most of them: `memchr2` is quicker for them.)
fn find2(x: u8, y: u8, hay: &[u8]) -> Option<usize> {
    const SHORT: usize = 32;
    let mut i = 0;
    while i < SHORT {
        let Some(w) = words::word_at(hay, i) else {
            return hay[i..]
                .iter()
                .position(|&c| c == x || c == y)
                .map(|p| i + p);
        };
        let hits = words::equal(w, x) | words::equal(w, y);
        if hits != 0 {
            return Some(i + words::first(hits));
        }
        i += 8;
    }
    memchr::memchr2(x, y, &hay[SHORT..]).map(|p| SHORT + p)
}

/// Where the first byte in `table` is in `s`.
fn find_in(s: &[u8], table: &[bool; 256]) -> Option<usize> {
    s.iter().position(|&c| table[usize::from(c)])
}

/// [`END`] for the bytes of `ends`, [`UPPER`] for `A` to `Z`.
const fn name_classes(ends: &[u8]) -> [u8; 256] {
    let mut t = [0; 256];
    let mut c = b'A';
    while c <= b'Z' {
        t[c as usize] = UPPER;
        c += 1;
    }
    let mut i = 0;
    while i < ends.len() {
        t[ends[i] as usize] = END;
        i += 1;
    }
    t
}

/// A name at the start of `s`, read in one pass: its length (up to the first byte
/// `classes` marks [`END`]) and whether it holds upper case letters.
fn name_len(s: &[u8], classes: &[u8; 256]) -> Option<(usize, bool)> {
    let mut seen = 0;
    for (i, &c) in s.iter().enumerate() {
        let class = classes[usize::from(c)];
        if class == END {
            return Some((i, seen != 0));
        }
        seen |= class;
    }
    None
}

/// `s` lower case; `upper` says whether it has upper case letters.
fn lower(s: &str, upper: bool) -> Cow<'_, str> {
    if upper {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

impl<'a> Scanner<'a> {
    /// A scanner at the start of `src`.
    pub fn new(src: &'a str) -> Self {
        Self {
            src,
            pos: 0,
            decode_text: true,
            attributes_of: |_| true,
        }
    }

    /// With `false`, text tokens are the text as written, references not decoded (for
    /// a caller that ignores the text at this point of the page). On by default.
    pub fn set_decode_text(&mut self, on: bool) {
        self.decode_text = on;
    }

    /// Only start tags whose (lower case) name passes `wanted` get their attributes
    /// read into the caller's stack; the others' are read past. All by default.
    pub fn set_attributes_of(&mut self, wanted: fn(&str) -> bool) {
        self.attributes_of = wanted;
    }

    /// A text token of `text`, whose first `&` is at `amp` (if any).
    fn text(&self, text: &'a str, amp: Option<usize>) -> Result<Token<'a>, Bail> {
        match amp {
            Some(first) if self.decode_text => Ok(Token::Text(Cow::Owned(entity::decode_from(
                text, first, false,
            )?))),
            _ => Ok(Token::Text(Cow::Borrowed(text))),
        }
    }

    /// The page's text not read yet: what the next token starts with (a caller that must
    /// know whether a newline was written, not decoded from `&#10;`, looks here).
    pub fn remaining(&self) -> &'a str {
        self.rest()
    }

    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn peek(&self, at: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + at).copied()
    }

    /// The next token; a start tag's attributes are pushed onto `attrs`.
    pub fn next(&mut self, attrs: &mut Vec<Attr<'a>>) -> Result<Token<'a>, Bail> {
        let rest = self.rest();
        if rest.is_empty() {
            return Ok(Token::Eof);
        }
        // One search finds the text's end or, first, its first `&` (then its end).
        let b = rest.as_bytes();
        let (lt, amp) = match find2(b'<', b'&', b) {
            Some(at) if b[at] == b'&' => {
                let lt = memchr::memchr(b'<', &b[at..]).map(|i| at + i);
                (lt, Some(at))
            }
            at => (at, None),
        };
        let Some(lt) = lt else {
            self.pos = self.src.len();
            return self.text(rest, amp);
        };
        if lt > 0 {
            self.pos += lt;
            return self.text(&rest[..lt], amp);
        }
        match self.peek(1) {
            Some(c) if c.is_ascii_alphabetic() => {
                let first = attrs.len();
                let tag = self.start_tag(attrs);
                if let Err(bail) = tag {
                    attrs.truncate(first);
                    return self.eof_in_tag(bail);
                }
                tag
            }
            Some(b'/') if self.peek(2).is_some_and(|c| c.is_ascii_alphabetic()) => {
                let tag = self.end_tag();
                if let Err(bail) = tag {
                    return self.eof_in_tag(bail);
                }
                tag
            }
            _ => self.other_markup(),
        }
    }

    /// What a `<` starts other than a tag: a comment, a doctype, a bogus comment or text.
    #[inline(never)]
    fn other_markup(&mut self) -> Result<Token<'a>, Bail> {
        match self.peek(1) {
            Some(b'/') => match self.peek(2) {
                // No token in the standard; but html5ever's tree builder counts its parse
                // error as the token after a `<pre>`, whose newline it then keeps, and
                // the scanner cannot say so.
                Some(b'>') => Err(Bail("a `</>`")),
                None => {
                    self.pos += 2;
                    Ok(Token::Text(Cow::Borrowed("</")))
                }
                Some(_) => Ok(self.bogus_comment(2)),
            },
            Some(b'!') => self.markup_declaration(),
            Some(b'?') => Ok(self.bogus_comment(1)),
            _ => {
                self.pos += 1;
                Ok(Token::Text(Cow::Borrowed("<")))
            }
        }
    }

    /// A tag the page ends in, which the HTML tokenizer drops: the end of the page.
    /// Another bail stays one.
    #[cold]
    fn eof_in_tag(&mut self, bail: Bail) -> Result<Token<'a>, Bail> {
        if bail == EOF_IN_TAG || bail == EOF_IN_VALUE {
            self.pos = self.src.len();
            return Ok(Token::Eof);
        }
        Err(bail)
    }

    /// A bogus comment (`<?…>`, `</ …>`, `<!…>`), whose text starts `from` bytes into
    /// the rest: it runs to the first `>`, or to the end of the page.
    fn bogus_comment(&mut self, from: usize) -> Token<'a> {
        let rest = &self.rest().as_bytes()[from..];
        self.pos += from + memchr::memchr(b'>', rest).map_or(rest.len(), |i| i + 1);
        Token::Comment
    }

    /// A tag name from `pos`, up to white space, `/` or `>`, lower case.
    fn name(&mut self) -> Result<Cow<'a, str>, Bail> {
        let rest = self.rest();
        let (len, upper) = name_len(rest.as_bytes(), &TAG_NAME).ok_or(EOF_IN_TAG)?;
        self.pos += len;
        Ok(lower(&rest[..len], upper))
    }

    fn start_tag(&mut self, attrs: &mut Vec<Attr<'a>>) -> Result<Token<'a>, Bail> {
        self.pos += 1;
        let name = self.name()?;
        let self_closing = if (self.attributes_of)(&name) {
            let first = attrs.len();
            self.attributes(attrs, first)?
        } else {
            self.skip_attributes()?
        };
        Ok(Token::Start { name, self_closing })
    }

    fn end_tag(&mut self) -> Result<Token<'a>, Bail> {
        self.pos += 2;
        let name = self.name()?;
        if self.peek(0) == Some(b'>') {
            self.pos += 1;
            return Ok(Token::End(name));
        }
        let mut ignored = Vec::new();
        self.attributes(&mut ignored, 0)?;
        Ok(Token::End(name))
    }

    /// Reads attributes up to the tag's `>`; returns whether it closed with `/>`.
    /// A repeated attribute is left out (the first one counts).
    fn attributes(&mut self, attrs: &mut Vec<Attr<'a>>, first: usize) -> Result<bool, Bail> {
        loop {
            if let Some(self_closing) = self.tag_end()? {
                return Ok(self_closing);
            }
            let (name, value) = self.attribute()?;
            if attrs.len() - first >= MAX_ATTRS {
                return Err(Bail("an element with very many attributes"));
            }
            if !attrs[first..].iter().any(|(n, _)| *n == name) {
                attrs.push((name, value));
            }
        }
    }

    /// Reads past attributes to the tag's `>`; returns whether it closed with `/>`.
    fn skip_attributes(&mut self) -> Result<bool, Bail> {
        loop {
            if let Some(self_closing) = self.tag_end()? {
                return Ok(self_closing);
            }
            self.raw_attribute()?;
        }
    }

    /// Skips white space and stray `/`s to the next attribute (`None`) or past the
    /// tag's end (whether it was `/>`).
    fn tag_end(&mut self) -> Result<Option<bool>, Bail> {
        loop {
            self.skip_space();
            match self.peek(0) {
                None => return Err(EOF_IN_TAG),
                Some(b'>') => {
                    self.pos += 1;
                    return Ok(Some(false));
                }
                Some(b'/') => {
                    self.pos += 1;
                    if self.peek(0) == Some(b'>') {
                        self.pos += 1;
                        return Ok(Some(true));
                    }
                }
                Some(_) => return Ok(None),
            }
        }
    }

    fn skip_space(&mut self) {
        while self.peek(0).is_some_and(is_space) {
            self.pos += 1;
        }
    }

    fn attribute(&mut self) -> Result<Attr<'a>, Bail> {
        let ((name, upper), raw, amp) = self.raw_attribute()?;
        let value = if amp {
            entity::decode(raw, true)?
        } else {
            Cow::Borrowed(raw)
        };
        Ok((lower(name, upper), value))
    }

    /// An attribute's name as written (and whether it has upper case letters), its value
    /// as written (`""` without a value), and whether the value holds a `&` (may hold a
    /// character reference).
    fn raw_attribute(&mut self) -> Result<((&'a str, bool), &'a str, bool), Bail> {
        let rest = self.rest();
        // The name's first byte is none of the bytes that end one ([`Self::tag_end`]
        // skipped those), but may be `=`, which then starts the name (`<a =b>` has an
        // attribute `=b`).
        let b = rest.as_bytes();
        let (len, upper) =
            name_len(b.get(1..).unwrap_or_default(), &ATTR_NAME).ok_or(EOF_IN_TAG)?;
        let (len, upper) = (len + 1, upper || b[0].is_ascii_uppercase());
        let name = (&rest[..len], upper);
        self.pos += len;
        self.skip_space();
        if self.peek(0) != Some(b'=') {
            return Ok((name, "", false));
        }
        self.pos += 1;
        self.skip_space();
        let rest = self.rest();
        let b = rest.as_bytes();
        let (raw, amp) = match b.first() {
            None => return Err(EOF_IN_TAG),
            Some(&q @ (b'"' | b'\'')) => {
                let ended = EOF_IN_VALUE;
                let first = memchr::memchr2(q, b'&', &b[1..]).ok_or(ended)?;
                let (end, amp) = if b[1 + first] == q {
                    (first, false)
                } else {
                    let more = memchr::memchr(q, &b[2 + first..]).ok_or(ended)?;
                    (first + 1 + more, true)
                };
                self.pos += end + 2;
                (&rest[1..end + 1], amp)
            }
            Some(b'>') => ("", false),
            Some(_) => {
                let end = find_in(b, &VALUE_END).ok_or(EOF_IN_TAG)?;
                self.pos += end;
                (&rest[..end], b[..end].contains(&b'&'))
            }
        };
        Ok((name, raw, amp))
    }

    fn markup_declaration(&mut self) -> Result<Token<'a>, Bail> {
        let rest = self.rest();
        if let Some(body) = rest.strip_prefix("<!--") {
            // A comment left open runs to the end of the page.
            self.pos += comment_len(body).map_or(rest.len(), |len| 4 + len);
            return Ok(Token::Comment);
        }
        // Bytes, not `&rest[2..9]`: a character may straddle byte 9 (`<!abcdef€`).
        if rest.len() >= 9 && rest.as_bytes()[2..9].eq_ignore_ascii_case(b"doctype") {
            let Some(end) = memchr::memchr(b'>', rest.as_bytes()) else {
                // A doctype the page ends in forces quirks.
                self.pos = self.src.len();
                return Ok(Token::Doctype(Quirks::Yes));
            };
            self.pos += end + 1;
            return Ok(Token::Doctype(doctype_quirks(&rest[9..end])));
        }
        // Text in SVG or MathML, a bogus comment elsewhere: the tree knows which.
        if rest[2..].starts_with("[CDATA[") {
            return Err(Bail("a CDATA section"));
        }
        Ok(self.bogus_comment(2))
    }

    /// The text of a raw text element (`script`, `style`, `title`, …) up to its end
    /// tag, which is read too. `rcdata` decodes references (`title`, `textarea`).
    pub fn raw_text(&mut self, name: &str, rcdata: bool) -> Result<Cow<'a, str>, Bail> {
        let rest = self.rest();
        let end = if name == "script" {
            script_end(rest)
        } else {
            find_end_tag(rest, name)
        };
        let end = end.ok_or(Bail("the page ends in a raw text element"))?;
        let text = &rest[..end];
        self.pos += end;
        match self.end_tag()? {
            Token::End(_) => {}
            _ => return Err(Bail("a raw text element's end tag")),
        }
        if rcdata {
            entity::decode(text, false)
        } else {
            Ok(Cow::Borrowed(text))
        }
    }
}

/// The length of a comment's body and its end (`-->`, `--!>`, or an abrupt `>`/`->`).
fn comment_len(body: &str) -> Option<usize> {
    if body.starts_with('>') {
        return Some(1);
    }
    if body.starts_with("->") {
        return Some(2);
    }
    let b = body.as_bytes();
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&b[from..], b"--") {
        let j = from + at;
        match b.get(j + 2) {
            Some(b'>') => return Some(j + 3),
            Some(b'!') if b.get(j + 3) == Some(&b'>') => return Some(j + 4),
            None => return None,
            _ => from = j + 1,
        }
    }
    None
}

/// Where `</name` followed by white space, `/` or `>` starts in `text`.
fn find_end_tag(text: &str, name: &str) -> Option<usize> {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(at) = memchr::memmem::find(&b[from..], b"</") {
        let j = from + at;
        if tag_at(b, j + 2, name.as_bytes()) {
            return Some(j);
        }
        from = j + 2;
    }
    None
}

/// True when `b` at `at` is `name` (ASCII case-insensitive) followed by white space,
/// `/` or `>`.
fn tag_at(b: &[u8], at: usize, name: &[u8]) -> bool {
    b.get(at..at + name.len())
        .is_some_and(|t| t.eq_ignore_ascii_case(name))
        && b.get(at + name.len())
            .is_some_and(|&c| is_space(c) || c == b'/' || c == b'>')
}

/// Where a script's `</script>` starts, with the tokenizer's escape states: after
/// `<!--` a `<script>` starts a "double escaped" part in which `</script>` does not end
/// the script; `-->` ends both.
fn script_end(text: &str) -> Option<usize> {
    #[derive(PartialEq)]
    enum State {
        Data,
        Escaped,
        DoubleEscaped,
    }
    let b = text.as_bytes();
    let mut state = State::Data;
    let mut i = 0;
    while let Some(at) = memchr::memchr2(b'<', b'-', &b[i..]) {
        i += at;
        if b[i] == b'-' {
            if state != State::Data && b[i..].starts_with(b"-->") {
                state = State::Data;
                i += 3;
            } else {
                i += 1;
            }
        } else if b.get(i + 1) == Some(&b'/') && tag_at(b, i + 2, b"script") {
            if state == State::DoubleEscaped {
                state = State::Escaped;
                i += 8;
            } else {
                return Some(i);
            }
        } else if state == State::Data && b[i..].starts_with(b"<!--") {
            state = State::Escaped;
            i += 2;
        } else if state == State::Escaped && tag_at(b, i + 1, b"script") {
            state = State::DoubleEscaped;
            i += 7;
        } else {
            i += 1;
        }
    }
    None
}

/// The mode a doctype puts the page in, as far as this pass needs it.
fn doctype_quirks(body: &str) -> Quirks {
    let body = body.trim_matches(|c: char| c.is_ascii_whitespace());
    if body.eq_ignore_ascii_case("html") {
        Quirks::No
    } else if !body.contains(|c: char| c.is_ascii_whitespace()) {
        Quirks::Yes
    } else {
        Quirks::Unknown
    }
}

#[cfg(test)]
mod tests;
