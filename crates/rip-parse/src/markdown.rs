//! HTML to Markdown (CommonMark with GFM tables), written straight from the parsed
//! tree: headings, paragraphs, nested lists, links and images (URLs resolved),
//! emphasis, inline code, fenced code blocks, block quotes, rules and tables.
//!
//! Why not a crate: the HTML-to-Markdown crates (htmd, html2md) parse the HTML
//! again with their own html5ever (another version than scraper's), so `--markdown`
//! would parse every page twice. This walker reads the tree already built, iteratively
//! (a deep document cannot overflow the stack).

use ego_tree::NodeRef;
use scraper::Node;
use url::Url;

use crate::dom::{Flow, Skip, flow, stretches};
use crate::visit::{Depth, Elem, Visitor, walk_tree};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Gap {
    None,
    Space,
    Line,
    Para,
}

struct List {
    ordered: bool,
    next: u64,
}

struct Table {
    row: usize,
    cells: usize,
}

struct Writer {
    out: String,
    gap: Option<Gap>,
    /// The fewest line prefixes in force since the gap was asked for: a blank line
    /// before a block quote is not part of the quote.
    gap_depth: usize,
    prefixes: Vec<&'static str>,
    marker: Option<String>,
    lists: Vec<List>,
    tables: Vec<Table>,
    in_cell: usize,
    /// Where the `[` of each open link is in `out`.
    links: Vec<usize>,
}

impl Default for Writer {
    fn default() -> Self {
        Self {
            out: String::new(),
            gap: None,
            gap_depth: usize::MAX,
            prefixes: Vec::new(),
            marker: None,
            lists: Vec::new(),
            tables: Vec::new(),
            in_cell: 0,
            links: Vec::new(),
        }
    }
}

impl Writer {
    fn want(&mut self, gap: Gap) {
        let gap = if self.in_cell > 0 && gap > Gap::Space {
            Gap::Space
        } else {
            gap
        };
        if (self.out.is_empty() && self.marker.is_none())
            || (self.in_cell > 0 && self.out.ends_with(' '))
        {
            return;
        }
        self.gap_depth = self.gap_depth.min(self.prefixes.len());
        if self.gap.is_none_or(|g| g < gap) {
            self.gap = Some(gap);
        }
    }

    fn prefix(&mut self) {
        let n = self.prefixes.len();
        match self.marker.take() {
            Some(marker) => {
                for p in &self.prefixes[..n.saturating_sub(1)] {
                    self.out.push_str(p);
                }
                self.out.push_str(&marker);
            }
            None => {
                for p in &self.prefixes {
                    self.out.push_str(p);
                }
            }
        }
    }

    /// Writes the pending gap (and line prefixes) before new content.
    fn flush(&mut self) {
        if self.in_cell > 0 {
            // A table row is one line: a list in a cell is its items' text, no markers
            // (one left waiting would start a line at the item's next piece of text).
            self.marker = None;
        }
        let gap = self.gap.take().unwrap_or(Gap::None);
        let depth = std::mem::replace(&mut self.gap_depth, usize::MAX).min(self.prefixes.len());
        if self.out.is_empty() {
            self.prefix();
            return;
        }
        match gap {
            Gap::None => {
                if self.marker.is_some() {
                    self.out.push('\n');
                    self.prefix();
                }
            }
            Gap::Space => self.out.push(' '),
            Gap::Line => {
                self.out.push('\n');
                self.prefix();
            }
            Gap::Para => {
                self.out.push('\n');
                let blank: String = self.prefixes[..depth].concat();
                self.out.push_str(blank.trim_end());
                self.out.push('\n');
                self.prefix();
            }
        }
    }

    fn raw(&mut self, s: &str) {
        self.flush();
        self.out.push_str(s);
    }

    /// Text, white space collapsed: each run of it asks for a space; the words between
    /// are written in stretches with single spaces between them, which are written as
    /// they are (what asking for a space between each two words would give).
    fn text(&mut self, text: &str) {
        let stretch = |w: &mut Self, s: &str| {
            w.flush();
            escape_into(&mut w.out, s, w.in_cell > 0);
        };
        stretches(self, text, |w| w.want(Gap::Space), stretch);
    }
}

