//! The main content of a page: which element holds it, and which of its parts are
//! boilerplate, picked from the page's [`Outline`].
//!
//! Readability's way, measured against its peers on the Readability test pages
//! (`scripts/bench/extract`): each paragraph scores its parent, grandparent and
//! ancestors above them (less the higher they are) by its length and commas; an
//! element's score is that, its tag's weight and its `class`/`id` hint, times the share
//! of its text outside links. The best-scored element (or its parent, when its
//! siblings score well too) is the content. Inside it, parts named as boilerplate
//! (`share`, `related`, `comments`, `newsletter`, …) and link lists are left out. A
//! page whose best element scores low (an index, a forum thread, reference
//! documentation with no prose) keeps its `<main>` or its body less the boilerplate,
//! as before.

use super::outline::{NONE, Node, Outline};
use crate::dom::{Info, Skip};
use crate::tag::Tag;
use crate::visit::{Elem, Visitor};

/// Below this score, the best element is no article.
const ARTICLE_SCORE: f32 = 15.0;

/// A page with less prose than this ([`Outline::prose`]) is no article (Readability's
/// `isProbablyReaderable` threshold).
const PROSE: f32 = 20.0;

/// The main content: an element, what its text leaves out, and why it was picked.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Selection {
    /// The element (its number in [`Outline`]); [`NONE`] for the page's root.
    pub root: u32,
    pub skip: Skip,
    /// The elements under it that are left out, in order.
    pub left_out: Vec<u32>,
    /// The region and why, for the doc's `contentFrom`.
    pub from: String,
    /// The region the streaming pass reads anyway (`<main>`, `[role=main]` or the body
    /// less its boilerplate, with nothing left out): no second pass needed.
    pub default: bool,
}

/// The region read when no article is found: the first `<main>`, else `[role=main]`,
/// else the body less its boilerplate.
fn default_region(o: &Outline) -> (u32, Skip, &'static str) {
    if o.main != NONE {
        (o.main, Skip::Nav, "main")
    } else if o.role_main != NONE {
        (o.role_main, Skip::Nav, "[role=main]")
    } else {
        (o.body, Skip::Boilerplate, "body")
    }
}

/// Picks the main content of a page.
pub(super) fn select(o: &Outline) -> Selection {
    let (region, skip, region_name) = default_region(o);
    let fallback = |why: &str| Selection {
        root: region,
        skip,
        left_out: Vec::new(),
        from: format!("{region_name}: {why}"),
        default: true,
    };
    if region == NONE {
        return fallback("no body");
    }
    // A page that says where its main content is and has little prose (reference
    // documentation, an index) keeps all of it.
    let declared = skip == Skip::Nav;
    if declared && o.prose < PROSE && !o.says_article {
        return fallback("no article");
    }
    // As Readability, parts named as boilerplate are passed over, unless what is left
    // is no article (a page whose article is inside an element named `sidebar-mix` or
    // `site_header`): under 400 characters, or scored under an article's score.
    let best = best_candidate(o, region, true)
        .filter(|&b| {
            let n = &o.nodes[b as usize];
            n.text >= 400 && n.candidate_score() >= ARTICLE_SCORE
        })
        .or_else(|| best_candidate(o, region, false));
    let Some(top) = best else {
        return fallback("no article");
    };
    let top_score = o.nodes[top as usize].candidate_score();
    if top_score < ARTICLE_SCORE {
        return fallback("no article");
    }
    let top = widen(o, top, region);
    // Inside a page's own `<main>`, the content is narrowed only to an element holding
    // half its text or more (on the Rust docs, a method's docs are no article).
    let top = if declared
        && !o.says_article
        && o.nodes[top as usize].text * 2 < o.nodes[region as usize].text
    {
        region
    } else {
        top
    };
    let (root, mut left_out) = with_siblings(o, top, region);
    left_out.extend(boilerplate_under(o, root, top, &left_out, !declared));
    left_out.sort_unstable();
    // A region picked inside the main element or the body leaves out all boilerplate.
    let skip = if root == region {
        skip
    } else {
        Skip::Boilerplate
    };
    let n = &o.nodes[root as usize];
    let from = format!(
        "{}: article, {} paragraphs{}",
        describe(n),
        n.paras,
        match left_out.len() {
            0 => String::new(),
            k => format!(", {k} boilerplate parts left out"),
        }
    );
    left_out = title_heading_under(o, root, &left_out);
    Selection {
        root,
        skip,
        from,
        default: root == region && left_out.is_empty(),
        left_out,
    }
}

/// `left_out` (sorted) and, when it is under `root` and not already left out, the
/// heading that repeats the page's title ([`Outline::title_heading`]): the doc's
/// headline, given apart.
fn title_heading_under(o: &Outline, root: u32, left_out: &[u32]) -> Vec<u32> {
    let mut out = left_out.to_vec();
    let h = o.title_heading;
    if h != NONE
        && h != root
        && is_within(o, h, root)
        && !left_out.iter().any(|&l| is_within(o, h, l))
    {
        let at = out.partition_point(|&l| l < h);
        out.insert(at, h);
    }
    out
}

