//! The records of fetching: `ref` (a URL to fetch), `page` (a response), `failure`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use crate::category::{BodyEncoding, CharsetSource, ErrorCategory, Phase};
use crate::context::{Context, ErrorEntry};

/// The media type of a `Content-Type` value (its essence): lower case, parameters dropped.
/// `text/HTML; charset=UTF-8` → `text/html`.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `ref`: a URL to fetch, with the context of the page that found it.
///
/// `url` is kept exactly as given, never re-serialised through a URL parser, because it
/// is the identity under which the URL is accounted for in every later record. Stages
/// that need a parsed URL parse it and turn a bad one into a `VALIDATION` failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ref {
    /// The URL to fetch, as discovered (normalised by `rip-discover`).
    pub url: String,
    /// Where the URL came from.
    #[serde(flatten)]
    pub context: Context,
    /// Failure-routing rounds so far: 0 for a first try, 1 after one `rip-route` retry, …
    #[serde(default)]
    pub attempt: u32,
    /// Do not fetch before this instant (set by `rip-route` from a Retry-After hint).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_before: Option<DateTime<Utc>>,
    /// Errors of earlier rounds, so that a final capture holds the whole history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorEntry>,
    /// Fields this version does not know, kept so that they flow on unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Ref {
    /// A first-round ref with no context.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            context: Context::default(),
            attempt: 0,
            not_before: None,
            errors: Vec::new(),
            extra: Map::new(),
        }
    }

    /// True when this ref is a URL entering the pipeline for the first time (not a retry,
    /// not a resolve candidate, not a fetched page sent on to the browser): the stage that
    /// consumes it records it in a `ledger`.
    pub fn is_entry(&self) -> bool {
        self.attempt == 0 && self.context.resolves.is_none() && !self.context.needs_browser
    }
}

/// `page`: a fetched response and its decoded body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Page {
    /// The URL of the `ref`, unchanged (the accounting identity).
    pub url: String,
    /// The URL after redirects.
    pub final_url: String,
    /// The HTTP status of the final response.
    pub status: u16,
    /// The `Content-Type` header, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The charset the body was decoded from (WHATWG label, lower case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<String>,
    /// Where `charset` came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset_source: Option<CharsetSource>,
    /// When the response was received (for a cache hit: when it was originally fetched).
    pub fetched_at: DateTime<Utc>,
    /// True when the body came from the cache without a network request.
    #[serde(default)]
    pub from_cache: bool,
    /// True when a stale cache entry was confirmed by a `304 Not Modified`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub revalidated: bool,
    /// HTTP requests made for this page in this round (1 without retries, 0 from cache).
    #[serde(default)]
    pub http_attempts: u32,
    /// Wall time spent on this page in this round, waits included.
    #[serde(default)]
    pub elapsed_ms: u64,
    /// The fetch that went to the site for this body, whichever stage made it: this
    /// one's, or for a cache hit the one recorded with the cache entry (absent for entries
    /// written before it was recorded). `httpAttempts` and `elapsedMs` above are this
    /// stage's own cost (0 requests for a cache hit); this is what the site did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site_fetch: Option<SiteFetch>,
    /// The redirect chain, first hop first, when there was one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirects: Vec<String>,
    /// Selected response headers (lower-case names), when a stage chose to keep them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// The body: UTF-8 text, or base64 when `bodyEncoding` is `base64`.
    pub body: String,
    /// How `body` is encoded; omitted for text.
    #[serde(default, skip_serializing_if = "BodyEncoding::is_text")]
    pub body_encoding: BodyEncoding,
    /// True when the body was cut at the size limit.
    #[serde(default)]
    pub truncated: bool,
    /// For a MediaWiki page: its page id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pageid: Option<u64>,
    /// For a MediaWiki page: the id of the revision whose wikitext is the body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revid: Option<u64>,
    /// For a MediaWiki page: its title after normalisation and redirects (the ref's
    /// `title` is the one that was asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wiki_title: Option<String>,
    /// For a MediaWiki page: what the wiki expanded each template call of its infobox to
    /// (call as written, e.g. `{{Coin|gp=12}}` → wikitext, e.g. `12 gp`), so that the parse
    /// shows the values the wiki shows. Calls missing here were not expanded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub wiki_expansions: BTreeMap<String, String>,
    /// For a MediaWiki page whose calls could not all be expanded: why (the failed
    /// request's message, a spent budget, the cache-only mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wiki_expansion_error: Option<String>,
    /// For a page `rip-render` rendered in a browser: how (the body is then the DOM
    /// after its scripts ran, not the bytes the server sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub render: Option<Rendered>,
    /// Where the URL came from.
    #[serde(flatten)]
    pub context: Context,
    /// Failure-routing rounds before this success (0: first attempt).
    #[serde(default)]
    pub attempt: u32,
    /// Errors of earlier rounds (a page that succeeded on a retry keeps what went wrong).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ErrorEntry>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `siteFetch`: the fetch that went to the site for a page's body, as the stage that made
