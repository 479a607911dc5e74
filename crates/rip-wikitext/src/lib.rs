//! Wikitext to a structured page: what wtf_wikipedia gives the reference implementation.
//!
//! ```
//! let page = rip_wikitext::parse(
//!     "Ash Wyrm",
//!     "{{Infobox creature\n| name = Ash Wyrm\n| hit_points = {{Nowrap|1,200}}\n\
//!      | habitat = [[Cinder Wastes|the Wastes]]<ref>Bestiary, p. 3</ref>\n}}\n\
//!      The '''Ash Wyrm''' is a [[dragon]].\n== Behaviour ==\nIt sleeps.\n\
//!      [[Category:Dragons|Ash]]",
//! );
//! let infobox = page.infobox.as_ref().unwrap();
//! assert_eq!(infobox.kind(), "creature");
//! assert_eq!(page.infobox_field("habitat"), Some("the Wastes"));
//! assert_eq!(page.infobox_number("hit_points"), Some(1200.0));
//! assert_eq!(page.sections[1].title, "Behaviour");
//! assert_eq!(page.categories, ["Dragons"]);
//! assert_eq!(page.text, "The Ash Wyrm is a dragon.\n\nIt sleeps.");
//! ```
//!
//! # What it does
//! - **Infobox**: the first template whose name starts with `Infobox` (in document order,
//!   looking inside other templates too). Its parameters become a flat map, key → text:
//!   nested templates and links reduced to the text they display, references and comments
//!   dropped, markup stripped. The raw wikitext of each value is kept beside it.
//! - **Sections**: the lead (level 0, no title), then one per heading line (`== … ==` is level
//!   2), each with its raw wikitext and its plain text.
//! - **Categories** (`[[Category:X|sort key]]` → `X`), **links** (`[[a|b]]`, `[[a]]`,
//!   `[[:Category:X]]`), **external links** (`[https://… label]`), **references**
//!   (`<ref name=…>…</ref>`; a reused `<ref name=…/>` adds none), the **redirect** target.
//! - **Plain text**: the sections' text, without infoboxes, tables, references, categories,
//!   files and comments.
//!
//! # How
//! A focused parser, linear in the input: a MediaWiki-style preprocessor pass builds the
//! tree of templates, arguments, links, comments and extension tags (bracket matching with a
//! stack, MediaWiki's brace-counting rule, unclosed brackets kept as text), then a render
//! pass reduces templates with a small table of what common templates display (`nowrap`,
//! `convert`, `lang`, `cite …`, `as of`, parser functions like `#if`, hatnotes and
//! maintenance templates display nothing; any other template displays its positional
//! parameters), and a last pass strips inline markup and decodes entities (html-escape).
//! Nesting deeper than 40 brackets is kept as text, so no input can exhaust the stack, and
//! no input makes it panic (property-tested).
//!
//! Why not parse-wiki-text-2 (the only maintained wikitext parser for Rust): it parses the
//! constructs above well, but it backtracks on unclosed brackets, so 200 unclosed `{{a|`
//! take its whole 5-second time limit and then return no parse at all (its own test of that
//! case is `#[ignore]`d). Pages come from the network: a parse that hostile or merely
//! broken text can stall, with nothing to fall back on, would need this parser anyway.
//!
//! # Limits
//! Templates are not expanded here (the wiki is not asked what they display), so a
//! template's text from the table is only a guess for a given wiki: [`template_calls`] lists
//! the calls of a value for the wiki to expand, and [`expanded_text`] renders the value with
//! the wiki's answers (what rip-fetch and rip-parse do for infobox values). English
//! namespace names only (`Category`, `File`, `Image`, `Media`). Inline markup inside
//! `<nowiki>` is stripped like any other.

#![deny(missing_docs)]

mod collect;
mod expand;
mod inline;
mod number;
mod preprocess;
mod render;
mod sections;
mod title;

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

pub use expand::{expanded_text, template_calls, value_text};
pub use number::parse_number;
pub use title::normalize_title;

