//! The link scanner: an [`html5gum`] emitter that keeps only what the crawler needs
//! (`<a>`, `<base>`, `<meta>` and an `<img>`'s `alt` inside a link) and drops every other
//! token as the tokenizer produces it, without building a token, a tree or an output.
//!
//! A tokenizer alone does not know that `<script>` or `<textarea>` hold raw text: the
//! tree builder tells it. The scanner does the part of that which matters for links:
//! after a start tag it switches the tokenizer to the state the HTML spec gives the
//! element (script data, raw text, RCDATA, plaintext), except inside `<svg>` and `<math>`,
//! whose elements are not HTML (an SVG `<script/>` does not swallow the rest of the page),
//! and their HTML integration points (`<foreignObject>`, `<desc>`, `<title>`,
//! `<annotation-xml>`), which are.

use html5gum::{Emitter, Error, State};

use super::{
    Extracted, MAX_LINK_TEXT, MAX_LINKS_PER_PAGE, RawLink, collapse_ws, meta_nofollow, rel_nofollow,
};

/// Tag names are compared only against short names; longer ones are all "other".
const MAX_NAME: usize = 32;
/// Nesting of `<svg>`/`<math>` and their integration points tracked at most (deeper is
/// treated as the deepest: a hostile page cannot grow the stack).
const MAX_FOREIGN_DEPTH: usize = 256;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Tag {
    #[default]
    Other,
    A,
    Base,
    Meta,
    Img,
}

/// The attributes kept; the rest are skipped without being copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attr {
    Href,
    Rel,
    Title,
    Alt,
    Name,
    Content,
}

impl Attr {
    fn of(tag: Tag, name: &[u8]) -> Option<Attr> {
        Some(match (tag, name) {
            (Tag::A | Tag::Base, b"href") => Attr::Href,
            (Tag::A, b"rel") => Attr::Rel,
            (Tag::A, b"title") => Attr::Title,
            (Tag::Img, b"alt") => Attr::Alt,
            (Tag::Meta, b"name") => Attr::Name,
            (Tag::Meta, b"content") => Attr::Content,
            _ => return None,
        })
    }
}

/// Where the tokenizer is, as far as raw text goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ns {
    /// Inside `<svg>` or `<math>`: no raw-text elements.
    Foreign,
    /// Inside an HTML integration point within foreign content.
    Html,
}

/// The tag being read.
#[derive(Debug, Default)]
struct CurrentTag {
    end: bool,
    self_closing: bool,
    name: Vec<u8>,
    /// The name went past [`MAX_NAME`].
    long: bool,
    kind: Tag,
    attr_name: Vec<u8>,
    attr_value: Vec<u8>,
    /// The current attribute is one of the kept ones: its value is being copied.
    keep_value: bool,
    in_attr: bool,
    values: [Option<String>; 6],
}

impl CurrentTag {
    fn reset(&mut self, end: bool) {
        self.end = end;
        self.self_closing = false;
        self.name.clear();
        self.long = false;
        self.kind = Tag::Other;
        self.in_attr = false;
        self.keep_value = false;
        self.values = Default::default();
    }

    fn slot(a: Attr) -> usize {
        a as usize
    }

    fn take(&mut self, a: Attr) -> Option<String> {
        self.values[Self::slot(a)].take()
    }

    /// Files the attribute just read, if it is kept (the first of a name wins, as in HTML).
    fn end_attr(&mut self) {
        if !self.in_attr {
            return;
        }
        self.in_attr = false;
        if !self.end
            && let Some(a) = Attr::of(self.kind, &self.attr_name)
        {
            let slot = &mut self.values[Self::slot(a)];
            if slot.is_none() {
                *slot = Some(String::from_utf8_lossy(&self.attr_value).into_owned());
            }
        }
        self.attr_name.clear();
        self.attr_value.clear();
        self.keep_value = false;
    }
}

/// The link whose text is being collected.
#[derive(Debug, Default)]
struct OpenLink {
    index: usize,
    text: Vec<u8>,
    alt: Option<String>,
    title: Option<String>,
}

