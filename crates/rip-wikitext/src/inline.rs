//! The last pass over rendered text: tables, list markers, external links, HTML tags,
//! bold/italic quotes and entities go; whitespace is tidied.

/// HTML tags MediaWiki allows in wikitext (and the inclusion markers): stripped, content kept.
const HTML_TAGS: &[&str] = &[
    "b",
    "big",
    "blockquote",
    "br",
    "caption",
    "center",
    "cite",
    "code",
    "data",
    "dd",
    "del",
    "dfn",
    "div",
    "dl",
    "dt",
    "em",
    "font",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "i",
    "ins",
    "kbd",
    "li",
    "mark",
    "noinclude",
    "ol",
    "onlyinclude",
    "p",
    "q",
    "rb",
    "rp",
    "rt",
    "rtc",
    "ruby",
    "s",
    "samp",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "table",
    "td",
    "th",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "wbr",
];

/// Tags that break a line in block text.
const BLOCK_TAGS: &[&str] = &["br", "p", "div", "li", "tr", "blockquote", "dd", "dt"];

/// URL schemes of external links (MediaWiki's `$wgUrlProtocols`, the common ones).
pub(crate) const SCHEMES: &[&str] = &[
    "http://", "https://", "ftp://", "ftps://", "//", "mailto:", "irc://", "ircs://", "news:",
    "sftp://", "git://",
];

/// Block text: paragraphs and lines kept, tables and list markers removed.
pub(crate) fn clean_block(s: &str) -> String {
    let mut lines = Vec::new();
    let mut table_depth = 0usize;
    for line in s.lines() {
        let t = line.trim_start();
        if t.starts_with("{|") {
            table_depth += 1;
            continue;
        }
        if table_depth > 0 {
            if t.starts_with("|}") {
                table_depth -= 1;
            }
            continue;
        }
        if t.starts_with("----") {
            lines.push(String::new());
            continue;
        }
        let t = t.trim_start_matches(['*', '#', ':', ';']);
        lines.push(inline(t, true));
    }
    tidy_block(&lines.join("\n"))
}

/// One line of text (infobox values, titles, link labels): all whitespace as single spaces.
pub(crate) fn clean_line(s: &str) -> String {
    let text = inline(s, false);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// External links, HTML tags, quotes, magic words, then entities.
fn inline(s: &str, block: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut links = LinkScanner::default();
    let mut tag_stop = None;
    let mut i = 0;
    while i < s.len() {
        match bytes[i] {
            b'[' if bytes.get(i + 1) != Some(&b'[') => {
                if let Some((_, label, next)) = links.at(s, i) {
                    out.push_str(label);
                    i = next;
                    continue;
                }
                out.push('[');
                i += 1;
            }
            b'<' => {
                if let Some((name, next)) = html_tag(s, i, &mut tag_stop) {
                    if BLOCK_TAGS.contains(&name) {
                        out.push(if block { '\n' } else { ' ' });
                    }
                    i = next;
                    continue;
                }
                out.push('<');
                i += 1;
            }
            b'\'' => {
                let n = bytes[i..].iter().take_while(|&&b| b == b'\'').count();
                match n {
                    1 => out.push('\''),
                    2 | 3 | 5 => {}
                    4 => out.push('\''),
                    _ => out.extend(std::iter::repeat_n('\'', n - 5)),
                }
                i += n;
            }
            b'_' if bytes.get(i + 1) == Some(&b'_') => {
                let word = bytes[i + 2..]
                    .iter()
                    .take_while(|b| b.is_ascii_uppercase())
                    .count();
                if word > 0 && bytes[i + 2 + word..].starts_with(b"__") {
                    i += word + 4;
                } else {
                    out.push_str("__");
                    i += 2;
                }
            }
            _ => {
                let start = i;
                i += 1;
                while i < s.len() && !matches!(bytes[i], b'[' | b'<' | b'\'' | b'_') {
                    i += 1;
                }
                out.push_str(&s[start..i]);
            }
        }
    }
    html_escape::decode_html_entities(&out).replace(['\u{a0}', '\u{202f}', '\u{2009}'], " ")
}

/// Finds `[url label]` links in one string. It remembers the next `]` or newline it saw, so a
/// string of many `[https://…` without a `]` is scanned once, not once per `[`.
#[derive(Default)]
pub(crate) struct LinkScanner {
    stop: Option<usize>,
}

impl LinkScanner {
    /// `[url label]` at `i` (a `[`): the URL, the label and where the link ends.
    pub(crate) fn at<'s>(&mut self, s: &'s str, i: usize) -> Option<(&'s str, &'s str, usize)> {
        let rest = &s[i + 1..];
        if !SCHEMES
            .iter()
            .any(|scheme| starts_with_ignore_case(rest, scheme))
        {
            return None;
        }
        let stop = match self.stop {
            Some(stop) if stop > i => stop,
            _ => {
                let stop = rest.find([']', '\n']).map_or(s.len(), |p| i + 1 + p);
                self.stop = Some(stop);
                stop
            }
        };
        if s.as_bytes().get(stop) != Some(&b']') {
            return None;
        }
        let inner = &s[i + 1..stop];
        let (url, label) = match inner.split_once(char::is_whitespace) {
            Some((url, label)) => (url, label.trim()),
            None => (inner, ""),
        };
        Some((url, label, stop + 1))
    }
}

