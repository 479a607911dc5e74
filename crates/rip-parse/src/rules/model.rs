//! The rules file as written: the TOML shape, deserialised with spans so that every
//! error can name its line, and described by a JSON Schema generated from these types
//! (`docs/schemas/rules.schema.json`, checked against this file by a test).
//!
//! Nothing here is checked beyond its shape; `rules::compile` turns a [`RulesFile`]
//! into runnable [`super::Rules`] (regexes, selectors, schemas, inheritance).

use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// A rules file: a site's taxonomy of concepts and how to extract each one.
///
/// Concepts are tried in the order they are written; the first whose `match` holds
/// takes the page. A page no concept takes becomes the `unknown` concept.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "ripperoni rules file", rename = "RulesFile")]
pub struct RulesFile {
    /// A name for these rules, e.g. the site's name.
    #[serde(default)]
    pub name: Option<String>,
    /// What these rules are for.
    #[serde(default)]
    pub description: Option<String>,
    /// The concepts, written as `[[concept]]` tables, tried in this order.
    #[serde(default, rename = "concept")]
    pub concepts: Vec<ConceptSpec>,
}

/// One concept (a taxonomy class such as `item` or `spell`): how pages are routed to
/// it and which fields its documents have.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConceptSpec {
    /// The concept's name, written as the doc's `concept`. `unknown` names the fallback
    /// concept (it has no `match`).
    #[schemars(with = "String", length(min = 1))]
    pub name: Spanned<String>,
    /// A concept whose fields, schema and options this one inherits (and may override).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub extends: Option<Spanned<String>>,
    /// Only a base for `extends`: never routed to.
    #[serde(default, rename = "abstract")]
    pub is_abstract: bool,
    /// When a page belongs to this concept. Every condition given must hold.
    #[serde(default, rename = "match")]
    #[schemars(with = "Option<MatchSpec>")]
    pub matcher: Option<Spanned<MatchSpec>>,
    /// Also extract the generic fields (canonical, lang, description, keywords,
    /// headings, text, links; `markdown` with `--markdown`).
    #[serde(default)]
    pub generic: Option<bool>,
    /// The fields of the doc, in output order. `id` and `name` fill the doc's fixed
    /// `id` and `name`; other names the doc reserves are refused.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, FieldSpec>")]
    pub fields: indexmap::IndexMap<Spanned<String>, Spanned<FieldSpec>>,
    /// A JSON Schema (written in TOML) that every doc of this concept must satisfy.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub schema: Option<Spanned<serde_json::Value>>,
    /// A JSON Schema file (JSON), relative to the rules file, instead of `schema`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub schema_file: Option<Spanned<String>>,
    /// What a doc that breaks the schema becomes: `skip` (a VALIDATION failure, the
    /// default), `warn` (the doc, with the violations in its `errors`) or `halt`
    /// (stop the run).
    #[serde(default)]
    pub on_schema_error: Option<OnSchemaError>,
}

/// Routing conditions. Every condition given must hold; at least one must be given.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MatchSpec {
    /// A regular expression the page's URL (`finalUrl`) must match. A named group
    /// `id` gives the doc's id when no `id` field is defined.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub url: Option<Spanned<String>>,
    /// A CSS selector that must match at least one element.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub selector: Option<Spanned<String>>,
    /// Text that must appear: in the text of an element `selector` matches, or in the
    /// page's text when there is no `selector`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub text: Option<Spanned<String>>,
    /// MediaWiki pages only: the page must be in this category (without `Category:`;
    /// case of the first letter, `_` and spaces as MediaWiki treats them).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub category: Option<Spanned<String>>,
    /// MediaWiki pages only: the page's infobox must be of this kind (`creature` for
    /// `{{Infobox creature}}`; case-insensitive).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub infobox: Option<Spanned<String>>,
}