#[derive(Debug, Default)]
pub(super) struct Scanner {
    out: Extracted,
    tag: CurrentTag,
    last_start: Vec<u8>,
    /// In a raw-text element's content (script, style, textarea, …).
    raw: bool,
    ns: Vec<(Ns, Vec<u8>)>,
    open: Option<OpenLink>,
    done: bool,
}

impl Scanner {
    fn close_link(&mut self) {
        let Some(open) = self.open.take() else { return };
        let mut text = collapse_ws(&String::from_utf8_lossy(&open.text));
        if text.is_empty() {
            text = open
                .alt
                .or(open.title)
                .map(|s| collapse_ws(&s))
                .unwrap_or_default();
        }
        self.out.links[open.index].text = text;
    }

    fn foreign(&self) -> bool {
        self.ns.last().is_some_and(|(ns, _)| *ns == Ns::Foreign)
    }

    fn start_tag(&mut self) -> Option<State> {
        // The name becomes the last start tag; its buffer is reused for the next tag.
        std::mem::swap(&mut self.last_start, &mut self.tag.name);
        self.take_attributes();
        if self.tag.long {
            self.raw = false;
            return None;
        }
        self.enter_content()
    }

    /// What a start tag tells: a link opens, the base URL, a page-wide nofollow, an
    /// image's alt text for the open link.
    fn take_attributes(&mut self) {
        match self.tag.kind {
            Tag::A => {
                // An `<a>` closes any open one, as the tree builder does.
                self.close_link();
                if let Some(href) = self.tag.take(Attr::Href) {
                    if self.out.links.len() >= MAX_LINKS_PER_PAGE {
                        self.out.dropped += 1;
                    } else {
                        let nofollow = rel_nofollow(self.tag.take(Attr::Rel).as_deref());
                        self.out.links.push(RawLink {
                            href,
                            nofollow,
                            ..RawLink::default()
                        });
                        self.open = Some(OpenLink {
                            index: self.out.links.len() - 1,
                            title: self.tag.take(Attr::Title),
                            ..OpenLink::default()
                        });
                    }
                }
            }
            Tag::Base => {
                if self.out.base.is_none() {
                    self.out.base = self.tag.take(Attr::Href);
                }
            }
            Tag::Meta => {
                let robots = self
                    .tag
                    .take(Attr::Name)
                    .is_some_and(|n| n.trim().eq_ignore_ascii_case("robots"));
                if robots
                    && self
                        .tag
                        .take(Attr::Content)
                        .is_some_and(|c| meta_nofollow(&c))
                {
                    self.out.nofollow_page = true;
                }
            }
            Tag::Img => {
                if let Some(open) = &mut self.open
                    && open.alt.is_none()
                {
                    open.alt = self.tag.take(Attr::Alt);
                }
            }
            Tag::Other => {}
        }
    }

    /// How the element's content is read: raw text (`<script>`, `<textarea>`, …) or
    /// markup, and whether it enters foreign content (SVG, MathML) or leaves it.
    fn enter_content(&mut self) -> Option<State> {
        let name = self.last_start.as_slice();
        let (state, enters) = if self.foreign() {
            let enters = match name {
                b"svg" | b"math" => Some(Ns::Foreign),
                b"foreignobject" | b"desc" | b"title" | b"annotation-xml" => Some(Ns::Html),
                _ => None,
            };
            (None, enters)
        } else if matches!(name, b"svg" | b"math") {
            (None, Some(Ns::Foreign))
        } else {
            (raw_text_state(name), None)
        };
        if let Some(ns) = enters
            && !self.tag.self_closing
            && self.ns.len() < MAX_FOREIGN_DEPTH
        {
            self.ns.push((ns, self.last_start.clone()));
        }
        self.raw = state.is_some();
        state
    }

    fn end_tag(&mut self) {
        if self.raw && !self.tag.long && self.tag.name == self.last_start {
            self.raw = false;
        }
        if self.tag.kind == Tag::A {
            self.close_link();
        }
        if let Some((_, name)) = self.ns.last()
            && *name == self.tag.name
        {
            self.ns.pop();
        }
    }
}

