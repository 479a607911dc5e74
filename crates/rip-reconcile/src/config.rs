//! The reconciler configuration file (JSON), and its compiled form.
//!
//! An empty object `{}` is the **default reconciler**: every failure is `missing`. A `key`
//! makes it a **key reconciler**; `name` adds a name that must match as well; `dead` rules
//! say which failures are known not to exist. The JSON Schema is
//! `docs/schemas/reconciler.schema.json`. Example (the reference's AON site):
//!
//! ```json
//! {
//!   "key": { "urlPattern": "[?&]ID=(\\d+)" },
//!   "name": { "docField": "name" },
//!   "dead": [ { "status": [410], "reason": "removed upstream" } ]
//! }
//! ```

use regex::Regex;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The reconciler configuration as written in the file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReconcilerConfig {
    /// Ignored: lets a file name its JSON Schema.
    #[serde(default, rename = "$schema")]
    pub schema: Option<String>,
    /// How to take an identity key from a URL. Without it, nothing is matched.
    #[serde(default)]
    pub key: Option<KeyConfig>,
    /// A name that must match as well as the key.
    #[serde(default)]
    pub name: Option<NameConfig>,
    /// Only docs of these concepts can be candidates (all docs when empty).
    #[serde(default)]
    pub concepts: Vec<String>,
    /// Rules for failures known not to exist, tried in order; the first that matches wins.
    #[serde(default)]
    pub dead: Vec<DeadRuleConfig>,
}

/// Where an identity key comes from.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeyConfig {
    /// A regex applied to the URL; the key is the capture group named `key`, else group 1,
    /// else the whole match. E.g. `[?&]ID=(\d+)`.
    #[serde(default)]
    pub url_pattern: Option<String>,
    /// The key is the URL's last non-empty path segment without its extension
    /// (`/classes/77.html` → `77`).
    #[serde(default)]
    pub path_tail: bool,
    /// Take a doc's key from this field (e.g. `id`) instead of from its URL.
    #[serde(default)]
    pub doc_field: Option<String>,
}

/// The name that must match: the link text that pointed at the broken URL, against a
/// field of the candidate doc.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NameConfig {
    /// The doc field holding the name: a top-level field (`name`) or a JSON pointer
    /// (`/meta/title`).
    #[serde(default = "default_doc_field")]
    pub doc_field: String,
    /// A regex applied to the doc's value; the name is its group `name`, else group 1
    /// (e.g. `^(.+?) \|` keeps `Catfolk` of `Catfolk | Ancestries | Site`).
    #[serde(default)]
    pub doc_pattern: Option<String>,
    /// Where the broken link's text comes from: `linkText` (the error document's own) and
    /// `docLinks` (links recorded in the docs that point at the broken URL). Both by default.
    #[serde(default = "default_sources")]
    pub from: Vec<NameSource>,
    /// Where docs record their links.
    #[serde(default)]
    pub links: LinksConfig,
    /// Compare names case-sensitively (default: case-insensitive; whitespace is always
    /// collapsed).
    #[serde(default)]
    pub case_sensitive: bool,
}

fn default_doc_field() -> String {
    "name".into()
}

fn default_sources() -> Vec<NameSource> {
    vec![NameSource::LinkText, NameSource::DocLinks]
}

/// A source of the broken link's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum NameSource {
    /// The error document's `linkText`.
    LinkText,
    /// The texts of links, recorded in docs, whose target is the broken URL.
    DocLinks,
}

/// Where docs record the links they contain: an array of objects in `field`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LinksConfig {
    /// The doc field holding the links (default `links`).
    #[serde(default = "default_links_field")]
    pub field: String,
    /// The key of a link's target in each object (default `href`); relative targets are
    /// resolved against the doc's URL.
    #[serde(default = "default_href")]
    pub href: String,
    /// The key of a link's text in each object (default `text`).
    #[serde(default = "default_text")]
    pub text: String,
}

impl Default for LinksConfig {
    fn default() -> Self {
        Self {
            field: default_links_field(),
            href: default_href(),
            text: default_text(),
        }
    }
}

fn default_links_field() -> String {
    "links".into()
}
fn default_href() -> String {
    "href".into()
}
fn default_text() -> String {
    "text".into()
}

/// A dead rule: every condition given must hold (at least one is required).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeadRuleConfig {
    /// HTTP statuses of the last attempt, e.g. `[410]`.
    #[serde(default)]
    pub status: Vec<u16>,
    /// Error codes of the last error, e.g. `["wiki.missing"]`.
    #[serde(default)]
    pub code: Vec<String>,
    /// A regex the failed URL must match.
    #[serde(default)]
    pub url: Option<String>,
    /// The verdict's reason, e.g. `removed upstream`.
    pub reason: String,
}

/// A bad configuration file, or a bad value in one.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read reconciler config {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid JSON or has an unknown or mistyped field.
    #[error(
        "{path}:{line}:{column}: {message} (hint: `rip-reconcile --config-schema` prints the file's schema)"
    )]
    Syntax {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A regex does not compile.
    #[error("{path}: `{field}`: bad regex `{pattern}`: {source}")]
    Regex {
        /// The file.
        path: String,
        /// Which field, e.g. `key.urlPattern` or `dead[1].url`.
        field: String,
        /// The pattern.
        pattern: String,
        /// The compiler's message.
        source: Box<regex::Error>,
    },
    /// A value that parses but makes no sense.
    #[error("{path}: `{field}`: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// Which field.
        field: String,
        /// What is wrong, with a hint.
        message: String,
    },
}

impl ReconcilerConfig {
    /// Reads and parses a configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses configuration text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ConfigError> {
        serde_json::from_str(text).map_err(|e| ConfigError::Syntax {
            path: origin.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e
                .to_string()
                .split(" at line ")
                .next()
                .unwrap_or("")
                .to_owned(),
        })
    }
}

/// Compiles `pattern`, naming `field` of `origin` when it does not.
pub(crate) fn regex(origin: &str, field: &str, pattern: &str) -> Result<Regex, ConfigError> {
    Regex::new(pattern).map_err(|e| ConfigError::Regex {
        path: origin.to_owned(),
        field: field.to_owned(),
        pattern: pattern.to_owned(),
        source: Box::new(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_named_with_their_line() {
        let err = ReconcilerConfig::parse("{\n  \"key\": {\"urlPatern\": \"x\"}\n}", "r.json")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("r.json:2:"), "{err}");
        assert!(err.contains("unknown field `urlPatern`"), "{err}");
    }

    #[test]
    fn defaults_fill_the_name_section() {
        let c = ReconcilerConfig::parse(r#"{"key":{"pathTail":true},"name":{}}"#, "-").unwrap();
        let name = c.name.unwrap();
        assert_eq!(name.doc_field, "name");
        assert_eq!(name.from, vec![NameSource::LinkText, NameSource::DocLinks]);
        assert_eq!(name.links.field, "links");
    }
}
