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
fn breaks_out(name: &str) -> bool {
    matches!(
        name,
        "b" | "big"
            | "blockquote"
            | "body"
            | "br"
            | "center"
            | "code"
            | "dd"
            | "div"
            | "dl"
            | "dt"
            | "em"
            | "embed"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "head"
            | "hr"
            | "i"
            | "img"
            | "li"
            | "listing"
            | "menu"
            | "meta"
            | "nobr"
            | "ol"
            | "p"
            | "pre"
            | "ruby"
            | "s"
            | "small"
            | "span"
            | "strong"
            | "strike"
            | "sub"
            | "sup"
            | "table"
            | "tt"
            | "u"
            | "ul"
            | "var"
            | "font"
            | "script"
            | "style"
            | "math"
            | "foreignobject"
            | "desc"
            | "title"
    )
}

fn is_table_part(name: &str) -> bool {
    matches!(
        name,
        "caption" | "col" | "colgroup" | "tbody" | "td" | "tfoot" | "th" | "thead" | "tr"
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
    /// Open elements that decide the mode (tables, templates).
    table_like: usize,
    templates: usize,
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
            table_like: 0,
            templates: 0,
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
            let token = self.scan.next(&mut self.tag_attrs)?;
            let skip_lf = std::mem::take(&mut self.skip_lf);
            match token {
                Token::Eof => return self.eof(),
                Token::Comment => {}
                Token::Doctype(q) => {
                    self.quirks.get_or_insert(q);
                }
                Token::Text(t) => {
                    let t = match t {
                        Cow::Borrowed(s) if skip_lf => {
                            Cow::Borrowed(s.strip_prefix('\n').unwrap_or(s))
                        }
                        Cow::Owned(s) if skip_lf && s.starts_with('\n') => {
                            Cow::Owned(s[1..].to_owned())
                        }
                        t => t,
                    };
                    self.text(&t)?;
                }
                Token::Start { name, self_closing } => {
                    self.quirks.get_or_insert(Quirks::Yes);
                    self.start(name, self_closing)?;
                }
                Token::End(name) => {
                    self.quirks.get_or_insert(Quirks::Yes);
                    self.end(&name)?;
                }
            }
        }
    }

    // ---- the stack and the events

    fn current(&self) -> Option<&Open<'a>> {
        self.stack.last()
    }

    fn current_is(&self, name: &str) -> bool {
        self.current().is_some_and(|o| o.html && o.name == name)
    }

    fn insert(&mut self, name: Cow<'a, str>, html: bool, with_attrs: bool) -> Step {
        let kind = if html { kind(&name) } else { 0 };
        self.insert_kind(name, html, kind, with_attrs)
    }

    /// [`Builder::insert`] of an element whose [`kind`] is known.
    fn insert_kind(&mut self, name: Cow<'a, str>, html: bool, kind: u16, with_attrs: bool) -> Step {
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
        let info = if html {
            Info::of_attrs(&name, &self.attrs[start..])
        } else {
            Info::default()
        };
        self.stack.push(Open {
            name,
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

    fn implied(&mut self, name: &'static str) -> Step {
        self.insert(Cow::Borrowed(name), true, false)
    }

    fn pop(&mut self) {
        if self.stack.is_empty() {
            return;
        }
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
    }

    fn void(&mut self, name: Cow<'a, str>, html: bool) -> Step {
        self.insert(name, html, true)?;
        self.pop();
        Ok(())
    }

    /// A raw text element: its start, its text up to its end tag, its end.
    fn raw(&mut self, name: Cow<'a, str>, rcdata: bool) -> Step {
        let skip_lf = name == "textarea";
        self.insert(name.clone(), true, true)?;
        let text = self.scan.raw_text(&name, rcdata)?;
        let text = if skip_lf {
            text.strip_prefix('\n').unwrap_or(&text).to_owned().into()
        } else {
            text
        };
        if !text.is_empty() {
            self.v.text(&text);
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

    fn find(&self, name: &str) -> Option<usize> {
        self.stack.iter().rposition(|o| o.html && o.name == name)
    }

    fn pop_until(&mut self, name: &str) -> Step {
        let i = self
            .find(name)
            .ok_or(Bail("an end tag's element is not open"))?;
        self.pop_to(i)
    }

    /// Whether an HTML element that `target` picks is in scope: the default scope,
    /// widened by the elements `extra` names (button scope, list item scope).
    fn in_scope(&self, target: impl Fn(&Open<'a>) -> bool, extra: &[&str]) -> bool {
        for o in self.stack.iter().rev() {
            if o.html && target(o) {
                return true;
            }
            if o.html && (o.kind & SCOPE != 0 || extra.contains(&o.name.as_ref())) {
                return false;
            }
        }
        false
    }

    fn named_in_scope(&self, name: &str, extra: &[&str]) -> bool {
        self.in_scope(|o| o.name == name, extra)
    }

    fn in_table_scope(&self, name: &str) -> bool {
        for o in self.stack.iter().rev() {
            if o.html && o.name == name {
                return true;
            }
            if o.html && matches!(o.name.as_ref(), "html" | "table" | "template") {
                return false;
            }
        }
        false
    }

    fn generate_implied(&mut self, except: Option<&str>) {
        while let Some(o) = self.current() {
            if !o.html || o.kind & IMPLIED_END == 0 || except == Some(o.name.as_ref()) {
                break;
            }
            self.pop();
        }
    }

    fn close_p(&mut self) -> Step {
        if self.named_in_scope("p", &["button"]) {
            self.generate_implied(Some("p"));
            self.pop_until("p")?;
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
        match o.name.as_ref() {
            "td" | "th" => Mode::Cell,
            "tr" => Mode::Row,
            "tbody" | "thead" | "tfoot" => Mode::TableBody,
            "table" => Mode::Table,
            _ => Mode::Template,
        }
    }
}

impl<'a, V: Visitor> Builder<'a, '_, V> {
    // ---- before the body

    fn ensure_body(&mut self) -> Step {
        loop {
            match self.phase {
                Phase::BeforeHtml => self.implied("html")?,
                Phase::BeforeHead => self.implied("head")?,
                Phase::InHead => self.pop(),
                Phase::AfterHead => self.implied("body")?,
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

    fn text(&mut self, t: &str) -> Step {
        if t.is_empty() {
            return Ok(());
        }
        if self.phase != Phase::InBody {
            // White space before the body is not content; what follows it is.
            let rest = t.trim_start_matches(is_space);
            if rest.is_empty() {
                return Ok(());
            }
            self.quirks.get_or_insert(Quirks::Yes);
            self.ensure_body()?;
            return self.body_text(rest);
        }
        self.body_text(t)
    }

    fn body_text(&mut self, t: &str) -> Step {
        if !self.in_foreign()
            && matches!(self.mode(), Mode::Table | Mode::TableBody | Mode::Row)
            && !t.chars().all(is_space)
        {
            return Err(Bail("text in a table outside its cells"));
        }
        self.v.text(t);
        Ok(())
    }

    fn start(&mut self, name: Cow<'a, str>, self_closing: bool) -> Step {
        loop {
            match self.phase {
                Phase::BeforeHtml if name == "html" => {
                    self.insert(name, true, true)?;
                    self.advance();
                    return Ok(());
                }
                Phase::BeforeHead if name == "head" => {
                    self.insert(name, true, true)?;
                    self.advance();
                    return Ok(());
                }
                Phase::BeforeHtml | Phase::BeforeHead => {
                    if name == "html" {
                        return Err(Bail("a second <html> tag"));
                    }
                    self.implied(if self.phase == Phase::BeforeHtml {
                        "html"
                    } else {
                        "head"
                    })?;
                    self.advance();
                }
                Phase::InHead => {
                    if self.head_start(&name)? {
                        return self.head_element(name);
                    }
                    self.pop();
                    self.advance();
                }
                Phase::AfterHead => match name.as_ref() {
                    "body" => {
                        self.insert(name, true, true)?;
                        self.advance();
                        return Ok(());
                    }
                    "html" | "head" | "frameset" | "base" | "basefont" | "bgsound" | "link"
                    | "meta" | "noframes" | "script" | "style" | "template" | "title" => {
                        return Err(Bail("a head element after the head"));
                    }
                    _ => {
                        self.implied("body")?;
                        self.advance();
                    }
                },
                Phase::InBody => return self.body_start(name, self_closing),
            }
        }
    }

    /// In the head: true when `name` belongs there, false when it ends the head.
    fn head_start(&self, name: &str) -> Result<bool, Bail> {
        match name {
            "html" | "head" | "template" => Err(Bail("an unusual tag in the head")),
            "base" | "basefont" | "bgsound" | "link" | "meta" | "title" | "noscript"
            | "noframes" | "style" | "script" => Ok(true),
            _ => Ok(false),
        }
    }

    fn head_element(&mut self, name: Cow<'a, str>) -> Step {
        match name.as_ref() {
            "title" => self.raw(name, true),
            "noscript" | "noframes" | "style" | "script" => self.raw(name, false),
            _ => self.void(name, true),
        }
    }

    fn end(&mut self, name: &str) -> Step {
        loop {
            let ends_head = matches!(name, "head" | "body" | "html" | "br");
            match self.phase {
                Phase::InBody => return self.body_end(name),
                _ if name == "template" => return Err(Bail("a </template> outside a template")),
                Phase::InHead if name == "head" => {
                    self.pop();
                    self.advance();
                    return Ok(());
                }
                Phase::AfterHead if name == "head" => return Ok(()),
                _ if !ends_head => return Ok(()),
                Phase::BeforeHtml => self.implied("html")?,
                Phase::BeforeHead => self.implied("head")?,
                Phase::InHead => self.pop(),
                Phase::AfterHead => self.implied("body")?,
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
        Ok(())
    }
}
