//! The terminal records: `doc`, `error` (an error document) and `expected`.
//!
//! Every URL that enters a pipeline ends as exactly one of these.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::category::{ErrorCategory, ExpectedSource, Phase};
use crate::context::{Context, ErrorEntry};
use crate::fetch::SiteFetch;

/// `doc`: an extracted document (the reference's "concept").
///
/// Extracted fields are top-level keys beside the fixed ones. The fixed names (`url`,
/// `concept`, `id`, `name`, `attempt`, `httpAttempts`, `elapsedMs`, `siteFetch`, `errors` and the [`Context`]
/// names `depth`, `parent`, `linkText`, `raw`, `title`, `wikiApi`, `resolves`) cannot be used
/// as field names; `rip-parse` refuses rules that try.
///
/// A generic doc (concept `page`, no rules) has the fields `canonical`, `lang`,
/// `description`, `keywords`, the article's metadata (`headline`, `authors`, `published`
/// and `modified` in ISO 8601 when they parse, `siteName`, `excerpt`, `image`), the page's
/// `structured` data (`{jsonLd, openGraph, twitter, microdata, warnings}`), `headings`,
/// `text`, `links` and, with `--markdown`, `markdown`; a value the page does not give is
/// absent. Sources and their order of trust: docs/records.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Doc {
    /// The URL of the page the doc was extracted from (the accounting identity).
    pub url: String,
    /// The concept (taxonomy class) the page was routed to, e.g. `item`, or `unknown`.
    pub concept: String,
    /// The concept's identity, e.g. taken from the URL (`ID=(\d+)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The concept's display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where the URL came from (carried from the page).
    #[serde(flatten)]
    pub context: Context,
    /// Failure-routing rounds before the page was fetched (0: first attempt).
    #[serde(default)]
    pub attempt: u32,
    /// HTTP requests the successful round made (carried from the page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_attempts: Option<u32>,
    /// Wall time the successful fetch round took (carried from the page's `elapsedMs`),
    /// so that `rip-health` can report fetch latency from docs alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// The fetch that went to the site for the page (carried from the page's
    /// `siteFetch`), so that `rip-health` reports what the site did from docs alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site_fetch: Option<SiteFetch>,
    /// Errors of earlier rounds, carried from the page.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorEntry>,
    /// The extracted fields.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

/// The field names a [`Doc`] reserves for itself.
pub const DOC_RESERVED_FIELDS: &[&str] = &[
    "_type",
    "url",
    "concept",
    "id",
    "name",
    "attempt",
    "httpAttempts",
    "elapsedMs",
    "siteFetch",
    "errors",
    "depth",
    "parent",
    "linkText",
    "raw",
    "title",
    "wikiApi",
    "resolves",
];

/// `error`: a failure written down as a document (the reference's `error:capture`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorDoc {
    /// The URL that failed (the accounting identity).
    pub url: String,
    /// Every error of this URL's history, earliest first.
    pub errors: Vec<ErrorEntry>,
    /// The HTTP status of the last attempt, when there was a response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The category of the last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<ErrorCategory>,
    /// The phase of the last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Routing rounds tried (1-based round of the last failure).
    #[serde(default)]
    pub attempt: u32,
    /// Where the URL came from.
    #[serde(flatten)]
    pub context: Context,
    /// The reconciler's verdict, added by `rip-reconcile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// When the error document was written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captured_at: Option<DateTime<Utc>>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The reconciler's verdict on an error document (`resolution` field), as in the reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Resolution {
    /// The content exists in the output under another URL; the broken link is harmless.
    #[serde(rename_all = "camelCase")]
    CapturedElsewhere {
        /// The URL under which the content was captured.
        at: String,
    },
    /// No matching content was found: data may be absent.
    #[serde(rename_all = "camelCase")]
    Missing {
        /// When matching was ambiguous: the URLs that matched, none of them chosen.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        candidates: Vec<String>,
    },
    /// Known not to exist; the failure is expected.
    #[serde(rename_all = "camelCase")]
    Dead {
        /// Why it is known not to exist, e.g. "removed upstream".
        reason: String,
    },
}

/// `expected`: a known gap that is not an error, e.g. a URL robots.txt disallows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Expected {
    /// The URL (the accounting identity).
    pub url: String,
    /// Why it is not captured, for a person: e.g. `disallowed by robots.txt`.
    pub reason: String,
    /// What decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ExpectedSource>,
    /// The rule that matched, e.g. `Disallow: /private/` or a policy rule's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The phase in which it was decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// The HTTP status that led here, when there was one (e.g. 410).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Routing rounds before this verdict.
    #[serde(default)]
    pub attempt: u32,
    /// Where the URL came from.
    #[serde(flatten)]
    pub context: Context,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
