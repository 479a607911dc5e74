//! Closed sets used in records: error categories, phases, charset sources, body encodings.

use serde::{Deserialize, Serialize};
use std::fmt;

/// What kind of failure happened. The set is closed; each category has a default
/// retryability, which a classifier rule may override per failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCategory {
    /// Connection refused or reset, DNS failure, TLS failure.
    Network,
    /// Connect, read-idle or total timeout.
    Timeout,
    /// HTTP 429 (or a rule saying so), usually with a Retry-After hint.
    Throttled,
    /// HTTP 5xx.
    Transient,
    /// HTTP 4xx other than 429.
    Permanent,
    /// The response or document broke a rule: bad body, schema violation, invalid URL.
    Validation,
    /// Out of disk, memory, or file handles; a write that failed.
    Resource,
    /// Anything else.
    Unknown,
}

impl ErrorCategory {
    /// Every category, in declaration order.
    pub const ALL: [ErrorCategory; 8] = [
        Self::Network,
        Self::Timeout,
        Self::Throttled,
        Self::Transient,
        Self::Permanent,
        Self::Validation,
        Self::Resource,
        Self::Unknown,
    ];

    /// Whether a failure of this category is worth retrying, absent a rule saying otherwise.
    pub fn retryable_by_default(self) -> bool {
        matches!(
            self,
            Self::Network | Self::Timeout | Self::Throttled | Self::Transient
        )
    }

    /// The wire name, e.g. `"THROTTLED"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Network => "NETWORK",
            Self::Timeout => "TIMEOUT",
            Self::Throttled => "THROTTLED",
            Self::Transient => "TRANSIENT",
            Self::Permanent => "PERMANENT",
            Self::Validation => "VALIDATION",
            Self::Resource => "RESOURCE",
            Self::Unknown => "UNKNOWN",
        }
    }
}

impl fmt::Display for ErrorCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ErrorCategory {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!(
                    "unknown error category `{s}` (expected one of NETWORK, TIMEOUT, THROTTLED, \
                     TRANSIENT, PERMANENT, VALIDATION, RESOURCE, UNKNOWN)"
                )
            })
    }
}

/// The stage phase in which a failure happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// Link discovery (`rip-discover`): a listing page that could not be fetched.
    Discover,
    /// Fetching (`rip-fetch`).
    Fetch,
    /// Extraction (`rip-parse`).
    Parse,
    /// Persisting (`rip-write`).
    Write,
}

impl Phase {
    /// The wire name, e.g. `"fetch"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Discover => "discover",
            Self::Fetch => "fetch",
            Self::Parse => "parse",
            Self::Write => "write",
        }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a page's charset was learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CharsetSource {
    /// A byte-order mark at the start of the body (wins over everything).
    Bom,
    /// The `charset` parameter of the `Content-Type` header.
    Header,
    /// A `<meta charset>` or `<meta http-equiv="Content-Type">` in the first bytes.
    Meta,
    /// Guessed from the bytes (valid UTF-8, or a detector).
    Sniffed,
    /// Nothing said; the default (UTF-8, falling back to windows-1252) was used.
    Default,
}

/// How a page's `body` is encoded on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BodyEncoding {
    /// The body is text, decoded to UTF-8 from `charset`.
    #[default]
    Text,
    /// The body is binary (an image, a PDF, undecodable bytes): standard base64.
    Base64,
}

impl BodyEncoding {
    /// True for [`BodyEncoding::Text`]; used to omit the field in the common case.
    pub fn is_text(&self) -> bool {
        matches!(self, Self::Text)
    }
}

/// Why a URL is a known gap rather than an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ExpectedSource {
    /// robots.txt disallows it.
    Robots,
    /// A failure-policy rule routed it to `expected` (e.g. "410: removed upstream").
    Policy,
    /// Anything else a stage knows is not an error (e.g. out of scope after a redirect).
    Other,
}
