//! What both link scanners do with the tokens they read: open and close links, take the
//! base URL and a page-wide nofollow, collect link text, and follow foreign content
//! (`<svg>`, `<math>` and their HTML integration points) to know which elements hold
//! raw text. The html5gum emitter (`scan.rs`) and the streaming scan (`stream.rs`)
//! share it, so they give the same [`Extracted`] for the same tokens.

use std::borrow::Cow;

use super::{
    Extracted, MAX_LINK_TEXT, MAX_LINKS_PER_PAGE, collapse_ws_onto, meta_nofollow, rel_nofollow,
};

/// Tag names are compared only against short names; longer ones are all "other".
pub(super) const MAX_NAME: usize = 32;
/// Nesting of `<svg>`/`<math>` and their integration points tracked at most (deeper is
/// treated as the deepest: a hostile page cannot grow the stack).
const MAX_FOREIGN_DEPTH: usize = 256;
/// Link text collected at most, in bytes, before it is collapsed.
pub(super) const MAX_RAW_TEXT: usize = MAX_LINK_TEXT * 8;

/// The elements whose attributes matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Tag {
    #[default]
    Other,
    A,
    Base,
    Meta,
    Img,
}

impl Tag {
    pub(super) fn of(name: &[u8]) -> Tag {
        match name {
            b"a" => Tag::A,
            b"base" => Tag::Base,
            b"meta" => Tag::Meta,
            b"img" => Tag::Img,
            _ => Tag::Other,
        }
    }
}

/// The attributes kept; the rest are skipped without being copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Attr {
    Href,
    Rel,
    Title,
    Alt,
    Name,
    Content,
}

impl Attr {
    pub(super) fn of(tag: Tag, name: &[u8]) -> Option<Attr> {
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

/// The kept attributes of a start tag, by [`Attr`] (the first of a name wins, as in HTML):
/// borrowed from the page where the tokenizer could, so that a value read only to be
/// looked at (`rel`, `title`, `name`, `content`) is not copied.
#[derive(Debug, Default)]
pub(super) struct Values<'a>([Option<Cow<'a, str>>; 6]);

impl<'a> Values<'a> {
    /// Files `value` under `a` unless the tag already had one.
    pub(super) fn keep(&mut self, a: Attr, value: impl FnOnce() -> Cow<'a, str>) {
        let slot = &mut self.0[a as usize];
        if slot.is_none() {
            *slot = Some(value());
        }
    }

    fn take(&mut self, a: Attr) -> Option<Cow<'a, str>> {
        self.0[a as usize].take()
    }
}

/// How an HTML element's content is read when it is not markup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RawContent {
    /// `textarea`, `title`: references decoded, no tags.
    RcData,
    /// `plaintext`: the rest of the page.
    PlainText,
    /// `script`, with its escape states.
    ScriptData,
    /// `style`, `iframe`, `xmp`, `noembed`, `noframes`, `noscript`.
    RawText,
}

impl RawContent {
    fn of(name: &[u8]) -> Option<RawContent> {
        match name {
            b"textarea" | b"title" => Some(RawContent::RcData),
            b"plaintext" => Some(RawContent::PlainText),
            b"script" => Some(RawContent::ScriptData),
            b"style" | b"iframe" | b"xmp" | b"noembed" | b"noframes" | b"noscript" => {
                Some(RawContent::RawText)
            }
            _ => None,
        }
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

/// The link whose text is being collected (in [`Collector::text`]).
#[derive(Debug, Default)]
struct OpenLink<'a> {
    index: usize,
    alt: Option<Cow<'a, str>>,
    title: Option<Cow<'a, str>>,
}

/// The page's links and what is open while it is read (`'a`: the page, for values
/// borrowed from it).
#[derive(Debug, Default)]
pub(super) struct Collector<'a> {
    out: Extracted,
    ns: Vec<(Ns, Vec<u8>)>,
    open: Option<OpenLink<'a>>,
    /// The open link's text so far: one buffer for every link of the page, not one each.
    text: Vec<u8>,
}

impl<'a> Collector<'a> {
    /// A collector with room for the links of a page of `len` bytes, as many as the Rust
    /// documentation has (one per ~160 bytes, ~45 bytes of href and text each), so that
    /// their buffers are not grown by doubling, a copy at each step; a page with fewer
    /// links leaves room unused, a page with more grows it.
    pub(super) fn for_page(len: usize) -> Self {
        let mut c = Collector::default();
        let links = (len / 160).min(MAX_LINKS_PER_PAGE);
        c.out.reserve(links, links * 48);
        c
    }

