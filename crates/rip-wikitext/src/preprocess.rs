//! The first pass: wikitext to a tree of templates, template arguments, links, comments and
//! extension tags, the way MediaWiki's preprocessor (`Preprocessor_Hash`) builds it.
//!
//! One forward scan with a stack of open brackets, so the time is linear in the input:
//! - `{{`/`{{{` runs open a brace piece, `[[` a link piece; a closing run matches the piece on
//!   top of the stack with MediaWiki's counting rule (3 braces make an argument, 2 a template,
//!   leftover opening braces stay open or become text);
//! - `|` starts a new part of the piece on top; the first `=` of a template part (outside any
//!   nested piece) splits it into name and value;
//! - a closing run that does not match the top, and pieces still open at the end, become text
//!   (their already-built children are kept), as MediaWiki's "break syntax" does;
//! - comments and extension tags (`<ref>`, `<nowiki>`, …) are opaque; `<ref>` content is
//!   scanned again on its own, so references keep their links and templates.
//!
//! Nesting deeper than [`MAX_DEPTH`] is kept as text, so hostile input cannot overflow the
//! stack of the recursive passes that follow.

use std::ops::Range;

/// Byte range into the source.
pub(crate) type Span = Range<usize>;

/// Deepest stack of open templates and links that is parsed; deeper openers are text.
pub(crate) const MAX_DEPTH: usize = 40;

/// Longest run of `{` or `[` that opens anything (`{{{{{x}}}}}` needs 5); longer runs are
/// text. With [`MAX_DEPTH`] this bounds the tree's depth (a run of n braces nests up to n/2
/// elements).
const MAX_RUN: usize = 6;

/// Extension tags whose content MediaWiki does not parse as wikitext (or parses on its own).
const EXT_TAGS: &[&str] = &[
    "ref",
    "references",
    "nowiki",
    "pre",
    "math",
    "chem",
    "ce",
    "gallery",
    "syntaxhighlight",
    "source",
    "poem",
    "includeonly",
    "score",
    "timeline",
    "templatedata",
    "templatestyles",
    "graph",
    "mapframe",
    "maplink",
    "hiero",
    "imagemap",
    "inputbox",
    "categorytree",
    "indicator",
    "section",
];

/// A node of the preprocessor tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// Plain text (including markup the preprocessor leaves alone: `'''`, tables, lists).
    Text(Span),
    /// `<!-- … -->` (to the end of the input when unclosed).
    Comment(Span),
    /// `{{name|part|key=value}}`: `parts[0]` is the name.
    Template { span: Span, parts: Vec<Part> },
    /// `{{{name|default}}}`.
    Argument { span: Span, parts: Vec<Part> },
    /// `[[target|label]]`: `parts[0]` is the target.
    Link { span: Span, parts: Vec<Part> },
    /// An extension tag.
    Ext(Ext),
}

impl Node {
    /// Where the node is in the source.
    pub fn span(&self) -> Span {
        match self {
            Node::Text(span)
            | Node::Comment(span)
            | Node::Template { span, .. }
            | Node::Argument { span, .. }
            | Node::Link { span, .. } => span.clone(),
            Node::Ext(ext) => ext.span.clone(),
        }
    }
}

/// One `|`-separated part of a template, argument or link.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Part {
    /// The part's source, without the separating `|`.
    pub span: Span,
    pub nodes: Vec<Node>,
    /// Where the first top-level `=` is (template parts after the name only).
    pub eq: Option<usize>,
}

/// An extension tag such as `<ref name="a">…</ref>` or `<references/>`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ext {
    /// The whole tag, from `<` to the end of the closing tag.
    pub span: Span,
    /// Lower-case tag name.
    pub name: &'static str,
    /// The attributes' source (`name="a"`).
    pub attrs: Span,
    /// The content's source; `None` when self-closing.
    pub inner: Option<Span>,
    /// The content, preprocessed (`<ref>` only).
    pub nodes: Option<Vec<Node>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Brace,
    Bracket,
}

#[derive(Debug)]
struct Piece {
    kind: Kind,
    /// Opening characters not matched yet.
    count: usize,
    /// Where the opening run starts.
    start: usize,
    parts: Vec<Part>,
}

/// Preprocesses all of `src`.
pub(crate) fn preprocess(src: &str) -> Vec<Node> {
    Scanner::new(src, 0).run(0..src.len())
}

