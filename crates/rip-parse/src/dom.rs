//! Parsing HTML into a DOM within limits, and reading text out of it.
//!
//! html5ever never fails on bad HTML, but some inputs make it slow: deeply nested
//! elements and elements with very many attributes cost time quadratic in their size.
//! [`parse`] therefore feeds the parser in chunks and gives up when a time budget is
//! spent, and refuses trees deeper than a limit (selector matching walks ancestors, so
//! a deep tree is slow to query too). Browsers flatten nesting past 512 levels; the
//! default limit here is 1,024. Every walk over the tree is iterative: no recursion
//! that a deep document could overflow.

use ego_tree::NodeRef;
use ego_tree::iter::Edge;
use html5ever::tendril::{StrTendril, TendrilSink};
use scraper::node::Element;
use scraper::{ElementRef, Html, HtmlTreeSink, Node};

use crate::tag::Tag;
use crate::visit::{Elem, Visitor, walk_tree};
use rip_html::words;
use std::time::{Duration, Instant};

/// Limits on parsing one page.
#[derive(Debug, Clone, Copy)]
pub struct ParseLimits {
    /// Element nesting deeper than this is refused.
    pub max_depth: usize,
    /// Parsing that takes longer than this is abandoned.
    pub time_budget: Duration,
}

impl Default for ParseLimits {
    fn default() -> Self {
        Self {
            max_depth: 1024,
            time_budget: Duration::from_secs(10),
        }
    }
}

/// Why a page could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomError {
    /// Parsing took longer than the time budget.
    #[error(
        "parsing took longer than {0:?} (pathological HTML, e.g. very deep nesting or \
         very many attributes; hint: raise --parse-timeout)"
    )]
    TooSlow(Duration),
    /// The element tree is deeper than the limit.
    #[error("elements nested deeper than {0} levels (hint: raise --max-nesting)")]
    TooDeep(usize),
}

/// Bytes fed to the parser between two looks at the clock.
const CHUNK: usize = 64 * 1024;

/// Parses a whole document, within `limits`.
pub fn parse(text: &str, limits: ParseLimits) -> Result<Html, DomError> {
    let started = Instant::now();
    let mut parser =
        html5ever::parse_document(HtmlTreeSink::new(Html::new_document()), Default::default());
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(CHUNK);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (chunk, tail) = rest.split_at(end);
        parser.process(StrTendril::from_slice(chunk));
        rest = tail;
        if !rest.is_empty() && started.elapsed() > limits.time_budget {
            return Err(DomError::TooSlow(limits.time_budget));
        }
    }
    let html = parser.finish();
    if started.elapsed() > limits.time_budget {
        return Err(DomError::TooSlow(limits.time_budget));
    }
    if depth_exceeds(&html, limits.max_depth) {
        return Err(DomError::TooDeep(limits.max_depth));
    }
    Ok(html)
}

fn depth_exceeds(html: &Html, max: usize) -> bool {
    let mut depth = 0usize;
    for edge in html.tree.root().traverse() {
        match edge {
            Edge::Open(_) => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            Edge::Close(_) => depth -= 1,
        }
    }
    false
}

/// The local name of an HTML element node, or `None` for other nodes (and for
/// elements of other namespaces, such as SVG's `<title>`).
pub fn html_name<'a>(node: &NodeRef<'a, Node>) -> Option<&'a str> {
    match node.value() {
        Node::Element(e) if e.name.ns == html5ever::ns!(html) => Some(&e.name.local),
        _ => None,
    }
}

/// The value of `el`'s attribute `name` (in no namespace, as `Element::attr` reads it).
/// Scans the few attributes an element has: scraper's `Element::attr` interns `name`
/// on every call, which the generic walks (a few names asked of every element) felt.
pub fn attr<'a>(el: &'a Element, name: &str) -> Option<&'a str> {
    el.attrs
        .iter()
        .find(|(q, _)| q.ns == html5ever::ns!() && &*q.local == name)
        .map(|(_, v)| &**v)
}