    fn close_link(&mut self) {
        let Some(open) = self.open.take() else { return };
        let from = self.out.mark();
        collapse_ws_onto(&String::from_utf8_lossy(&self.text), &mut self.out.strings);
        self.text.clear();
        if self.out.mark() == from
            && let Some(s) = open.alt.or(open.title)
        {
            collapse_ws_onto(&s, &mut self.out.strings);
        }
        self.out.set_text(open.index, from);
    }

    /// Inside `<svg>` or `<math>` (not in an integration point).
    pub(super) fn foreign(&self) -> bool {
        self.ns.last().is_some_and(|(ns, _)| *ns == Ns::Foreign)
    }

    /// True while a link's text is being collected.
    pub(super) fn in_link(&self) -> bool {
        self.open.is_some()
    }

    /// The bytes of link text collected so far (0 outside a link).
    pub(super) fn text_len(&self) -> usize {
        self.text.len()
    }

    /// Text outside raw-text elements: the open link's, until [`MAX_RAW_TEXT`] bytes.
    pub(super) fn text(&mut self, s: &[u8]) {
        if self.open.is_some() && self.text.len() < MAX_RAW_TEXT {
            self.text.extend_from_slice(s);
        }
    }

    /// What a start tag tells: a link opens, the base URL, a page-wide nofollow, an
    /// image's alt text for the open link.
    pub(super) fn start_tag(&mut self, tag: Tag, values: &mut Values<'a>) {
        match tag {
            Tag::A => self.open_link(values),
            Tag::Base => {
                if self.out.base.is_none() {
                    self.out.base = values.take(Attr::Href).map(Cow::into_owned);
                }
            }
            Tag::Meta => {
                let robots = values
                    .take(Attr::Name)
                    .is_some_and(|n| n.trim().eq_ignore_ascii_case("robots"));
                if robots
                    && values
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
                    open.alt = values.take(Attr::Alt);
                }
            }
            Tag::Other => {}
        }
    }

    fn open_link(&mut self, values: &mut Values<'a>) {
        // An `<a>` closes any open one, as the tree builder does.
        self.close_link();
        let Some(href) = values.take(Attr::Href) else {
            return;
        };
        if self.out.len() >= MAX_LINKS_PER_PAGE {
            self.out.dropped += 1;
            return;
        }
        let nofollow = rel_nofollow(values.take(Attr::Rel).as_deref());
        let index = self.out.open(&href, nofollow);
        self.open = Some(OpenLink {
            index,
            title: values.take(Attr::Title),
            ..OpenLink::default()
        });
    }

    /// How the content of the element a start tag named `name` opens is read: raw text
    /// (`<script>`, `<textarea>`, …) or markup (`None`); and whether it enters foreign
    /// content (SVG, MathML) or an integration point in it.
    pub(super) fn enter_content(&mut self, name: &[u8], self_closing: bool) -> Option<RawContent> {
        let (raw, enters) = if self.foreign() {
            let enters = match name {
                b"svg" | b"math" => Some(Ns::Foreign),
                b"foreignobject" | b"desc" | b"title" | b"annotation-xml" => Some(Ns::Html),
                _ => None,
            };
            (None, enters)
        } else if matches!(name, b"svg" | b"math") {
            (None, Some(Ns::Foreign))
        } else {
            (RawContent::of(name), None)
        };
        if let Some(ns) = enters
            && !self_closing
            && self.ns.len() < MAX_FOREIGN_DEPTH
        {
            self.ns.push((ns, name.to_vec()));
        }
        raw
    }

    /// An end tag: closes the open link (`</a>`) or the foreign element it names.
    pub(super) fn end_tag(&mut self, tag: Tag, name: &[u8]) {
        if tag == Tag::A {
            self.close_link();
        }
        if let Some((_, open)) = self.ns.last()
            && *open == name
        {
            self.ns.pop();
        }
    }

    /// The page's end: what was found.
    pub(super) fn finish(&mut self) -> Extracted {
        self.close_link();
        std::mem::take(&mut self.out)
    }
}