struct Scanner<'a> {
    src: &'a str,
    bytes: &'a [u8],
    stack: Vec<Piece>,
    root: Vec<Node>,
    /// Tag names known to have no closing tag after the current position.
    no_close: Vec<&'static str>,
    /// The next `>` seen by the last search (or the end when none), reused by later searches
    /// that start before it: `<ref <ref <ref …` is scanned once.
    next_gt: Option<usize>,
    /// How deep in `<ref>` contents this scanner is.
    ext_depth: usize,
    /// Where the text not yet added to the tree starts.
    text_from: usize,
}

impl<'a> Scanner<'a> {
    fn new(src: &'a str, ext_depth: usize) -> Self {
        Scanner {
            src,
            bytes: src.as_bytes(),
            stack: Vec::new(),
            root: Vec::new(),
            no_close: Vec::new(),
            next_gt: None,
            ext_depth,
            text_from: 0,
        }
    }

    fn run(mut self, range: Span) -> Vec<Node> {
        let end = range.end;
        let mut i = range.start;
        self.text_from = i;
        while i < end {
            i = match self.bytes[i] {
                b'<' => self.at_angle(i, end),
                b'{' => self.at_opening_run(i, end, Kind::Brace),
                b'[' => self.at_opening_run(i, end, Kind::Bracket),
                b'}' => self.at_closing_run(i, end, Kind::Brace),
                b']' => self.at_closing_run(i, end, Kind::Bracket),
                b'|' => self.at_pipe(i),
                b'=' => self.at_equals(i),
                // Skip ordinary bytes quickly.
                _ => {
                    let mut next = i + 1;
                    while next < end && !is_special(self.bytes[next]) {
                        next += 1;
                    }
                    next
                }
            };
        }
        self.text(self.text_from..end);
        self.unwind(end);
        self.root
    }

    /// Ends the pending text at `i`; what follows starts at `next`.
    fn cut_text(&mut self, i: usize, next: usize) {
        self.text(self.text_from..i);
        self.text_from = next;
    }

    /// `<`: a comment or an extension tag, else text. Returns where scanning goes on.
    fn at_angle(&mut self, i: usize, end: usize) -> usize {
        if self.bytes[i..end].starts_with(b"<!--") {
            let close = find(&self.bytes[i + 4..end], b"-->").map(|p| i + 4 + p + 3);
            let close = close.unwrap_or(end);
            self.cut_text(i, close);
            self.push(Node::Comment(i..close));
            close
        } else if let Some((ext, next)) = self.ext_tag(i, end) {
            self.cut_text(i, next);
            self.push(Node::Ext(ext));
            next
        } else {
            i + 1
        }
    }

    /// A run of `{` or `[`: opens a piece when it is 2 to [`MAX_RUN`] long and the stack
    /// is not too deep; else text.
    fn at_opening_run(&mut self, i: usize, end: usize, kind: Kind) -> usize {
        let n = run_length(&self.bytes[i..end], self.bytes[i], usize::MAX);
        if (2..=MAX_RUN).contains(&n) && self.stack.len() < MAX_DEPTH {
            self.cut_text(i, i + n);
            self.stack.push(Piece {
                kind,
                count: n,
                start: i,
                parts: vec![Part {
                    span: i + n..i + n,
                    nodes: Vec::new(),
                    eq: None,
                }],
            });
        }
        i + n
    }

    /// A run of `}` or `]`: closes the piece on top when it is of its kind; else text.
    fn at_closing_run(&mut self, i: usize, end: usize, kind: Kind) -> usize {
        if !self.stack.last().is_some_and(|p| p.kind == kind) {
            return i + 1;
        }
        self.text(self.text_from..i);
        // Only up to 4 closing characters can matter (3 at most match, and a single one
        // is literal): capping the count keeps long runs linear.
        let m = run_length(&self.bytes[i..end], self.bytes[i], 4);
        let next = self.close(i, m);
        self.text_from = next;
        next
    }

    /// `|`: a new part of the piece on top, if any.
    fn at_pipe(&mut self, i: usize) -> usize {
        if !self.stack.is_empty() {
            self.cut_text(i, i + 1);
            let piece = self.stack.last_mut().expect("checked");
            if let Some(last) = piece.parts.last_mut() {
                last.span.end = i;
            }
            piece.parts.push(Part {
                span: i + 1..i + 1,
                nodes: Vec::new(),
                eq: None,
            });
        }
        i + 1
    }

    /// `=`: splits a template part (after the name) into key and value, the first time.
    fn at_equals(&mut self, i: usize) -> usize {
        if let Some(piece) = self.stack.last_mut()
            && piece.kind == Kind::Brace
            && piece.parts.len() > 1
            && let Some(part) = piece.parts.last_mut()
            && part.eq.is_none()
        {
            part.eq = Some(i);
        }
        i + 1
    }

