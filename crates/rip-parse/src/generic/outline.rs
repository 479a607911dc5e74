//! The page's elements as numbers, read in the same pass as the head and links: for
//! each element (numbered in the order it opens), its parent, its last descendant, its
//! tag, what its `class` and `id` hint at, and the text under it: how much, how much of
//! it in links, its commas, and the score its paragraphs give it (Readability's). From
//! these [`super::article`] picks the main content without a second look at the page.

use std::sync::LazyLock;

use regex::Regex;

use crate::dom::{Flow, Info};
use crate::tag::Tag;
use crate::visit::{Elem, Visitor};

/// No element.
pub(super) const NONE: u32 = u32::MAX;

/// What a `class` or `id` says of an element, as Readability reads them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Hint {
    /// +25 for a name of content (`article`, `content`, `post`, …), −25 for one of
    /// boilerplate (`comment`, `share`, `sidebar`, …), 0 otherwise or both.
    pub weight: i8,
    /// Named as boilerplate that is seldom content (`menu`, `related`, `social`, …) and
    /// not also as content (`article`, `main`, `body`, …).
    pub unlikely: bool,
}

static POSITIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)article|body|content|entry|hentry|h-entry|main|page|post|text|blog|story")
        .expect("a valid pattern")
});
static NEGATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)-ad-|\bad\b|hidden|banner|combx|comment|com-|contact|foot|footnote|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|tool|widget|newsletter|subscri|signup|cookie|consent|social|byline|author|popular|most-read|trending|recommend|breadcrumb",
    )
    .expect("a valid pattern")
});
static UNLIKELY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)-ad-|\bads?\b|advert|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|share|sharing|newsletter|subscri|signup|cookie|consent|promo|outbrain|taboola|most-read|popular|recommend|trending",
    )
    .expect("a valid pattern")
});
static MAYBE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)and|article|body|column|content|main|shadow").expect("a valid pattern")
});

impl Hint {
    /// The hint of an element whose `class` and `id` are these.
    pub fn of(class: Option<&str>, id: Option<&str>) -> Self {
        let mut hint = Hint::default();
        let mut weight = 0i8;
        for name in [class, id].into_iter().flatten() {
            if name.is_empty() {
                continue;
            }
            if NEGATIVE.is_match(name) {
                weight -= 25;
            }
            if POSITIVE.is_match(name) {
                weight += 25;
            }
            hint.unlikely |= UNLIKELY.is_match(name) && !MAYBE.is_match(name);
        }
        hint.weight = weight;
        hint
    }
}

/// An element of the page.
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub parent: u32,
    /// Its last descendant (itself when it has none).
    pub end: u32,
    pub tag: Tag,
    pub hint: Hint,
    /// Its content is never read (hidden) or is the site's boilerplate (`header`,
    /// `nav`, `footer`, `aside` and their roles).
    pub info: Info,
    /// Characters of text under it (hidden elements' left out).
    pub text: u32,
    /// Of those, the ones inside links.
    pub link: u32,
    pub commas: u32,
    /// Paragraphs (`p`, or any block with 25 characters of its own text) under it.
    pub paras: u16,
    /// `li` under it.
    pub items: u16,
    /// `img` under it.
    pub images: u16,
    /// Headings under it (itself too) with a link in them: the titles of teasers.
    pub linked_headings: u16,
    /// It is code or inside code (`pre`, `code`): never left out, whatever its name.
    pub code: bool,
    /// A `<p>` whose text ends a sentence somewhere: a `.` before a space or at its end.
    pub sentence: bool,
    /// The score the paragraphs under it gave it (Readability's content score).
    pub score: f32,
    /// A paragraph has scored it: it is a candidate.
    pub scored: bool,
    /// Characters of text whose nearest block ancestor is this element.
    own: u32,
    own_commas: u32,
}

impl Node {
    /// The share of its text inside links.
    pub fn link_density(&self) -> f32 {
        if self.text == 0 {
            0.0
        } else {
            self.link as f32 / self.text as f32
        }
    }

