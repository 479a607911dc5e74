//! A `failure` standing for a record the queue could not carry through (a record a worker's
//! program failed on, one that took its worker down, one whose chunks are lost), so that its
//! URL is accounted for instead of vanishing.

use rip_core::{ErrorCategory, ErrorEntry, Failure, Phase};

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
    fn a_failure_stands_for_a_record_of_its_url_in_the_phase_that_would_read_it() {
        let line = r#"{"_type":"page","url":"http://h/a","attempt":1}"#;
        let failure = failure_of(line, ErrorCategory::Unknown, "queue.x", "why").unwrap();
        let record = serde_json::to_value(rip_core::Record::Failure(failure)).unwrap();
        assert_eq!(record["url"], "http://h/a");
        assert_eq!(record["phase"], "parse");
        assert_eq!(record["attempt"], 2);
        assert_eq!(record["errors"][0]["code"], "queue.x");
    }

    #[test]
    fn a_record_without_url_has_nothing_to_stand_for_it() {
        let line = r#"{"_type":"summary","x":"y"}"#;
        assert!(failure_of(line, ErrorCategory::Unknown, "queue.x", "why").is_none());
    }
}