/// [`attr`] of a node, when it is an element.
pub fn node_attr<'a>(node: &NodeRef<'a, Node>, name: &str) -> Option<&'a str> {
    node.value().as_element().and_then(|e| attr(e, name))
}

/// What the text walks ask of every HTML element, worked out once for it (by the
/// streaming pass when it opens, in a tree at each event) rather than by each walk
/// at each event: how it breaks the flow of text, and whether it is hidden (content
/// never seen: `script`, `style`, `head`…, or `[hidden]`), boilerplate (`header`,
/// `nav`, `footer`, `aside`, or their ARIA roles), navigation, `[role=main]`, a
/// heading, …
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Info {
    /// How it breaks the flow of text ([`flow`]).
    pub flow: Flow,
    bits: u16,
}

const HIDDEN: u16 = Info::HIDDEN;
const BOILERPLATE: u16 = Info::BOILERPLATE;
const NAV: u16 = Info::NAV;
const ROLE_MAIN: u16 = Info::ROLE_MAIN;
const SCRIPT: u16 = Info::SCRIPT;
const PRE: u16 = Info::PRE;
/// A heading's level (1 to 6) is in the bits from here.
const LEVEL: u16 = 8;

impl Info {
    /// Its content is never text a reader sees.
    pub const HIDDEN: u16 = 1;
    /// Boilerplate outside a main element: site header, navigation, footer, sidebars.
    pub const BOILERPLATE: u16 = 1 << 1;
    /// Navigation (skipped in a main element's text).
    pub const NAV: u16 = 1 << 2;
    /// `[role=main]`.
    pub const ROLE_MAIN: u16 = 1 << 3;
    /// `script`, `style` or `template`: its text is never content.
    pub const SCRIPT: u16 = 1 << 4;
    /// `pre`.
    pub const PRE: u16 = 1 << 5;
    /// Has an `itemscope` or `itemprop` attribute: part of a microdata item.
    pub const ITEM: u16 = 1 << 6;
    /// Hidden from readers by its inline style (`display: none`, `visibility: hidden`)
    /// or `aria-hidden="true"`: left out of a page's main content (as Readability's
    /// `_isProbablyVisible`), kept where rules select it.
    pub const UNSEEN: u16 = 1 << 7;

    /// The info of an HTML element whose tag is `tag`, with or without a `hidden`
    /// attribute, and with the `role` attribute `role`.
    pub fn of(tag: Tag, hidden: bool, role: Option<&str>) -> Self {
        let (flow, mut bits) = by_tag(tag);
        if hidden {
            bits |= HIDDEN;
        }
        bits |= match role {
            Some("navigation") => BOILERPLATE | NAV,
            Some("banner" | "contentinfo" | "complementary" | "search") => BOILERPLATE,
            Some("main") => ROLE_MAIN,
            _ => 0,
        };
        Self { flow, bits }
    }