    /// Its score as a candidate: its paragraphs' score, its tag's and its hint's, less
    /// its share of link text.
    pub fn candidate_score(&self) -> f32 {
        (self.score + tag_weight(self.tag) + f32::from(self.hint.weight))
            * (1.0 - self.link_density())
    }
}

/// Readability's weight of a candidate by its tag.
fn tag_weight(tag: Tag) -> f32 {
    match tag {
        Tag::Div => 5.0,
        Tag::Pre | Tag::Td | Tag::Blockquote => 3.0,
        Tag::Address | Tag::Ol | Tag::Ul | Tag::Dl | Tag::Dd | Tag::Dt | Tag::Li | Tag::Form => {
            -3.0
        }
        Tag::H1 | Tag::H2 | Tag::H3 | Tag::H4 | Tag::H5 | Tag::H6 | Tag::Th => -5.0,
        _ => 0.0,
    }
}

/// The elements of a page, read from its events.
#[derive(Debug, Default)]
pub(super) struct Outline {
    pub nodes: Vec<Node>,
    /// The open elements.
    stack: Vec<u32>,
    /// Open elements that are hidden, or links.
    hidden: u32,
    links: u32,
    /// The first `<body>`, `<main>` and `[role=main]` element.
    pub body: u32,
    pub main: u32,
    pub role_main: u32,
    /// How much the page reads like an article: Readability's `isProbablyReaderable`,
    /// the sum over paragraphs of over 120 characters of the square root of their
    /// length past 120.
    pub prose: f32,
    /// Open `pre` and `code` elements.
    code: u32,
    /// The page says it is an article: `og:type` `article`, or a JSON-LD block naming an
    /// article type (`Article`, `NewsArticle`, `BlogPosting`, …).
    pub says_article: bool,
    /// A JSON-LD `<script>` is open.
    in_json_ld: bool,
    /// The first `<h1>` or `<h2>` that repeats the page's `<title>` ([`NONE`]: none).
    pub title_heading: u32,
    title: TitleHeading,
}

impl Outline {
    pub fn new() -> Self {
        Self {
            body: NONE,
            main: NONE,
            role_main: NONE,
            title_heading: NONE,
            ..Self::default()
        }
    }

    /// The nearest open block element.
    fn block(&self) -> Option<u32> {
        self.stack
            .iter()
            .rev()
            .copied()
            .find(|&i| self.nodes[i as usize].info.flow != Flow::Inline)
    }

    /// A paragraph closes: its score goes to its ancestors, less the higher they are.
    fn score_paragraph(&mut self, i: u32) {
        let n = &self.nodes[i as usize];
        let score = 1.0 + n.own_commas as f32 + (n.own as f32 / 100.0).min(3.0);
        let mut at = n.parent;
        for level in 0..5u8 {
            if at == NONE {
                break;
            }
            let a = &mut self.nodes[at as usize];
            let divider = match level {
                0 => 1.0,
                1 => 2.0,
                l => f32::from(l) * 3.0,
            };
            a.score += score / divider;
            a.scored = true;
            at = a.parent;
        }
    }
}

/// True when a JSON-LD block's text gives an article type as an `@type`: `Article`,
/// or a type ending so (`NewsArticle`, `ScholarlyArticle`, …) or `BlogPosting`.
fn names_an_article(json: &str) -> bool {
    json.match_indices("@type").any(|(i, _)| {
        let after = &json[i + 5..];
        let value: String = after
            .trim_start_matches(|c: char| c == '"' || c == ':' || c == '[' || c.is_whitespace())
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        value.ends_with("Article") || value == "BlogPosting"
    })
}

/// Finds the heading that repeats the page's title, as Readability's
/// `_headerDuplicatesTitle`: the first `<h1>` or `<h2>` whose words are nearly all
/// (over 75 % of its text) words of the `<title>`. The doc has the headline apart; the
/// main content leaves that heading out.
#[derive(Debug, Default)]
struct TitleHeading {
    /// The first `<title>`'s text.
    title: String,
    title_done: bool,
    /// The element being read, and whether it is the `<title>` (else a heading).
    reading: Option<(u32, bool)>,
    heading: String,
}

