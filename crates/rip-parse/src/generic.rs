//! Generic extraction: what every HTML page has, with no rules.
//!
//! Two walks over the tree. The first reads the head and every link: `<title>`,
//! `<html lang>`, `<base href>`, `<link rel=canonical>`, `<meta name=description>`
//! and `keywords`, and each `<a href>` with its text. The second reads the main
//! content: the first `<main>` (or `[role=main]`) element, or else the `<body>` less
//! its boilerplate (`<header>`, `<nav>`, `<footer>`, `<aside>` and their ARIA
//! roles), giving the headings outline and the text. Links are resolved against the
//! `<base href>` (itself resolved against the page URL) or the page URL.

use ego_tree::NodeRef;
use ego_tree::iter::Edge;
use scraper::{Html, Node};
use serde_json::{Map, Value};
use url::Url;

use crate::dom::{Flow, TextBuf, attr, flow, html_name, is_hidden, node_attr};
use crate::markdown;

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
    pub links: Vec<Link>,
    /// The main content as Markdown, when asked for.
    pub markdown: Option<String>,
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

/// A link of the page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Link {
    /// The `href`, resolved against the base URL.
    pub href: String,
    /// The link's text, whitespace collapsed.
    pub text: String,
    /// The `rel` attribute (e.g. `nofollow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rel: Option<String>,
}

impl Generic {
    /// The doc fields, in output order: `canonical`, `lang`, `description`,
    /// `keywords`, `headings`, `text`, `links`, `markdown`; empty ones left out.
    pub fn into_fields(self) -> Map<String, Value> {
        let mut fields = Map::new();
        let mut put = |k: &str, v: Value| {
            fields.insert(k.to_owned(), v);
        };
        if let Some(c) = self.canonical {
            put("canonical", Value::String(c));
        }
        if let Some(l) = self.lang {
            put("lang", Value::String(l));
        }
        if let Some(d) = self.description {
            put("description", Value::String(d));
        }
        if !self.keywords.is_empty() {
            put(
                "keywords",
                self.keywords.into_iter().map(Value::String).collect(),
            );
        }
        if !self.headings.is_empty() {
            put(
                "headings",
                self.headings
                    .into_iter()
                    .map(|h| {
                        let mut o = Map::new();
                        o.insert("level".into(), Value::from(h.level));
                        o.insert("text".into(), Value::String(h.text));
                        if let Some(id) = h.id {
                            o.insert("id".into(), Value::String(id));
                        }
                        Value::Object(o)
                    })
                    .collect(),
            );
        }
        if !self.text.is_empty() {
            put("text", Value::String(self.text));
        }
        if !self.links.is_empty() {
            put(
                "links",
                self.links
                    .into_iter()
                    .map(|l| {
                        let mut o = Map::new();
                        o.insert("href".into(), Value::String(l.href));
                        o.insert("text".into(), Value::String(l.text));
                        if let Some(rel) = l.rel {
                            o.insert("rel".into(), Value::String(rel));
                        }
                        Value::Object(o)
                    })
                    .collect(),
            );
        }
        if let Some(md) = self.markdown {
            put("markdown", Value::String(md));
        }
        fields
    }
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

/// The content region: the first `<main>` or `[role=main]`, else `<body>`, else the
/// document. `true` when boilerplate must be skipped inside it (no main element).
pub fn content_root(html: &Html) -> (NodeRef<'_, Node>, bool) {
    let mut body = None;
    let mut role_main = None;
    for node in html.tree.root().descendants() {
        match html_name(&node) {
            Some("main") => return (node, false),
            Some("body") if body.is_none() => body = Some(node),
            Some(_) if role_main.is_none() && node_attr(&node, "role") == Some("main") => {
                role_main = Some(node);
            }
            _ => {}
        }
    }
    match (role_main, body) {
        (Some(m), _) => (m, false),
        (None, Some(b)) => (b, true),
        (None, None) => (html.tree.root(), true),
    }
}

/// Boilerplate outside a main element: site header, navigation, footer, sidebars.
pub fn is_boilerplate(name: &str, node: &NodeRef<'_, Node>) -> bool {
    matches!(name, "header" | "nav" | "footer" | "aside")
        || matches!(
            node_attr(node, "role"),
            Some("banner" | "navigation" | "contentinfo" | "complementary" | "search")
        )
}

/// Navigation inside a main element (skipped in text either way).
fn is_nav(name: &str, node: &NodeRef<'_, Node>) -> bool {
    name == "nav" || node_attr(node, "role") == Some("navigation")
}

fn is_canonical(rel: Option<&str>) -> bool {
    rel.is_some_and(|r| {
        r.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case("canonical"))
    })
}