/// Appends `text` with a backslash before each character Markdown would read as markup
/// (all ASCII: the text between them is copied in runs).
fn escape_into(out: &mut String, text: &str, in_cell: bool) {
    let markup = if in_cell { &MARKUP_IN_CELL } else { &MARKUP };
    let mut run = 0;
    for (i, b) in text.bytes().enumerate() {
        if markup[usize::from(b)] {
            out.push_str(&text[run..i]);
            out.push('\\');
            run = i;
        }
    }
    out.push_str(&text[run..]);
}

/// The bytes [`escape_into`] puts a backslash before (a backslash, `*`, `_`, a backtick,
/// `[` and `]`; and `|` in a table cell).
const MARKUP: [bool; 256] = rip_html::byte_table(b"\\*_`[]");
const MARKUP_IN_CELL: [bool; 256] = rip_html::byte_table(b"\\*_`[]|");

fn resolve(base: &Url, href: &str) -> String {
    crate::resolve::join(base, href.trim()).unwrap_or_else(|| href.trim().to_owned())
}

/// Converts the content under `root` to Markdown, leaving out hidden elements and
/// what `skip` says; links and images resolve against `base`.
pub fn convert(root: NodeRef<'_, Node>, base: &Url, skip: Skip) -> String {
    let mut md = Markdown::new(base.clone(), skip);
    walk_tree(root, &mut md);
    md.finish()
}

/// Writes Markdown from a subtree's events ([`Visitor`]).
pub struct Markdown {
    w: Writer,
    base: Url,
    skip: Skip,
    /// How deep the walk is in left-out elements (HTML ones only).
    skipping: usize,
    /// A `<pre>` or `<code>` being read whole, to be written when it closes.
    capture: Option<Capture>,
}

/// The text (and for `<pre>`, the language) of a code element, read whole.
struct Capture {
    block: bool,
    depth: Depth,
    text: String,
    lang: Option<String>,
}

impl Capture {
    /// The first `language-…` class of the element or its descendants.
    fn class(&mut self, el: &Elem<'_>) {
        if self.block && self.lang.is_none() {
            self.lang = el.attr("class").and_then(|c| {
                c.split_ascii_whitespace()
                    .find_map(|c| c.strip_prefix("language-"))
                    .map(str::to_owned)
            });
        }
    }
}

impl Markdown {
    /// A writer whose links and images resolve against `base`.
    pub fn new(base: Url, skip: Skip) -> Self {
        Self {
            w: Writer::default(),
            base,
            skip,
            skipping: 0,
            capture: None,
        }
    }

    /// The Markdown written, trailing whitespace trimmed.
    pub fn finish(mut self) -> String {
        self.w.out.truncate(self.w.out.trim_end().len());
        self.w.out
    }

    fn end_capture(&mut self, c: Capture) {
        if c.block {
            self.w.code_block(&c.text, c.lang.as_deref().unwrap_or(""));
        } else {
            self.w.inline_code(&c.text);
        }
    }
}

