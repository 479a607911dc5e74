//! What can be wrong with a policy: a file that cannot be read or parsed, or a field whose
//! value the policy cannot use. Its own module, below both `policy` and `resolve` (which
//! checks the `resolve` section), so that neither imports the other for it.

use std::path::PathBuf;

/// What is wrong with a policy file or policy arguments.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("cannot read policy {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML of the policy's shape.
    #[error(
        "{path}: {} (hint: `rip-route --policy-schema` prints the file's schema)",
        error.to_string().trim_end()
    )]
    Toml {
        /// The file.
        path: PathBuf,
        /// The parser's error, with line and column.
        error: toml::de::Error,
    },
    /// The file is not valid JSON of the policy's shape.
    #[error("{path}: {error} (hint: `rip-route --policy-schema` prints the file's schema)")]
    Json {
        /// The file.
        path: PathBuf,
        /// The parser's error, with line and column.
        error: serde_json::Error,
    },
    /// A field has a value the policy cannot use.
    #[error("{path}: {field}")]
    Invalid {
        /// The file (or `<arguments>`).
        path: PathBuf,
        /// The field and what is wrong with it.
        field: FieldError,
    },
}

/// One field of a policy that cannot be used: where it is and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct FieldError {
    /// Where, e.g. `rules[2].url` or `resolve.budget`.
    pub field: String,
    /// What is wrong with its value.
    pub problem: FieldProblem,
}

impl FieldError {
    /// `problem` at `field`.
    pub fn new(field: impl Into<String>, problem: FieldProblem) -> Self {
        Self {
            field: field.into(),
            problem,
        }
    }
}

/// What is wrong with the value of one field, with a hint where one helps.
#[derive(Debug, thiserror::Error)]
pub enum FieldProblem {
    /// `maxRetryAfter` is not a duration.
    #[error("{0} (hint: a duration such as \"90s\" or \"5m\")")]
    Duration(humantime::DurationError),
    /// A rule's `status` is not a status, a class (`4xx`) or a range within 100-999.
    #[error("`{0}` is not a status (hint: 404, \"4xx\" or \"500-599\", within 100-999)")]
    Status(String),
    /// A rule's `url` is not a regex.
    #[error("not a valid regex: {0} (hint: escape `.` and `?` as `\\\\.` and `\\\\?`)")]
    UrlRegex(regex::Error),
    /// A `reason` on a rule whose route is not `expected`.
    #[error("only an `expected` route takes a reason")]
    ReasonOutsideExpected,
    /// `maxRetries` on a rule whose route is not `retry`.
    #[error("only a `retry` route takes maxRetries")]
    MaxRetriesOutsideRetry,
    /// `strategies` on a rule whose route is not `resolve`.
    #[error("only a `resolve` route takes strategies")]
    StrategiesOutsideResolve,
    /// An `expected` rule without a reason (or a blank one).
    #[error("an `expected` route needs a reason, e.g. reason = \"removed upstream\"")]
    MissingReason,
    /// `resolve.pattern` is not a regex.
    #[error("not a valid regex: {0}")]
    PatternRegex(regex::Error),
    /// `resolve.pattern` has no named group `category`.
    #[error("needs a named group `category`, e.g. `/(?P<category>[a-z]+)/\\d+\\.html`")]
    NoCategoryGroup,
    /// `resolve.searchUrl` is not an absolute URL template with `{q}`.
    #[error(
        "`{0}` is not an absolute URL template with `{{q}}` (hint: \"http://host/search?q={{q}}\")"
    )]
    SearchUrl(String),
    /// A render rule's `body` or `bodyLacks` is not a regex.
    #[error("not a valid regex: {0}")]
    BodyRegex(regex::Error),
    /// A render rule without a matcher.
    #[error(
        "a render rule needs `url`, `body`, `bodyLacks` or `auto` (hint: url = \".\" renders \
         every page, auto = true those whose content needs script)"
    )]
    NoRenderMatcher,
    /// `resolve.budget` is 0.
    #[error("must be at least 1 (hint: drop the resolve rule instead)")]
    ZeroBudget,
}