/// How one field is extracted.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FieldSpec {
    /// Where the value comes from: `html` (the default: elements matching `selector`)
    /// or `url` (the page's URL, usually with `regex`).
    #[serde(default)]
    pub source: Source,
    /// The CSS selector (for `source = "html"`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub selector: Option<Spanned<String>>,
    /// MediaWiki pages: the text of this infobox parameter (`hit_points`; case, `_` and
    /// spaces ignored), nested templates and links reduced to what they display. With
    /// `type = "number"` or `"integer"`, the first number in it (`1,200 (est.)` → 1200).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub infobox: Option<Spanned<String>>,
    /// MediaWiki pages: the plain text of the section with this heading (case-insensitive),
    /// its subsections included.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub section: Option<Spanned<String>>,
    /// MediaWiki pages: a value of the whole page.
    #[serde(default)]
    pub wiki: Option<WikiValue>,
    /// A value of the page's JSON-LD instead of elements: a schema.org type, then
    /// properties, joined by dots (`Product.offers.price`; `*.name` for any node).
    /// Arrays are stepped through and `@id` references followed; the strings, numbers
    /// and booleans reached are the values (the first, or all with `list = true`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub jsonld: Option<Spanned<String>>,
    /// What to take from a matched element: `text` (the default, whitespace
    /// collapsed), `attr` (the attribute named by `attr`), `html` (inner HTML),
    /// `outerHtml`, `markdown` (inner content as Markdown) or `exists` (true when the
    /// selector matches, false otherwise).
    #[serde(default)]
    pub extract: Option<Extract>,
    /// The attribute to take (implies `extract = "attr"`).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub attr: Option<Spanned<String>>,
    /// All matches as an array (default: the first match that gives a value).
    #[serde(default)]
    pub list: bool,
    /// A regular expression applied to the value: the group named `value` (or `id`), else group
    /// 1, else the whole match. A value it does not match counts as missing.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub regex: Option<Spanned<String>>,
    /// The value's type: `string` (the default), `number`, `integer`, `boolean`, or
    /// `url` (resolved against the page's base URL).
    #[serde(default, rename = "type")]
    pub value_type: ValueType,
    /// The value when nothing is found.
    #[serde(default)]
    pub default: Option<serde_json::Value>,
    /// A page where this field is missing (and has no default) becomes a VALIDATION
    /// failure instead of a doc.
    #[serde(default)]
    pub required: bool,
}

/// Where a field's value comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Source {
    /// Elements matching the field's `selector`.
    #[default]
    Html,
    /// The page's URL (`finalUrl`).
    Url,
}

/// A value of a whole MediaWiki page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WikiValue {
    /// The page's title (after redirects).
    Title,
    /// The plain text of every section.
    Text,
    /// The categories, without `Category:` (several values: use `list = true`).
    Categories,
    /// The titles of the pages it links to (several values: use `list = true`).
    Links,
    /// The kind of its infobox (`creature`).
    InfoboxType,
}

/// What to take from a matched element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Extract {
    /// Its text, whitespace collapsed, block elements on their own lines.
    Text,
    /// The attribute named by `attr`.
    Attr,
    /// Its inner HTML.
    Html,
    /// Its outer HTML.
    OuterHtml,
    /// Its content as Markdown.
    Markdown,
    /// Whether the selector matches at all (a boolean).
    Exists,
}

/// A field value's type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ValueType {
    /// The text as it is.
    #[default]
    String,
    /// A number (`1,250` and `0.1` are numbers; integral values are written as integers).
    Number,
    /// An integer.
    Integer,
    /// `true`/`yes`/`1` or `false`/`no`/`0`.
    Boolean,
    /// A URL, resolved against the page's base URL.
    Url,
}

/// What a doc that breaks its concept's JSON Schema (or the stage's
/// `--output-schema`) becomes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum OnSchemaError {
    /// Stop the run after writing the failure (exit code 1).
    Halt,
    /// A `failure` record with category VALIDATION instead of the doc.
    #[default]
    Skip,
    /// The doc anyway, with the violations in its `errors` and a warning on stderr.
    Warn,
}

/// The JSON Schema of the rules file, as committed in `docs/schemas/rules.schema.json`.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(RulesFile);
    rip_core::published_schema::publish(serde_json::to_value(&schema).expect("a schema serialises"))
}