use preprocess::Node;
use render::Renderer;

/// A parsed wiki page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// The title given to [`parse`].
    pub title: String,
    /// Where a `#REDIRECT [[…]]` page points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect: Option<Link>,
    /// The first infobox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub infobox: Option<Infobox>,
    /// The lead section (level 0), then one per heading, in order.
    pub sections: Vec<Section>,
    /// Category names (without `Category:`), in order, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    /// Links to other pages, in order (a page linked twice appears twice).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Link>,
    /// `[url label]` links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub external_links: Vec<ExternalLink>,
    /// `<ref>` contents, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<Reference>,
    /// The plain text of all sections, paragraphs separated by an empty line.
    pub text: String,
}

/// An infobox: the template's name and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Infobox {
    /// The template's name as written, tidied (`Infobox creature`).
    pub template: String,
    /// Parameter → its text. Positional parameters are keyed `1`, `2`, …
    pub fields: IndexMap<String, String>,
    /// Parameter → its raw wikitext, trimmed.
    pub wikitext: IndexMap<String, String>,
}

/// One section: the lead, or a heading and what follows it up to the next heading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// The heading's text (empty for the lead).
    pub title: String,
    /// 0 for the lead, else the number of `=` (`== A ==` is 2).
    pub level: u8,
    /// The section's wikitext without its heading line, trimmed.
    pub wikitext: String,
    /// Its plain text.
    pub text: String,
}

/// A link to a page of the wiki.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    /// The page, in normal form ([`normalize_title`]).
    pub target: String,
    /// The part after `#`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragment: Option<String>,
    /// The text shown.
    pub text: String,
}

/// An external link `[url label]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExternalLink {
    /// As written.
    pub url: String,
    /// The label (empty for `[url]`).
    pub text: String,
}

/// A reference (`<ref>…</ref>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// Its `name` attribute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its text.
    pub text: String,
}

/// Parses a page's wikitext. Never fails: whatever cannot be parsed stays text.
pub fn parse(title: &str, wikitext: &str) -> Page {
    let root = preprocess::preprocess(wikitext);
    let r = Renderer {
        src: wikitext,
        title,
    };
    let mut found = collect::Collected::default();
    collect::collect(&r, &root, &mut found);
    let infobox = find_infobox(&r, &root);
    let sections = split_sections(&r, &root);
    let text = sections
        .iter()
        .map(|s| s.text.as_str())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    Page {
        title: title.to_owned(),
        redirect: redirect(&r, &root),
        infobox,
        sections,
        categories: found.categories,
        links: found.links,
        external_links: found.external_links,
        references: found.references,
        text,
    }
}

impl Page {
    /// The text of an infobox field (see [`Infobox::field`]).
    pub fn infobox_field(&self, key: &str) -> Option<&str> {
        self.infobox.as_ref()?.field(key)
    }

    /// The number in an infobox field (see [`Infobox::number`]).
    pub fn infobox_number(&self, key: &str) -> Option<f64> {
        self.infobox.as_ref()?.number(key)
    }

    /// The section with this title (case-insensitive).
    pub fn section(&self, title: &str) -> Option<&Section> {
        self.sections
            .iter()
            .find(|s| s.title.to_lowercase() == title.to_lowercase())
    }
}

impl Infobox {
    /// What the infobox is about: the template name after `Infobox`, lower-case (`creature`).
    pub fn kind(&self) -> String {
        let name = self.template.trim();
        let rest = if name.len() >= 7 && name.as_bytes()[..7].eq_ignore_ascii_case(b"infobox") {
            &name[7..]
        } else {
            name
        };
        rest.trim().to_lowercase()
    }

    /// The text of a field, `None` when absent or empty. Keys match ignoring case and treating
    /// `_` and space alike (`hit_points` finds `Hit points`).
    pub fn field(&self, key: &str) -> Option<&str> {
        lookup(&self.fields, key).filter(|v| !v.is_empty())
    }

