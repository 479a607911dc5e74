//! The metadata's half of generic extraction's walk: what it keeps of each event.
//!
//! Most elements cost a few integer comparisons: `<meta>`, `<link>`, `<script>`,
//! `<time>`, `<h1>` and elements marked [`Info::ITEM`] are looked at; text is copied
//! only while a JSON-LD script, the first `<h1>`, a byline or a microdata property is
//! open.

use crate::dom::{Info, Skip, TextBuf, TextWalk};
use crate::resolve::Resolver;
use crate::tag::Tag;
use crate::visit::{Elem, Visitor};

use super::microdata::Microdata;

/// What the page gives for its metadata, as read.
pub struct MetaWalk {
    /// What microdata URLs resolve against.
    pub base: Resolver,
    depth: usize,
    /// `<meta>` with `property`, `name` or `itemprop` (outside an item) and `content`:
    /// the key lower case, the content trimmed, in page order.
    pub metas: Vec<(String, String)>,
    /// The bodies of the JSON-LD scripts.
    pub jsonld: Vec<String>,
    script: Option<(usize, String)>,
    /// The first `<h1>`'s text, but for one that is all a link (a site's logo, a link
    /// home).
    pub h1: Option<String>,
    h1_text: Option<H1>,
    /// The first `<time datetime>` (one marked `pubdate` or `itemprop=datePublished`
    /// wins over the first).
    pub time: Option<String>,
    time_marked: bool,
    /// `<link rel=image_src>`.
    pub image_src: Option<String>,
    /// The first byline: the text of a `rel=author` link or an element whose class
    /// says byline or author.
    pub byline: Option<String>,
    byline_text: Option<(usize, TextBuf)>,
    /// The microdata items.
    pub microdata: Microdata,
    /// [`MetaWalk::busy`], kept up to date.
    busy: bool,
}

/// An `<h1>` being read: where it opened, its text, how deep in links the walk is in
/// it, and whether any of its text is outside a link.
struct H1 {
    depth: usize,
    walk: TextWalk,
    links: usize,
    unlinked: bool,
}

fn has_token(list: Option<&str>, token: &str) -> bool {
    list.is_some_and(|l| {
        l.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case(token))
    })
}

/// A class list that names a byline: a class containing `byline`, or one that is
/// `author` or ends in `-author`/`_author` (not `author-bio`, `authors-list`).
fn byline_class(class: &str) -> bool {
    // Most elements of a page have classes: a class list with no `y` nor `h` (of
    // "byline", "author") is passed over in one look at each byte; the others are
    // compared in place, with no lower-case copy.
    if !class.bytes().any(|b| matches!(b | 0x20, b'y' | b'h')) {
        return false;
    }
    let has = |c: &[u8], part: &[u8]| c.windows(part.len()).any(|w| w.eq_ignore_ascii_case(part));
    let ends = |c: &[u8], end: &[u8]| {
        c.len() >= end.len() && c[c.len() - end.len()..].eq_ignore_ascii_case(end)
    };
    class.split_ascii_whitespace().map(str::as_bytes).any(|c| {
        has(c, b"byline")
            || c.eq_ignore_ascii_case(b"author")
            || ends(c, b"-author")
            || ends(c, b"_author")
    })
}

/// A `<meta>` key, lower case, Dublin Core's prefixes written one way (`dc:title` and
/// `DC.title` are `dc.title`; `dcterm:`, `dcterms:` are `dcterms.`).
fn meta_key(key: &str) -> String {
    let key = key.to_ascii_lowercase();
    for (from, to) in [
        ("dc:", "dc."),
        ("dcterms:", "dcterms."),
        ("dcterm:", "dcterms."),
    ] {
        if let Some(rest) = key.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    key
}

impl MetaWalk {
    /// A reader whose microdata URLs resolve against `base`.
    pub fn new(base: &url::Url) -> Self {
        Self {
            base: Resolver::new(base),
            depth: 0,
            metas: Vec::new(),
            jsonld: Vec::new(),
            script: None,
            h1: None,
            h1_text: None,
            time: None,
            time_marked: false,
            image_src: None,
            byline: None,
            byline_text: None,
            microdata: Microdata::default(),
            busy: false,
        }
    }

    fn meta(&mut self, el: &Elem<'_>) {
        let Some(content) = el.attr("content").map(str::trim) else {
            return;
        };
        let key = el.attr("property").or_else(|| el.attr("name"));
        let key = match key {
            Some(k) => k,
            // An itemprop meta in an item is the item's (read by `Microdata`).
            None if el.info.has(Info::ITEM) && el.attr("itemscope").is_none() => {
                match el.attr("itemprop") {
                    Some(p) if !self.microdata.in_item() => p,
                    _ => return,
                }
            }
            None => return,
        };
        if content.is_empty() {
            return;
        }
        // RDFa lets one tag give several properties: `property="dc:title og:title"`.
        for key in key.split_ascii_whitespace() {
            self.metas.push((meta_key(key), content.to_owned()));
        }
    }

    fn element(&mut self, el: &Elem<'_>) {
        match el.tag {
            Tag::Meta => self.meta(el),
            Tag::Script => {
                let ty = el.attr("type").unwrap_or("");
                if ty.trim().eq_ignore_ascii_case("application/ld+json") {
                    self.script = Some((self.depth, String::new()));
                }
            }
            Tag::Link if self.image_src.is_none() && has_token(el.attr("rel"), "image_src") => {
                self.image_src = el.attr("href").map(|h| h.trim().to_owned());
            }
            Tag::H1 if self.h1.is_none() && self.h1_text.is_none() => {
                self.h1_text = Some(H1 {
                    depth: self.depth,
                    walk: TextWalk::new(Skip::Hidden),
                    links: 0,
                    unlinked: false,
                });
            }
            Tag::Other if el.name == "time" && !self.time_marked => {
                if let Some(dt) = el.attr("datetime").map(str::trim).filter(|d| !d.is_empty()) {
                    let marked = el.attr("pubdate").is_some()
                        || el.attr("itemprop") == Some("datePublished");
                    if self.time.is_none() || marked {
                        self.time = Some(dt.to_owned());
                        self.time_marked = marked;
                    }
                }
            }
            _ => {}
        }
        if self.byline.is_none() && self.byline_text.is_none() && self.byline_candidate(el) {
            self.byline_text = Some((self.depth, TextBuf::default()));
        }
    }

    fn byline_candidate(&self, el: &Elem<'_>) -> bool {
        match el.tag {
            Tag::A => has_token(el.attr("rel"), "author"),
            Tag::Span | Tag::Div | Tag::P | Tag::Address => {
                el.attr("class").is_some_and(byline_class)
            }
            Tag::Other if el.name == "cite" => el.attr("class").is_some_and(byline_class),
            _ => false,
        }
    }
}

/// The names in a byline's text: its first line that has a word of two letters or more,
/// less a leading "By"; `None` for a text that is no byline (too long, or no such word:
/// an avatar's initials).
fn byline_names(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| {
        l.split_whitespace()
            .any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
    })?;
    let lower = line.to_lowercase();
    let line = ["by: ", "by ", "written by ", "von ", "par "]
        .iter()
        .find(|p| lower.starts_with(*p))
        .map_or(line, |p| &line[p.len()..])
        .trim();
    (line.chars().count() <= 100 && !line.is_empty()).then(|| line.to_owned())
}

