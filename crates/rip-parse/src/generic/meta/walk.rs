//! The metadata's half of generic extraction's walk: what it keeps of each event.
//!
//! Most elements cost a few integer comparisons: `<meta>`, `<link>`, `<script>`,
//! `<time>`, `<h1>` and elements marked [`Info::ITEM`] are looked at; text is copied
//! only while a JSON-LD script, the first `<h1>`, a byline or a microdata property is
//! open.

use crate::dom::{Info, Skip, TextBuf, TextWalk};
use crate::resolve::Resolver;
use crate::tag::Tag;
use crate::visit::Elem;

use super::byline::{Byline, MAX_BYLINES, byline_class, byline_names};
use super::microdata::Microdata;

/// What the page gives for its metadata, as read.
pub struct MetaWalk {
    /// What microdata URLs resolve against.
    pub base: Resolver,
    depth: usize,
    /// Elements opened so far: the next one's number in the page's outline.
    elements: u32,
    /// `<meta>` with `property`, `name` or `itemprop` (outside an item) and `content`,
    /// in page order.
    pub metas: Vec<MetaTag>,
    /// The bodies of the JSON-LD scripts.
    pub jsonld: Vec<String>,
    script: Option<(usize, String)>,
    /// The first `<h1>`'s text, but for one that is all a link (a site's logo, a link
    /// home).
    pub h1: Option<String>,
    /// That `<h1>`'s number in the page's outline.
    pub h1_at: Option<u32>,
    h1_text: Option<H1>,
    /// The first `<time datetime>` (one marked `pubdate` or `itemprop=datePublished`
    /// wins over the first).
    pub time: Option<String>,
    time_marked: bool,
    /// `<link rel=image_src>`.
    pub image_src: Option<String>,
    /// The bylines (the `byline` module's): `rel=author` links, `itemprop=author`
    /// elements and elements whose class says byline or author; of one inside another
    /// with a name, the inner one (`<div class=byline><span class=author>Ann Lee</span>
    /// • 8h</div>`).
    pub bylines: Vec<Byline>,
    /// The bylines being read, outermost first.
    byline_text: Vec<OpenByline>,
    /// The microdata items.
    pub microdata: Microdata,
    /// [`MetaWalk::busy`], kept up to date.
    busy: bool,
}

/// A `<meta>` tag's key and content.
pub struct MetaTag {
    /// The key (`property`, `name` or `itemprop`), lower case, Dublin Core's prefixes
    /// written one way.
    pub key: String,
    /// The content, trimmed.
    pub content: String,
    /// Given as a `property` (RDFa, as OpenGraph defines its tags), not a `name`.
    pub property: bool,
}

/// A byline being read: where it opened, its number, its text, and whether one inside
/// it gave a name.
struct OpenByline {
    depth: usize,
    at: u32,
    text: TextBuf,
    inner: bool,
}

/// The most bylines read one inside another.
const NESTED_BYLINES: usize = 4;

/// An `<h1>` being read: its number, where it opened, its text, how deep in links the walk is in
/// it, and whether any of its text is outside a link. A link to a place in the page
/// (`href="#…"`, a heading's own anchor, as Sphinx and mdBook write them) is no link
/// away: its text counts as outside.
struct H1 {
    at: u32,
    depth: usize,
    walk: TextWalk,
    links: usize,
    /// The open links in it: true for one to a place in the page.
    open_links: Vec<bool>,
    unlinked: bool,
}

fn has_token(list: Option<&str>, token: &str) -> bool {
    list.is_some_and(|l| {
        l.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case(token))
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
            elements: 0,
            metas: Vec::new(),
            jsonld: Vec::new(),
            script: None,
            h1: None,
            h1_at: None,
            h1_text: None,
            time: None,
            time_marked: false,
            image_src: None,
            bylines: Vec::new(),
            byline_text: Vec::new(),
            microdata: Microdata::default(),
            busy: false,
        }
    }

    /// A `<meta>` with a key and content.
    pub(in crate::generic) fn meta(&mut self, el: &Elem<'_>) {
        let Some(content) = el.attr("content").map(str::trim) else {
            return;
        };
        let property = el.attr("property");
        let key = match property.or_else(|| el.attr("name")) {
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
            self.metas.push(MetaTag {
                key: meta_key(key),
                content: content.to_owned(),
                property: property.is_some(),
            });
        }
    }

    /// A `<script>`: a JSON-LD one's body is read.
    pub(in crate::generic) fn script(&mut self, el: &Elem<'_>) {
        let ty = el.attr("type").unwrap_or("");
        if ty.trim().eq_ignore_ascii_case("application/ld+json") {
            self.script = Some((self.depth, String::new()));
        }
    }

    /// A `<link>` whose `rel` is `rel`: the first `rel=image_src`.
    pub(in crate::generic) fn link(&mut self, el: &Elem<'_>, rel: Option<&str>) {
        if self.image_src.is_none() && has_token(rel, "image_src") {
            self.image_src = el.attr("href").map(|h| h.trim().to_owned());
        }
    }

    /// An `<h1>`: read until one is kept.
    pub(in crate::generic) fn h1(&mut self) {
        if self.h1.is_none() && self.h1_text.is_none() {
            self.h1_text = Some(H1 {
                at: self.elements - 1,
                depth: self.depth,
                walk: TextWalk::new(Skip::Hidden),
                links: 0,
                open_links: Vec::new(),
                unlinked: false,
            });
        }
    }

    /// An `<a>` whose `rel` is `rel`: a byline when it says `author`.
    pub(in crate::generic) fn a(&mut self, rel: Option<&str>) {
        if has_token(rel, "author") {
            self.byline();
        }
    }

    /// A `span`, `div`, `p` or `address`: a byline when its class says so.
    pub(in crate::generic) fn block(&mut self, el: &Elem<'_>) {
        if el.attr("class").is_some_and(byline_class) {
            self.byline();
        }
    }

    /// An element of no tag of its own: `<time datetime>`, `<cite class=byline>`.
    pub(in crate::generic) fn other(&mut self, el: &Elem<'_>) {
        match el.name {
            "time" if !self.time_marked => self.time(el),
            "cite" if el.attr("class").is_some_and(byline_class) => self.byline(),
            _ => {}
        }
    }

    fn time(&mut self, el: &Elem<'_>) {
        if let Some(dt) = el.attr("datetime").map(str::trim).filter(|d| !d.is_empty()) {
            let marked =
                el.attr("pubdate").is_some() || el.attr("itemprop") == Some("datePublished");
            if self.time.is_none() || marked {
                self.time = Some(dt.to_owned());
                self.time_marked = marked;
            }
        }
    }

    /// The element just opened is a byline: its text is read (once, though it is one
    /// for two reasons).
    fn byline(&mut self) {
        let at = self.elements - 1;
        if self.byline_text.len() < NESTED_BYLINES
            && self.bylines.len() < MAX_BYLINES
            && self.byline_text.last().is_none_or(|b| b.at != at)
        {
            self.byline_text.push(OpenByline {
                depth: self.depth,
                at,
                text: TextBuf::default(),
                inner: false,
            });
        }
    }
}

