//! The tree builder of the streaming pass: the HTML tree construction rules for
//! ordinary pages (implied `html`, `head`, `body` and `tbody`, end tags implied by
//! `p`, `li`, `dd` and table cells, void and raw text elements, inline SVG), run on a
//! stack of open elements instead of a tree, giving each element's open and close to
//! the visitor in tree order. Where the real rules would move content out of source
//! order (foster parenting, the adoption agency, formatting elements reopened after a
//! misnested close, elements moved into the head) or touch what is not modelled
//! here (framesets, `select`, MathML, `caption`, `plaintext`, nested forms), it gives
//! up with a [`Bail`] and the page is read from a tree instead.

use std::borrow::Cow;
use std::time::Instant;

use super::Bail;
use super::kind::{
    CLOSES_P, FORMATTING, HEADING, IMPLIED_END, MARKER, SCOPE, SPECIAL, TABLE_MODE, TEMPLATE, VOID,
    kind,
};
use crate::dom::{Info, ParseLimits};
use crate::tag::Tag;
use crate::visit::{Attr, Elem, OpenElem, Path, Visitor};
use rip_html::{Quirks, Scanner, Token};

mod body;

type Open<'a> = OpenElem<'a>;

/// How far the page has got towards its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    BeforeHtml,
    BeforeHead,
    InHead,
    AfterHead,
    InBody,
}

/// The insertion mode inside the body, from the nearest table element or template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Body,
    Table,
    TableBody,
    Row,
    Cell,
    Template,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0C')
}

/// The tags that leave inline SVG for HTML (the tree builder's "breakout" list).
fn breaks_out(tag: Tag) -> bool {
    use Tag::*;
    matches!(
        tag,
        B | Big
            | Blockquote
            | Body
            | Br
            | Center
            | Code
            | Dd
            | Div
            | Dl
            | Dt
            | Em
            | Embed
            | H1
            | H2
            | H3
            | H4
            | H5
            | H6
            | Head
            | Hr
            | I
            | Img
            | Li
            | Listing
            | Menu
            | Meta
            | Nobr
            | Ol
            | P
            | Pre
            | Ruby
            | S
            | Small
            | Span
            | Strong
            | Strike
            | Sub
            | Sup
            | Table
            | Tt
            | U
            | Ul
            | Var
            | Font
            | Script
            | Style
            | Math
            | Foreignobject
            | Desc
            | Title
    )
}

fn is_table_part(tag: Tag) -> bool {
    use Tag::*;
    matches!(
        tag,
        Caption | Col | Colgroup | Tbody | Td | Tfoot | Th | Thead | Tr
    )
}

/// Runs the tree construction rules over a page's tokens.
pub struct Builder<'a, 'v, V: Visitor> {
    scan: Scanner<'a>,
    stack: Vec<Open<'a>>,
    /// The attributes of the open elements, each element's a range.
    attrs: Vec<Attr<'a>>,
    /// The attributes of the start tag being handled.
    tag_attrs: Vec<Attr<'a>>,
    phase: Phase,
    quirks: Option<Quirks>,
    /// A newline right after `<pre>` or `<listing>` is dropped.
    skip_lf: bool,
    /// The form element pointer is set.
    form: bool,
    /// Text read and not yet given to the visitor: given whole when an element opens or
    /// closes, so that text the tree holds as one node (around an end tag it ignores, a
    /// `<` ending the page) is one event, as the tree walk gives it.
    pending: Option<Cow<'a, str>>,
    /// Open elements that decide the mode (tables, templates).
    table_like: usize,
    templates: usize,
    /// How many HTML elements of each tag are open: a search of the stack for a tag of
    /// which none is open (a `p` when a block starts, an `a` when a link starts) is
    /// answered without a look.
    open: [u16; Tag::COUNT],
    limits: ParseLimits,
    started: Instant,
    v: &'v mut V,
}

/// Tokens read between two looks at the clock.
const CLOCK_EVERY: u32 = 4096;

type Step = Result<(), Bail>;

impl<'a, 'v, V: Visitor> Builder<'a, 'v, V> {
    /// A builder over `text`, within `limits`.
    pub fn new(text: &'a str, limits: ParseLimits, v: &'v mut V) -> Self {
        Self {
            scan: Scanner::new(text),
            stack: Vec::with_capacity(32),
            attrs: Vec::with_capacity(64),
            tag_attrs: Vec::with_capacity(8),
            phase: Phase::BeforeHtml,
            quirks: None,
            skip_lf: false,
            form: false,
            pending: None,
            table_like: 0,
            templates: 0,
            open: [0; Tag::COUNT],
            limits,
            started: Instant::now(),
            v,
        }
    }

