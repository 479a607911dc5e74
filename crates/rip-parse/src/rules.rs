//! The rules file: a site's taxonomy of concepts, how pages are routed to them, and
//! how each concept's fields are extracted and validated.
//!
//! A rules file is TOML. Its shape is [`model::RulesFile`], also published as a JSON
//! Schema (`docs/schemas/rules.schema.json`, printed by `rip-parse --rules-schema`).
//! [`Rules::load`] reads and checks a whole file before any input is read: an unknown
//! key, a bad regex, a bad CSS selector, a schema that is not a JSON Schema, a field
//! name the doc reserves, a cycle of `extends` — each is reported as
//! `<file>:<line>:<column>: <concept and field>: <what is wrong> (hint: …)` with the
//! offending line quoted, and every problem in the file is reported at once.
//!
//! ```toml
//! name = "emberfall"
//!
//! [[concept]]
//! name = "entry"
//! abstract = true
//! fields.name = { selector = "h1.name", required = true }
//! fields.traits = { selector = "ul.traits li", list = true }
//!
//! [[concept]]
//! name = "item"
//! extends = "entry"
//! match.url = '/items/item-(?P<id>\d+)\.html$'
//! fields.level = { selector = "dd.level", type = "integer" }
//! fields.priceGp = { selector = "dd.price", regex = '^([\d.]+) gp$', type = "number" }
//! ```
//!
//! A field may read the page's JSON-LD instead of its elements ([`jsonld_path`]):
//! `fields.price = { jsonld = "Product.offers.price", type = "number" }` (see
//! `testdata/parse/rules/shop-jsonld.toml`).

mod compile;
pub mod jsonld_path;
pub mod model;

use jsonschema::Validator;
use regex::Regex;
use scraper::Selector;
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use compile::UNKNOWN;

use crate::stream::select::StreamSelector;
pub use model::{Extract, OnSchemaError, Source, ValueType, WikiValue};

/// Compiled rules, ready to route and extract pages. Cheap to share between threads.
#[derive(Debug)]
pub struct Rules {
    /// The file they came from, for messages.
    pub path: PathBuf,
    /// The routable concepts, in the order they are tried.
    pub concepts: Vec<Concept>,
    /// The fallback for pages no concept takes.
    pub unknown: Concept,
}

/// A compiled concept: its routing conditions and its fields, inheritance resolved.
#[derive(Debug, Clone)]
pub struct Concept {
    /// The concept's name (the doc's `concept`).
    pub name: String,
    /// When a page belongs here (`None` for the `unknown` fallback).
    pub matcher: Option<Matcher>,
    /// Also extract the generic fields.
    pub generic: bool,
    /// The field giving the doc's `id`.
    pub id: Option<Field>,
    /// The field giving the doc's `name`.
    pub name_field: Option<Field>,
    /// The other fields, in output order.
    pub fields: Vec<Field>,
    /// The JSON Schema docs of this concept must satisfy.
    pub schema: Option<Arc<Validator>>,
    /// What a doc breaking the schema becomes.
    pub on_schema_error: OnSchemaError,
}

/// Routing conditions; all that are present must hold.
#[derive(Debug, Clone)]
pub struct Matcher {
    /// The URL must match (a named group `id` may give the doc's id).
    pub url: Option<Regex>,
    /// At least one element must match.
    pub selector: Option<Selector>,
    /// `selector` for the streaming pass, when it can match it.
    pub stream_selector: Option<StreamSelector>,
    /// This text must appear (in a `selector` match, or in the page's text).
    pub text: Option<String>,
    /// MediaWiki: the page is in this category (normalised: first letter upper case,
    /// `_` as space).
    pub category: Option<String>,
    /// MediaWiki: the infobox is of this kind (lower case).
    pub infobox: Option<String>,
}

/// Where a field of a MediaWiki page comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WikiSource {
    /// An infobox parameter's text.
    Infobox(String),
    /// A section's plain text, by heading.
    Section(String),
    /// A value of the whole page.
    Page(WikiValue),
}