impl MetaWalk {
    /// The innermost byline being read closes: its names are a byline, unless one
    /// inside it gave some.
    fn close_byline(&mut self) {
        let b = self.byline_text.pop().expect("open");
        let named = b.inner
            || (self.bylines.len() < MAX_BYLINES
                && byline_names(&b.text.finish()).is_some_and(|names| {
                    self.bylines.push(Byline { at: b.at, names });
                    true
                }));
        if let Some(outer) = self.byline_text.last_mut() {
            outer.inner |= named;
        }
    }

    /// True while some text or nesting is being followed (an `<h1>`, a byline, a
    /// JSON-LD script, a microdata item): only then do all events count.
    fn busy(&self) -> bool {
        self.h1_text.is_some()
            || !self.byline_text.is_empty()
            || self.script.is_some()
            || self.microdata.active()
    }

    #[cold]
    fn open_busy(&mut self, el: &Elem<'_>) {
        if let Some(h1) = &mut self.h1_text {
            h1.walk.open(el);
            if el.html && el.tag == Tag::A {
                let in_page = el.attr("href").is_some_and(|h| h.trim().starts_with('#'));
                h1.open_links.push(in_page);
                h1.links += usize::from(!in_page);
            }
        }
        for b in &mut self.byline_text {
            b.text.brk(el.info.flow);
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
        for b in &mut self.byline_text {
            b.text.push(text);
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
            if el.html && el.tag == Tag::A && h1.open_links.pop() == Some(false) {
                h1.links = h1.links.saturating_sub(1);
            }
            if h1.depth == depth {
                let h1 = self.h1_text.take().expect("open");
                let text = h1.walk.buf.finish();
                self.h1 = Some(text).filter(|t| h1.unlinked && !t.is_empty());
                self.h1_at = self.h1.as_ref().map(|_| h1.at);
            }
        }
        for b in &mut self.byline_text {
            b.text.brk(el.info.flow);
        }
        if self.byline_text.last().is_some_and(|b| b.depth == depth) {
            self.close_byline();
        }
        if self.script.as_ref().is_some_and(|(d, _)| *d == depth) {
            let (_, body) = self.script.take().expect("open");
            self.jsonld.push(body);
        }
    }
}

/// The walk's events. Elements are looked at by tag in the head's walk, in its one match
/// ([`super::super::head::HeadAndLinks`]): `enter` and `settle` are what every element
/// costs, a few integer tests unless something is being read.
impl MetaWalk {
    /// An element opens: counted, and passed to what is being read (an `<h1>`, a
    /// byline, a JSON-LD script, a microdata item); an `itemprop=author` is a byline.
    #[inline]
    pub(in crate::generic) fn enter(&mut self, el: &Elem<'_>) {
        self.depth += 1;
        self.elements += 1;
        if self.busy || el.info.has(Info::ITEM) {
            self.open_busy(el);
            if el.info.has(Info::ITEM) && has_token(el.attr("itemprop"), "author") {
                self.byline();
            }
        }
    }

    /// The element's own tag has been looked at: whether the next events count.
    #[inline]
    pub(in crate::generic) fn settle(&mut self) {
        self.busy = self.busy();
    }

    /// Text.
    #[inline]
    pub(in crate::generic) fn text(&mut self, text: &str) {
        if self.busy {
            self.text_busy(text);
        }
    }

    /// An element closes.
    #[inline]
    pub(in crate::generic) fn close(&mut self, el: &Elem<'_>) {
        let depth = self.depth;
        self.depth = depth.saturating_sub(1);
        if self.busy {
            self.close_busy(el, depth);
            self.busy = self.busy();
        }
    }
}
