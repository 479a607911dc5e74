//! The first half of generic extraction: the head fields and every link.

use url::Url;

use crate::dom::{Info, Skip, TextBuf, TextWalk};
use crate::resolve::Resolver;
use crate::visit::{Depth, Elem, Visitor};

/// A link as read so far: its `href` resolved (`None`: it does not resolve).
pub(super) struct OpenLink {
    pub href: Option<String>,
    pub text: TextBuf,
    pub rel: Option<String>,
}

impl OpenLink {
    /// The link, when its `href` resolves.
    pub fn finish(self) -> Option<super::Link> {
        Some(super::Link {
            href: self.href?,
            text: self.text.finish(),
            rel: self.rel.filter(|r| !r.trim().is_empty()),
        })
    }
}

/// Reads the head fields (the first of each, as written in the page) and every
/// `<a href>` with its text, its `href` resolved as it opens against [`Self::base`],
/// from the events of the whole page.
pub(super) struct HeadAndLinks {
    /// What links resolve against.
    pub base: Resolver,
    pub title: Option<String>,
    pub lang: Option<String>,
    pub base_href: Option<String>,
    pub canonical: Option<String>,
    pub description: Option<String>,
    pub keywords: Option<String>,
    pub links: Vec<OpenLink>,
    /// The links the walk is inside of (nested `<a>` is possible in a parsed tree).
    open_links: Vec<usize>,
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
            base: Resolver::new(base),
            title: None,
            lang: None,
            base_href: None,
            canonical: None,
            description: None,
            keywords: None,
            links: Vec::new(),
            open_links: Vec::new(),
            hidden: 0,
            title_text: None,
        }
    }

    /// Takes in what an element holds: a head field, or a link.
    fn element(&mut self, name: &str, el: &Elem<'_>) {
        match name {
            "html" if self.lang.is_none() => {
                self.lang = el
                    .attr("lang")
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned);
            }
            "title" if self.title.is_none() && self.title_text.is_none() => {
                self.title_text = Some((Depth::default(), TextWalk::new(Skip::Hidden)));
            }
            "base" if self.base_href.is_none() => {
                self.base_href = el.attr("href").map(str::to_owned);
            }
            "link" if self.canonical.is_none() && is_canonical(el.attr("rel")) => {
                self.canonical = el.attr("href").map(str::to_owned);
            }
            "meta" => self.meta(el),
            "a" => {
                if let Some(href) = el.attr("href") {
                    self.open_links.push(self.links.len());
                    self.links.push(OpenLink {
                        href: self.base.join(href.trim()),
                        text: TextBuf::default(),
                        rel: el.attr("rel").map(str::to_owned),
                    });
                }
            }
            _ => {}
        }
    }

    /// `<meta name=description>` and `<meta name=keywords>`, the first of each.
    fn meta(&mut self, el: &Elem<'_>) {
        let which = el.attr("name").map(str::to_ascii_lowercase);
        let content = el.attr("content").map(|c| c.trim().to_owned());
        match which.as_deref() {
            Some("description") if self.description.is_none() => self.description = content,
            Some("keywords") if self.keywords.is_none() => self.keywords = content,
            _ => {}
        }
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

impl Visitor for HeadAndLinks {
    fn open(&mut self, el: &Elem<'_>) {
        if let Some((depth, walk)) = &mut self.title_text {
            depth.open();
            walk.open(el);
        }
        let Some(name) = el.html_name() else { return };
        if el.info.has(Info::SCRIPT) {
            self.hidden += 1;
            return;
        }
        self.element(name, el);
        if let Some((depth, walk)) = &mut self.title_text
            && !depth.inside()
        {
            depth.open();
            walk.open(el);
        }
        if !self.open_links.is_empty() {
            let f = el.info.flow;
            for &i in &self.open_links {
                self.links[i].text.brk(f);
            }
        }
    }

    fn text(&mut self, text: &str) {
        self.title_event(|w| _ = w.text(text), false);
        if self.hidden == 0 {
            for &i in &self.open_links {
                self.links[i].text.push(text);
            }
        }
    }

    fn close(&mut self, el: &Elem<'_>) {
        self.title_event(|w| _ = w.close(el), true);
        let Some(name) = el.html_name() else { return };
        if el.info.has(Info::SCRIPT) {
            self.hidden -= 1;
        } else if name == "a" && el.attr("href").is_some() {
            self.open_links.pop();
        }
    }
}