    /// The info of an HTML element of the streaming pass (its attributes: the first of
    /// a name counts, as [`Elem::attr`] reads them).
    pub fn of_attrs(tag: Tag, attrs: &[crate::visit::Attr<'_>]) -> Self {
        let mut hidden = false;
        let mut role = None;
        let mut item = false;
        let mut unseen = false;
        for (n, v) in attrs {
            match n.as_ref() {
                "hidden" => hidden = true,
                "role" if role.is_none() => role = Some(v.as_ref()),
                "itemprop" | "itemscope" => item = true,
                "style" => unseen |= style_hides(v),
                "aria-hidden" => unseen |= v.trim() == "true",
                _ => {}
            }
        }
        Self::of(tag, hidden, role)
            .with_item(item)
            .with_unseen(unseen)
    }

    /// The same, marked [`Info::UNSEEN`] when `unseen`.
    pub fn with_unseen(mut self, unseen: bool) -> Self {
        if unseen {
            self.bits |= Self::UNSEEN;
        }
        self
    }

    /// The same, marked [`Info::ITEM`] when `item`.
    pub fn with_item(mut self, item: bool) -> Self {
        if item {
            self.bits |= Self::ITEM;
        }
        self
    }

    /// True when the element has all of `bits` ([`Info::HIDDEN`], …).
    pub fn has(self, bits: u16) -> bool {
        self.bits & bits == bits
    }

    /// Never seen by a reader: [`Info::HIDDEN`] or [`Info::UNSEEN`].
    pub fn out_of_sight(self) -> bool {
        self.bits & (HIDDEN | Self::UNSEEN) != 0
    }

    /// `h1` to `h6`: the level.
    pub fn heading(self) -> Option<u8> {
        let level = (self.bits >> LEVEL) & 7;
        (level != 0).then_some(level as u8)
    }
}

/// True when an inline `style` hides its element: `display: none` or
/// `visibility: hidden` (any case and spacing; the last declaration of a property is
/// not looked for, as a page seldom gives two).
pub fn style_hides(style: &str) -> bool {
    if !style.contains(['n', 'N', 'h', 'H']) {
        return false;
    }
    style.split(';').any(|decl| {
        let Some((prop, value)) = decl.split_once(':') else {
            return false;
        };
        let value = value.trim();
        let value = value.strip_suffix("!important").unwrap_or(value).trim_end();
        let prop = prop.trim();
        (prop.eq_ignore_ascii_case("display") && value.eq_ignore_ascii_case("none"))
            || (prop.eq_ignore_ascii_case("visibility") && value.eq_ignore_ascii_case("hidden"))
    })
}

/// [`flow`] and the bits that come from an element's name, by its tag.
fn by_tag(tag: Tag) -> (Flow, u16) {
    use Flow::{Block, Inline};
    match tag {
        Tag::Script | Tag::Style | Tag::Template => (Inline, HIDDEN | SCRIPT),
        Tag::Noscript
        | Tag::Head
        | Tag::Iframe
        | Tag::Object
        | Tag::Embed
        | Tag::Canvas
        | Tag::Select
        | Tag::Datalist => (Inline, HIDDEN),
        Tag::Header | Tag::Footer | Tag::Aside => (Block, BOILERPLATE),
        Tag::Nav => (Block, BOILERPLATE | NAV),
        Tag::Pre => (Block, PRE),
        Tag::H1 => (Block, 1 << LEVEL),
        Tag::H2 => (Block, 2 << LEVEL),
        Tag::H3 => (Block, 3 << LEVEL),
        Tag::H4 => (Block, 4 << LEVEL),
        Tag::H5 => (Block, 5 << LEVEL),
        Tag::H6 => (Block, 6 << LEVEL),
        _ => (tag_flow(tag), 0),
    }
}

/// Which elements a text walk leaves out, besides the hidden ones (`Info::hidden`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Only the hidden ones.
    Hidden,
    /// Navigation too (the content of a main element).
    Nav,
    /// All boilerplate (a body with no main element).
    Boilerplate,
}

impl Skip {
    /// True when the HTML element `el` and its content are left out.
    pub fn skips(self, el: &Elem<'_>) -> bool {
        let info = el.info;
        info.has(Info::HIDDEN)
            || match self {
                Skip::Hidden => false,
                Skip::Nav => info.has(Info::NAV) || info.has(Info::UNSEEN),
                Skip::Boilerplate => info.has(Info::BOILERPLATE) || info.has(Info::UNSEEN),
            }
    }
}

/// How an element breaks the flow of text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Flow {
    /// Inline: text runs on.
    #[default]
    Inline,
    /// A table cell or similar: at least a space.
    Cell,
    /// A block: a new line.
    Block,
}

/// How `name` breaks the flow of text.
pub fn flow(name: &str) -> Flow {
    tag_flow(Tag::of(name))
}