/// Elements whose text is never content.
fn is_script(name: &str) -> bool {
    matches!(name, "script" | "style" | "template")
}

struct RawLink<'a> {
    href: &'a str,
    text: TextBuf,
    rel: Option<&'a str>,
}

/// The first walk: the head fields (the first of each) and every `<a href>` with its
/// text, as written in the page (nothing resolved yet).
#[derive(Default)]
struct HeadAndLinks<'a> {
    title: Option<String>,
    lang: Option<String>,
    base_href: Option<String>,
    canonical: Option<String>,
    description: Option<String>,
    keywords: Option<String>,
    links: Vec<RawLink<'a>>,
    /// The links the walk is inside of (nested `<a>` is possible in a parsed tree).
    open_links: Vec<usize>,
    /// How deep the walk is in script, style and template elements.
    hidden: usize,
}

impl<'a> HeadAndLinks<'a> {
    fn read(html: &'a Html) -> Self {
        let mut walk = Self::default();
        for edge in html.tree.root().traverse() {
            match edge {
                Edge::Open(node) => walk.open(node),
                Edge::Close(node) => walk.close(&node),
            }
        }
        walk
    }

    fn open(&mut self, node: NodeRef<'a, Node>) {
        match node.value() {
            Node::Element(el) => {
                let Some(name) = html_name(&node) else { return };
                if is_script(name) {
                    self.hidden += 1;
                    return;
                }
                self.element(name, el, node);
                if !self.open_links.is_empty() {
                    let f = flow(name);
                    for &i in &self.open_links {
                        self.links[i].text.brk(f);
                    }
                }
            }
            Node::Text(t) if self.hidden == 0 => {
                for &i in &self.open_links {
                    self.links[i].text.push(t);
                }
            }
            _ => {}
        }
    }

    /// Takes in what an element holds: a head field, or a link.
    fn element(&mut self, name: &str, el: &'a scraper::node::Element, node: NodeRef<'a, Node>) {
        match name {
            "html" if self.lang.is_none() => {
                self.lang = attr(el, "lang")
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned);
            }
            "title" if self.title.is_none() => {
                let t = crate::dom::text_of_node(node, &|_, _| false);
                self.title = Some(t).filter(|t| !t.is_empty());
            }
            "base" if self.base_href.is_none() => {
                self.base_href = attr(el, "href").map(str::to_owned);
            }
            "link" if self.canonical.is_none() && is_canonical(attr(el, "rel")) => {
                self.canonical = attr(el, "href").map(str::to_owned);
            }
            "meta" => self.meta(el),
            "a" => {
                if let Some(href) = attr(el, "href") {
                    self.open_links.push(self.links.len());
                    self.links.push(RawLink {
                        href,
                        text: TextBuf::default(),
                        rel: attr(el, "rel"),
                    });
                }
            }
            _ => {}
        }
    }

    /// `<meta name=description>` and `<meta name=keywords>`, the first of each.
    fn meta(&mut self, el: &scraper::node::Element) {
        let which = attr(el, "name").map(str::to_ascii_lowercase);
        let content = attr(el, "content").map(|c| c.trim().to_owned());
        match which.as_deref() {
            Some("description") if self.description.is_none() => self.description = content,
            Some("keywords") if self.keywords.is_none() => self.keywords = content,
            _ => {}
        }
    }

    fn close(&mut self, node: &NodeRef<'a, Node>) {
        let Some(name) = html_name(node) else { return };
        if is_script(name) {
            self.hidden -= 1;
        } else if name == "a" && node_attr(node, "href").is_some() {
            self.open_links.pop();
        }
    }
}