/// True when `node` is `ancestor` or under it.
fn is_within(o: &Outline, node: u32, ancestor: u32) -> bool {
    ancestor != NONE && node >= ancestor && node <= o.nodes[ancestor as usize].end
}

/// The best-scored candidate under `region`, none under hidden or boilerplate elements
/// (nor, when `skip_unlikely`, under elements named as boilerplate).
fn best_candidate(o: &Outline, region: u32, skip_unlikely: bool) -> Option<u32> {
    let end = o.nodes[region as usize].end;
    let mut best: Option<(u32, f32)> = None;
    let mut i = region;
    while i <= end {
        let n = &o.nodes[i as usize];
        if i != region
            && (n.info.out_of_sight()
                || n.info.has(Info::BOILERPLATE)
                || (skip_unlikely && n.hint.unlikely))
        {
            i = n.end + 1;
            continue;
        }
        if n.scored && (i != region || !skip_unlikely) {
            let s = n.candidate_score();
            if best.is_none_or(|(_, b)| s > b) {
                best = Some((i, s));
            }
        }
        i += 1;
    }
    best.map(|(i, _)| i)
}

/// The element whose text is the content, from the best candidate as Readability
/// widens it: to the ancestor holding three of the next best candidates, when they
/// score nearly as well (an article split into blocks); then up to an ancestor that
/// scores better; then up while it is its parent's only child with text, small parts
/// named as boilerplate beside it not counted ([`only_child_with_text`]).
fn widen(o: &Outline, top: u32, region: u32) -> u32 {
    let score = |i: u32| o.nodes[i as usize].candidate_score();
    let up = |i: u32| {
        let p = o.nodes[i as usize].parent;
        (i != region && p != NONE && is_within(o, p, region)).then_some(p)
    };
    let top_score = score(top);
    let mut alternatives: Vec<(u32, f32)> = (region..=o.nodes[region as usize].end)
        .filter(|&i| i != top && o.nodes[i as usize].scored && score(i) >= top_score * 0.75)
        .map(|i| (i, score(i)))
        .collect();
    alternatives.sort_by(|a, b| b.1.total_cmp(&a.1));
    alternatives.truncate(5);
    let mut top = top;
    if alternatives.len() >= 3 {
        let mut at = up(top);
        while let Some(p) = at {
            let holding = alternatives
                .iter()
                .filter(|(a, _)| is_within(o, *a, p))
                .count();
            if holding >= 3 {
                top = p;
                break;
            }
            at = up(p);
        }
    }
    let mut last = score(top);
    let mut at = up(top);
    // Up to the region's children: the region itself is what no article gives.
    while let Some(p) = at.filter(|&p| p != region) {
        let n = &o.nodes[p as usize];
        if n.scored {
            let s = score(p);
            if s < last / 3.0 {
                break;
            }
            if s > last {
                top = p;
                break;
            }
            last = s;
        }
        at = up(p);
    }
    while let Some(p) = up(top).filter(|&p| only_child_with_text(o, p, top)) {
        top = p;
    }
    top
}

/// True when `child` holds all of `parent`'s text but for children named as boilerplate
/// that are under a quarter of its size: Readability removes those before it looks, and
/// widens to the parent when the candidate is its only child, so that the article's
/// other blocks, in the parent's siblings, join it (a story's lead and body, each in a
/// wrapper beside a `supplemental` box). A larger such part (a live feed, the comments)
/// keeps the candidate where it is, as the guard of [`is_boilerplate`] does.
fn only_child_with_text(o: &Outline, parent: u32, child: u32) -> bool {
    let p = &o.nodes[parent as usize];
    let mut rest = p.text.saturating_sub(o.nodes[child as usize].text);
    let mut c = parent + 1;
    while rest > 0 && c <= p.end {
        let n = &o.nodes[c as usize];
        if c != child && n.hint.unlikely && n.text * 4 < o.nodes[child as usize].text {
            rest = rest.saturating_sub(n.text);
        }
        c = n.end + 1;
    }
    rest == 0
}

/// The content as Readability joins it: the candidate and those of its siblings that
/// score well too (an article split into several blocks) or are paragraphs of prose,
/// unless their name says boilerplate (Readability has removed those before it joins).
/// The root (the candidate, or its parent) and the siblings left out.
fn with_siblings(o: &Outline, top: u32, region: u32) -> (u32, Vec<u32>) {
    let t = &o.nodes[top as usize];
    let parent = t.parent;
    if top == region || parent == NONE || !is_within(o, parent, region) {
        return (top, Vec::new());
    }
    let threshold = (t.candidate_score() * 0.2).max(10.0);
    let mut kept = false;
    let mut left_out = Vec::new();
    let mut c = parent + 1;
    while c <= o.nodes[parent as usize].end {
        let n = &o.nodes[c as usize];
        if c != top && n.text > 0 {
            let prose = (n.link_density() < 0.25
                && ((n.tag == Tag::P && n.text > 80) || (n.paras >= 3 && n.linked_headings < 2)))
                || (n.tag == Tag::P && n.link == 0 && n.sentence);
            if !n.hint.unlikely && ((n.scored && n.candidate_score() >= threshold) || prose) {
                kept = true;
            } else {
                left_out.push(c);
            }
        }
        c = n.end + 1;
    }
    if kept {
        (parent, left_out)
    } else {
        (top, Vec::new())
    }
}