/// At most this much of the title or a heading is read.
const TITLE_BYTES: usize = 600;

impl TitleHeading {
    fn open(&mut self, tag: Tag, i: u32) {
        if self.reading.is_some() {
            return;
        }
        if tag == Tag::Title {
            if !self.title_done {
                self.reading = Some((i, true));
            }
        } else if self.title_done && !self.title.is_empty() {
            self.reading = Some((i, false));
            self.heading.clear();
        }
    }

    fn text(&mut self, text: &str) {
        let buf = match self.reading {
            Some((_, true)) => &mut self.title,
            Some((_, false)) => &mut self.heading,
            None => return,
        };
        if buf.len() < TITLE_BYTES {
            buf.push_str(text);
        }
    }

    /// Element `i` closes: true when it is a heading that repeats the title.
    fn close(&mut self, i: u32) -> bool {
        match self.reading {
            Some((r, is_title)) if r == i => {
                self.reading = None;
                if is_title {
                    self.title_done = true;
                    false
                } else {
                    repeats(&self.heading, &self.title)
                }
            }
            _ => false,
        }
    }
}

/// Readability's `textSimilarity(title, heading) > 0.75`: the heading's words that are
/// not the title's make less than a quarter of its text.
fn repeats(heading: &str, title: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (h, t) = (words(heading), words(title));
    if h.is_empty() || t.is_empty() {
        return false;
    }
    let length =
        |ws: &[&String]| ws.iter().map(|w| w.len()).sum::<usize>() + ws.len().saturating_sub(1);
    let all: Vec<&String> = h.iter().collect();
    let unique: Vec<&String> = h.iter().filter(|w| !t.contains(w)).collect();
    1.0 - length(&unique) as f32 / length(&all) as f32 > 0.75
}

/// Readability's `/\.( |$)/`: a full stop before a space or at the end of the text (of
/// one text node: one split across two is not seen, as seldom matters).
fn ends_a_sentence(text: &str) -> bool {
    text.trim_end().ends_with('.') || text.contains(". ")
}

/// A paragraph of prose has more characters than this (not counting spaces).
const PROSE: u32 = 120;

/// Blocks whose own text makes them paragraphs (what Readability scores).
fn paragraph_tag(tag: Tag) -> bool {
    matches!(
        tag,
        Tag::P
            | Tag::Pre
            | Tag::Td
            | Tag::Div
            | Tag::Section
            | Tag::Article
            | Tag::Blockquote
            | Tag::H2
            | Tag::H3
            | Tag::H4
            | Tag::H5
            | Tag::H6
    )
}

impl Visitor for Outline {
    fn open(&mut self, el: &Elem<'_>) {
        let i = self.nodes.len() as u32;
        let tag = el.html_tag().unwrap_or(Tag::Other);
        match tag {
            Tag::Body if self.body == NONE => self.body = i,
            Tag::Main if self.main == NONE => self.main = i,
            _ if self.role_main == NONE && el.info.has(Info::ROLE_MAIN) => self.role_main = i,
            _ => {}
        }
        match tag {
            Tag::Meta if !self.says_article => {
                self.says_article = el.attr("property") == Some("og:type")
                    && el
                        .attr("content")
                        .is_some_and(|c| c.trim().eq_ignore_ascii_case("article"));
            }
            // The `<title>` is in the head, which is never seen; a heading must be.
            Tag::Title | Tag::H1 | Tag::H2
                if self.title_heading == NONE && (tag == Tag::Title || self.hidden == 0) =>
            {
                self.title.open(tag, i);
            }
            Tag::Script => {
                self.in_json_ld = el
                    .attr("type")
                    .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/ld+json"));
            }
            _ => {}
        }
        let class = el.attr("class");
        let id = el.attr("id");
        let mut hint = if class.is_some() || id.is_some() {
            Hint::of(class, id)
        } else {
            Hint::default()
        };
        // Named as it may be, the page, its main element or a link is never left out.
        hint.unlikely &= !matches!(tag, Tag::Html | Tag::Body | Tag::Main | Tag::A);
        if el.info.out_of_sight() {
            self.hidden += 1;
        }
        if tag == Tag::A {
            self.links += 1;
        }
        let code = matches!(tag, Tag::Pre | Tag::Code);
        if code {
            self.code += 1;
        }
        self.nodes.push(Node {
            parent: self.stack.last().copied().unwrap_or(NONE),
            end: i,
            tag,
            hint,
            info: el.info,
            text: 0,
            link: 0,
            commas: 0,
            paras: 0,
            items: u16::from(tag == Tag::Li),
            images: u16::from(tag == Tag::Img),
            linked_headings: 0,
            code: self.code > 0,
            sentence: false,
            score: 0.0,
            scored: false,
            own: 0,
            own_commas: 0,
        });
        self.stack.push(i);
    }