    /// Reads the whole page.
    pub fn run(mut self) -> Step {
        let mut tokens = 0u32;
        loop {
            tokens += 1;
            if tokens.is_multiple_of(CLOCK_EVERY)
                && self.started.elapsed() > self.limits.time_budget
            {
                return Err(Bail::TOO_SLOW);
            }
            self.tag_attrs.clear();
            // After `<pre>` the tree drops a newline written first; one that a reference
            // decodes to it drops or keeps by its tokenizer's timing (`&#10;x`: dropped,
            // `&#10` at the end: kept), so such a text goes to the tree.
            let skip_lf = std::mem::take(&mut self.skip_lf);
            let written_lf = skip_lf && self.scan.remaining().starts_with('\n');
            let token = self.scan.next(&mut self.tag_attrs)?;
            match token {
                Token::Eof => return self.eof(),
                // A comment is a node of the tree: the text on each side is another.
                Token::Comment => self.flush_text(),
                Token::Doctype(q) => {
                    self.quirks.get_or_insert(q);
                }
                Token::Text(t) => {
                    let t = match t {
                        Cow::Borrowed(s) if skip_lf => {
                            Cow::Borrowed(s.strip_prefix('\n').unwrap_or(s))
                        }
                        Cow::Owned(s) if written_lf => Cow::Owned(s[1..].to_owned()),
                        Cow::Owned(s) if skip_lf && s.starts_with('\n') => {
                            return Err(Bail("a <pre>'s text starts with a decoded newline"));
                        }
                        t => t,
                    };
                    self.text(t)?;
                }
                Token::Start { name, self_closing } => {
                    self.quirks.get_or_insert(Quirks::Yes);
                    let tag = Tag::of(&name);
                    self.start(name, tag, self_closing)?;
                }
                Token::End(name) => {
                    self.quirks.get_or_insert(Quirks::Yes);
                    self.end(&name, Tag::of(&name))?;
                }
            }
        }
    }

    // ---- the stack and the events

