//! Headings (`== Title ==`) at the top level of the page, and the node lists between them.

use crate::preprocess::{Node, Span};

/// A heading line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Heading {
    /// The line, from its first `=` to its end (without the newline).
    pub line: Span,
    /// 1 to 6: the number of `=` on each side.
    pub level: u8,
    /// The title's source, between the `=` runs.
    pub inner: Span,
}

/// The headings of a page: lines that start with `=` and end with `=` (then only spaces and
/// comments) in the top-level text, never inside a template, link or tag.
pub(crate) fn headings(src: &str, root: &[Node]) -> Vec<Heading> {
    let mut out = Vec::new();
    let mut line_start = 0;
    for node in root {
        if let Node::Text(span) = node {
            let mut pos = span.start;
            while let Some(nl) = src[pos..span.end].find('\n') {
                let end = pos + nl;
                if let Some(h) = heading(src, line_start..end) {
                    out.push(h);
                }
                line_start = end + 1;
                pos = end + 1;
            }
        }
    }
    if let Some(h) = heading(src, line_start..src.len()) {
        out.push(h);
    }
    out
}

fn heading(src: &str, line: Span) -> Option<Heading> {
    let bytes = src.as_bytes();
    if bytes.get(line.start) != Some(&b'=') || line.is_empty() {
        return None;
    }
    // Trailing whitespace and comments do not count.
    let mut end = line.end;
    loop {
        while end > line.start && bytes[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        if src[line.start..end].ends_with("-->")
            && let Some(open) = rfind(&bytes[line.start..end], b"<!--")
        {
            end = line.start + open;
            continue;
        }
        break;
    }
    let text = &bytes[line.start..end];
    let left = text.iter().take_while(|&&b| b == b'=').count();
    let right = text.iter().rev().take_while(|&&b| b == b'=').count();
    let mut level = left.min(right).min(6);
    if 2 * level >= text.len() {
        // A line of only `=`: MediaWiki keeps one in the title.
        level = (text.len() - 1) / 2;
    }
    if level == 0 {
        return None;
    }
    Some(Heading {
        line: line.start..line.end,
        level: level as u8,
        inner: line.start + level..end - level,
    })
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

/// The nodes of `root` inside `range`, text nodes cut at its edges.
pub(crate) fn clip(root: &[Node], range: Span) -> Vec<Node> {
    let mut out = Vec::new();
    for node in root {
        let span = node.span();
        if span.end <= range.start || span.start >= range.end {
            if span.is_empty() && span.start == range.start {
                out.push(node.clone());
            }
            continue;
        }
        match node {
            Node::Text(_) => {
                let cut = span.start.max(range.start)..span.end.min(range.end);
                if !cut.is_empty() {
                    out.push(Node::Text(cut));
                }
            }
            other => out.push(other.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preprocess::preprocess;

    fn titles(src: &str) -> Vec<(u8, &str)> {
        let root = preprocess(src);
        headings(src, &root)
            .into_iter()
            .map(|h| (h.level, src[h.inner].trim()))
            .collect()
    }

    #[test]
    fn heading_lines() {
        let src = "lead\n== A ==\ntext\n=== B === <!-- c -->\n==C==\n= D =";
        assert_eq!(titles(src), [(2, "A"), (3, "B"), (2, "C"), (1, "D")]);
        assert_eq!(titles("=== A =="), [(2, "= A")]);
        assert_eq!(titles("==="), [(1, "=")]);
        assert_eq!(titles("x == A =="), []);
    }

    #[test]
    fn headings_inside_templates_do_not_count() {
        assert_eq!(titles("{{a|\n== X ==\n}}\n== Y =="), [(2, "Y")]);
        assert_eq!(titles("<!--\n== X ==\n-->"), []);
    }
}