    /// The list new nodes go to: the open part on top of the stack, or the root.
    fn acc(&mut self) -> &mut Vec<Node> {
        match self.stack.last_mut() {
            Some(piece) => &mut piece.parts.last_mut().expect("a piece has a part").nodes,
            None => &mut self.root,
        }
    }

    fn push(&mut self, node: Node) {
        self.acc().push(node);
    }

    /// Appends text, merging with a text node that ends where this one starts.
    fn text(&mut self, span: Span) {
        if span.is_empty() {
            return;
        }
        let acc = self.acc();
        if let Some(Node::Text(prev)) = acc.last_mut()
            && prev.end == span.start
        {
            prev.end = span.end;
            return;
        }
        acc.push(Node::Text(span));
    }

    fn push_all(&mut self, nodes: Vec<Node>) {
        for node in nodes {
            match node {
                Node::Text(span) => self.text(span),
                other => self.push(other),
            }
        }
    }

    /// Matches a closing run of `m` characters at `i` against the piece on top; returns where
    /// scanning goes on.
    fn close(&mut self, i: usize, m: usize) -> usize {
        let piece = self.stack.last().expect("caller checked");
        let (max, valid): (usize, &[usize]) = match piece.kind {
            Kind::Brace => (3, &[2, 3]),
            Kind::Bracket => (2, &[2]),
        };
        let mut count = piece.count.min(m);
        while count > 0 && !valid.contains(&count) {
            count = if count > max { max } else { count - 1 };
        }
        if count == 0 {
            self.text(i..i + m);
            return i + m;
        }
        let mut piece = self.stack.pop().expect("caller checked");
        if let Some(last) = piece.parts.last_mut() {
            last.span.end = i;
        }
        let remaining = piece.count - count;
        let el_start = piece.start + remaining;
        let parts = std::mem::take(&mut piece.parts);
        let span = el_start..i + count;
        let node = match (piece.kind, count) {
            (Kind::Brace, 3) => Node::Argument { span, parts },
            (Kind::Brace, _) => Node::Template { span, parts },
            (Kind::Bracket, _) => Node::Link { span, parts },
        };
        if remaining >= 2 {
            piece.count = remaining;
            piece.parts = vec![Part {
                span: el_start..i + count,
                nodes: vec![node],
                eq: None,
            }];
            self.stack.push(piece);
        } else {
            self.text(piece.start..piece.start + remaining);
            self.push(node);
        }
        i + count
    }

    /// Turns every piece still open into text plus its children.
    fn unwind(&mut self, end: usize) {
        while let Some(mut piece) = self.stack.pop() {
            if let Some(last) = piece.parts.last_mut() {
                last.span.end = end;
            }
            let mut nodes = vec![Node::Text(piece.start..piece.start + piece.count)];
            for (k, part) in piece.parts.into_iter().enumerate() {
                if k > 0 {
                    nodes.push(Node::Text(part.span.start - 1..part.span.start));
                }
                nodes.extend(part.nodes);
            }
            self.push_all(nodes);
        }
    }

    /// An extension tag starting at `i` (`<`), and where it ends.
    fn ext_tag(&mut self, i: usize, end: usize) -> Option<(Ext, usize)> {
        let name_start = i + 1;
        let name_len = self.bytes[name_start..end]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        if name_len == 0 {
            return None;
        }
        let name_src = &self.src[name_start..name_start + name_len];
        let name = *EXT_TAGS.iter().find(|t| t.eq_ignore_ascii_case(name_src))?;
        let after = name_start + name_len;
        match self.bytes.get(after) {
            Some(b'>' | b'/') => {}
            Some(b) if b.is_ascii_whitespace() => {}
            _ => return None,
        }
        let gt = match self.next_gt {
            Some(gt) if gt >= after => gt,
            _ => {
                let gt = self.bytes[after..end]
                    .iter()
                    .position(|&b| b == b'>')
                    .map_or(end, |p| after + p);
                self.next_gt = Some(gt);
                gt
            }
        };
        if gt >= end {
            return None;
        }
        if gt > after && self.bytes[gt - 1] == b'/' {
            let ext = Ext {
                span: i..gt + 1,
                name,
                attrs: after..gt - 1,
                inner: None,
                nodes: None,
            };
            return Some((ext, gt + 1));
        }
        if self.no_close.contains(&name) {
            return None;
        }
        let Some((close_start, close_end)) = find_close_tag(self.bytes, gt + 1, end, name) else {
            self.no_close.push(name);
            return None;
        };
        let inner = gt + 1..close_start;
        let nodes = (name == "ref" && self.ext_depth < 2)
            .then(|| Scanner::new(self.src, self.ext_depth + 1).run(inner.clone()));
        let ext = Ext {
            span: i..close_end,
            name,
            attrs: after..gt,
            inner: Some(inner),
            nodes,
        };
        Some((ext, close_end))
    }
}