/// Extracts the generic fields of a parsed page.
pub fn extract(html: &Html, page_url: &Url, with_markdown: bool) -> Generic {
    let walk = HeadAndLinks::read(html);
    let base = walk
        .base_href
        .and_then(|h| page_url.join(h.trim()).ok())
        .unwrap_or_else(|| page_url.clone());
    let (root, skip_boilerplate) = content_root(html);
    let (headings, text) = outline_and_text(root, skip_boilerplate);
    let markdown = with_markdown
        .then(|| main_markdown(root, &base, skip_boilerplate))
        .filter(|md| !md.is_empty());
    Generic {
        title: walk.title,
        canonical: walk
            .canonical
            .and_then(|c| base.join(c.trim()).ok())
            .map(String::from),
        lang: walk.lang,
        description: walk.description.filter(|d| !d.is_empty()),
        keywords: walk
            .keywords
            .iter()
            .flat_map(|k| k.split(','))
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(str::to_owned)
            .collect(),
        headings,
        text,
        links: resolve_links(walk.links, &base),
        markdown,
    }
}

/// The links resolved against `base` (those that do not resolve left out).
fn resolve_links(links: Vec<RawLink<'_>>, base: &Url) -> Vec<Link> {
    links
        .into_iter()
        .filter_map(|l| {
            Some(Link {
                href: base.join(l.href.trim()).ok()?.into(),
                text: l.text.finish(),
                rel: l.rel.filter(|r| !r.trim().is_empty()).map(str::to_owned),
            })
        })
        .collect()
}

/// The content region as Markdown, boilerplate (or only navigation, inside a main
/// element) skipped.
fn main_markdown(root: NodeRef<'_, Node>, base: &Url, skip_boilerplate: bool) -> String {
    let skip: &dyn Fn(&str, &NodeRef<'_, Node>) -> bool = if skip_boilerplate {
        &is_boilerplate
    } else {
        &is_nav
    };
    markdown::convert(root, base, skip)
}

/// The headings (`{level, text, id?}`) and the text of the content region.
fn outline_and_text(root: NodeRef<'_, Node>, skip_boilerplate: bool) -> (Vec<Heading>, String) {
    let mut text = TextBuf::default();
    let mut headings = Vec::new();
    let mut heading: Option<(u8, Option<String>, TextBuf)> = None;
    let mut skipping = 0usize;
    for edge in root.traverse() {
        match edge {
            Edge::Open(node) => {
                if let Some(name) = html_name(&node) {
                    if skipping > 0
                        || is_hidden(name, &node)
                        || is_nav(name, &node)
                        || (skip_boilerplate && is_boilerplate(name, &node))
                    {
                        skipping += 1;
                        continue;
                    }
                    let f = flow(name);
                    text.brk(f);
                    if name == "pre" {
                        text.pre += 1;
                    }
                    if let Some(level) = heading_level(name) {
                        let id = node_attr(&node, "id").map(str::to_owned);
                        heading = Some((level, id, TextBuf::default()));
                    } else if let Some((_, _, h)) = heading.as_mut() {
                        h.brk(if f == Flow::Block { Flow::Cell } else { f });
                    }
                } else if skipping == 0
                    && let Node::Text(t) = node.value()
                {
                    text.push(t);
                    if let Some((_, _, h)) = heading.as_mut() {
                        h.push(t);
                    }
                }
            }
            Edge::Close(node) => {
                if let Some(name) = html_name(&node) {
                    if skipping > 0 {
                        skipping -= 1;
                        continue;
                    }
                    text.brk(flow(name));
                    if name == "pre" {
                        text.pre -= 1;
                    }
                    if heading_level(name).is_some()
                        && let Some((level, id, h)) = heading.take()
                    {
                        let text = h.finish();
                        if !text.is_empty() {
                            headings.push(Heading { level, text, id });
                        }
                    }
                }
            }
        }
    }
    (headings, text.finish())
}

fn heading_level(name: &str) -> Option<u8> {
    match name {
        "h1" => Some(1),
        "h2" => Some(2),
        "h3" => Some(3),
        "h4" => Some(4),
        "h5" => Some(5),
        "h6" => Some(6),
        _ => None,
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
    fn without_main_the_boilerplate_is_skipped() {
        let g = generic(
            "<body><header>Site</header><nav>Menu</nav><div role=navigation>More</div>\
             <article><h2>Post</h2><p>Body</p></article><aside>Ads</aside><footer>©</footer>",
            "http://h/",
        );
        let f = Value::Object(g.1);
        assert_eq!(f["text"], "Post\nBody");
        assert!(g.0.is_none());
        assert!(f.get("links").is_none());
    }
}
