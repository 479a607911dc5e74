//! API errors (`{"error": {"code": …}}`) and answers that are not what the API sends.

use std::time::Duration;

use rip_core::ErrorCategory;

/// What MediaWiki waits for before a `maxlag` retry when it sends no `Retry-After` (it sends
/// at least 5 seconds).
pub const DEFAULT_MAXLAG_WAIT: Duration = Duration::from_secs(5);

/// An error the API answered with.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// MediaWiki's code: `maxlag`, `readonly`, `ratelimited`, `badvalue`, …
    pub code: String,
    /// Its message.
    pub info: String,
    /// How long to wait before trying again: the `Retry-After` header, or
    /// [`DEFAULT_MAXLAG_WAIT`] for a `maxlag` answer without one.
    pub retry_after: Option<Duration>,
}

impl ApiError {
    /// The failure category of this error ([`classify`]).
    pub fn category(&self) -> ErrorCategory {
        classify(&self.code)
    }

    /// The stable error code of a failure record: `wiki.api.<code>` (`wiki.api.maxlag`).
    pub fn error_code(&self) -> String {
        format!("wiki.api.{}", self.code)
    }

    /// Adds the wait of a `Retry-After` header value (seconds or an HTTP date).
    pub fn with_retry_after(mut self, header: Option<&str>) -> ApiError {
        let parsed = header.and_then(|h| {
            let h = h.trim();
            h.parse::<u64>().ok().map(Duration::from_secs).or_else(|| {
                httpdate::parse_http_date(h).ok().map(|t| {
                    t.duration_since(std::time::SystemTime::now())
                        .unwrap_or_default()
                })
            })
        });
        self.retry_after = parsed.or(self.retry_after);
        self
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MediaWiki API error `{}`: {}", self.code, self.info)
    }
}

/// The failure category of a MediaWiki API error code:
/// - `maxlag`, `readonly`, `ratelimited`, `actionthrottled`: THROTTLED (wait, then retry);
/// - `internal_api_error_*`, database and timeout errors: TRANSIENT;
/// - parameter errors (`badvalue`, `toomanyvalues`, `missingparam`, `invalidtitle`,
///   `unknown_*`, `nosuch*`): VALIDATION, a client bug that retrying cannot fix;
/// - permission errors (`readapidenied`, `permissiondenied`, `*-blocked`): PERMANENT;
/// - anything else: UNKNOWN.
pub fn classify(code: &str) -> ErrorCategory {
    match code {
        "maxlag" | "readonly" | "ratelimited" | "actionthrottled" | "actionthrottledtext" => {
            ErrorCategory::Throttled
        }
        "readapidenied" | "permissiondenied" | "mwoauth-invalid-authorization" => {
            ErrorCategory::Permanent
        }
        "badvalue" | "toomanyvalues" | "missingparam" | "invalidtitle" | "paramempty"
        | "invalidparammix" | "badinteger" | "baduser" | "badcontinue" => ErrorCategory::Validation,
        c if c.starts_with("internal_api_error") || c.contains("dberror") || c == "timeout" => {
            ErrorCategory::Transient
        }
        c if c.starts_with("unknown_") || c.starts_with("nosuch") => ErrorCategory::Validation,
        c if c.ends_with("blocked") => ErrorCategory::Permanent,
        _ => ErrorCategory::Unknown,
    }
}

/// Why an answer could not be used.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The API answered with an error.
    #[error("{0}")]
    Api(ApiError),
    /// The body is not JSON (an HTML error page, a truncated body, …).
    #[error(
        "the API answer is not JSON: {source} (hint: is the URL the wiki's api.php, and does \
         it answer `?action=query&meta=siteinfo&format=json`?)"
    )]
    NotJson {
        /// The JSON error.
        source: serde_json::Error,
    },
    /// JSON, but not the shape of this query's answer.
    #[error("the API answer has no {what}")]
    Shape {
        /// What is missing, e.g. `query.pages`.
        what: &'static str,
    },
}

impl AnswerError {
    /// The failure category: the API error's, or VALIDATION for a body that is not a
    /// MediaWiki answer.
    pub fn category(&self) -> ErrorCategory {
        match self {
            AnswerError::Api(e) => e.category(),
            AnswerError::NotJson { .. } | AnswerError::Shape { .. } => ErrorCategory::Validation,
        }
    }

    /// The stable error code: `wiki.api.<code>`, `wiki.badAnswer`.
    pub fn error_code(&self) -> String {
        match self {
            AnswerError::Api(e) => e.error_code(),
            AnswerError::NotJson { .. } | AnswerError::Shape { .. } => "wiki.badAnswer".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_to_categories() {
        assert_eq!(classify("maxlag"), ErrorCategory::Throttled);
        assert_eq!(classify("readonly"), ErrorCategory::Throttled);
        assert_eq!(classify("ratelimited"), ErrorCategory::Throttled);
        assert_eq!(
            classify("internal_api_error_DBQueryError"),
            ErrorCategory::Transient
        );
        assert_eq!(classify("toomanyvalues"), ErrorCategory::Validation);
        assert_eq!(classify("unknown_action"), ErrorCategory::Validation);
        assert_eq!(classify("readapidenied"), ErrorCategory::Permanent);
        assert_eq!(classify("something-new"), ErrorCategory::Unknown);
    }

    #[test]
    fn retry_after_comes_from_the_header() {
        let e = ApiError {
            code: "maxlag".into(),
            info: "lagged".into(),
            retry_after: Some(DEFAULT_MAXLAG_WAIT),
        };
        assert_eq!(
            e.clone().with_retry_after(Some("7")).retry_after,
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            e.clone().with_retry_after(None).retry_after,
            Some(DEFAULT_MAXLAG_WAIT)
        );
        assert_eq!(
            e.clone().with_retry_after(Some("soon")).retry_after,
            Some(DEFAULT_MAXLAG_WAIT)
        );
        assert_eq!(e.error_code(), "wiki.api.maxlag");
    }
}
