//! The records each route writes for a failure.

use chrono::{DateTime, TimeDelta, Utc};
use rip_core::{
    ErrorDoc, ErrorEntry, Expected, ExpectedSource, Failure, Page, Ref, RenderedBecause,
};
use serde_json::Value;
use std::time::Duration;

/// The retry: the same URL and context, `attempt` advanced, the history carried, and a
/// `notBefore` of the failure's time plus its Retry-After hint (capped at `max_wait`).
pub fn retry_ref(failure: &Failure, max_wait: Duration, now: DateTime<Utc>) -> Ref {
    let mut r = failure.to_retry_ref();
    if let Some(ms) = failure.retry_after_ms {
        let wait = Duration::from_millis(ms).min(max_wait);
        let wait = TimeDelta::from_std(wait).unwrap_or(TimeDelta::MAX);
        let from = failure.failed_at.unwrap_or(now);
        r.not_before = from.checked_add_signed(wait);
    }
    r
}

/// A resolve candidate: a retry of the failure under another URL, saying which URL it
/// resolves. It carries the failed URL's context and history.
pub fn candidate_ref(failure: &Failure, url: &str) -> Ref {
    let mut r = failure.to_retry_ref();
    r.url = url.to_owned();
    r.context.resolves = Some(failure.url.clone());
    r
}

/// A fetched page sent on to the browser: its URL, context, round and history as a `ref`
/// marked `needsBrowser` (not a new entry: the URL is in the ledger already), saying why.
pub fn render_ref(page: Page, because: RenderedBecause) -> Ref {
    let mut r = Ref::new(page.url);
    r.context = page.context;
    r.context.needs_browser = true;
    r.context.rendered_because = Some(because);
    r.attempt = page.attempt;
    r.errors = page.errors;
    r.extra = page.extra;
    r
}

/// The held failure that heads a resolve group (its body dropped: it has served).
pub fn group_head(failure: &Failure, candidates: Vec<String>) -> Failure {
    let mut head = failure.clone();
    head.body = None;
    head.resolving = candidates;
    head
}

/// The error document of a failure: every error of its history, then `more` (what resolve
/// candidates ran into).
pub fn capture(failure: &Failure, more: Vec<ErrorEntry>, now: DateTime<Utc>) -> ErrorDoc {
    let mut errors = failure.errors.clone();
    errors.extend(more);
    let mut extra = failure.extra.clone();
    if let Some(final_url) = failure.final_url.as_ref().filter(|u| **u != failure.url) {
        extra.insert("finalUrl".into(), Value::String(final_url.clone()));
    }
    ErrorDoc {
        url: failure.url.clone(),
        errors,
        status: failure.status,
        category: Some(failure.category),
        phase: Some(failure.phase),
        attempt: failure.attempt,
        context: failure.context.clone(),
        resolution: None,
        captured_at: Some(now),
        extra,
    }
}

/// The `expected` record a policy rule asks for.
pub fn expected(failure: &Failure, reason: &str, rule: Option<&str>) -> Expected {
    Expected {
        url: failure.url.clone(),
        reason: reason.to_owned(),
        source: Some(ExpectedSource::Policy),
        rule: rule.map(str::to_owned),
        phase: Some(failure.phase),
        status: failure.status,
        attempt: failure.attempt,
        context: failure.context.clone(),
        extra: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use rip_core::{ErrorCategory, Phase};

    fn throttled() -> Failure {
        let mut f = Failure::new(
            "http://h/x",
            ErrorCategory::Throttled,
            Phase::Fetch,
            ErrorEntry::new("httpError.throttled", "HTTP 429", "rip-fetch"),
        );
        f.failed_at = Some(Utc.with_ymd_and_hms(2026, 12, 1, 9, 0, 0).unwrap());
        f
    }

    #[test]
    fn not_before_is_the_failure_time_plus_the_capped_hint() {
        let now = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).unwrap();
        let mut f = throttled();
        assert_eq!(
            retry_ref(&f, Duration::from_secs(300), now).not_before,
            None
        );
        f.retry_after_ms = Some(2_500);
        let r = retry_ref(&f, Duration::from_secs(300), now);
        assert_eq!(
            r.not_before.unwrap().to_rfc3339(),
            "2026-12-01T09:00:02.500+00:00"
        );
        f.retry_after_ms = Some(86_400_000);
        let r = retry_ref(&f, Duration::from_secs(300), now);
        assert_eq!(
            r.not_before.unwrap().to_rfc3339(),
            "2026-12-01T09:05:00+00:00"
        );
        f.failed_at = None;
        let r = retry_ref(&f, Duration::from_secs(60), now);
        assert_eq!(r.not_before, Some(now + TimeDelta::seconds(60)));
        assert_eq!((r.attempt, r.errors.len()), (1, 1));
    }

    #[test]
    fn capture_keeps_the_whole_history_and_the_context() {
        let mut f = throttled();
        f.attempt = 3;
        f.errors.insert(
            0,
            ErrorEntry::new("httpError.transient", "HTTP 503", "rip-fetch"),
        );
        f.context.link_text = Some("X".into());
        f.final_url = Some("http://h/y".into());
        let more = vec![ErrorEntry::new(
            "httpError.permanent",
            "HTTP 404 (c)",
            "rip-fetch",
        )];
        let doc = capture(&f, more, Utc::now());
        let codes: Vec<&str> = doc.errors.iter().map(|e| e.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                "httpError.transient",
                "httpError.throttled",
                "httpError.permanent"
            ]
        );
        assert_eq!(doc.attempt, 3);
        assert_eq!(doc.context.link_text.as_deref(), Some("X"));
        assert_eq!(doc.extra["finalUrl"], "http://h/y");
        assert_eq!(doc.category, Some(ErrorCategory::Throttled));
    }
}