    fn text(&mut self, text: &str) {
        if self.in_json_ld && !self.says_article {
            self.says_article = names_an_article(text);
        }
        self.title.text(text);
        if self.hidden > 0 || self.stack.is_empty() {
            return;
        }
        let chars = text.chars().filter(|c| !c.is_whitespace()).count() as u32;
        if chars == 0 {
            return;
        }
        let commas = text.matches([',', '،', '，']).count() as u32;
        let top = *self.stack.last().expect("not empty") as usize;
        let n = &mut self.nodes[top];
        n.text += chars;
        n.commas += commas;
        if self.links > 0 {
            n.link += chars;
        }
        if let Some(b) = self.block() {
            let b = &mut self.nodes[b as usize];
            b.own += chars;
            b.own_commas += commas;
            if b.tag == Tag::P && !b.sentence {
                b.sentence = ends_a_sentence(text);
            }
        }
    }

    fn close(&mut self, el: &Elem<'_>) {
        let Some(i) = self.stack.pop() else { return };
        if el.info.out_of_sight() {
            self.hidden = self.hidden.saturating_sub(1);
        }
        let end = self.nodes.len() as u32 - 1;
        let n = &mut self.nodes[i as usize];
        n.end = end;
        if n.tag == Tag::A {
            self.links = self.links.saturating_sub(1);
        }
        if n.tag == Tag::Script {
            self.in_json_ld = false;
        }
        if self.title.close(i) {
            self.title_heading = i;
        }
        if matches!(n.tag, Tag::Pre | Tag::Code) {
            self.code = self.code.saturating_sub(1);
        }
        if n.tag == Tag::P && n.own > PROSE && self.hidden == 0 {
            self.prose += ((n.own - PROSE) as f32).sqrt();
        }
        let is_para = n.tag == Tag::P || (paragraph_tag(n.tag) && n.own >= 25);
        if is_para {
            n.paras += 1;
        }
        if n.link > 0 && n.info.heading().is_some() {
            n.linked_headings += 1;
        }
        let (text, link, commas, paras, items, images) =
            (n.text, n.link, n.commas, n.paras, n.items, n.images);
        let linked_headings = n.linked_headings;
        if is_para && n.own >= 25 && self.hidden == 0 {
            self.score_paragraph(i);
        }
        let parent = self.nodes[i as usize].parent;
        if parent != NONE {
            let p = &mut self.nodes[parent as usize];
            p.text += text;
            p.link += link;
            p.commas += commas;
            p.paras = p.paras.saturating_add(paras);
            p.items = p.items.saturating_add(items);
            p.images = p.images.saturating_add(images);
            p.linked_headings = p.linked_headings.saturating_add(linked_headings);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::repeats;

    #[test]
    fn a_heading_repeats_a_title_that_holds_nearly_all_its_words() {
        let title = "Why rivers meander | The Daily Planet";
        assert!(repeats("Why Rivers Meander", title));
        assert!(repeats("Why rivers meander!", title));
        assert!(repeats(
            "川はなぜ蛇行するのか",
            "川はなぜ蛇行するのか - 日刊惑星"
        ));
        // A quarter of its text or more not in the title: its own heading.
        assert!(!repeats("Why rivers meander, and lakes do not", title));
        assert!(!repeats("Sections", title));
        assert!(!repeats("", title));
        assert!(!repeats("Why rivers meander", ""));
    }
}