/// How an element whose tag is `tag` breaks the flow of text.
fn tag_flow(tag: Tag) -> Flow {
    use Tag::*;
    match tag {
        Td | Th | Dt => Flow::Cell,
        Address | Article | Aside | Blockquote | Body | Br | Caption | Center | Dd | Details
        | Dialog | Dir | Div | Dl | Fieldset | Figcaption | Figure | Footer | Form | H1 | H2
        | H3 | H4 | H5 | H6 | Header | Hgroup | Hr | Html | Legend | Li | Main | Menu | Nav
        | Ol | P | Pre | Section | Summary | Table | Tbody | Tfoot | Thead | Title | Tr | Ul
        | Option => Flow::Block,
        _ => Flow::Inline,
    }
}

/// Text collapsing white space, read in one pass: `gap(s)` for each run of white space,
/// `stretch(s, …)` for the text between runs, words with single spaces between them,
/// which such text keeps as they are (as it would give them word by word).
pub fn stretches<S>(
    s: &mut S,
    text: &str,
    mut gap: impl FnMut(&mut S),
    mut stretch: impl FnMut(&mut S, &str),
) {
    let b = text.as_bytes();
    let mut i = 0;
    loop {
        let run = i;
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i > run {
            gap(s);
        }
        if i == b.len() {
            return;
        }
        let start = i;
        i = stretch_end(b, i);
        stretch(s, &text[start..i]);
    }
}

/// Where the stretch of text from `i` (not white space) ends: at the first white space
/// that is not a single space before more text.
fn stretch_end(b: &[u8], mut i: usize) -> usize {
    loop {
        i = next_space(b, i);
        if b.get(i) == Some(&b' ') && b.get(i + 1).is_some_and(|c| !c.is_ascii_whitespace()) {
            i += 1;
        } else {
            return i;
        }
    }
}

