//! Context that travels with a URL, and the error entries every failure carries.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where a URL came from, carried unchanged from the `ref` that named it to the
/// `page`, `failure`, `doc`, `error` and `expected` records that follow from it.
///
/// Flattened into each of those records: on the wire these are top-level fields.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    /// Link distance from a start URL (start URLs are depth 0).
    #[serde(default)]
    pub depth: u32,
    /// The URL of the page on which this URL was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The text of the link that pointed here (collapsed whitespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_text: Option<String>,
    /// Free-form context found alongside the link (Ladon's `Ref.raw`), e.g. the cells
    /// of the listing row the link sat in. No shared schema: plugins and rules decide.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub raw: Map<String, Value>,
    /// For MediaWiki pages: the page title (the identity of a wiki page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// For MediaWiki pages: the wiki's API endpoint (`…/api.php`) that `title` belongs to.
    /// `rip-fetch` fetches refs carrying both `title` and `wikiApi` through that API, up
    /// to 50 titles per request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wiki_api: Option<String>,
    /// For a candidate URL emitted by `rip-route`'s resolve route: the failed URL that
    /// this URL may stand in for. Whatever becomes of this URL accounts for that one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolves: Option<String>,
    /// The URL needs a browser: a `rip-route` render rule found its fetched page wanting
    /// (an empty shell its scripts fill in) and sent it on as a `ref` for `rip-render`.
    /// `rip-fetch` passes such refs through unfetched; `rip-render` renders them whatever
    /// its `--only`; the flag stays on the URL's later records, so a retry of a failed
    /// render goes back to the browser. The URL entered the ledger when it was first
    /// fetched, so a ref carrying it is not an entry ([`crate::Ref::is_entry`]).
    #[serde(default, skip_serializing_if = "is_false")]
    pub needs_browser: bool,
    /// Why the URL was sent to the browser (with `needsBrowser`): the render rule, the
    /// signal measured in its fetched HTML (`--render auto`), or the decision learnt for
    /// its URL pattern. Carried to the rendered page and its doc.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rendered_because: Option<crate::RenderedBecause>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One error in a URL's history: `{code, message, operation}` as in the reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorEntry {
    /// A stable, dotted code, e.g. `httpError.permanent`, `network.reset`, `wiki.missing`.
    pub code: String,
    /// Human-readable detail, e.g. `HTTP 404`.
    pub message: String,
    /// What was being done, e.g. `rip-fetch`, `rip-parse`, `robots`.
    pub operation: String,
    /// The routing round (1-based) in which this error happened, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
}

impl ErrorEntry {
    /// An entry with no round recorded.
    pub fn new(
        code: impl Into<String>,
        message: impl Into<String>,
        operation: impl Into<String>,
    ) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            operation: operation.into(),
            attempt: None,
        }
    }
}