impl Visitor for Markdown {
    fn open(&mut self, el: &Elem<'_>) {
        if let Some(c) = &mut self.capture {
            c.depth.open();
            c.class(el);
            return;
        }
        if self.skipping > 0 {
            if el.html {
                self.skipping += 1;
            }
            return;
        }
        let Some(name) = el.html_name() else { return };
        if self.skip.skips(el) {
            self.skipping = 1;
            return;
        }
        if let Some(block) = open(&mut self.w, name, el, &self.base) {
            let mut c = Capture {
                block,
                depth: Depth::default(),
                text: String::new(),
                lang: None,
            };
            c.depth.open();
            c.class(el);
            self.capture = Some(c);
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(c) = &mut self.capture {
            c.text.push_str(text);
        } else if self.skipping == 0 {
            self.w.text(text);
        }
    }

    fn close(&mut self, el: &Elem<'_>) {
        if let Some(c) = &mut self.capture {
            if c.depth.close()
                && let Some(c) = self.capture.take()
            {
                self.end_capture(c);
            }
            return;
        }
        let Some(name) = el.html_name() else { return };
        if self.skipping > 0 {
            self.skipping -= 1;
            return;
        }
        close(&mut self.w, name, el, &self.base);
    }
}

/// Writes what an opening tag stands for. Returns `Some(block)` when the element is a
/// code element to be read whole (`block` for `<pre>`) and written when it closes.
fn open(w: &mut Writer, name: &str, el: &Elem<'_>, base: &Url) -> Option<bool> {
    match name {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => w.heading(name),
        "ul" | "ol" | "menu" => w.open_list(name == "ol", el),
        "li" => w.list_item(),
        "blockquote" => {
            w.want(Gap::Para);
            w.prefixes.push("> ");
        }
        "pre" => return Some(true),
        "code" | "kbd" | "samp" => return Some(false),
        "strong" | "b" => w.raw("**"),
        "em" | "i" => w.raw("*"),
        "a" if el.attr("href").is_some() => {
            w.raw("[");
            w.links.push(w.out.len() - 1);
        }
        "img" => w.image(el, base),
        "br" => w.want(Gap::Line),
        "hr" => {
            w.want(Gap::Para);
            w.raw("---");
            w.want(Gap::Para);
        }
        "table" => {
            w.want(Gap::Para);
            w.tables.push(Table { row: 0, cells: 0 });
        }
        "tr" if !w.tables.is_empty() => w.table_row(),
        "td" | "th" if !w.tables.is_empty() => {
            w.out.push(' ');
            w.gap = None;
            w.in_cell += 1;
        }
        "dt" => {
            w.want(Gap::Para);
            w.raw("**");
        }
        _ => match flow(name) {
            Flow::Block if name == "p" => w.want(Gap::Para),
            Flow::Block => w.want(Gap::Line),
            Flow::Cell => w.want(Gap::Space),
            Flow::Inline => {}
        },
    }
    None
}

/// The elements written in their own way.
impl Writer {
    /// `#`s for `h1` to `h6`.
    fn heading(&mut self, name: &str) {
        self.want(Gap::Para);
        let level = usize::from(name.as_bytes()[1] - b'0');
        self.raw(&"#".repeat(level));
        self.want(Gap::Space);
    }

    /// A list, numbered from its `start` when `ordered`.
    fn open_list(&mut self, ordered: bool, el: &Elem<'_>) {
        self.want(if self.lists.is_empty() {
            Gap::Para
        } else {
            Gap::Line
        });
        let start = el
            .attr("start")
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1);
        self.lists.push(List {
            ordered,
            next: start,
        });
    }

    /// A list item: its marker, and the indent of its lines.
    fn list_item(&mut self) {
        self.want(Gap::Line);
        let marker = match self.lists.last_mut() {
            Some(l) if l.ordered => {
                l.next += 1;
                format!("{}. ", l.next - 1)
            }
            _ => "- ".to_owned(),
        };
        self.prefixes
            .push(if marker.len() == 2 { "  " } else { "   " });
        self.marker = Some(marker);
    }

    /// A fenced code block, with the language of a `language-…` class.
    fn code_block(&mut self, code: &str, lang: &str) {
        self.want(Gap::Para);
        let fence = if code.contains("```") { "~~~~" } else { "```" };
        self.raw(fence);
        self.out.push_str(lang);
        for line in code.trim_end_matches('\n').split('\n') {
            self.want(Gap::Line);
            self.flush();
            self.out.push_str(line);
        }
        self.want(Gap::Line);
        self.raw(fence);
        self.want(Gap::Para);
    }

    /// Inline code, its whitespace collapsed, in enough backticks.
    fn inline_code(&mut self, code: &str) {
        let code: String = code.split_ascii_whitespace().collect::<Vec<_>>().join(" ");
        if code.is_empty() {
            return;
        }
        let ticks = if code.contains('`') { "``" } else { "`" };
        self.raw(ticks);
        if code.starts_with('`') {
            self.out.push(' ');
        }
        self.out.push_str(&code);
        if code.ends_with('`') {
            self.out.push(' ');
        }
        self.out.push_str(ticks);
    }