/// Where the first ASCII white space at or after `i` is in `b` (`b.len()`: none), looked
/// for eight bytes at a time: white space is among the bytes below `!`, which one word's
/// arithmetic finds (the first flagged byte is exact); a control character that is not
/// white space goes on from the byte after it.
fn next_space(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = words::word_at(b, i) {
        let low = words::below(w, b'!');
        if low == 0 {
            i += 8;
            continue;
        }
        i += words::first(low);
        if b[i].is_ascii_whitespace() {
            return i;
        }
        i += 1;
    }
    while i < b.len() && !b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Every string of up to four of `pieces`, for the tests.
#[cfg(test)]
pub(crate) fn pieced(pieces: &[&str]) -> Vec<String> {
    let mut texts = vec![String::new()];
    for _ in 0..4 {
        let more: Vec<String> = texts
            .iter()
            .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
            .collect();
        texts.extend(more);
    }
    texts
}

/// Text collapsing white space as it was first written, for the tests: `gap` for white
/// space at either end and between words, `word` for each word.
#[cfg(test)]
pub(crate) fn by_words<S>(s: &mut S, text: &str, gap: fn(&mut S), word: fn(&mut S, &str)) {
    if text.starts_with(|c: char| c.is_ascii_whitespace()) {
        gap(s);
    }
    for (i, w) in text.split_ascii_whitespace().enumerate() {
        if i > 0 {
            gap(s);
        }
        word(s, w);
    }
    if text.ends_with(|c: char| c.is_ascii_whitespace()) {
        gap(s);
    }
}

/// Builds readable text: whitespace runs collapse to one space, blocks start new
/// lines, and leading and trailing whitespace is dropped.
#[derive(Debug, Default)]
pub struct TextBuf {
    out: String,
    pending: Flow,
    /// Inside `<pre>`: whitespace is kept.
    pub pre: usize,
}

impl TextBuf {
    /// Appends text, collapsing whitespace (kept as is inside `<pre>`).
    pub fn push(&mut self, text: &str) {
        if self.pre > 0 {
            if !text.is_empty() {
                self.flush_pending();
                self.out.push_str(text);
            }
            return;
        }
        // Each run of white space is a break (at least a space); the text between runs
        // is copied in stretches of words with single spaces between them, which stay
        // as they are.
        let stretch = |buf: &mut Self, s: &str| {
            buf.flush_pending();
            buf.out.push_str(s);
        };
        stretches(self, text, |buf| buf.brk(Flow::Cell), stretch);
    }

    /// Room for `bytes` more bytes of text.
    pub fn reserve(&mut self, bytes: usize) {
        self.out.reserve(bytes);
    }

    /// Marks a break of the given kind before the next text.
    pub fn brk(&mut self, flow: Flow) {
        if !self.out.is_empty() && flow as u8 > self.pending as u8 {
            self.pending = flow;
        }
    }

    fn flush_pending(&mut self) {
        if !self.out.is_empty() {
            match self.pending {
                Flow::Inline => {}
                Flow::Cell => self.out.push(' '),
                Flow::Block => self.out.push('\n'),
            }
        }
        self.pending = Flow::Inline;
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// The text so far.
    pub fn as_str(&self) -> &str {
        &self.out
    }

    /// Empty again, as new (its buffer kept).
    pub fn clear(&mut self) {
        self.out.clear();
        self.pending = Flow::Inline;
        self.pre = 0;
    }

    /// The text.
    pub fn finish(self) -> String {
        self.out
    }
}

/// The readable text of an element: hidden content skipped, whitespace collapsed,
/// blocks on their own lines.
pub fn text_of(element: ElementRef<'_>) -> String {
    text_of_node(*element, Skip::Hidden)
}

/// The readable text under `root`, leaving out what `skip` says.
pub fn text_of_node(root: NodeRef<'_, Node>, skip: Skip) -> String {
    let mut walk = TextWalk::new(skip);
    walk_tree(root, &mut walk);
    walk.buf.finish()
}

/// Reads the text of a subtree from its events ([`Visitor`]): [`TextWalk::open`],
/// [`TextWalk::text`] and [`TextWalk::close`] also say whether the event counts,
/// for visitors that read more than the text (the outline of headings).
#[derive(Debug)]
pub struct TextWalk {
    /// The text so far.
    pub buf: TextBuf,
    skip: Skip,
    skipping: usize,
}

impl TextWalk {
    /// A walk that leaves out what `skip` says.
    pub fn new(skip: Skip) -> Self {
        Self {
            buf: TextBuf::default(),
            skip,
            skipping: 0,
        }
    }

    /// An element opens: its name when it is an HTML element whose content counts.
    pub fn open<'e>(&mut self, el: &Elem<'e>) -> Option<&'e str> {
        let name = el.html_name()?;
        if self.skipping > 0 || self.skip.skips(el) {
            self.skipping += 1;
            return None;
        }
        self.buf.brk(el.info.flow);
        if el.info.has(Info::PRE) {
            self.buf.pre += 1;
        }
        Some(name)
    }

    /// Text: true when it counts (it was added).
    pub fn text(&mut self, text: &str) -> bool {
        if self.skipping > 0 {
            return false;
        }
        self.buf.push(text);
        true
    }

    /// An element closes: its name when it is an HTML element whose content counted.
    pub fn close<'e>(&mut self, el: &Elem<'e>) -> Option<&'e str> {
        let name = el.html_name()?;
        if self.skipping > 0 {
            self.skipping -= 1;
            return None;
        }
        self.buf.brk(el.info.flow);
        if el.info.has(Info::PRE) {
            self.buf.pre -= 1;
        }
        Some(name)
    }
}