/// The parts of `root`'s content left out as boilerplate: elements named as such, and
/// lists and blocks of links, or of little text, that do not hold the best candidate
/// (`already`: left out, sorted).
fn boilerplate_under(o: &Outline, root: u32, top: u32, already: &[u32], links: bool) -> Vec<u32> {
    let r = &o.nodes[root as usize];
    let mut out = Vec::new();
    let mut i = root + 1;
    while i <= r.end {
        let n = &o.nodes[i as usize];
        if already.binary_search(&i).is_ok() {
            i = n.end + 1;
            continue;
        }
        let holds_top = is_within(o, top, i);
        if !holds_top && is_boilerplate(n, r, links) {
            out.push(i);
            i = n.end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Readability's conditional cleaning, roughly: a part of the content is boilerplate
/// when its name says so, or it is mostly links, or it holds over a hundred more list
/// items than paragraphs and no prose (Readability's `li - 100 > p`: a block holding a
/// short list is the article's) (`links`: inside a page's own `<main>`, only when its
/// name says so too). Headings are kept.
fn is_boilerplate(n: &Node, root: &Node, links: bool) -> bool {
    if n.info.out_of_sight() || n.text == 0 || n.info.heading().is_some() || n.code {
        return false;
    }
    let small = n.text * 4 < root.text;
    if n.hint.unlikely && small && !matches!(n.tag, Tag::Table | Tag::Tbody | Tag::Tr | Tag::Td) {
        return true;
    }
    if !links && n.hint.weight >= 0 {
        return false;
    }
    let container = matches!(
        n.tag,
        Tag::Div | Tag::Section | Tag::Ul | Tag::Ol | Tag::Form | Tag::Aside | Tag::Table
    );
    if !container || n.commas >= 10 || !small {
        return false;
    }
    let ld = n.link_density();
    let weight = f32::from(n.hint.weight);
    weight + n.score < 0.0
        || (weight < 25.0 && ld > 0.2 && n.paras == 0)
        || ld > 0.5
        || (n.items > n.paras.saturating_add(100)
            && !matches!(n.tag, Tag::Ul | Tag::Ol)
            && n.paras == 0)
}

/// An element as `tag#id.class`, for `contentFrom` (its id and class as its hint
/// read them are not kept: the tag and the numbers say enough).
fn describe(n: &Node) -> String {
    let name = n.tag.name();
    if name.is_empty() {
        "element".into()
    } else {
        name.into()
    }
}

/// A visitor that passes on only the events of the selected content: the root's
/// subtree less the elements left out.
pub(super) struct Filtered<'s, V> {
    sel: &'s Selection,
    inner: V,
    next: u32,
    /// Open elements of the root's subtree being passed on (0: outside it).
    inside: u32,
    /// Open elements of a part left out.
    skipping: u32,
    /// The next element left out, in [`Selection::left_out`].
    cursor: usize,
}

impl<'s, V: Visitor> Filtered<'s, V> {
    pub fn new(sel: &'s Selection, inner: V) -> Self {
        Self {
            sel,
            inner,
            next: 0,
            inside: 0,
            skipping: 0,
            cursor: 0,
        }
    }

    pub fn into_inner(self) -> V {
        self.inner
    }
}

impl<V: Visitor> Visitor for Filtered<'_, V> {
    fn open(&mut self, el: &Elem<'_>) {
        let i = self.next;
        self.next += 1;
        if self.skipping > 0 {
            self.skipping += 1;
            return;
        }
        if self.inside == 0 {
            if i == self.sel.root {
                self.inside = 1;
                self.inner.open(el);
            }
            return;
        }
        let left_out = &self.sel.left_out;
        while self.cursor < left_out.len() && left_out[self.cursor] < i {
            self.cursor += 1;
        }
        if left_out.get(self.cursor) == Some(&i) {
            self.skipping = 1;
            return;
        }
        self.inside += 1;
        self.inner.open(el);
    }

    fn text(&mut self, text: &str) {
        if self.inside > 0 && self.skipping == 0 {
            self.inner.text(text);
        }
    }

    fn close(&mut self, el: &Elem<'_>) {
        if self.skipping > 0 {
            self.skipping -= 1;
        } else if self.inside > 0 {
            self.inside -= 1;
            self.inner.close(el);
        }
    }
}

#[cfg(test)]
#[path = "article_tests.rs"]
mod tests;
