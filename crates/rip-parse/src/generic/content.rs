//! The second half of generic extraction: the content region's outline of headings,
//! its text and (when asked) its Markdown.

use scraper::Html;
use url::Url;

use super::Heading;
use super::article::{Filtered, Selection, select};
use super::outline::Outline;
use crate::dom::{Flow, Info, ParseLimits, Skip, TextBuf, TextWalk};
use crate::markdown::Markdown;
use crate::stream::{self, Bail};
use crate::tag::Tag;
use crate::visit::{Depth, Elem, Visitor, walk_tree};

/// What a content region gave.
pub(super) struct ContentFields {
    pub headings: Vec<Heading>,
    pub text: String,
    pub markdown: Option<String>,
    /// How the region was found (the doc's `contentFrom`).
    pub from: String,
    /// The page's outline and the main content picked from it (for the metadata:
    /// which byline is the article's).
    pub outline: Outline,
    pub selection: Selection,
}

/// Reads a content region from the events of its subtree (its root included).
pub(super) struct Content {
    walk: TextWalk,
    headings: Vec<Heading>,
    heading: Option<(u8, Option<String>, TextBuf)>,
    /// The buffer of the last heading read, emptied, for the next one: a heading's text
    /// is copied out at its size when it closes, instead of each heading's buffer grown
    /// from nothing (the Rust docs have a heading per item, ~180 regrowths a page).
    spare: TextBuf,
    markdown: Option<Markdown>,
    depth: Depth,
    /// The root has closed: the region is read.
    done: bool,
}

impl Content {
    /// A region leaving out what `skip` says; with Markdown when `markdown` gives the
    /// URL links resolve against; with room for `text_room` bytes of text.
    pub fn new(skip: Skip, markdown: Option<Url>, text_room: usize) -> Self {
        let md_skip = if skip == Skip::Boilerplate {
            Skip::Boilerplate
        } else {
            Skip::Nav
        };
        let mut walk = TextWalk::new(skip);
        walk.buf.reserve(text_room);
        Self {
            walk,
            headings: Vec::new(),
            heading: None,
            spare: TextBuf::default(),
            markdown: markdown.map(|base| Markdown::new(base, md_skip)),
            depth: Depth::default(),
            done: false,
        }
    }

    /// The region's fields, picked as `selection` says from `outline`.
    pub fn finish(self, outline: Outline, selection: Selection) -> ContentFields {
        ContentFields {
            from: selection.from.clone(),
            outline,
            selection,
            headings: self.headings,
            text: self.walk.buf.finish(),
            markdown: self
                .markdown
                .map(Markdown::finish)
                .filter(|md| !md.is_empty()),
        }
    }
}

impl Visitor for Content {
    fn open(&mut self, el: &Elem<'_>) {
        self.depth.open();
        if let Some(md) = &mut self.markdown {
            md.open(el);
        }
        if self.walk.open(el).is_none() {
            return;
        }
        if let Some(level) = el.info.heading() {
            let id = el.attr("id").map(str::to_owned);
            self.heading = Some((level, id, std::mem::take(&mut self.spare)));
        } else if let Some((_, _, h)) = self.heading.as_mut() {
            let f = el.info.flow;
            h.brk(if f == Flow::Block { Flow::Cell } else { f });
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(md) = &mut self.markdown {
            md.text(text);
        }
        if self.walk.text(text)
            && let Some((_, _, h)) = self.heading.as_mut()
        {
            h.push(text);
        }
    }

    fn close(&mut self, el: &Elem<'_>) {
        self.done = self.depth.close();
        if let Some(md) = &mut self.markdown {
            md.close(el);
        }
        if self.walk.close(el).is_none() {
            return;
        }
        if el.info.heading().is_some()
            && let Some((level, id, mut h)) = self.heading.take()
        {
            if !h.is_empty() {
                let text = h.as_str().to_owned();
                self.headings.push(Heading { level, text, id });
            }
            h.clear();
            self.spare = h;
        }
    }
}

/// The content region of a page read in one pass, where it is not known in advance
/// which element it is: the first `<main>`, else the first other element with
/// `role=main`, else the body less its boilerplate (as [`super::content_root`] picks
/// it in a tree). Each candidate is read from the moment it opens; a `<main>` ends
/// the others.
#[derive(Default)]
pub(super) struct Regions {
    markdown: Option<Url>,
    /// The room a region's text is given when it begins.
    text_room: usize,
    main: Option<Content>,
    role_main: Option<Content>,
    body: Option<Content>,
    seen_body: bool,
    /// The page's elements, from which the main content is picked.
    outline: Outline,
}

impl Regions {
    /// Regions read with Markdown when `markdown` gives the URL links resolve against.
    pub fn new(markdown: Option<Url>) -> Self {
        Self {
            markdown,
            outline: Outline::new(),
            ..Self::default()
        }
    }