/// A compiled field.
#[derive(Debug, Clone)]
pub struct Field {
    /// The output key.
    pub name: String,
    /// Where the value comes from.
    pub source: Source,
    /// The elements to read (for [`Source::Html`]).
    pub selector: Option<Selector>,
    /// `selector` for the streaming pass, when it can match it.
    pub stream_selector: Option<StreamSelector>,
    /// What to read of a MediaWiki page (such a field is missing on HTML pages, and a
    /// `selector` field on wiki pages).
    pub wiki: Option<WikiSource>,
    /// The page's JSON-LD to read instead of elements.
    pub jsonld: Option<jsonld_path::JsonLdPath>,
    /// What to read from each element.
    pub extract: Extract,
    /// The attribute, for [`Extract::Attr`].
    pub attr: Option<String>,
    /// All matches, as an array.
    pub list: bool,
    /// Applied to each value: group `value`, else group 1, else the whole match.
    pub regex: Option<Regex>,
    /// The value's type.
    pub value_type: ValueType,
    /// The value when nothing is found.
    pub default: Option<Value>,
    /// Missing is a failure.
    pub required: bool,
}

/// One problem in a rules file, located.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong, naming the concept and field, with a hint when there is one.
    pub message: String,
    /// The offending source line, for the quote under the message.
    pub source_line: String,
}

/// Why a rules file (or a schema file it names) could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// The file could not be read.
    #[error("cannot read rules file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid rules; every problem found is listed.
    #[error("{}", Problems { path, problems })]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, in file order.
        problems: Vec<Problem>,
    },
}

struct Problems<'a> {
    path: &'a Path,
    problems: &'a [Problem],
}

impl fmt::Display for Problems<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(
                f,
                "{}:{}:{}: {}",
                self.path.display(),
                p.line,
                p.column,
                p.message
            )?;
            let gutter = p.line.to_string().len();
            write!(
                f,
                "\n {:gutter$} |\n {} | {}\n {:gutter$} | {:>col$}",
                "",
                p.line,
                p.source_line,
                "",
                "^",
                col = p.column
            )?;
        }
        if n > 1 {
            write!(f, "\n{n} problems in {}", self.path.display())?;
        }
        Ok(())
    }
}

impl RulesError {
    /// The problems found, empty when the file could not be read.
    pub fn problems(&self) -> &[Problem] {
        match self {
            Self::Read { .. } => &[],
            Self::Invalid { problems, .. } => problems,
        }
    }
}

