//! The first half of generic extraction: the head fields, every link, and what the
//! metadata reads ([`MetaWalk`]), all from one look at each element's tag.

use url::Url;

use super::Links;
use super::meta::MetaWalk;
use crate::dom::{Info, Skip, TextBuf, TextWalk};
use crate::resolve::Resolver;
use crate::tag::Tag;
use crate::visit::{Depth, Elem, Visitor};

/// A link being read: its slot in [`Links`] (`None`: its `href` does not resolve, and
/// it is left out) and its text so far.
struct OpenLink {
    slot: Option<usize>,
    text: TextBuf,
}

/// Reads the head fields (the first of each, as written in the page) and every
/// `<a href>` with its text, its `href` resolved as it opens against [`Self::base`],
/// from the events of the whole page; and passes the metadata's walk the elements it
/// looks at, in the same match on the tag.
pub(super) struct HeadAndLinks {
    /// The metadata's walk.
    pub meta: MetaWalk,
    /// What links resolve against.
    pub base: Resolver,
    pub title: Option<String>,
    pub lang: Option<String>,
    pub base_href: Option<String>,
    pub canonical: Option<String>,
    pub description: Option<String>,
    pub keywords: Option<String>,
    pub links: Links,
    /// Links seen so far, resolved or not.
    pub links_seen: usize,
    /// The links the walk is inside of (nested `<a>` is possible in a parsed tree).
    open_links: Vec<OpenLink>,
    /// Text buffers of closed links, for the next ones (a link's text is copied into
    /// [`Links`] when it closes).
    spare_texts: Vec<TextBuf>,
    /// How deep the walk is in script, style and template elements.
    hidden: usize,
    /// The `<title>` being read.
    title_text: Option<(Depth, TextWalk)>,
}

fn is_canonical(rel: Option<&str>) -> bool {
    rel.is_some_and(|r| {
        r.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case("canonical"))
    })
}

impl HeadAndLinks {
    /// A reader whose links resolve against `base`.
    pub fn new(base: &Url) -> Self {
        Self {
            meta: MetaWalk::new(base),
            base: Resolver::new(base),
            title: None,
            lang: None,
            base_href: None,
            canonical: None,
            description: None,
            keywords: None,
            links: Links::from_spare(),
            links_seen: 0,
            open_links: Vec::new(),
            spare_texts: Vec::new(),
            hidden: 0,
            title_text: None,
        }
    }

    /// Takes in what an element holds: a head field, a link, or what the metadata
    /// reads.
    fn element(&mut self, tag: Tag, el: &Elem<'_>) {
        match tag {
            Tag::Html if self.lang.is_none() => {
                self.lang = el
                    .attr("lang")
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned);
            }
            Tag::Title if self.title.is_none() && self.title_text.is_none() => {
                self.title_text = Some((Depth::default(), TextWalk::new(Skip::Hidden)));
            }
            Tag::Base if self.base_href.is_none() => {
                self.base_href = el.attr("href").map(str::to_owned);
            }
            Tag::Link => {
                let rel = el.attr("rel");
                if self.canonical.is_none() && is_canonical(rel) {
                    self.canonical = el.attr("href").map(str::to_owned);
                }
                self.meta.link(el, rel);
            }
            Tag::Meta => {
                self.head_meta(el);
                self.meta.meta(el);
            }
            Tag::A => {
                // One look at the attributes for `rel`, the link's and the byline's.
                let rel = el.attr("rel");
                self.open_link(el, rel);
                self.meta.a(rel);
            }
            Tag::H1 => self.meta.h1(),
            Tag::Span | Tag::Div | Tag::P | Tag::Address => self.meta.block(el),
            Tag::Other => self.meta.other(el),
            _ => {}
        }
    }

    /// An `<a>` whose `rel` is `rel`: with an `href`, a link (left out when it does not
    /// resolve).
    fn open_link(&mut self, el: &Elem<'_>, rel: Option<&str>) {
        if let Some(href) = el.attr("href") {
            self.links_seen += 1;
            let base = &self.base;
            let slot = self
                .links
                .open_resolved(|buf| base.join_onto(href.trim(), buf), rel);
            let text = self.spare_texts.pop().unwrap_or_default();
            self.open_links.push(OpenLink { slot, text });
        }
    }

    /// `<meta name=description>` and `<meta name=keywords>`, the first of each.
    fn head_meta(&mut self, el: &Elem<'_>) {
        let which = el.attr("name").map(str::to_ascii_lowercase);
        let content = el.attr("content").map(|c| c.trim().to_owned());
        match which.as_deref() {
            Some("description") if self.description.is_none() => self.description = content,
            Some("keywords") if self.keywords.is_none() => self.keywords = content,
            _ => {}
        }
    }

    /// The innermost open link closes: its text goes to its slot, its buffer to the
    /// spares.
    fn close_link(&mut self) {
        let Some(OpenLink { slot, mut text }) = self.open_links.pop() else {
            return;
        };
        if let Some(slot) = slot {
            self.links.close(slot, text.as_str());
        }
        text.clear();
        self.spare_texts.push(text);
    }

    /// The links read, those still open closed (their text as read so far).
    pub fn finish_links(&mut self) -> Links {
        while !self.open_links.is_empty() {
            self.close_link();
        }
        std::mem::take(&mut self.links)
    }

    /// Passes an event to the `<title>` being read; takes its text when it closes.
    fn title_event(&mut self, event: impl FnOnce(&mut TextWalk), closing: bool) {
        let Some((depth, walk)) = &mut self.title_text else {
            return;
        };
        event(walk);
        if closing
            && depth.close()
            && let Some((_, walk)) = self.title_text.take()
        {
            let text = walk.buf.finish();
            self.title = Some(text).filter(|t| !t.is_empty());
        }
    }
}

impl HeadAndLinks {
    /// An HTML element opens.
    fn open_html(&mut self, tag: Tag, el: &Elem<'_>) {
        if el.info.has(Info::SCRIPT) {
            if tag == Tag::Script {
                self.meta.script(el);
            }
            self.hidden += 1;
            return;
        }
        self.element(tag, el);
        if let Some((depth, walk)) = &mut self.title_text
            && !depth.inside()
        {
            depth.open();
            walk.open(el);
        }
        let f = el.info.flow;
        for link in &mut self.open_links {
            link.text.brk(f);
        }
    }
}

impl Visitor for HeadAndLinks {
    fn open(&mut self, el: &Elem<'_>) {
        if let Some((depth, walk)) = &mut self.title_text {
            depth.open();
            walk.open(el);
        }
        self.meta.enter(el);
        if let Some(tag) = el.html_tag() {
            self.open_html(tag, el);
        }
        self.meta.settle();
    }

    fn text(&mut self, text: &str) {
        self.meta.text(text);
        self.title_event(|w| _ = w.text(text), false);
        if self.hidden == 0 {
            for link in &mut self.open_links {
                link.text.push(text);
            }
        }
    }

    fn close(&mut self, el: &Elem<'_>) {
        self.meta.close(el);
        self.title_event(|w| _ = w.close(el), true);
        let Some(tag) = el.html_tag() else { return };
        if el.info.has(Info::SCRIPT) {
            self.hidden -= 1;
        } else if tag == Tag::A && el.attr("href").is_some() {
            self.close_link();
        }
    }
}