    /// Gives each region begun from now on room for `bytes` of text at once, instead of
    /// its text grown by doubling (a copy of it at each step).
    pub fn reserve_text(&mut self, bytes: usize) {
        self.text_room = bytes;
    }

    /// Sets the URL the Markdown of regions begun from now on resolves against.
    pub fn markdown_base(&mut self, base: &Url) {
        self.markdown = Some(base.clone());
    }

    /// True once a candidate region has begun (a `<base>` seen later would change
    /// how its Markdown links resolve).
    pub fn begun(&self) -> bool {
        self.main.is_some() || self.role_main.is_some() || self.body.is_some()
    }

    /// The main content of the page whose events were these (its `text`, for a second
    /// pass over the main content when it is not the region read on the way); `None`
    /// when the page has no body (a frameset).
    pub fn finish(self, text: &str, limits: ParseLimits) -> Result<Option<ContentFields>, Bail> {
        let sel = select(&self.outline);
        if sel.default {
            let region = self.main.or(self.role_main).or(self.body);
            return Ok(region.map(|c| c.finish(self.outline, sel)));
        }
        let content = Content::new(sel.skip, self.markdown, self.text_room);
        let mut pass = Filtered::new(&sel, content);
        stream::walk(text, limits, &mut pass)?;
        Ok(Some(pass.into_inner().finish(self.outline, sel)))
    }

    fn start(&mut self, el: &Elem<'_>) {
        match el.html_tag() {
            Some(Tag::Main) if self.main.is_none() => {
                let c = Content::new(Skip::Nav, self.markdown.clone(), self.text_room);
                self.main = Some(c);
                self.role_main = None;
                self.body = None;
            }
            Some(Tag::Body) if !self.seen_body => {
                self.seen_body = true;
                if self.main.is_none() {
                    let c = Content::new(Skip::Boilerplate, self.markdown.clone(), self.text_room);
                    self.body = Some(c);
                }
            }
            Some(_)
                if self.main.is_none()
                    && self.role_main.is_none()
                    && el.info.has(Info::ROLE_MAIN) =>
            {
                let c = Content::new(Skip::Nav, self.markdown.clone(), self.text_room);
                self.role_main = Some(c);
            }
            _ => {}
        }
    }

    /// Passes an event to each region being read.
    fn each(&mut self, mut f: impl FnMut(&mut Content)) {
        // One at a time (an array of the three, flattened and filtered, cost as much as
        // the events it passed on).
        if let Some(c) = &mut self.main
            && !c.done
        {
            f(c);
        }
        if let Some(c) = &mut self.role_main
            && !c.done
        {
            f(c);
        }
        if let Some(c) = &mut self.body
            && !c.done
        {
            f(c);
        }
    }
}

impl Visitor for Regions {
    fn open(&mut self, el: &Elem<'_>) {
        self.outline.open(el);
        self.start(el);
        self.each(|c| c.open(el));
    }

    fn text(&mut self, text: &str) {
        self.outline.text(text);
        self.each(|c| c.text(text));
    }

    fn close(&mut self, el: &Elem<'_>) {
        self.outline.close(el);
        self.each(|c| c.close(el));
    }
}

/// The main content of a parsed page, as [`Regions`] finds it in the streaming pass.
pub(super) fn read_tree(html: &Html, markdown: Option<Url>) -> ContentFields {
    let mut outline = Outline::new();
    walk_tree(html.tree.root(), &mut outline);
    let sel: Selection = select(&outline);
    if sel.default {
        let (root, skip) = super::content_root(html);
        let mut content = Content::new(skip, markdown, 0);
        walk_tree(root, &mut content);
        return content.finish(outline, sel);
    }
    let mut pass = Filtered::new(&sel, Content::new(sel.skip, markdown, 0));
    walk_tree(html.tree.root(), &mut pass);
    pass.into_inner().finish(outline, sel)
}