impl Rules {
    /// Reads and compiles a rules file. Schema files it names are read relative to it.
    pub fn load(path: &Path) -> Result<Self, RulesError> {
        let text = std::fs::read_to_string(path).map_err(|source| RulesError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Compiles rules from text; `path` names them in messages and anchors relative
    /// schema files.
    pub fn parse(text: &str, path: &Path) -> Result<Self, RulesError> {
        compile::compile(text, path)
    }

    /// The concept a page belongs to. `url` is the page's URL; `page` gives the parsed
    /// document and, lazily, its text.
    pub fn route(&self, url: &str, page: &mut crate::extract::PageView<'_>) -> &Concept {
        self.concepts
            .iter()
            .find(|c| c.matcher.as_ref().is_some_and(|m| m.matches(url, page)))
            .unwrap_or(&self.unknown)
    }

    /// The concepts a page at `url` may belong to, in the order they are tried, when
    /// every one of them can be read in the streaming pass: those whose URL condition
    /// holds, up to the first that needs nothing more (or `unknown`). `None` when one
    /// needs a tree.
    pub fn stream_plan(&self, url: &str) -> Option<Vec<&Concept>> {
        let mut plan = Vec::new();
        for c in &self.concepts {
            let Some(m) = &c.matcher else { continue };
            if m.category.is_some() || m.infobox.is_some() {
                continue; // wiki conditions never hold for HTML
            }
            if m.url.as_ref().is_some_and(|re| !re.is_match(url)) {
                continue;
            }
            plan.push(c);
            if m.selector.is_none() && m.text.is_none() {
                return plan.iter().all(|c| c.streams()).then_some(plan);
            }
        }
        plan.push(&self.unknown);
        plan.iter().all(|c| c.streams()).then_some(plan)
    }

    /// The concept a MediaWiki page belongs to (`url`: its article URL).
    pub fn route_wiki(&self, url: &str, page: &rip_wikitext::Page) -> &Concept {
        self.concepts
            .iter()
            .find(|c| {
                c.matcher
                    .as_ref()
                    .is_some_and(|m| m.matches_wiki(url, page))
            })
            .unwrap_or(&self.unknown)
    }
}

impl Concept {
    /// True when the streaming pass can route a page here and read every field.
    pub fn streams(&self) -> bool {
        self.needs_tree().is_none()
    }

    /// Why pages of this concept are read from a tree (`None`: the streaming pass
    /// reads them): the first condition or field the pass cannot read.
    pub fn needs_tree(&self) -> Option<String> {
        use scraper::selector::ToCss;
        if let Some(m) = &self.matcher
            && !m.streams()
        {
            let css = m.selector.as_ref().map(ToCss::to_css_string);
            return Some(format!(
                "`match.selector = \"{}\"`",
                css.unwrap_or_default()
            ));
        }
        let f = self
            .id
            .iter()
            .chain(&self.name_field)
            .chain(&self.fields)
            .find(|f| !f.streams())?;
        Some(match (&f.selector, f.stream_selector.is_some()) {
            (Some(sel), false) => format!(
                "field `{}`: `selector = \"{}\"`",
                f.name,
                sel.to_css_string()
            ),
            _ => {
                let e = format!("{:?}", f.extract);
                let e = e[..1].to_lowercase() + &e[1..];
                format!("field `{}`: `extract = \"{e}\"`", f.name)
            }
        })
    }
}

impl Field {
    /// True when the streaming pass can read this field: no selector, or one it can
    /// match, read as text, an attribute, Markdown or existence (not inner or outer
    /// HTML, which are serialisations of a tree).
    pub fn streams(&self) -> bool {
        self.wiki.is_some()
            || self.jsonld.is_some()
            || self.source == Source::Url
            || (self.stream_selector.is_some()
                && matches!(
                    self.extract,
                    Extract::Text | Extract::Attr | Extract::Markdown | Extract::Exists
                ))
    }
}

impl Matcher {
    /// True when the streaming pass can decide this condition.
    pub fn streams(&self) -> bool {
        self.selector.is_none() || self.stream_selector.is_some()
    }

    /// True when every condition holds for the page. The wiki conditions (`category`,
    /// `infobox`) never hold for HTML.
    pub fn matches(&self, url: &str, page: &mut crate::extract::PageView<'_>) -> bool {
        if self.category.is_some() || self.infobox.is_some() {
            return false;
        }
        if let Some(re) = &self.url
            && !re.is_match(url)
        {
            return false;
        }
        let html = match &page.elements {
            crate::extract::Elements::Tree(html) => *html,
            crate::extract::Elements::Stream(found) => return found.matcher_holds(self),
        };
        match (&self.selector, &self.text) {
            (Some(sel), None) => html.select(sel).next().is_some(),
            (Some(sel), Some(text)) => html
                .select(sel)
                .any(|el| crate::dom::text_of(el).contains(text.as_str())),
            (None, Some(text)) => page.text().contains(text.as_str()),
            (None, None) => true,
        }
    }

    /// True when every condition holds for a MediaWiki page. A `selector` never holds
    /// (wikitext has no elements); `text` is looked for in the page's plain text.
    pub fn matches_wiki(&self, url: &str, page: &rip_wikitext::Page) -> bool {
        if self.selector.is_some() {
            return false;
        }
        if let Some(re) = &self.url
            && !re.is_match(url)
        {
            return false;
        }
        if let Some(text) = &self.text
            && !page.text.contains(text.as_str())
        {
            return false;
        }
        if let Some(cat) = &self.category
            && !page
                .categories
                .iter()
                .any(|c| rip_wikitext::normalize_title(c) == *cat)
        {
            return false;
        }
        if let Some(kind) = &self.infobox
            && page.infobox.as_ref().is_none_or(|i| i.kind() != *kind)
        {
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests;
