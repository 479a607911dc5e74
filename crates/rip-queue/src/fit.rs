//! A record too large for the broker becomes a failure of its URL instead of vanishing.

use rip_core::{ErrorCategory, ErrorEntry, Failure, Phase, Record};
use std::borrow::Cow;

/// `line` as it can be published under `max_payload` bytes: itself when it fits; else a
/// `failure` of its URL (`queue.tooLarge`, not retryable, the phase of the stage that would
/// have read it); else, for a record without a URL, `None`
/// (the caller says so: there is no URL to account for).
pub fn fit(line: &str, max_payload: usize) -> Option<Cow<'_, str>> {
    if line.len() <= max_payload {
        return Some(Cow::Borrowed(line));
    }
    let failure = too_large(line, max_payload)?;
    serde_json::to_string(&Record::Failure(failure))
        .ok()
        .map(Cow::Owned)
}

fn too_large(line: &str, max_payload: usize) -> Option<Failure> {
    let kind = crate::identity::kind_of(line);
    let message = format!(
        "the `{kind}` record is {} bytes, over the broker's maximum message of {max_payload} \
         bytes (raise the server's max_payload)",
        line.len()
    );
    failure_of(line, ErrorCategory::Resource, "queue.tooLarge", &message)
}

/// A `failure` (not retryable) of the URL of the record on `line`, standing for it, in the
/// phase of the stage that would have read it next, with one error `code`: `None` when the
/// record has no URL to account for. Its `attempt` is the record's round, 1-based.
pub fn failure_of(
    line: &str,
    category: ErrorCategory,
    code: &str,
    message: &str,
) -> Option<Failure> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let url = value.get("url")?.as_str()?;
    let phase = match value.get("_type").and_then(|k| k.as_str()) {
        Some("ref") => Phase::Fetch,
        Some("page") => Phase::Parse,
        _ => Phase::Write,
    };
    let error = ErrorEntry::new(code, message, "rip-queue");
    let mut failure = Failure::new(url, category, phase, error);
    failure.retryable = false;
    let attempt = value.get("attempt").and_then(|a| a.as_u64()).unwrap_or(0);
    failure.attempt = u32::try_from(attempt + 1).unwrap_or(u32::MAX);
    Some(failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_that_fits_is_itself() {
        let line = r#"{"_type":"page","url":"http://h/a"}"#;
        assert_eq!(fit(line, 1000).as_deref(), Some(line));
    }

    #[test]
    fn a_page_too_large_is_a_failure_of_its_url() {
        let body = "x".repeat(500);
        let line = format!(r#"{{"_type":"page","url":"http://h/a","attempt":0,"body":"{body}"}}"#);
        let out = fit(&line, 100).expect("a failure");
        let record: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(record["_type"], "failure");
        assert_eq!(record["url"], "http://h/a");
        assert_eq!(record["category"], "RESOURCE");
        assert_eq!(record["errors"][0]["code"], "queue.tooLarge");
    }

    #[test]
    fn a_record_without_url_has_nothing_to_stand_for_it() {
        let line = format!(r#"{{"_type":"summary","x":"{}"}}"#, "y".repeat(200));
        assert!(fit(&line, 100).is_none());
    }
}