/// Whether `s` starts with the ASCII `prefix`, ignoring ASCII case.
pub(crate) fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// An allowed HTML tag at `i` (`<span …>`, `</b>`, `<br/>`): its name and where it ends.
/// `stop` remembers the next `>` or newline, so `<span <span <span …` is scanned once.
fn html_tag(s: &str, i: usize, stop: &mut Option<usize>) -> Option<(&'static str, usize)> {
    let bytes = s.as_bytes();
    let mut k = i + 1;
    if bytes.get(k) == Some(&b'/') {
        k += 1;
    }
    let name_len = bytes[k..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    let name = &s[k..k + name_len];
    let tag = *HTML_TAGS.iter().find(|t| t.eq_ignore_ascii_case(name))?;
    let after = k + name_len;
    match bytes.get(after) {
        Some(b'>' | b'/') => {}
        Some(b) if b.is_ascii_whitespace() => {}
        _ => return None,
    }
    let gt = match *stop {
        Some(gt) if gt >= after => gt,
        _ => {
            let gt = bytes[after..]
                .iter()
                .position(|&b| b == b'>' || b == b'\n')
                .map_or(s.len(), |p| after + p);
            *stop = Some(gt);
            gt
        }
    };
    (bytes.get(gt) == Some(&b'>')).then_some((tag, gt + 1))
}

/// Spaces collapsed, lines trimmed, at most one empty line in a row.
fn tidy_block(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank = 0;
    for line in s.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(&line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_tags_and_entities() {
        assert_eq!(clean_line("'''Ash''' ''Wyrm''"), "Ash Wyrm");
        assert_eq!(clean_line("l''''arbre"), "l'arbre");
        assert_eq!(clean_line("a<br/>b <span style=\"x\">c</span>"), "a b c");
        assert_eq!(clean_line("1&nbsp;200 &amp; 5&ndash;6"), "1 200 & 5–6");
        assert_eq!(clean_line("a < b > c"), "a < b > c");
        assert_eq!(clean_line("&lt;br&gt;"), "<br>");
        assert_eq!(clean_line("__NOTOC__x __y__"), "x __y__");
    }

    #[test]
    fn external_links_show_their_labels() {
        assert_eq!(
            clean_line("see [https://example.invalid/x the errata]."),
            "see the errata."
        );
        assert_eq!(clean_line("[https://example.invalid/x]"), "");
        assert_eq!(clean_line("[not a link] [[x]]"), "[not a link] [[x]]");
        assert_eq!(
            LinkScanner::default().at("[//example.invalid a b] x", 0),
            Some(("//example.invalid", "a b", 23))
        );
        let mut scanner = LinkScanner::default();
        let text = "[http://a [http://b c]";
        assert_eq!(scanner.at(text, 0), Some(("http://a", "[http://b c", 22)));
        assert_eq!(scanner.at(text, 10), Some(("http://b", "c", 22)));
        assert_eq!(scanner.at("[http://a\n]", 0), None);
    }

    #[test]
    fn blocks_lose_tables_and_list_markers() {
        let text = "Intro.\n\n{| class=\"wikitable\"\n! A !! B\n|-\n| 1 || 2\n|}\n* one\n** two\n# three\n\n\n\nEnd.";
        assert_eq!(clean_block(text), "Intro.\n\none\ntwo\nthree\n\nEnd.");
    }
}
