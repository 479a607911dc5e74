//! The bridge to `rip-http` (feature `http`): an API error inside a 2xx answer, as the
//! classification `rip_http::Fetcher::call_api` retries or fails by. Both stages that
//! talk to a wiki (`rip-discover --mediawiki`, `rip-fetch`'s wiki batches) use it.

use rip_http::{Classification, Response};

use crate::ApiError;

/// The classification of an API error in a 2xx answer, or `None` for an ordinary answer.
/// Only the first 4 KiB are searched for `"error":` before the body is parsed: MediaWiki
/// writes `error` before anything else. A `maxlag` answer is THROTTLED with its
/// `Retry-After` (or [`crate::DEFAULT_MAXLAG_WAIT`]).
pub fn check(resp: &Response) -> Option<Classification> {
    let head = &resp.body[..resp.body.len().min(4096)];
    if !head.windows(8).any(|w| w == b"\"error\":") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(&resp.body).ok()?;
    let error = value.get("error")?;
    let code = error["code"].as_str().unwrap_or("unknown").to_owned();
    let api = ApiError {
        info: error["info"].as_str().unwrap_or_default().to_owned(),
        retry_after: (code == "maxlag").then_some(crate::DEFAULT_MAXLAG_WAIT),
        code,
    }
    .with_retry_after(resp.header("retry-after"));
    let category = api.category();
    Some(Classification {
        category,
        retryable: category.retryable_by_default(),
        code: api.error_code(),
        message: api.to_string(),
        retry_after: api.retry_after,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;
    use chrono::Utc;
    use rip_core::ErrorCategory;

    use super::*;

    fn resp(body: &str, retry_after: Option<&str>) -> Response {
        let mut headers = vec![("content-type".into(), "application/json".into())];
        if let Some(ra) = retry_after {
            headers.push(("retry-after".into(), ra.into()));
        }
        Response {
            final_url: "http://w/api.php".into(),
            status: 200,
            headers,
            body: Bytes::from(body.to_owned()),
            truncated: false,
            redirects: Vec::new(),
            fetched_at: Utc::now(),
        }
    }

    #[test]
    fn api_errors_in_a_200_are_classified_by_code() {
        let c = check(&resp(
            r#"{"error":{"code":"maxlag","info":"Waiting for db: 7 seconds lagged."}}"#,
            Some("7"),
        ))
        .unwrap();
        assert_eq!(c.category, ErrorCategory::Throttled);
        assert!(c.retryable);
        assert_eq!(c.code, "wiki.api.maxlag");
        assert_eq!(c.retry_after, Some(Duration::from_secs(7)));
        let c = check(&resp(r#"{"error":{"code":"maxlag"}}"#, None)).unwrap();
        assert_eq!(c.retry_after, Some(crate::DEFAULT_MAXLAG_WAIT));
        let c = check(&resp(r#"{"error":{"code":"badvalue","info":"x"}}"#, None)).unwrap();
        assert_eq!(
            (c.category, c.retryable),
            (ErrorCategory::Validation, false)
        );
        assert!(
            check(&resp(
                r#"{"batchcomplete":true,"query":{"pages":[]}}"#,
                None
            ))
            .is_none()
        );
        // Wikitext mentioning "error": in the content is not an API error.
        let body = format!(
            r#"{{"batchcomplete":true,"query":{{"pages":[{{"title":"E","revisions":[{{"slots":{{"main":{{"content":"{}\"error\":1"}}}}}}]}}]}}}}"#,
            "x".repeat(5000)
        );
        assert!(check(&resp(&body, None)).is_none());
    }
}
