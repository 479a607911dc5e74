//! Bylines the page shows: which elements are one, the names in their text, and which
//! of them is the article's.
//!
//! A byline is an element whose `class` names one (`byline`, `author`, `…-author`), an
//! element with `itemprop=author`, or a `rel=author` link. The walk keeps every such
//! element whose text holds a name ([`byline_names`]), with its number in the page's
//! [`Outline`]; once the main content is picked, the first byline inside it is the
//! article's, else the nearest above it, else the first after it, none inside a part
//! named as boilerplate (comments, related stories, a sidebar: a commenter's name is no
//! author's) ([`place`], [`pick`]). Failing those, a "By …" line at the top of the main
//! content's text ([`by_line`]).

use super::super::article::Selection;
use super::super::outline::{NONE, Outline};

/// The most bylines a page's walk keeps: a listing of teasers has one a teaser, and the
/// article's may come after dozens of them.
pub const MAX_BYLINES: usize = 64;

/// A byline the page shows: the element's number in the outline, and the names.
#[derive(Debug, Clone, PartialEq)]
pub struct Byline {
    pub at: u32,
    pub names: String,
}

/// A class list that names a byline: a class containing `byline` or an author's name
/// (`authorname`, `author-name`, `author_name`), or one that is `author` or ends in
/// `-author`/`_author` (not `author-bio`, `authors-list`).
pub fn byline_class(class: &str) -> bool {
    // Most elements of a page have classes: a class list without "yline" or "uthor" (of
    // "byline", "author"), ASCII case aside, is passed over in one look at each byte
    // (the rest of the five compared only after a `u` or `y`); the others are compared
    // in place, with no lower-case copy.
    let maybe = class.as_bytes().windows(5).any(|w| match w[0] | 0x20 {
        b'y' => w[1..].eq_ignore_ascii_case(b"line"),
        b'u' => w[1..].eq_ignore_ascii_case(b"thor"),
        _ => false,
    });
    if !maybe {
        return false;
    }
    let has = |c: &[u8], part: &[u8]| c.windows(part.len()).any(|w| w.eq_ignore_ascii_case(part));
    let ends = |c: &[u8], end: &[u8]| {
        c.len() >= end.len() && c[c.len() - end.len()..].eq_ignore_ascii_case(end)
    };
    class.split_ascii_whitespace().map(str::as_bytes).any(|c| {
        has(c, b"byline")
            || has(c, b"authorname")
            || has(c, b"author-name")
            || has(c, b"author_name")
            || c.eq_ignore_ascii_case(b"author")
            || ends(c, b"-author")
            || ends(c, b"_author")
    })
}

/// What a byline says before the names, lower case: "By", and its words in the
/// languages of the pages read (French, German, Spanish, Italian, Dutch, Arabic,
/// Hebrew).
const BY: &[&str] = &[
    "by: ",
    "by ",
    "written by ",
    "von ",
    "par ",
    "por ",
    "di ",
    "door ",
    "بقلم ",
    "بقلم: ",
    "מאת ",
];

/// `line` less a leading "By" ([`BY`]), and whether it had one.
fn less_by(line: &str) -> (&str, bool) {
    // Only the start of the line is compared: the prefixes are ASCII, Arabic and Hebrew
    // (no case), so an ASCII case-insensitive look at as many bytes is enough, and the
    // line (a whole paragraph, often) is not lower-cased.
    let by = BY.iter().find(|p| {
        line.as_bytes()
            .get(..p.len())
            .is_some_and(|start| start.eq_ignore_ascii_case(p.as_bytes()))
    });
    match by {
        Some(p) => (line[p.len()..].trim(), true),
        None => (line, false),
    }
}

/// The names in a byline's text: its first line that has a word of two letters or more,
/// less a leading "By"; `None` for a text that is no byline (too long, or no such word:
/// an avatar's initials).
pub fn byline_names(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| {
        l.split_whitespace()
            .any(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
    })?;
    let (line, _) = less_by(line);
    (line.chars().count() <= 100 && !line.is_empty()).then(|| line.to_owned())
}

/// The names of a "By …" line among the first lines of the main content's text: the
/// line says "By" (or its word in another language, [`BY`]) and then a few words (at
/// most six, 60 characters) that end no sentence, the first a capital where the script
/// has capitals.
pub fn by_line(text: &str) -> Option<String> {
    text.lines().take(6).map(str::trim).find_map(|line| {
        let (names, by) = less_by(line);
        if !by {
            return None;
        }
        let words = names.split_whitespace().count();
        let first = names.chars().next()?;
        let ok = (1..=6).contains(&words)
            && names.chars().count() <= 60
            && !names.ends_with(['.', '!', '?', ':', '։', '。', '؟'])
            && (first.is_uppercase() || !first.is_lowercase())
            && first.is_alphabetic();
        ok.then(|| names.to_owned())
    })
}