    fn current(&self) -> Option<&Open<'a>> {
        self.stack.last()
    }

    fn current_is(&self, tag: Tag) -> bool {
        self.current().is_some_and(|o| o.is(tag))
    }

    /// Opens the element `name` (whose [`Tag`] is `tag`; an element of another
    /// namespace than HTML's when `html` is false), with the start tag's attributes
    /// when `with_attrs`.
    fn insert(&mut self, name: Cow<'a, str>, tag: Tag, html: bool, with_attrs: bool) -> Step {
        let (tag, kind) = if html {
            (tag, kind(tag))
        } else {
            (Tag::Other, 0)
        };
        if self.stack.len() + 3 >= self.limits.max_depth {
            return Err(Bail("elements nested near the depth limit"));
        }
        let start = self.attrs.len();
        if with_attrs {
            self.attrs.append(&mut self.tag_attrs);
        }
        if kind & TABLE_MODE != 0 {
            self.table_like += 1;
        }
        if kind & TEMPLATE != 0 {
            self.templates += 1;
        }
        if html {
            self.open[tag as usize] += 1;
        }
        let info = if html {
            Info::of_attrs(tag, &self.attrs[start..])
        } else {
            Info::default()
        };
        self.flush_text();
        self.stack.push(Open {
            name,
            tag,
            html,
            kind,
            info,
            attrs: start..self.attrs.len(),
        });
        self.v.open(&Elem::on_path(Path {
            elems: &self.stack,
            attrs: &self.attrs,
        }));
        Ok(())
    }

    fn implied(&mut self, tag: Tag) -> Step {
        self.insert(Cow::Borrowed(tag.name()), tag, true, false)
    }

    fn pop(&mut self) {
        if self.stack.is_empty() {
            return;
        }
        self.flush_text();
        self.v.close(&Elem::on_path(Path {
            elems: &self.stack,
            attrs: &self.attrs,
        }));
        let Some(top) = self.stack.pop() else { return };
        self.attrs.truncate(top.attrs.start);
        if top.kind & TABLE_MODE != 0 {
            self.table_like -= 1;
        }
        if top.kind & TEMPLATE != 0 {
            self.templates -= 1;
        }
        if top.html {
            self.open[top.tag as usize] -= 1;
        }
    }

    fn void(&mut self, name: Cow<'a, str>, tag: Tag) -> Step {
        self.insert(name, tag, true, true)?;
        self.pop();
        Ok(())
    }

    /// A raw text element: its start, its text up to its end tag, its end.
    fn raw(&mut self, name: Cow<'a, str>, tag: Tag, rcdata: bool) -> Step {
        let skip_lf = tag == Tag::Textarea;
        self.insert(name.clone(), tag, true, true)?;
        let text = self.scan.raw_text(&name, rcdata)?;
        let text = if skip_lf {
            text.strip_prefix('\n').unwrap_or(&text).to_owned().into()
        } else {
            text
        };
        if !text.is_empty() {
            self.pending = Some(text);
        }
        self.pop();
        Ok(())
    }

    /// Pops elements until the topmost one at `i` is popped. Formatting elements
    /// closed out of turn would be reopened by the tree builder: a bail, unless the
    /// element closed is a marker (a cell, a template), which forgets them.
    fn pop_to(&mut self, i: usize) -> Step {
        let marker = self.stack[i].kind & MARKER != 0;
        if !marker && self.stack[i + 1..].iter().any(|o| o.kind & FORMATTING != 0) {
            return Err(Bail("a formatting element closed out of turn"));
        }
        while self.stack.len() > i {
            self.pop();
        }
        Ok(())
    }

    fn find(&self, tag: Tag, name: &str) -> Option<usize> {
        self.stack.iter().rposition(|o| o.is_named(tag, name))
    }

    /// Pops up to the element `name` (whose tag is `tag`).
    fn pop_until(&mut self, tag: Tag, name: &str) -> Step {
        let i = self
            .find(tag, name)
            .ok_or(Bail("an end tag's element is not open"))?;
        self.pop_to(i)
    }

    /// Whether an HTML element that `target` picks is in scope: the default scope,
    /// widened by the elements `extra` names (button scope, list item scope).
    fn in_scope(&self, target: impl Fn(&Open<'a>) -> bool, extra: &[Tag]) -> bool {
        for o in self.stack.iter().rev() {
            if o.html && target(o) {
                return true;
            }
            if o.html && (o.kind & SCOPE != 0 || extra.contains(&o.tag)) {
                return false;
            }
        }
        false
    }

    /// True when no HTML element of the tag `tag` (not [`Tag::Other`]) is open.
    fn none_open(&self, tag: Tag) -> bool {
        tag != Tag::Other && self.open[tag as usize] == 0
    }

    fn named_in_scope(&self, tag: Tag, name: &str, extra: &[Tag]) -> bool {
        !self.none_open(tag) && self.in_scope(|o| o.is_named(tag, name), extra)
    }

    /// Whether the table element `tag` (a table, a part of one, a cell) is in table scope.
    fn in_table_scope(&self, tag: Tag) -> bool {
        for o in self.stack.iter().rev() {
            if o.is(tag) {
                return true;
            }
            if o.html && matches!(o.tag, Tag::Html | Tag::Table | Tag::Template) {
                return false;
            }
        }
        false
    }

    /// Pops the elements that end tags are implied for, but an element `except` (an
    /// element with an implied end tag has a tag: `except`'s name need not be compared).
    fn generate_implied(&mut self, except: Option<Tag>) {
        while let Some(o) = self.current() {
            if !o.html || o.kind & IMPLIED_END == 0 || except == Some(o.tag) {
                break;
            }
            self.pop();
        }
    }

    fn close_p(&mut self) -> Step {
        if self.named_in_scope(Tag::P, "p", &[Tag::Button]) {
            self.generate_implied(Some(Tag::P));
            self.pop_until(Tag::P, "p")?;
        }
        Ok(())
    }

    fn in_foreign(&self) -> bool {
        self.current().is_some_and(|o| !o.html)
    }

    fn mode(&self) -> Mode {
        if self.table_like == 0 {
            return Mode::Body;
        }
        let Some(o) = self.stack.iter().rev().find(|o| o.kind & TABLE_MODE != 0) else {
            return Mode::Body;
        };
        match o.tag {
            Tag::Td | Tag::Th => Mode::Cell,
            Tag::Tr => Mode::Row,
            Tag::Tbody | Tag::Thead | Tag::Tfoot => Mode::TableBody,
            Tag::Table => Mode::Table,
            _ => Mode::Template,
        }
    }
}