impl MetaWalk {
    /// True while some text or nesting is being followed (an `<h1>`, a byline, a
    /// JSON-LD script, a microdata item): only then do all events count.
    fn busy(&self) -> bool {
        self.h1_text.is_some()
            || self.byline_text.is_some()
            || self.script.is_some()
            || self.microdata.active()
    }

    #[cold]
    fn open_busy(&mut self, el: &Elem<'_>) {
        if let Some(h1) = &mut self.h1_text {
            h1.walk.open(el);
            h1.links += usize::from(el.html && el.tag == Tag::A);
        }
        if let Some((_, buf)) = &mut self.byline_text {
            buf.brk(el.info.flow);
        }
        if el.info.has(Info::ITEM) || self.microdata.active() {
            self.microdata.open(el, self.depth, &self.base);
        }
    }

    fn text_busy(&mut self, text: &str) {
        if let Some((_, body)) = &mut self.script {
            body.push_str(text);
            return;
        }
        if let Some(h1) = &mut self.h1_text
            && h1.walk.text(text)
        {
            h1.unlinked |= h1.links == 0 && !text.trim().is_empty();
        }
        if let Some((_, buf)) = &mut self.byline_text {
            buf.push(text);
        }
        if self.microdata.reading_text() {
            self.microdata.text(text);
        }
    }

    fn close_busy(&mut self, el: &Elem<'_>, depth: usize) {
        if self.microdata.active() {
            self.microdata.close(el, depth);
        }
        if let Some(h1) = &mut self.h1_text {
            h1.walk.close(el);
            h1.links -= usize::from(el.html && el.tag == Tag::A && h1.links > 0);
            if h1.depth == depth {
                let h1 = self.h1_text.take().expect("open");
                let text = h1.walk.buf.finish();
                self.h1 = Some(text).filter(|t| h1.unlinked && !t.is_empty());
            }
        }
        if let Some((d, buf)) = &mut self.byline_text {
            buf.brk(el.info.flow);
            if *d == depth {
                let text = self.byline_text.take().expect("open").1.finish();
                self.byline = byline_names(&text);
            }
        }
        if self.script.as_ref().is_some_and(|(d, _)| *d == depth) {
            let (_, body) = self.script.take().expect("open");
            self.jsonld.push(body);
        }
    }
}

/// Most elements are none of these and are passed over at once (the `span`s, `div`s,
/// `p`s and `address`es are looked at only for a byline, while none is found).
fn looked_at(el: &Elem<'_>) -> bool {
    matches!(
        el.tag,
        Tag::Meta | Tag::Script | Tag::Link | Tag::H1 | Tag::A | Tag::Other
    ) || matches!(el.tag, Tag::Span | Tag::Div | Tag::P | Tag::Address)
}

impl Visitor for MetaWalk {
    #[inline]
    fn open(&mut self, el: &Elem<'_>) {
        self.depth += 1;
        if self.busy || el.info.has(Info::ITEM) {
            self.open_busy(el);
        }
        if el.html && looked_at(el) {
            self.element(el);
        }
        self.busy = self.busy();
    }

    #[inline]
    fn text(&mut self, text: &str) {
        if self.busy {
            self.text_busy(text);
        }
    }

    #[inline]
    fn close(&mut self, el: &Elem<'_>) {
        let depth = self.depth;
        self.depth = depth.saturating_sub(1);
        if self.busy {
            self.close_busy(el, depth);
            self.busy = self.busy();
        }
    }
}