/// The tokenizer state an HTML element's content is read in, when it is not markup.
fn raw_text_state(name: &[u8]) -> Option<State> {
    match name {
        b"textarea" | b"title" => Some(State::RcData),
        b"plaintext" => Some(State::PlainText),
        b"script" => Some(State::ScriptData),
        b"style" | b"iframe" | b"xmp" | b"noembed" | b"noframes" | b"noscript" => {
            Some(State::RawText)
        }
        _ => None,
    }
}

impl Emitter for Scanner {
    type Token = Extracted;

    fn set_last_start_tag(&mut self, last_start_tag: Option<&[u8]>) {
        self.last_start = last_start_tag.unwrap_or_default().to_vec();
    }

    fn emit_eof(&mut self) {
        self.close_link();
        self.done = true;
    }

    fn emit_error(&mut self, _: Error) {}

    #[inline]
    fn should_emit_errors(&mut self) -> bool {
        false
    }

    fn pop_token(&mut self) -> Option<Extracted> {
        if self.done {
            self.done = false;
            Some(std::mem::take(&mut self.out))
        } else {
            None
        }
    }

    fn emit_string(&mut self, s: &[u8]) {
        if !self.raw
            && let Some(open) = &mut self.open
            && open.text.len() < MAX_LINK_TEXT * 8
        {
            open.text.extend_from_slice(s);
        }
    }

    fn init_start_tag(&mut self) {
        self.tag.reset(false);
    }

    fn init_end_tag(&mut self) {
        self.tag.reset(true);
    }

    fn init_comment(&mut self) {}

    fn emit_current_tag(&mut self) -> Option<State> {
        self.tag.end_attr();
        if self.tag.end {
            self.end_tag();
            None
        } else {
            self.start_tag()
        }
    }

    fn emit_current_comment(&mut self) {}

    fn emit_current_doctype(&mut self) {}

    fn set_self_closing(&mut self) {
        self.tag.self_closing = true;
    }

    fn set_force_quirks(&mut self) {}

    fn push_tag_name(&mut self, s: &[u8]) {
        let t = &mut self.tag;
        if t.long || t.name.len() + s.len() > MAX_NAME {
            t.long = true;
            t.kind = Tag::Other;
            return;
        }
        t.name.extend_from_slice(s);
        t.kind = match t.name.as_slice() {
            b"a" => Tag::A,
            b"base" => Tag::Base,
            b"meta" => Tag::Meta,
            b"img" => Tag::Img,
            _ => Tag::Other,
        };
    }

    fn push_comment(&mut self, _: &[u8]) {}

    fn push_doctype_name(&mut self, _: &[u8]) {}

    fn init_doctype(&mut self) {}

    fn init_attribute(&mut self) {
        self.tag.end_attr();
        self.tag.in_attr = true;
    }

    fn init_attribute_value(&mut self) {
        let t = &mut self.tag;
        t.keep_value = !t.end && Attr::of(t.kind, &t.attr_name).is_some();
    }

    fn push_attribute_name(&mut self, s: &[u8]) {
        let t = &mut self.tag;
        // Kept names are short; a long one is kept from matching by a byte no name has.
        if t.kind != Tag::Other && t.attr_name.len() <= MAX_NAME {
            t.attr_name.extend_from_slice(s);
            if t.attr_name.len() > MAX_NAME {
                t.attr_name.truncate(MAX_NAME);
                t.attr_name.push(0);
            }
        }
    }

    fn push_attribute_value(&mut self, s: &[u8]) {
        if self.tag.keep_value {
            self.tag.attr_value.extend_from_slice(s);
        }
    }

    fn set_doctype_public_identifier(&mut self, _: &[u8]) {}

    fn set_doctype_system_identifier(&mut self, _: &[u8]) {}

    fn push_doctype_public_identifier(&mut self, _: &[u8]) {}

    fn push_doctype_system_identifier(&mut self, _: &[u8]) {}

    fn current_is_appropriate_end_tag_token(&mut self) -> bool {
        self.tag.end
            && !self.tag.long
            && !self.last_start.is_empty()
            && self.tag.name == self.last_start
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&mut self) -> bool {
        self.foreign()
    }
}
