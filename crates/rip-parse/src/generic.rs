//! Generic extraction: what every HTML page has, with no rules.
//!
//! Two walks over the tree. The first reads the head and every link: `<title>`,
//! `<html lang>`, `<base href>`, `<link rel=canonical>`, `<meta name=description>`
//! and `keywords`, and each `<a href>` with its text; it also outlines the page's
//! elements (`outline`), from which `article` picks the main content, and the
//! metadata and structured data ([`meta`]: JSON-LD, OpenGraph, microdata, …). The second
//! reads that content, giving the headings outline and the text: the article, or on
//! a page that is none, the first `<main>` (or `[role=main]`) element, or else the
//! `<body>` less its boilerplate (`<header>`, `<nav>`, `<footer>`, `<aside>` and
//! their ARIA roles). Links are resolved against the
//! `<base href>` (itself resolved against the page URL) or the page URL.

mod agree;
mod article;
mod content;
mod head;
mod links;
pub mod meta;
mod outline;

use std::time::Instant;

use ego_tree::NodeRef;
use scraper::{Html, Node};
use serde_json::{Map, Value};
use url::Url;

use crate::dom::{ParseLimits, Skip, html_name, node_attr};
use crate::stream::{self, Bail};
use crate::visit::{Elem, Visitor, walk_tree};
pub use agree::{Agreement, streaming_agrees};
use content::{ContentFields, Regions};
use head::HeadAndLinks;
pub use links::{Link, Links};
use meta::{Meta, PageFacts};

/// What generic extraction found on a page: plain strings, so that the page's DOM
/// can be dropped before they are turned into JSON values ([`Generic::into_fields`]).
#[derive(Debug, Default)]
pub struct Generic {
    /// The `<title>`, whitespace collapsed (the doc's `name`).
    pub title: Option<String>,
    /// `<link rel=canonical>`, resolved.
    pub canonical: Option<String>,
    /// `<html lang>`.
    pub lang: Option<String>,
    /// `<meta name=description>`.
    pub description: Option<String>,
    /// `<meta name=keywords>`, split at commas.
    pub keywords: Vec<String>,
    /// The headings of the main content.
    pub headings: Vec<Heading>,
    /// The main content's text.
    pub text: String,
    /// Every `<a href>` of the page, resolved.
    pub links: Links,
    /// The main content as Markdown, when asked for.
    pub markdown: Option<String>,
    /// How the main content was found: the region and why (`contentFrom`).
    pub content_from: Option<String>,
    /// The metadata and structured data ([`meta`]).
    pub meta: Meta,
}

/// A heading of the outline.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Heading {
    /// 1 to 6.
    pub level: u8,
    /// Its text.
    pub text: String,
    /// Its `id`, the target of `#fragment` links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Generic {
    /// The doc fields, in output order: `canonical`, `lang`, `description`,
    /// `keywords`, the metadata ([`Meta::put_into`]: `headline` … `structured`),
    /// `headings`, `text`, `links`, `markdown`; empty ones left out but
    /// `links`, which is `[]` on a page without links (so that `.links[]` reads every doc).
    pub fn into_fields(self) -> Map<String, Value> {
        let mut fields = Map::new();
        let put = |fields: &mut Map<String, Value>, k: &str, v: Value| {
            fields.insert(k.to_owned(), v);
        };
        if let Some(c) = self.canonical {
            put(&mut fields, "canonical", Value::String(c));
        }
        if let Some(l) = self.lang {
            put(&mut fields, "lang", Value::String(l));
        }
        if let Some(d) = self.description {
            put(&mut fields, "description", Value::String(d));
        }
        if !self.keywords.is_empty() {
            put(
                &mut fields,
                "keywords",
                self.keywords.into_iter().map(Value::String).collect(),
            );
        }
        self.meta.put_into(&mut fields);
        if let Some(from) = self.content_from {
            fields.insert("contentFrom".into(), Value::String(from));
        }
        if !self.headings.is_empty() {
            put(&mut fields, "headings", headings_value(self.headings));
        }
        if !self.text.is_empty() {
            put(&mut fields, "text", Value::String(self.text));
        }
        put(&mut fields, "links", links_value(&self.links));
        if let Some(md) = self.markdown {
            put(&mut fields, "markdown", Value::String(md));
        }
        fields
    }

    /// The doc fields without `headings` and `links`, and those two, typed. A page's links
    /// can be most of its doc (74,411 on the largest page of the Rust documentation), and
    /// as JSON values each is a map of its own: about 475 bytes a link against 150 typed,
    /// 35 MB on that page; each heading as a map costs its allocations and hashing too.
    /// The stage writes them typed, in their place ([`Typed::put_into`] puts them back
    /// where a doc must be whole, for a schema).
    pub fn into_fields_and_typed(mut self) -> (Map<String, Value>, Typed) {
        let typed = Typed {
            headings: std::mem::take(&mut self.headings),
            links: Some(std::mem::take(&mut self.links)),
        };
        let mut fields = self.into_fields();
        fields.shift_remove("links"); // `[]`: the typed links are written in its place
        (fields, typed)
    }
}

