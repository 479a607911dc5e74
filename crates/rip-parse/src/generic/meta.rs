//! A generic doc's metadata and structured data.
//!
//! Read in the same walk as the rest of generic extraction ([`MetaWalk`], a
//! [`crate::visit::Visitor`], so the streamed and the tree paths give the same
//! fields), then picked ([`pick`]) from the sources in this order of trust, the first
//! that has a value winning:
//!
//! 1. **JSON-LD**: the first node of an article type (`Article`, `NewsArticle`,
//!    `BlogPosting`, any `…Article` or `…Posting`, `Report`, `Review`, …), then of a
//!    page type (`WebPage`, `AboutPage`, …), found among the items and nested nodes
//!    (`mainEntity`); `author` as a string, a Person, an array or an `@id` reference;
//!    `publisher.name`, then a `WebSite` node's `name`, for the site.
//! 2. **OpenGraph** (`og:title`, `og:site_name`, `og:image`, `og:description`,
//!    `article:published_time`, `article:modified_time`, `article:author` when it is
//!    not a URL).
//! 3. **Twitter cards** (`twitter:title`, `twitter:image`, `twitter:description`).
//! 4. **Microdata**: the first item with `headline`, `author` (a name or an item's
//!    `name`), `datePublished`, `dateModified`, `image`.
//! 5. **`<meta>`**: `author`, `dc.*`/`dcterms.*`, `citation_*`, `parsely-*`, `date`,
//!    `pubdate`, `application-name`, …
//! 6. **The page**: for the headline the `<title>` less the site's name
//!    (`title::headline_of_title`, the `<h1>` as a hint), or the `<h1>`; for the date
//!    a `<time datetime>` (one marked `pubdate` first); for the byline the article's
//!    (the `byline` module: in the main content first, none from comments or related stories),
//!    else a "By …" line at the top of the text; for the excerpt the first paragraph of
//!    the text.
//!
//! An author's name is never a URL nor an account's handle (`@ann`); a `<meta>` key
//! given both as a `property` and as a `name` is read from its `property`.
//!
//! Among the declared headlines, the first the page shows (in its `<title>` or as its
//! `<h1>`) wins over the order of trust: a JSON-LD `headline` can be a description of the
//! subject (Wikipedia's), its `name` the title.
//!
//! A value no source gives is absent, never guessed. Dates are normalised to ISO 8601
//! when they parse ([`date`]), kept as written otherwise. `structured` keeps what the
//! page declares: every JSON-LD item (`@graph` flattened), the OpenGraph and Twitter
//! properties (a property given more than once is an array) and the microdata items as
//! extruct gives them; a block that does not parse is a `warnings` entry.

mod byline;
pub mod date;
pub(crate) mod jsonld;
mod microdata;
mod pick;
mod title;
mod walk;

use serde_json::{Map, Value};

pub use byline::Place;
pub(super) use byline::place;
pub use pick::{PageFacts, pick};
pub use walk::MetaWalk;

/// The metadata of a generic doc.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Meta {
    /// The article's headline.
    pub headline: Option<String>,
    /// Its authors' names.
    pub authors: Vec<String>,
    /// When it was published (ISO 8601 when it parses).
    pub published: Option<String>,
    /// When it was last modified (ISO 8601 when it parses).
    pub modified: Option<String>,
    /// The site's name.
    pub site_name: Option<String>,
    /// A short excerpt.
    pub excerpt: Option<String>,
    /// The lead image's absolute URL.
    pub image: Option<String>,
    /// What the page declares as structured data.
    pub structured: Structured,
}

/// The page's structured data: `{jsonLd, openGraph, twitter, microdata, warnings}`.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Structured {
    /// Every JSON-LD item.
    pub json_ld: Vec<Value>,
    /// OpenGraph properties (`og:*`, `article:*`, `book:*`, `profile:*`, …).
    pub open_graph: Map<String, Value>,
    /// Twitter card properties (`twitter:*`).
    pub twitter: Map<String, Value>,
    /// Microdata items.
    pub microdata: Vec<Value>,
    /// A message for each block that could not be read.
    pub warnings: Vec<String>,
}

impl Structured {
    /// True when the page declares nothing.
    pub fn is_empty(&self) -> bool {
        self.json_ld.is_empty()
            && self.open_graph.is_empty()
            && self.twitter.is_empty()
            && self.microdata.is_empty()
            && self.warnings.is_empty()
    }

    /// As the doc's `structured` value, its empty parts left out.
    pub fn into_value(self) -> Value {
        let mut m = Map::new();
        if !self.json_ld.is_empty() {
            m.insert("jsonLd".into(), Value::Array(self.json_ld));
        }
        if !self.open_graph.is_empty() {
            m.insert("openGraph".into(), Value::Object(self.open_graph));
        }
        if !self.twitter.is_empty() {
            m.insert("twitter".into(), Value::Object(self.twitter));
        }
        if !self.microdata.is_empty() {
            m.insert("microdata".into(), Value::Array(self.microdata));
        }
        if !self.warnings.is_empty() {
            let w = self.warnings.into_iter().map(Value::String).collect();
            m.insert("warnings".into(), Value::Array(w));
        }
        Value::Object(m)
    }
}

impl Meta {
    /// Puts the fields into `fields`, in this order: `headline`, `authors`,
    /// `published`, `modified`, `siteName`, `excerpt`, `image`, `structured`; absent
    /// ones left out.
    pub fn put_into(self, fields: &mut Map<String, Value>) {
        fn put(fields: &mut Map<String, Value>, k: &str, v: Option<String>) {
            if let Some(v) = v {
                fields.insert(k.to_owned(), Value::String(v));
            }
        }
        put(fields, "headline", self.headline);
        if !self.authors.is_empty() {
            let authors = self.authors.into_iter().map(Value::String).collect();
            fields.insert("authors".into(), authors);
        }
        put(fields, "published", self.published);
        put(fields, "modified", self.modified);
        put(fields, "siteName", self.site_name);
        put(fields, "excerpt", self.excerpt);
        put(fields, "image", self.image);
        if !self.structured.is_empty() {
            fields.insert("structured".into(), self.structured.into_value());
        }
    }
}