    /// The raw wikitext of a field.
    pub fn field_wikitext(&self, key: &str) -> Option<&str> {
        lookup(&self.wikitext, key)
    }

    /// The first number in a field's text ([`parse_number`]): `1,200` is 1200.
    pub fn number(&self, key: &str) -> Option<f64> {
        parse_number(self.field(key)?)
    }
}

fn lookup<'m>(map: &'m IndexMap<String, String>, key: &str) -> Option<&'m str> {
    if let Some(v) = map.get(key) {
        return Some(v);
    }
    let want = key_form(key);
    map.iter()
        .find(|(k, _)| key_form(k) == want)
        .map(|(_, v)| v.as_str())
}

fn key_form(key: &str) -> String {
    key.trim().to_lowercase().replace('_', " ")
}

fn find_infobox(r: &Renderer<'_>, nodes: &[Node]) -> Option<Infobox> {
    for node in nodes {
        let Node::Template { parts, .. } = node else {
            continue;
        };
        let call = r.call(parts);
        let name = call.name.replace('_', " ");
        let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
        if name.len() >= 7 && name.as_bytes()[..7].eq_ignore_ascii_case(b"infobox") {
            let mut fields = IndexMap::new();
            let mut wikitext = IndexMap::new();
            for (key, value) in &call.params {
                if key.is_empty() {
                    continue;
                }
                fields.insert(key.clone(), inline::clean_line(&r.render_value(value)));
                wikitext.insert(key.clone(), r.src[value.span.clone()].trim().to_owned());
            }
            return Some(Infobox {
                template: name,
                fields,
                wikitext,
            });
        }
        for part in &parts[1..] {
            if let Some(found) = find_infobox(r, &part.nodes) {
                return Some(found);
            }
        }
    }
    None
}

fn split_sections(r: &Renderer<'_>, root: &[Node]) -> Vec<Section> {
    let src = r.src;
    let heads = sections::headings(src, root);
    let mut out = Vec::with_capacity(heads.len() + 1);
    let first = heads.first().map_or(src.len(), |h| h.line.start);
    out.push(section(r, root, String::new(), 0, 0..first));
    for (k, head) in heads.iter().enumerate() {
        let start = (head.line.end + 1).min(src.len());
        let end = heads
            .get(k + 1)
            .map_or(src.len(), |h| h.line.start)
            .max(start);
        let title_nodes = sections::clip(root, head.inner.clone());
        let title = inline::clean_line(&r.render_string(&title_nodes));
        out.push(section(r, root, title, head.level, start..end));
    }
    out
}

fn section(
    r: &Renderer<'_>,
    root: &[Node],
    title: String,
    level: u8,
    range: std::ops::Range<usize>,
) -> Section {
    let nodes = sections::clip(root, range.clone());
    Section {
        title,
        level,
        wikitext: r.src[range].trim().to_owned(),
        text: inline::clean_block(&r.render_string(&nodes)),
    }
}

/// `#REDIRECT [[Target]]` at the start of the page.
fn redirect(r: &Renderer<'_>, root: &[Node]) -> Option<Link> {
    let mut nodes = root.iter().filter(|n| !matches!(n, Node::Comment(_)));
    let Some(Node::Text(span)) = nodes.next() else {
        return None;
    };
    let head = r.src[span.clone()].trim();
    let rest = head.strip_prefix('#')?;
    if !inline::starts_with_ignore_case(rest, "redirect") {
        return None;
    }
    let after = rest[8..].trim_start_matches([':', ' ', '\t', '\n']);
    if !after.is_empty() {
        return None;
    }
    let Some(Node::Link { parts, .. }) = nodes.next() else {
        return None;
    };
    let target = r.render_string(&parts[0].nodes);
    let (page, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f.trim().to_owned())),
        None => (target.as_str(), None),
    };
    let mut text = String::new();
    r.link(parts, &mut text);
    Some(Link {
        target: normalize_title(page.trim_start_matches(':')),
        fragment: fragment.filter(|f| !f.is_empty()),
        text: inline::clean_line(&text),
    })
}