    /// `![alt](src)`, the source resolved.
    /// Ends a link to `href`: a link with no text is left out (`[](…)` is noise), and
    /// a link around an image alone is the image.
    fn close_link(&mut self, href: &str) {
        let Some(start) = self.links.pop() else {
            return;
        };
        let inner = self.out[start + 1..].trim();
        if inner.is_empty() {
            self.out.truncate(start);
            // The space written before it is asked for again (one space, not two).
            if self.in_cell == 0 && self.out.ends_with(' ') {
                self.out.pop();
                self.want(Gap::Space);
            }
            return;
        }
        if inner.starts_with("![") && inner.ends_with(')') && inner.matches("](").count() == 1 {
            self.out.remove(start);
            return;
        }
        self.out.push_str("](");
        self.out.push_str(href);
        self.out.push(')');
    }

    fn image(&mut self, el: &Elem<'_>, base: &Url) {
        let Some(src) = el.attr("src") else {
            return;
        };
        let alt = el.attr("alt").unwrap_or("");
        self.raw("![");
        escape_into(&mut self.out, alt.trim(), false);
        self.out.push_str("](");
        self.out.push_str(&resolve(base, src));
        self.out.push(')');
    }

    /// A table row's opening `|`.
    fn table_row(&mut self) {
        self.want(Gap::Line);
        self.raw("|");
        if let Some(t) = self.tables.last_mut() {
            t.cells = 0;
        }
    }
}