/// Where a byline is on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// In the main content.
    Content,
    /// In a part of the main content left out (little text, a block of links).
    LeftOut,
    /// Before the main content, not in a part named as boilerplate (a header above the
    /// article).
    Above,
    /// After the main content, not in a part named as boilerplate.
    Below,
    /// In comments, related stories, a sidebar, …: a part named as boilerplate.
    Boilerplate,
}

/// True when `node` is `ancestor` or under it.
fn within(o: &Outline, node: u32, ancestor: u32) -> bool {
    ancestor != NONE && node != NONE && node >= ancestor && node <= o.nodes[ancestor as usize].end
}

/// Where element `at` is, given the page's outline, its main content and its
/// headline's `<h1>` (by its number): in a part named as boilerplate (an element whose
/// `class` or `id` Readability calls unlikely content, `comments`, `related`,
/// `sidebar`, …, that holds neither the main content nor the headline: the article's
/// `<header>` holds its byline), in the main content or a part of it left out, or
/// before or after it.
pub fn place(o: &Outline, sel: &Selection, h1: Option<u32>, at: u32) -> Place {
    let h1 = h1.unwrap_or(NONE);
    if at as usize >= o.nodes.len() {
        return Place::Below;
    }
    let mut p = at;
    while p != NONE {
        let n = &o.nodes[p as usize];
        if n.hint.unlikely && !within(o, sel.root, p) && !within(o, h1, p) {
            return Place::Boilerplate;
        }
        p = n.parent;
    }
    if sel.root == NONE || within(o, at, sel.root) {
        if sel.left_out.iter().any(|&l| within(o, at, l) && l != at) {
            Place::LeftOut
        } else {
            Place::Content
        }
    } else if at < sel.root {
        Place::Above
    } else {
        Place::Below
    }
}

/// The article's byline: the first in the main content, else the first in a part of it
/// left out (a byline is little text), else the last before it (the nearest above the
/// article), else the first after it; none in boilerplate.
pub fn pick(bylines: &[Byline], place: impl Fn(u32) -> Place) -> Option<&str> {
    let placed: Vec<(Place, &str)> = bylines
        .iter()
        .map(|b| (place(b.at), b.names.as_str()))
        .collect();
    let first = |want: Place| placed.iter().find(|(p, _)| *p == want);
    first(Place::Content)
        .or_else(|| first(Place::LeftOut))
        .or_else(|| placed.iter().rev().find(|(p, _)| *p == Place::Above))
        .or_else(|| first(Place::Below))
        .map(|(_, names)| *names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_by_line_is_a_few_names_after_by() {
        assert_eq!(
            by_line("Headline\nBy Ann Lee and Bo Chen\nText."),
            Some("Ann Lee and Bo Chen".into())
        );
        assert_eq!(
            by_line("Par Sébastien Farcis\nx"),
            Some("Sébastien Farcis".into())
        );
        assert_eq!(by_line("بقلم أحمد علي\nنص"), Some("أحمد علي".into()));
        assert_eq!(by_line("מאת דנה לוי\nטקסט"), Some("דנה לוי".into()));
        assert_eq!(by_line("By the way, this is a sentence."), None);
        assert_eq!(by_line("by means of water"), None, "no capital");
        assert_eq!(by_line("Headline\nText\nMore"), None);
        assert_eq!(
            by_line("1\n2\n3\n4\n5\n6\nBy Ann Lee"),
            None,
            "too far down"
        );
    }

    #[test]
    fn a_class_naming_a_byline_or_an_authors_name_is_a_byline() {
        for class in [
            "byline",
            "c-byline x",
            "author",
            "post-author",
            "authorname-txt",
        ] {
            assert!(byline_class(class), "{class}");
        }
        for class in ["author-name C(#000)", "x AUTHOR_NAME", "by-line"] {
            assert_eq!(byline_class(class), class != "by-line", "{class}");
        }
        for class in ["author-bio", "authors-list", "headline", "hy"] {
            assert!(!byline_class(class), "{class}");
        }
    }

    #[test]
    fn byline_names_are_the_first_line_with_a_name() {
        assert_eq!(byline_names("J\nJ"), None);
        assert_eq!(byline_names("By Ann Lee\nEditor"), Some("Ann Lee".into()));
        assert_eq!(byline_names("  بقلم: أحمد علي "), Some("أحمد علي".into()));
    }
}