/// The fields of a generic doc kept typed until the doc is written:
/// [`Generic::into_fields_and_typed`].
#[derive(Debug, Default)]
pub struct Typed {
    /// The `headings` (`[]`: none).
    pub headings: Vec<Heading>,
    /// The `links` of a generic doc, written even when empty (`[]`); `None` for a doc
    /// that has no `links` field (a rules doc).
    pub links: Option<Links>,
}

impl Typed {
    /// Puts the fields into `fields` where [`Generic::into_fields`] puts them: `headings`
    /// before `text`, `links` and `markdown`, `links` before `markdown`.
    pub fn put_into(self, fields: &mut Map<String, Value>) {
        let has_headings = !self.headings.is_empty();
        if !has_headings && self.links.is_none() {
            return;
        }
        let markdown = fields.shift_remove("markdown");
        let text = if has_headings {
            fields.shift_remove("text")
        } else {
            None
        };
        if has_headings {
            fields.insert("headings".into(), headings_value(self.headings));
        }
        if let Some(text) = text {
            fields.insert("text".into(), text);
        }
        if let Some(links) = &self.links {
            fields.insert("links".into(), links_value(links));
        }
        if let Some(md) = markdown {
            fields.insert("markdown".into(), md);
        }
    }
}

/// Headings as the doc's `headings` value, as their `Serialize` writes them (their
/// strings moved, not copied as `serde_json::to_value` would).
fn headings_value(headings: Vec<Heading>) -> Value {
    let heading = |h: Heading| {
        let mut m = Map::new();
        m.insert("level".into(), Value::from(h.level));
        m.insert("text".into(), Value::String(h.text));
        if let Some(id) = h.id {
            m.insert("id".into(), Value::String(id));
        }
        Value::Object(m)
    };
    Value::Array(headings.into_iter().map(heading).collect())
}

/// Links as the doc's `links` value.
pub fn links_value(links: &Links) -> Value {
    values(&links.iter().collect::<Vec<_>>())
}

/// Links as JSON: their fields in declaration order, empty options left out.
fn values<T: serde::Serialize>(items: &[T]) -> Value {
    serde_json::to_value(items).expect("headings and links serialise")
}

/// The URL relative references resolve against: `<base href>` resolved against the
/// page URL, or the page URL.
pub fn base_url(html: &Html, page_url: &Url) -> Url {
    for node in html.tree.root().descendants() {
        if html_name(&node) == Some("base")
            && let Some(href) = node_attr(&node, "href")
            && let Ok(base) = page_url.join(href.trim())
        {
            return base;
        }
    }
    page_url.clone()
}