fn is_special(b: u8) -> bool {
    matches!(b, b'<' | b'{' | b'}' | b'[' | b']' | b'|' | b'=')
}

fn run_length(bytes: &[u8], b: u8, cap: usize) -> usize {
    bytes.iter().take(cap).take_while(|&&c| c == b).count()
}

/// The first occurrence of `needle` in `hay`.
pub(crate) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `</name\s*>` (ASCII case-insensitive) at or after `from`: (start, end).
fn find_close_tag(bytes: &[u8], from: usize, end: usize, name: &str) -> Option<(usize, usize)> {
    let mut pos = from;
    while pos < end {
        let lt = find(&bytes[pos..end], b"</")? + pos;
        let name_end = lt + 2 + name.len();
        if name_end <= end && bytes[lt + 2..name_end].eq_ignore_ascii_case(name.as_bytes()) {
            let mut k = name_end;
            while k < end && bytes[k].is_ascii_whitespace() {
                k += 1;
            }
            if k < end && bytes[k] == b'>' {
                return Some((lt, k + 1));
            }
        }
        pos = lt + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(src: &str, nodes: &[Node]) -> String {
        nodes
            .iter()
            .map(|n| match n {
                Node::Text(s) => src[s.clone()].to_owned(),
                Node::Comment(_) => "<C>".into(),
                Node::Template { parts, .. } => format!("T({})", parts_shape(src, parts)),
                Node::Argument { parts, .. } => format!("A({})", parts_shape(src, parts)),
                Node::Link { parts, .. } => format!("L({})", parts_shape(src, parts)),
                Node::Ext(e) => format!("E:{}", e.name),
            })
            .collect()
    }

    fn parts_shape(src: &str, parts: &[Part]) -> String {
        parts
            .iter()
            .map(|p| {
                let s = shape(src, &p.nodes);
                match p.eq {
                    Some(_) => format!("{s}="),
                    None => s,
                }
            })
            .collect::<Vec<_>>()
            .join("|")
    }

    fn pp(src: &str) -> String {
        shape(src, &preprocess(src))
    }

    #[test]
    fn templates_links_and_arguments() {
        assert_eq!(pp("a{{b|c=d|[[e|f]]}}g"), "aT(b|c=d=|L(e|f))g");
        assert_eq!(pp("{{{x|y}}}"), "A(x|y)");
        assert_eq!(pp("{{a|{{b|{{c}}}}}}"), "T(a|T(b|T(c)))");
    }

    #[test]
    fn brace_runs_match_like_mediawiki() {
        // 5 open, 5 close: an argument inside a template.
        assert_eq!(pp("{{{{{x}}}}}"), "T(A(x))");
        // 4 and 4: a literal brace, an argument, a literal brace.
        assert_eq!(pp("{{{{x}}}}"), "{A(x)}");
        assert_eq!(pp("}}{{"), "}}{{");
    }

    #[test]
    fn unclosed_pieces_become_text_and_keep_their_children() {
        assert_eq!(pp("{{a|{{b}}"), "{{a|T(b)");
        assert_eq!(pp("{{a|[[b}}"), "{{a|[[b}}");
        assert_eq!(pp("[[a|b"), "[[a|b");
    }

    #[test]
    fn comments_and_extension_tags_are_opaque() {
        assert_eq!(pp("a<!-- {{x}} -->b"), "a<C>b");
        assert_eq!(pp("a<!-- open"), "a<C>");
        assert_eq!(pp("{{a|b<ref>{{c|d}}</ref>}}"), "T(a|bE:ref)");
        assert_eq!(pp("x<ref name=a/>y<REF NAME=b />"), "xE:refyE:ref");
        assert_eq!(pp("<nowiki>{{a}}</nowiki>"), "E:nowiki");
        // No closing tag: text.
        assert_eq!(pp("<ref>{{a}}"), "<ref>T(a)");
        assert_eq!(pp("<span>x</span>"), "<span>x</span>");
    }

    #[test]
    fn equals_splits_only_template_parts_after_the_name() {
        assert_eq!(pp("{{a=b|c=d=e|[[x=y]]}}"), "T(a=b|c=d=e=|L(x=y))");
        assert_eq!(pp("[[a|b=c]]"), "L(a|b=c)");
    }

    #[test]
    fn deep_nesting_stops_at_the_limit() {
        let src = "{{a|".repeat(10_000) + &"}}".repeat(10_000);
        let nodes = preprocess(&src);
        assert!(!nodes.is_empty());
    }
}