impl Visitor for TextWalk {
    fn open(&mut self, el: &Elem<'_>) {
        TextWalk::open(self, el);
    }
    fn text(&mut self, text: &str) {
        TextWalk::text(self, text);
    }
    fn close(&mut self, el: &Elem<'_>) {
        TextWalk::close(self, el);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_text(html: &str) -> String {
        let doc = parse(html, ParseLimits::default()).unwrap();
        text_of(doc.root_element())
    }

    #[test]
    fn text_collapses_whitespace_and_breaks_blocks() {
        assert_eq!(
            body_text("<p>a  b\n c</p><p>d<b>e</b> f</p>"),
            "a b c\nde f"
        );
        assert_eq!(
            body_text("<table><tr><td>Longsword</td><td>0</td></tr><tr><td>x</td></tr></table>"),
            "Longsword 0\nx"
        );
        assert_eq!(
            body_text("<p>a<br>b</p><script>var x;</script><pre> x\n  y</pre>"),
            "a\nb\n x\n  y"
        );
        assert_eq!(body_text("<p>  </p><p> a </p>"), "a");
        assert_eq!(body_text("<p>a <i>b</i> c</p>"), "a b c");
        assert_eq!(body_text("<p>a<i> b</i>c</p>"), "a bc");
    }

    #[test]
    fn an_inline_style_hides_by_display_or_visibility() {
        for hides in [
            "display:none",
            "color: red; Display : None ;",
            "visibility: hidden",
            "display: none !important",
        ] {
            assert!(style_hides(hides), "{hides}");
        }
        for shows in [
            "",
            "display: block",
            "visibility: visible",
            "none",
            "display",
        ] {
            assert!(!style_hides(shows), "{shows}");
        }
    }

    /// What the text walks asked of each element before [`Info`]: the name lists and
    /// the attributes, read at each event.
    fn reference(name: &str, el: &Elem<'_>) -> (Flow, [bool; 6], Option<u8>) {
        let hidden = matches!(
            name,
            "script"
                | "style"
                | "noscript"
                | "template"
                | "head"
                | "iframe"
                | "object"
                | "embed"
                | "canvas"
                | "select"
                | "datalist"
        ) || el.attr("hidden").is_some();
        let role = el.attr("role");
        let boilerplate = matches!(name, "header" | "nav" | "footer" | "aside")
            || matches!(
                role,
                Some("banner" | "navigation" | "contentinfo" | "complementary" | "search")
            );
        let nav = name == "nav" || role == Some("navigation");
        let script = matches!(name, "script" | "style" | "template");
        let level = match name.strip_prefix('h') {
            Some(d) if d.len() == 1 => d.parse().ok().filter(|l| (1..=6).contains(l)),
            _ => None,
        };
        let bits = [
            hidden,
            boilerplate,
            nav,
            role == Some("main"),
            script,
            name == "pre",
        ];
        (flow_by_name(name), bits, level)
    }

    /// [`flow`] as it was written first, by name.
    fn flow_by_name(name: &str) -> Flow {
        match name {
            "td" | "th" | "dt" => Flow::Cell,
            "address" | "article" | "aside" | "blockquote" | "body" | "br" | "caption"
            | "center" | "dd" | "details" | "dialog" | "dir" | "div" | "dl" | "fieldset"
            | "figcaption" | "figure" | "footer" | "form" | "h1" | "h2" | "h3" | "h4" | "h5"
            | "h6" | "header" | "hgroup" | "hr" | "html" | "legend" | "li" | "main" | "menu"
            | "nav" | "ol" | "p" | "pre" | "section" | "summary" | "table" | "tbody" | "tfoot"
            | "thead" | "title" | "tr" | "ul" | "option" => Flow::Block,
            _ => Flow::Inline,
        }
    }

    fn read(i: Info) -> (Flow, [bool; 6], Option<u8>) {
        let bits = [
            Info::HIDDEN,
            Info::BOILERPLATE,
            Info::NAV,
            Info::ROLE_MAIN,
            Info::SCRIPT,
            Info::PRE,
        ];
        (i.flow, bits.map(|b| i.has(b)), i.heading())
    }

    #[test]
    fn an_elements_info_is_what_the_walks_read_at_each_event() {
        let names = crate::tag::tests::names_to_try();
        let attr_sets: Vec<Vec<(&str, &str)>> = vec![
            vec![],
            vec![("hidden", "")],
            vec![("class", "x"), ("hidden", "hidden")],
            vec![("role", "main")],
            vec![("role", "navigation")],
            vec![("role", "search"), ("hidden", "")],
            vec![("role", "banner")],
            vec![("role", "contentinfo")],
            vec![("role", "complementary")],
            vec![("role", "Main")],
            vec![("role", " navigation")],
            vec![("role", "main"), ("role", "navigation")],
            vec![("id", "role"), ("role", "presentation")],
        ];
        for name in names {
            for set in &attr_sets {
                let attrs: Vec<crate::visit::Attr<'_>> = set
                    .iter()
                    .map(|(n, v)| ((*n).into(), (*v).into()))
                    .collect();
                let el = Elem::streamed(name, true, &attrs);
                assert_eq!(read(el.info), reference(name, &el), "{name} {set:?}");
            }
        }
        // In a tree, the same.
        let doc = parse(
            "<nav hidden role=main><h3 role=banner>x</h3><pre>y</pre></nav>",
            ParseLimits::default(),
        )
        .unwrap();
        for node in doc.tree.root().descendants() {
            if let Some(el) = node.value().as_element() {
                let el = Elem::of_tree(el);
                assert_eq!(read(el.info), reference(el.name, &el), "{}", el.name);
            }
        }
    }

    /// `TextBuf::push` as it was written first: a break for white space at either end
    /// and between words, each word pushed alone.
    fn push_by_words(buf: &mut TextBuf, text: &str) {
        let word = |buf: &mut TextBuf, w: &str| {
            buf.flush_pending();
            buf.out.push_str(w);
        };
        by_words(buf, text, |buf| buf.brk(Flow::Cell), word);
    }

    #[test]
    fn text_in_stretches_is_text_word_by_word() {
        // Every string of up to 4 pieces of words, spaces, other white space, non-ASCII,
        // pushed in one or two runs after a block break.
        let pieces = [
            "a", "bc", " ", "  ", "\n", "\t \r", "\u{c}", "é", "\u{a0}", "\u{b}",
        ];
        let texts = pieced(&pieces);
        for t in &texts {
            for split in [0, t.len() / 2] {
                let split = (0..=split).rev().find(|&i| t.is_char_boundary(i)).unwrap();
                let (x, y) = t.split_at(split);
                let (mut ours, mut theirs) = (TextBuf::default(), TextBuf::default());
                for buf in [&mut ours, &mut theirs] {
                    buf.push("start");
                    buf.brk(Flow::Block);
                }
                ours.push(x);
                ours.push(y);
                push_by_words(&mut theirs, x);
                push_by_words(&mut theirs, y);
                ours.push("end");
                push_by_words(&mut theirs, "end");
                assert_eq!(ours.finish(), theirs.finish(), "{t:?}");
            }
        }
    }

    #[test]
    fn the_next_space_is_the_first_ascii_white_space() {
        // Every byte below 0x80 and some above, alone, at each place of 0 to 16 bytes of
        // letters, and after other such bytes (a control character, a space before it).
        let mut bytes: Vec<u8> = (0..0x80).collect();
        bytes.extend([0x80, 0xa0, 0xc3, 0xff]);
        for len in 0..17 {
            for at in 0..=len {
                for &c in &bytes {
                    for &d in &[b'x', 0x0b, 0x01, b' ', b'\n', 0x21] {
                        let mut b = vec![b'a'; len + 2];
                        b[at] = c;
                        b[at + 1] = d;
                        for from in 0..=b.len() {
                            let want = (from..b.len())
                                .find(|&i| b[i].is_ascii_whitespace())
                                .unwrap_or(b.len());
                            assert_eq!(next_space(&b, from), want, "{b:?} from {from}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_a_crash() {
        let deep = "<div>".repeat(5000);
        let err = parse(&deep, ParseLimits::default()).unwrap_err();
        assert_eq!(err, DomError::TooDeep(1024));
        let ok = "<div>".repeat(500);
        assert!(parse(&ok, ParseLimits::default()).is_ok());
    }

    #[test]
    fn a_slow_parse_is_abandoned() {
        let limits = ParseLimits {
            max_depth: usize::MAX,
            time_budget: Duration::from_millis(1),
        };
        let attrs: String = (0..60_000).map(|i| format!(" a{i}=1")).collect();
        let err = parse(&format!("<p{attrs}>x"), limits).unwrap_err();
        assert_eq!(err, DomError::TooSlow(Duration::from_millis(1)));
    }
}