/// The `href` of the first `<base>` that has one (what generic extraction resolves
/// against, as [`HeadAndLinks`] reads it).
fn first_base_href(html: &Html) -> Option<&str> {
    html.tree
        .root()
        .descendants()
        .filter(|n| html_name(n) == Some("base"))
        .find_map(|n| node_attr(&n, "href"))
}

/// The content region: the first `<main>` or `[role=main]`, else `<body>`, else the
/// document, with what its text leaves out besides hidden elements: boilerplate in a
/// body, navigation in a main element.
pub fn content_root(html: &Html) -> (NodeRef<'_, Node>, Skip) {
    let mut body = None;
    let mut role_main = None;
    for node in html.tree.root().descendants() {
        match html_name(&node) {
            Some("main") => return (node, Skip::Nav),
            Some("body") if body.is_none() => body = Some(node),
            Some(_) if role_main.is_none() && node_attr(&node, "role") == Some("main") => {
                role_main = Some(node);
            }
            _ => {}
        }
    }
    match (role_main, body) {
        (Some(m), _) => (m, Skip::Nav),
        (None, Some(b)) => (b, Skip::Boilerplate),
        (None, None) => (html.tree.root(), Skip::Boilerplate),
    }
}

/// Extracts the generic fields of a parsed page.
pub fn extract(html: &Html, page_url: &Url, with_markdown: bool) -> Generic {
    let base = resolve_base(first_base_href(html), page_url);
    let mut head = HeadAndLinks::new(&base);
    walk_tree(html.tree.root(), &mut head);
    debug_assert_eq!(head.base_href.as_deref(), first_base_href(html));
    let content = content::read_tree(html, with_markdown.then(|| base.clone()));
    assemble(head, content, &base)
}

/// Extracts the generic fields of a page in one streaming pass, with no tree
/// ([`crate::stream`]); an error when the page needs a tree to be read right.
pub fn extract_streaming(
    text: &str,
    page_url: &Url,
    with_markdown: bool,
    limits: ParseLimits,
) -> Result<Generic, Bail> {
    let mut walk = GenericWalk::new(page_url, with_markdown);
    // Links' strings are about a quarter of a page (the Rust documentation's: 8 KB of
    // 28): room for them at once, not grown by doubling (a copy of them, and the memory
    // of both, at each step).
    walk.head.links.reserve(text.len() / 4);
    // The content's text is about a twelfth of a page (a tenth or less for nine pages in
    // ten of the Rust documentation): room for an eighth at once.
    walk.regions.reserve_text(text.len() / 8);
    stream::walk(text, limits, &mut walk)?;
    walk.finish(text, limits)
}

/// Generic extraction as a visitor of the streaming pass: the head and links, and
/// the candidate content regions.
pub struct GenericWalk<'u> {
    head: HeadAndLinks,
    regions: Regions,
    page_url: &'u Url,
    base: Url,
    markdown: bool,
    late_base: bool,
    /// When the walk began: the page's reading, first pass and second, has one time
    /// allowance.
    started: Instant,
}

impl<'u> GenericWalk<'u> {
    /// A walk over a page served from `page_url`, with Markdown when `with_markdown`.
    pub fn new(page_url: &'u Url, with_markdown: bool) -> Self {
        Self {
            head: HeadAndLinks::new(page_url),
            regions: Regions::new(with_markdown.then(|| page_url.clone())),
            page_url,
            base: page_url.clone(),
            markdown: with_markdown,
            late_base: false,
            started: Instant::now(),
        }
    }

    /// The fields read from `text`, the page walked (read again when its main content
    /// is not the region read on the way, within what is left of `limits`' time budget
    /// since the walk began); an error when the page turned out to need a tree.
    pub fn finish(self, text: &str, limits: ParseLimits) -> Result<Generic, Bail> {
        if self.late_base {
            return Err(Bail("a <base> after a link or the content began"));
        }
        let left = ParseLimits {
            time_budget: limits.time_budget.saturating_sub(self.started.elapsed()),
            ..limits
        };
        let content = self.regions.finish(text, left)?.ok_or(Bail("no body"))?;
        Ok(assemble(self.head, content, &self.base))
    }
}