/// it saw it. It travels with the body: stored with the cache entry, onto every `page`
/// served from it, and from the page onto its `doc`, so that `rip-health` reports the
/// site's latency, retries and faults even when the pages were fetched by `rip-discover`
/// and `rip-fetch` read them from the cache.
///
/// ```json
/// {"fetchedBy":"rip-discover","httpAttempts":2,"statuses":[429,200],"faults":["httpError.throttled"],"waitedMs":1004,"latencyMs":302,"elapsedMs":1309}
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteFetch {
    /// The stage that made the requests (`rip-discover`, `rip-fetch`).
    pub fetched_by: String,
    /// HTTP requests made: retries and redirect hops included (at least 1).
    pub http_attempts: u32,
    /// The status of each request, in order; `null` for one that got no response (a
    /// reset, a timeout). `[503, 503, 200]`, `[301, 200]`, `[null, 200]`, `[304]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statuses: Vec<Option<u16>>,
    /// The code of each failed attempt that was retried, in order
    /// (`httpError.transient`, `httpError.throttled`, `network.reset`, `timeout.read`, …):
    /// the faults the site showed and the fetch recovered from. Empty: no retry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
    /// Time waited before the retries: backoff and Retry-After (the politeness slot of
    /// each attempt after the first). Not the first request's politeness gap or queue,
    /// nor a ref's `notBefore`: those are the pipeline's own pace, not the site's doing.
    #[serde(default)]
    pub waited_ms: u64,
    /// How long the site took to answer the request that succeeded: from sending it to
    /// the last body byte, its redirect hops included.
    #[serde(default)]
    pub latency_ms: u64,
    /// Wall time of the whole fetch, retries and waits included (`notBefore` excluded).
    #[serde(default)]
    pub elapsed_ms: u64,
}

impl SiteFetch {
    /// Retries the fetch needed (its failed attempts).
    pub fn retries(&self) -> usize {
        self.faults.len()
    }
}

/// `failure`: a URL that could not be fetched, parsed or written, as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// The URL of the `ref` or `page` that failed (the accounting identity).
    pub url: String,
    /// The HTTP status, when there was a response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// What kind of failure.
    pub category: ErrorCategory,
    /// Whether trying again may help.
    pub retryable: bool,
    /// The routing round in which it failed, 1-based (a ref with `attempt: 0` fails in round 1).
    pub attempt: u32,
    /// HTTP requests made in this round.
    #[serde(default)]
    pub http_attempts: u32,
    /// Which stage failed.
    pub phase: Phase,
    /// Where the URL came from.
    #[serde(flatten)]
    pub context: Context,
    /// The server's Retry-After hint, in milliseconds, when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// Every error so far, earlier rounds first; the last is this round's.
    pub errors: Vec<ErrorEntry>,
    /// The URL after redirects, when the request got that far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_url: Option<String>,
    /// The `Content-Type` of the failed response, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// The (bounded) body of the failed response, when it had a text body; `rip-route`
    /// reads a `<link rel=canonical>` from it without another request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// Wall time spent in this round, waits included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// When the failure was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_at: Option<DateTime<Utc>>,
    /// On a failure held while `rip-route`'s resolve route tries other URLs: the candidate
    /// URLs, in order of preference. The next `rip-route` waits for their outcomes and
    /// then emits the best successful candidate, or captures this failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolving: Vec<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Failure {
    /// A failure of `url` in `phase`, with one error, and its category's default retryability.
    pub fn new(
        url: impl Into<String>,
        category: ErrorCategory,
        phase: Phase,
        error: ErrorEntry,
    ) -> Self {
        Self {
            url: url.into(),
            status: None,
            category,
            retryable: category.retryable_by_default(),
            attempt: 1,
            http_attempts: 0,
            phase,
            context: Context::default(),
            retry_after_ms: None,
            errors: vec![error],
            final_url: None,
            content_type: None,
            body: None,
            elapsed_ms: None,
            failed_at: None,
            resolving: Vec::new(),
            extra: Map::new(),
        }
    }

    /// The `ref` that retries this failure in the next round: same URL and context,
    /// `attempt` advanced, the error history carried.
    pub fn to_retry_ref(&self) -> Ref {
        Ref {
            url: self.url.clone(),
            context: self.context.clone(),
            attempt: self.attempt,
            not_before: None,
            errors: self.errors.clone(),
            extra: Map::new(),
        }
    }
}

/// How `rip-render` rendered a page (the `render` object of a `page`): the browser, when
/// the page was taken as done, and what went wrong in it without failing it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rendered {
    /// The browser and its version, e.g. `Chromium/156.0.8078.114`.
    pub browser: String,
    /// The rule that said the page was done: `load`, `network-idle` or `selector:CSS`.
    pub wait: String,
    /// From the navigation to the DOM read back, in ms (0 for a render from the cache).
    pub render_ms: u64,
    /// Requests the page made besides its document (served, failed or blocked).
    #[serde(default)]
    pub requests: u32,
    /// Of those, the ones blocked by their type (images, fonts, media unless allowed).
    #[serde(default)]
    pub blocked: u32,
    /// Errors the page's scripts reported: `console.error` calls and uncaught exceptions
    /// (at most 50, each cut at 1,000 characters; `dropped` counts the rest).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub console_errors: Vec<ConsoleError>,
    /// Subresources that could not be had (at most 50; `dropped` counts the rest), other
    /// than those blocked by type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_requests: Vec<FailedRequest>,
    /// Console errors and failed requests past the 50 kept of each.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: u32,
    /// Dialogs (`alert`, `confirm`, `prompt`, `beforeunload`) the page opened, dismissed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dialogs: u32,
    /// Navigations of the page away from itself that were refused (at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub navigations_blocked: Vec<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An error a page's script reported (see [`Rendered::console_errors`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsoleError {
    /// `console` (a `console.error` call) or `exception` (an uncaught exception).
    pub kind: String,
    /// The message.
    pub text: String,
    /// The script's URL, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The line in it (1-based), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// A subresource a rendered page asked for and did not get (see
/// [`Rendered::failed_requests`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailedRequest {
    /// The URL asked for.
    pub url: String,
    /// What the page wanted it for, as the browser says (`Script`, `XHR`, `Fetch`, …).
    pub resource_type: String,
    /// The HTTP status, when a response came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The error's stable code (`httpError.transient`, `robots.disallowed`, …).
    pub code: String,
    /// Why, in words.
    pub message: String,
}
