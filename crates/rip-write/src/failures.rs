//! `failures.json`: what failed after retry (the `error` documents that went by), failures
//! that reached `rip-write` without being routed, refs that reached it without being
//! fetched, and records that could not be persisted.

use chrono::{DateTime, Utc};
use rip_core::{ErrorCategory, ErrorEntry, Phase};
use serde::{Deserialize, Serialize};

/// The content of `failures.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailuresReport {
    /// When it was written.
    pub generated_at: Option<DateTime<Utc>>,
    /// `error` documents: URLs that failed after every retry and resolve round.
    pub captured: Vec<CapturedEntry>,
    /// `failure` records that reached `rip-write` unrouted (no `rip-route` after their
    /// stage): not captured yet, so not accounted for.
    pub unrouted: Vec<UnroutedEntry>,
    /// Records this `rip-write` could not persist (their `failure` annotations): write
    /// errors, and later terminal records for a URL that already had one (conflicts).
    pub not_persisted: Vec<NotPersistedEntry>,
    /// `ref` records that reached `rip-write`: nothing downstream fetches them, so their
    /// URLs have no outcome (a retry written by the last `rip-route` of a pipeline).
    #[serde(default)]
    pub unfetched: Vec<UnfetchedEntry>,
}

/// One captured failure.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CapturedEntry {
    /// The failed URL.
    pub url: String,
    /// The failed URL stood in for this one (a resolve candidate's own failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolves: Option<String>,
    /// HTTP status of the last attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Category of the last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<ErrorCategory>,
    /// Phase of the last failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Rounds tried.
    pub attempt: u32,
    /// A wiki page's title (from the error document's context), so that
    /// `rip-discover --retry-failures` asks for it again by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// A wiki page's API (from the error document's context): the wiki
    /// `rip-discover --retry-failures` asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wiki_api: Option<String>,
    /// The error document's file, relative to the target folder (none in JSONL mode or
    /// when it could not be written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The URL's whole error history.
    pub errors: Vec<ErrorEntry>,
}

/// One failure that was never routed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnroutedEntry {
    /// The URL.
    pub url: String,
    /// HTTP status, when there was a response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Category.
    pub category: ErrorCategory,
    /// Phase.
    pub phase: Phase,
    /// Round.
    pub attempt: u32,
}

/// One ref that was never fetched.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnfetchedEntry {
    /// The URL.
    pub url: String,
    /// The ref's `attempt`: the rounds tried before it (0: a first-round ref).
    pub attempt: u32,
    /// The failed URL a resolve candidate stands in for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolves: Option<String>,
}

/// One record that could not be written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotPersistedEntry {
    /// The URL of the record.
    pub url: String,
    /// Its kind (`doc`, `error`, `expected`, `page`).
    pub record: String,
    /// The path it should have had.
    pub path: String,
    /// Why it could not be written.
    pub error: String,
}