/// Writes what a closing tag stands for.
fn close(w: &mut Writer, name: &str, el: &Elem<'_>, base: &Url) {
    match name {
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "p" | "dd" => w.want(Gap::Para),
        "ul" | "ol" | "menu" => {
            w.lists.pop();
            w.want(Gap::Para);
        }
        "li" => {
            w.prefixes.pop();
            w.marker = None;
            w.want(Gap::Line);
        }
        "blockquote" => {
            w.prefixes.pop();
            w.want(Gap::Para);
        }
        "strong" | "b" => w.out.push_str("**"),
        "em" | "i" => w.out.push('*'),
        "a" => {
            if let Some(href) = el.attr("href") {
                w.close_link(&resolve(base, href));
            }
        }
        "td" | "th" if !w.tables.is_empty() => {
            w.in_cell -= 1;
            w.gap = None;
            w.out.push_str(" |");
            if let Some(t) = w.tables.last_mut() {
                t.cells += 1;
            }
        }
        "tr" => {
            if let Some(t) = w.tables.last_mut() {
                t.row += 1;
                if t.row == 1 {
                    let cells = t.cells.max(1);
                    w.want(Gap::Line);
                    w.raw("|");
                    w.out.push_str(&" --- |".repeat(cells));
                }
            }
        }
        "table" => {
            w.tables.pop();
            w.want(Gap::Para);
        }
        "dt" => {
            w.out.push_str("**");
            w.want(Gap::Line);
        }
        _ => {
            if flow(name) == Flow::Block {
                w.want(Gap::Line);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Writer::text` as it was written first: a space asked for between each two words.
    fn text_by_words(w: &mut Writer, text: &str) {
        let word = |w: &mut Writer, word: &str| {
            w.flush();
            escape_into(&mut w.out, word, w.in_cell > 0);
        };
        crate::dom::by_words(w, text, |w| w.want(Gap::Space), word);
    }

    #[test]
    fn text_in_stretches_is_text_word_by_word() {
        let pieces = ["a", "b*", " ", "  ", "\n", "\t \r", "é", "\u{b}", "|"];
        let texts = crate::dom::pieced(&pieces);
        // Writers in the states text may find them in.
        let writer = |state: usize| {
            let mut w = Writer::default();
            if state & 1 != 0 {
                w.out.push_str("before");
            }
            if state & 2 != 0 {
                w.prefixes.push("> ");
                w.marker = Some("- ".into());
            }
            if state & 4 != 0 {
                w.in_cell = 1;
            }
            if state & 8 != 0 {
                w.want(Gap::Para);
            }
            w
        };
        for t in &texts {
            for state in 0..16 {
                let (mut ours, mut theirs) = (writer(state), writer(state));
                let split = (0..=t.len() / 2).rev().find(|&i| t.is_char_boundary(i));
                let (x, y) = t.split_at(split.unwrap_or(0));
                for part in [x, y, "end"] {
                    ours.text(part);
                    text_by_words(&mut theirs, part);
                }
                assert_eq!(
                    (ours.out, ours.gap, ours.gap_depth, ours.marker),
                    (theirs.out, theirs.gap, theirs.gap_depth, theirs.marker),
                    "{t:?} in state {state}"
                );
            }
        }
    }

    #[test]
    fn markup_characters_and_only_they_are_escaped() {
        for in_cell in [false, true] {
            let all: String = (0u8..0x80).map(char::from).chain("é☃".chars()).collect();
            let mut out = String::new();
            escape_into(&mut out, &all, in_cell);
            let mut want = String::new();
            for c in all.chars() {
                if "\\*_`[]".contains(c) || (in_cell && c == '|') {
                    want.push('\\');
                }
                want.push(c);
            }
            assert_eq!(out, want);
        }
    }
    use crate::dom::{ParseLimits, html_name, parse};

    fn md(body: &str) -> String {
        let doc = parse(body, ParseLimits::default()).unwrap();
        let base = Url::parse("http://h/a/b.html").unwrap();
        let root = doc
            .tree
            .root()
            .descendants()
            .find(|n| html_name(n) == Some("body"))
            .unwrap();
        convert(root, &base, Skip::Hidden)
    }

    #[test]
    fn blocks_inline_and_links() {
        assert_eq!(
            md(
                "<h1>Title</h1><p>Some <b>bold</b> and <em>it</em> with <a href='c.html'>a link</a>.</p>\
                <p>2 * 3 [x]</p>"
            ),
            "# Title\n\nSome **bold** and *it* with [a link](http://h/a/c.html).\n\n2 \\* 3 \\[x\\]"
        );
    }

    #[test]
    fn empty_links_are_left_out_and_a_link_around_an_image_is_the_image() {
        assert_eq!(
            md(
                "<p>Share <a href='/s'></a><a href='/t'> <span></span> </a>it \
                <a href='/p'><img src='p.jpg' alt='Portrait'></a> \
                <a href='/q'><img src='q.jpg' alt='Q'> Quinn</a></p>"
            ),
            "Share it ![Portrait](http://h/a/p.jpg) [![Q](http://h/a/q.jpg) Quinn](http://h/q)"
        );
    }

    #[test]
    fn nested_lists_quotes_and_code() {
        assert_eq!(
            md(
                "<ul><li>one</li><li>two<ol start=3><li>three</li><li>four</li></ol></li></ul>\
                <blockquote><p>q1</p><p>q2</p></blockquote><p>use <code>a_b</code></p>\
                <pre><code class='language-rust'>fn x() {\n    y\n}\n</code></pre><p>end</p>"
            ),
            "- one\n- two\n  3. three\n  4. four\n\n> q1\n>\n> q2\n\nuse `a_b`\n\n\
             ```rust\nfn x() {\n    y\n}\n```\n\nend"
        );
    }

    /// Found by the `stream_vs_tree` fuzz target (`<table><td>l<li>o</x>y`): an item's
    /// marker, never written in a cell, was left waiting and started a new line, inside
    /// the row, at the item's second piece of text.
    #[test]
    fn a_list_in_a_table_cell_stays_on_its_row() {
        assert_eq!(
            md("<table><tr><td>l<ul><li>o<b>b</b>y<li>z</ul>m<td>n</table><p>after"),
            "| l o**b**y z m | n |\n| --- | --- |\n\nafter"
        );
        assert_eq!(md("<table><td>l<li>o<!-- -->y"), "| l oy |\n| --- |");
    }

    #[test]
    fn tables_images_and_hidden_content() {
        assert_eq!(
            md(
                "<table><tr><th>Name</th><th>Price</th></tr><tr><td><a href='/i/1'>Sword</a></td>\
                <td><p>1 | 2 gp</p></td></tr></table><script>x()</script><img src='l.png' alt='Logo'>"
            ),
            "| Name | Price |\n| --- | --- |\n| [Sword](http://h/i/1) | 1 \\| 2 gp |\n\n\
             ![Logo](http://h/a/l.png)"
        );
    }
}