impl Visitor for GenericWalk<'_> {
    fn open(&mut self, el: &Elem<'_>) {
        let had_base = self.head.base_href.is_some();
        self.head.open(el);
        if !had_base && let Some(href) = self.head.base_href.as_deref() {
            self.base = resolve_base(Some(href), self.page_url);
            // Links read so far resolved against the page URL; Markdown too.
            self.late_base |= self.head.links_seen > 0 || (self.markdown && self.regions.begun());
            self.head.base = crate::resolve::Resolver::new(&self.base);
            self.head.meta.base = crate::resolve::Resolver::new(&self.base);
            if self.markdown {
                self.regions.markdown_base(&self.base);
            }
        }
        self.regions.open(el);
    }

    fn text(&mut self, text: &str) {
        self.head.text(text);
        self.regions.text(text);
    }

    fn close(&mut self, el: &Elem<'_>) {
        self.head.close(el);
        self.regions.close(el);
    }
}

fn resolve_base(href: Option<&str>, page_url: &Url) -> Url {
    href.and_then(|h| page_url.join(h.trim()).ok())
        .unwrap_or_else(|| page_url.clone())
}

/// The doc's generic fields from what the two halves read.
fn assemble(mut head: HeadAndLinks, content: ContentFields, base: &Url) -> Generic {
    let links = head.finish_links();
    let description = head.description.filter(|d| !d.is_empty());
    let place = |h1, at| meta::place(&content.outline, &content.selection, h1, at);
    let facts = PageFacts {
        place: &place,
        title: head.title.as_deref(),
        description: description.as_deref(),
        text: &content.text,
        base,
    };
    let meta = meta::pick(head.meta, &facts);
    Generic {
        title: head.title,
        canonical: head
            .canonical
            .and_then(|c| crate::resolve::join(base, c.trim())),
        lang: head.lang,
        description,
        keywords: head
            .keywords
            .iter()
            .flat_map(|k| k.split(','))
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(str::to_owned)
            .collect(),
        headings: content.headings,
        text: content.text,
        links,
        markdown: content.markdown,
        content_from: Some(content.from),
        meta,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::{ParseLimits, parse};
    use serde_json::json;

    fn generic(html: &str, url: &str) -> (Option<String>, Map<String, Value>) {
        let doc = parse(html, ParseLimits::default()).unwrap();
        let mut g = extract(&doc, &Url::parse(url).unwrap(), false);
        (g.title.take(), g.into_fields())
    }

    #[test]
    fn head_fields_links_and_main_text() {
        let g = generic(
            r#"<html lang="en"><head><title> A
            page </title><base href="/spells/"><link rel="Canonical" href="/x.html">
            <meta name="Description" content=" About it. "><meta name="keywords" content="a, b,,c">
            </head><body><nav><a href="/">Home</a></nav>
            <main><h1 id="t">Title <small>x</small></h1><p>One <a href="19.html#h" rel="nofollow">Magic
            Missile</a>.</p><nav>skip me</nav><h2>Sub</h2><p>Two</p></main>
            <footer><a href="mailto:x@y.z">mail</a></footer></body></html>"#,
            "http://h/blog/post.html",
        );
        assert_eq!(g.0.as_deref(), Some("A page"));
        let f = Value::Object(g.1);
        assert_eq!(f["canonical"], "http://h/x.html");
        assert_eq!(f["lang"], "en");
        assert_eq!(f["description"], "About it.");
        assert_eq!(f["keywords"], json!(["a", "b", "c"]));
        assert_eq!(
            f["headings"],
            json!([{"level":1,"text":"Title x","id":"t"},{"level":2,"text":"Sub"}])
        );
        assert_eq!(f["text"], "Title x\nOne Magic Missile.\nSub\nTwo");
        assert_eq!(
            f["links"],
            json!([
                {"href":"http://h/","text":"Home"},
                {"href":"http://h/spells/19.html#h","text":"Magic Missile","rel":"nofollow"},
                {"href":"mailto:x@y.z","text":"mail"}
            ])
        );
    }

    #[test]
    fn each_heading_has_its_own_text_though_their_buffer_is_reused() {
        let g = generic(
            r#"<main><h2>A long first heading</h2><p>x</p><h3><pre> pre  kept </pre></h3>
            <h4> </h4><h2>B <b>c</b></h2><h2>D</h2></main>"#,
            "http://h/",
        );
        assert_eq!(
            Value::Object(g.1)["headings"],
            json!([
                {"level":2,"text":"A long first heading"},
                {"level":3,"text":"pre kept"},
                {"level":2,"text":"B c"},
                {"level":2,"text":"D"}
            ])
        );
    }

    #[test]
    fn headings_are_the_json_their_serialize_writes() {
        let headings = vec![
            Heading {
                level: 1,
                text: "T \"x\"".into(),
                id: Some("t".into()),
            },
            Heading {
                level: 6,
                text: "U".into(),
                id: None,
            },
        ];
        let want = serde_json::to_value(&headings).unwrap();
        let got = headings_value(headings);
        assert_eq!(got.to_string(), want.to_string());
    }

    #[test]
    fn the_candidate_regions_are_read_side_by_side_in_one_pass() {
        // The body from its start and a role=main element from its own are read at once
        // (each its own events); the one picked gives the text: a <main> ends the others.
        let url = Url::parse("http://h/").unwrap();
        for (html, text) in [
            (
                "<body>a<nav>n</nav><div role=main>b<nav>m</nav></div>c",
                "b",
            ),
            ("<body>a<div>b</div><aside>x</aside>c", "a\nb\nc"),
            (
                "<body>a<div role=main>b</div>c<main>d<nav>n</nav></main>e",
                "d",
            ),
            ("<body>a<main>d</main><div role=main>b</div>", "d"),
        ] {
            let g = extract_streaming(html, &url, false, ParseLimits::default()).unwrap();
            assert_eq!(g.text, text, "{html}");
        }
    }

    #[test]
    fn an_article_read_twice_has_one_time_allowance() {
        // An article inside a body with a menu: its second pass reads the article alone.
        let para = "<p>Words of the article, many words, and more of them, to make it one.</p>";
        let menu = "<li><a href=/x>Item</a></li>".repeat(2_000);
        let html = format!(
            "<body><ul class=menu>{menu}</ul><div class=story>{}</div></body>",
            para.repeat(40)
        );
        let url = Url::parse("http://h/").unwrap();
        let limits = ParseLimits {
            time_budget: std::time::Duration::from_secs(2),
            ..ParseLimits::default()
        };
        let first_pass = || {
            let mut walk = GenericWalk::new(&url, false);
            stream::walk(&html, limits, &mut walk).unwrap();
            walk
        };
        let g = first_pass().finish(&html, limits).unwrap();
        assert!(g.content_from.unwrap().contains("article"), "a second pass");
        // The first pass's time counts against the second's: none is left.
        let walk = first_pass();
        std::thread::sleep(limits.time_budget + std::time::Duration::from_millis(100));
        assert_eq!(walk.finish(&html, limits).err(), Some(Bail::TOO_SLOW));
    }

    #[test]
    fn without_main_the_boilerplate_is_skipped() {
        let g = generic(
            "<body><header>Site</header><nav>Menu</nav><div role=navigation>More</div>\
             <article><h2>Post</h2><p>Body</p></article><aside>Ads</aside><footer>©</footer>",
            "http://h/",
        );
        let f = Value::Object(g.1);
        assert_eq!(f["text"], "Post\nBody");
        assert!(g.0.is_none());
        assert_eq!(
            f["links"],
            serde_json::json!([]),
            "[] on a page without links"
        );
    }
}
