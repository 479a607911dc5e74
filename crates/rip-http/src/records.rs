//! From a [`Fetched`] to the records of the contract: `page`, `failure`, `expected`, each
//! carrying the `ref`'s URL (byte for byte), context, round and error history.

use base64::Engine as _;
use chrono::Utc;
use rip_core::{BodyEncoding, ErrorEntry, Expected, Failure, Page, Phase, Record, Ref};

use crate::decode::{BodyText, decode_body};
use crate::outcome::{FetchFailure, Fetched, Outcome, RequestStats, Response, Skip};

/// Response headers a `page` keeps.
pub const KEPT_HEADERS: &[&str] = &[
    "content-type",
    "content-language",
    "etag",
    "last-modified",
    "link",
    "x-robots-tag",
];

/// The record for a ref's fetch: a `page`, `failure` or `expected`. `operation` names the
/// stage in error entries (`rip-fetch`, `rip-discover`).
pub fn record_for(r: &Ref, fetched: &Fetched, phase: Phase, operation: &str) -> Record {
    match &fetched.outcome {
        Outcome::Page(resp) => Record::Page(page_record(r, resp, &fetched.stats)),
        Outcome::Failure(f) => {
            Record::Failure(failure_record(r, f, &fetched.stats, phase, operation))
        }
        Outcome::Skipped(s) => Record::Expected(expected_record(r, s, phase)),
    }
}

/// A `page` for a response, its body decoded (or base64 for binary bodies).
pub fn page_record(r: &Ref, resp: &Response, stats: &RequestStats) -> Page {
    let content_type = resp.content_type().map(str::to_owned);
    let (body, body_encoding, charset, charset_source) =
        match decode_body(content_type.as_deref(), &resp.body) {
            BodyText::Text {
                text,
                charset,
                source,
            } => (text, BodyEncoding::Text, Some(charset), Some(source)),
            BodyText::Binary => (
                base64::engine::general_purpose::STANDARD.encode(&resp.body),
                BodyEncoding::Base64,
                None,
                None,
            ),
        };
    Page {
        url: r.url.clone(),
        final_url: resp.final_url.clone(),
        status: resp.status,
        content_type,
        charset,
        charset_source,
        fetched_at: resp.fetched_at,
        from_cache: stats.from_cache,
        revalidated: stats.revalidated,
        http_attempts: stats.http_attempts,
        elapsed_ms: stats.elapsed.as_millis() as u64,
        site_fetch: stats.site.clone(),
        redirects: resp.redirects.clone(),
        headers: resp
            .headers
            .iter()
            .filter(|(k, _)| KEPT_HEADERS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        body,
        body_encoding,
        truncated: resp.truncated,
        pageid: None,
        revid: None,
        wiki_title: None,
        wiki_expansions: Default::default(),
        wiki_expansion_error: None,
        render: None,
        context: r.context.clone(),
        attempt: r.attempt,
        errors: r.errors.clone(),
        extra: Default::default(),
    }
}

/// A `failure` for a classified failure, in round `r.attempt + 1`.
pub fn failure_record(
    r: &Ref,
    f: &FetchFailure,
    stats: &RequestStats,
    phase: Phase,
    operation: &str,
) -> Failure {
    let round = r.attempt + 1;
    let mut errors = r.errors.clone();
    errors.push(ErrorEntry {
        code: f.class.code.clone(),
        message: f.class.message.clone(),
        operation: operation.to_owned(),
        attempt: Some(round),
    });
    let body = f
        .body
        .as_ref()
        .and_then(|b| match decode_body(f.content_type.as_deref(), b) {
            BodyText::Text { text, .. } => Some(text),
            BodyText::Binary => None,
        });
    Failure {
        url: r.url.clone(),
        status: f.status,
        category: f.class.category,
        retryable: f.class.retryable,
        attempt: round,
        http_attempts: stats.http_attempts,
        phase,
        context: r.context.clone(),
        retry_after_ms: f.class.retry_after.map(|d| d.as_millis() as u64),
        errors,
        final_url: f.final_url.clone(),
        content_type: f.content_type.clone(),
        body,
        elapsed_ms: Some(stats.elapsed.as_millis() as u64),
        failed_at: Some(Utc::now()),
        resolving: Vec::new(),
        extra: Default::default(),
    }
}

/// An `expected` for a deliberate skip.
pub fn expected_record(r: &Ref, s: &Skip, phase: Phase) -> Expected {
    Expected {
        url: r.url.clone(),
        reason: s.reason.clone(),
        source: Some(s.source),
        rule: s.rule.clone(),
        phase: Some(phase),
        status: s.status,
        attempt: r.attempt,
        context: r.context.clone(),
        extra: Default::default(),
    }
}