impl<'a, V: Visitor> Builder<'a, '_, V> {
    // ---- before the body

    fn ensure_body(&mut self) -> Step {
        loop {
            match self.phase {
                Phase::BeforeHtml => self.implied(Tag::Html)?,
                Phase::BeforeHead => self.implied(Tag::Head)?,
                Phase::InHead => self.pop(),
                Phase::AfterHead => self.implied(Tag::Body)?,
                Phase::InBody => return Ok(()),
            }
            self.advance();
        }
    }

    fn advance(&mut self) {
        self.phase = match self.phase {
            Phase::BeforeHtml => Phase::BeforeHead,
            Phase::BeforeHead => Phase::InHead,
            Phase::InHead => Phase::AfterHead,
            Phase::AfterHead | Phase::InBody => Phase::InBody,
        };
    }

    fn text(&mut self, t: Cow<'a, str>) -> Step {
        if t.is_empty() {
            return Ok(());
        }
        if self.phase != Phase::InBody {
            // White space before the body is not content; what follows it is.
            let skip = t.len() - t.trim_start_matches(is_space).len();
            if skip == t.len() {
                return Ok(());
            }
            self.quirks.get_or_insert(Quirks::Yes);
            self.ensure_body()?;
            let rest = match t {
                Cow::Borrowed(s) => Cow::Borrowed(&s[skip..]),
                Cow::Owned(s) => Cow::Owned(s[skip..].to_owned()),
            };
            return self.body_text(rest);
        }
        self.body_text(t)
    }

    fn body_text(&mut self, t: Cow<'a, str>) -> Step {
        if !self.in_foreign()
            && matches!(self.mode(), Mode::Table | Mode::TableBody | Mode::Row)
            && !t.chars().all(is_space)
        {
            return Err(Bail("text in a table outside its cells"));
        }
        match &mut self.pending {
            Some(p) => p.to_mut().push_str(&t),
            None => self.pending = Some(t),
        }
        Ok(())
    }

    /// Gives the visitor the text read since the last element event.
    fn flush_text(&mut self) {
        if let Some(t) = self.pending.take() {
            self.v.text(&t);
        }
    }

    fn start(&mut self, name: Cow<'a, str>, tag: Tag, self_closing: bool) -> Step {
        loop {
            match self.phase {
                Phase::BeforeHtml if tag == Tag::Html => {
                    self.insert(name, tag, true, true)?;
                    self.advance();
                    return Ok(());
                }
                Phase::BeforeHead if tag == Tag::Head => {
                    self.insert(name, tag, true, true)?;
                    self.advance();
                    return Ok(());
                }
                Phase::BeforeHtml | Phase::BeforeHead => {
                    if tag == Tag::Html {
                        return Err(Bail("a second <html> tag"));
                    }
                    self.implied(if self.phase == Phase::BeforeHtml {
                        Tag::Html
                    } else {
                        Tag::Head
                    })?;
                    self.advance();
                }
                Phase::InHead => {
                    if self.head_start(tag)? {
                        return self.head_element(name, tag);
                    }
                    self.pop();
                    self.advance();
                }
                Phase::AfterHead => match tag {
                    Tag::Body => {
                        self.insert(name, tag, true, true)?;
                        self.advance();
                        return Ok(());
                    }
                    Tag::Html
                    | Tag::Head
                    | Tag::Frameset
                    | Tag::Base
                    | Tag::Basefont
                    | Tag::Bgsound
                    | Tag::Link
                    | Tag::Meta
                    | Tag::Noframes
                    | Tag::Script
                    | Tag::Style
                    | Tag::Template
                    | Tag::Title => {
                        return Err(Bail("a head element after the head"));
                    }
                    _ => {
                        self.implied(Tag::Body)?;
                        self.advance();
                    }
                },
                Phase::InBody => return self.body_start(name, tag, self_closing),
            }
        }
    }

    /// In the head: true when `tag` belongs there, false when it ends the head.
    fn head_start(&self, tag: Tag) -> Result<bool, Bail> {
        use Tag::*;
        match tag {
            Html | Head | Template => Err(Bail("an unusual tag in the head")),
            Base | Basefont | Bgsound | Link | Meta | Title | Noscript | Noframes | Style
            | Script => Ok(true),
            _ => Ok(false),
        }
    }

    fn head_element(&mut self, name: Cow<'a, str>, tag: Tag) -> Step {
        match tag {
            Tag::Title => self.raw(name, tag, true),
            Tag::Noscript | Tag::Noframes | Tag::Style | Tag::Script => self.raw(name, tag, false),
            _ => self.void(name, tag),
        }
    }

    fn end(&mut self, name: &str, tag: Tag) -> Step {
        loop {
            let ends_head = matches!(tag, Tag::Head | Tag::Body | Tag::Html | Tag::Br);
            match self.phase {
                Phase::InBody => return self.body_end(name, tag),
                _ if tag == Tag::Template => return Err(Bail("a </template> outside a template")),
                Phase::InHead if tag == Tag::Head => {
                    self.pop();
                    self.advance();
                    return Ok(());
                }
                Phase::AfterHead if tag == Tag::Head => return Ok(()),
                _ if !ends_head => return Ok(()),
                Phase::BeforeHtml => self.implied(Tag::Html)?,
                Phase::BeforeHead => self.implied(Tag::Head)?,
                Phase::InHead => self.pop(),
                Phase::AfterHead => self.implied(Tag::Body)?,
            }
            self.advance();
        }
    }

    fn eof(&mut self) -> Step {
        if self.templates > 0 {
            return Err(Bail("the page ends in a template"));
        }
        self.ensure_body()?;
        while !self.stack.is_empty() {
            self.pop();
        }
        self.flush_text();
        Ok(())
    }
}
