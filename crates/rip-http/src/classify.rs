//! The error classifier: ordered rules mapping a status or a transport error to an
//! [`ErrorCategory`], a stable code, and whether a retry may help.
//!
//! Built-in rules, after the user's: 429 is `THROTTLED` (with its Retry-After hint), 5xx
//! `TRANSIENT`, other 4xx `PERMANENT`; resets, refusals and DNS failures `NETWORK`; timeouts
//! `TIMEOUT`; malformed responses `VALIDATION`; out of disk or memory `RESOURCE`.
//!
//! User rules ([`ClassifyRule`]) come first, e.g. "403 on this host is THROTTLED". Their
//! text form, as binaries take it: `STATUS[@HOST]=CATEGORY[:retry|:noretry]`, where
//! `STATUS` is a code (`403`), a class (`5xx`) or an error code prefix (`network.reset`),
//! e.g. `403@example.com=THROTTLED`, `410=PERMANENT:noretry`.

use std::error::Error as StdError;
use std::io;
use std::time::{Duration, SystemTime};

use rip_core::ErrorCategory;

/// The verdict on one failed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classification {
    /// What kind of failure.
    pub category: ErrorCategory,
    /// Whether trying again may help.
    pub retryable: bool,
    /// A stable dotted code, e.g. `httpError.throttled`, `network.reset`, `timeout.read`.
    pub code: String,
    /// Human-readable detail, e.g. `HTTP 429 (Retry-After: 2)`.
    pub message: String,
    /// The server's Retry-After hint, when it sent one.
    pub retry_after: Option<Duration>,
}

/// What happened to a request, before classification.
#[derive(Debug, Clone)]
pub enum Observation<'a> {
    /// A response arrived with a status that is not a success.
    Status {
        /// The status code.
        status: u16,
        /// The `Retry-After` header, raw.
        retry_after: Option<&'a str>,
    },
    /// No (complete) response: a transport error, already reduced to a code.
    Transport {
        /// A dotted code such as `network.reset` (see [`transport_code`]).
        code: &'static str,
        /// Detail.
        message: String,
    },
}

/// What a user rule matches on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleMatch {
    /// One status code.
    Status(u16),
    /// A status class: 4 for `4xx`, 5 for `5xx`.
    Class(u16),
    /// Transport error codes starting with this, e.g. `network` or `timeout.read`.
    Code(String),
}

/// A user classification rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassifyRule {
    /// What it matches.
    pub matches: RuleMatch,
    /// Only for this host (exact, lower case); `None`: every host.
    pub host: Option<String>,
    /// The category it assigns.
    pub category: ErrorCategory,
    /// Retryability; `None`: the category's default.
    pub retryable: Option<bool>,
}

/// Why a classification rule does not parse; each names the rule as written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// No `=` between what is matched and the category.
    #[error("bad rule `{rule}`: no `=` {}", RULE_HINT)]
    NoEquals {
        /// The rule as written.
        rule: String,
    },
    /// Nothing before the `=` (or the `@`).
    #[error("bad rule `{rule}`: nothing to match {}", RULE_HINT)]
    NothingToMatch {
        /// The rule as written.
        rule: String,
    },
    /// The category is not one of the error categories.
    #[error("bad rule `{rule}`: {why}")]
    Category {
        /// The rule as written.
        rule: String,
        /// What the category parser said.
        why: String,
    },
    /// After the category's `:`, neither `retry` nor `noretry`.
    #[error(
        "bad rule `{rule}`: `{given}` is not `retry` or `noretry` {}",
        RULE_HINT
    )]
    Retry {
        /// The rule as written.
        rule: String,
        /// What came after the `:`.
        given: String,
    },
}

const RULE_HINT: &str =
    "(hint: STATUS[@HOST]=CATEGORY[:retry|:noretry], e.g. 403@example.com=THROTTLED)";

impl std::str::FromStr for ClassifyRule {
    type Err = RuleError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let rule = || s.to_owned();
        let (lhs, rhs) = s
            .split_once('=')
            .ok_or_else(|| RuleError::NoEquals { rule: rule() })?;
        let (what, host) = match lhs.split_once('@') {
            Some((w, h)) => (w.trim(), Some(h.trim().to_ascii_lowercase())),
            None => (lhs.trim(), None),
        };
        let matches = rule_match(what).ok_or_else(|| RuleError::NothingToMatch { rule: rule() })?;
        let (cat, retry) = match rhs.split_once(':') {
            Some((c, r)) => (c.trim(), Some(r.trim())),
            None => (rhs.trim(), None),
        };
        let category = cat
            .parse::<ErrorCategory>()
            .map_err(|e| RuleError::Category {
                rule: rule(),
                why: e.to_string(),
            })?;
        let retryable = match retry {
            None => None,
            Some("retry") => Some(true),
            Some("noretry") => Some(false),
            Some(other) => {
                return Err(RuleError::Retry {
                    rule: rule(),
                    given: other.to_owned(),
                });
            }
        };
        Ok(Self {
            matches,
            host,
            category,
            retryable,
        })
    }
}

/// What the left of a rule matches: a status (`403`), a class (`5xx`), or a code prefix;
/// `None` when empty.
fn rule_match(what: &str) -> Option<RuleMatch> {
    if let Ok(code) = what.parse::<u16>() {
        Some(RuleMatch::Status(code))
    } else if what.len() == 3
        && what[1..].eq_ignore_ascii_case("xx")
        && what.as_bytes()[0].is_ascii_digit()
    {
        Some(RuleMatch::Class(u16::from(what.as_bytes()[0] - b'0')))
    } else if !what.is_empty() {
        Some(RuleMatch::Code(what.to_owned()))
    } else {
        None
    }
}

/// Ordered rules: the user's first, then the built-in ones.
#[derive(Debug, Clone, Default)]
pub struct Classifier {
    rules: Vec<ClassifyRule>,
}

impl Classifier {
    /// A classifier trying `rules` before the built-in ones.
    pub fn new(rules: Vec<ClassifyRule>) -> Self {
        Self { rules }
    }

    /// Classifies an observation on `host` (lower case), at wall-clock `now` (for HTTP-date
    /// Retry-After values).
    pub fn classify(&self, host: &str, obs: &Observation<'_>, now: SystemTime) -> Classification {
        let mut c = builtin(obs, now);
        let user = self.rules.iter().find(|r| {
            r.host.as_deref().is_none_or(|h| h == host)
                && match (&r.matches, obs) {
                    (RuleMatch::Status(s), Observation::Status { status, .. }) => s == status,
                    (RuleMatch::Class(k), Observation::Status { status, .. }) => status / 100 == *k,
                    (RuleMatch::Code(p), _) => c.code.starts_with(p.as_str()),
                    _ => false,
                }
        });
        if let Some(rule) = user {
            c.category = rule.category;
            c.retryable = rule
                .retryable
                .unwrap_or_else(|| rule.category.retryable_by_default());
            c.code = format!("{}.rule", category_code(rule.category));
        }
        c
    }
}

fn category_code(c: ErrorCategory) -> &'static str {
    match c {
        ErrorCategory::Network => "network",
        ErrorCategory::Timeout => "timeout",
        ErrorCategory::Throttled => "httpError.throttled",
        ErrorCategory::Transient => "httpError.transient",
        ErrorCategory::Permanent => "httpError.permanent",
        ErrorCategory::Validation => "validation",
        ErrorCategory::Resource => "resource",
        ErrorCategory::Unknown => "unknown",
    }
}

fn builtin(obs: &Observation<'_>, now: SystemTime) -> Classification {
    match obs {
        Observation::Status {
            status,
            retry_after,
        } => {
            let hint = retry_after.and_then(|v| parse_retry_after(v, now));
            let (category, code) = match status {
                429 => (ErrorCategory::Throttled, "httpError.throttled"),
                500..=599 => (ErrorCategory::Transient, "httpError.transient"),
                400..=499 => (ErrorCategory::Permanent, "httpError.permanent"),
                _ => (ErrorCategory::Unknown, "httpError.unexpected"),
            };
            let message = match retry_after {
                Some(v) => format!("HTTP {status} (Retry-After: {v})"),
                None => format!("HTTP {status}"),
            };
            Classification {
                category,
                retryable: category.retryable_by_default(),
                code: code.to_owned(),
                message,
                retry_after: hint,
            }
        }
        Observation::Transport { code, message } if *code == crate::network::DENIED_CODE => {
            Classification {
                category: ErrorCategory::Permanent,
                retryable: false,
                code: (*code).to_owned(),
                message: message.clone(),
                retry_after: None,
            }
        }
        Observation::Transport { code, message } => {
            let category = match code.split('.').next() {
                Some("network") => ErrorCategory::Network,
                Some("timeout") => ErrorCategory::Timeout,
                Some("validation") => ErrorCategory::Validation,
                Some("resource") => ErrorCategory::Resource,
                _ => ErrorCategory::Unknown,
            };
            Classification {
                category,
                retryable: category.retryable_by_default(),
                code: (*code).to_owned(),
                message: message.clone(),
                retry_after: None,
            }
        }
    }
}

/// Parses a `Retry-After` value: delay-seconds or an HTTP-date (relative to `now`; a date
/// in the past is zero). `None` when malformed.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Reduces a transport error to a stable code by walking its `source()` chain (a reset
/// hides deep inside reqwest's error as an `io::Error`).
pub fn transport_code(err: &reqwest::Error) -> &'static str {
    let mut source: Option<&(dyn StdError + 'static)> = Some(err);
    let mut text = String::new();
    while let Some(e) = source {
        if e.is::<crate::network::Denied>() {
            return crate::network::DENIED_CODE;
        }
        if let Some(io) = e.downcast_ref::<io::Error>()
            && let Some(code) = io_code(io)
        {
            return code;
        }
        text.push_str(&e.to_string().to_ascii_lowercase());
        text.push(' ');
        source = e.source();
    }
    if err.is_timeout() {
        if err.is_connect() {
            return "timeout.connect";
        }
        return "timeout.read";
    }
    if text.contains("dns error") || text.contains("failed to lookup address") {
        return "network.dns";
    }
    if text.contains("certificate") || text.contains("tls") || text.contains("handshake") {
        return "network.tls";
    }
    if err.is_connect() {
        return "network.connect";
    }
    if text.contains("too large") || text.contains("too many headers") {
        return "validation.headers";
    }
    if text.contains("invalid") && (text.contains("header") || text.contains("http")) {
        return "validation.malformed";
    }
    if text.contains("incomplete") || text.contains("end of file") || text.contains("closed") {
        return "network.incomplete";
    }
    if err.is_decode() {
        return "validation.decode";
    }
    if err.is_body() {
        return "network.body";
    }
    if err.is_request() {
        return "network.request";
    }
    "unknown.transport"
}

fn io_code(e: &io::Error) -> Option<&'static str> {
    use io::ErrorKind as K;
    Some(match e.kind() {
        K::ConnectionReset | K::ConnectionAborted => "network.reset",
        K::ConnectionRefused => "network.refused",
        K::BrokenPipe => "network.reset",
        K::UnexpectedEof => "network.incomplete",
        K::TimedOut => "timeout.read",
        K::StorageFull | K::QuotaExceeded => "resource.disk",
        K::OutOfMemory => "resource.memory",
        K::HostUnreachable | K::NetworkUnreachable | K::NetworkDown => "network.unreachable",
        _ => return None,
    })
}

/// A short description of an error and its causes, for `message`.
pub fn describe(err: &(dyn StdError + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        let s = e.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        source = e.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(c: &Classifier, host: &str, s: u16, ra: Option<&str>) -> Classification {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        c.classify(
            host,
            &Observation::Status {
                status: s,
                retry_after: ra,
            },
            now,
        )
    }

    #[test]
    fn builtin_statuses() {
        let c = Classifier::default();
        let t = status(&c, "h", 429, Some("2"));
        assert_eq!(t.category, ErrorCategory::Throttled);
        assert!(t.retryable);
        assert_eq!(t.retry_after, Some(Duration::from_secs(2)));
        assert_eq!(t.message, "HTTP 429 (Retry-After: 2)");
        assert_eq!(
            status(&c, "h", 503, None).category,
            ErrorCategory::Transient
        );
        let p = status(&c, "h", 404, None);
        assert_eq!(p.category, ErrorCategory::Permanent);
        assert!(!p.retryable);
        assert_eq!(p.code, "httpError.permanent");
    }

    #[test]
    fn retry_after_both_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(parse_retry_after(" 7 ", now), Some(Duration::from_secs(7)));
        let date = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(parse_retry_after(&date, now), Some(Duration::from_secs(30)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after(&past, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
    }

    #[test]
    fn user_rules_come_first_and_respect_host() {
        let rule: ClassifyRule = "403@slow.example=THROTTLED".parse().unwrap();
        let c = Classifier::new(vec![rule, "5xx=PERMANENT:noretry".parse().unwrap()]);
        let t = status(&c, "slow.example", 403, None);
        assert_eq!(t.category, ErrorCategory::Throttled);
        assert!(t.retryable);
        assert_eq!(
            status(&c, "other", 403, None).category,
            ErrorCategory::Permanent
        );
        let p = status(&c, "other", 502, None);
        assert_eq!(p.category, ErrorCategory::Permanent);
        assert!(!p.retryable);
        let code: ClassifyRule = "network.reset=PERMANENT".parse().unwrap();
        let c = Classifier::new(vec![code]);
        let obs = Observation::Transport {
            code: "network.reset",
            message: "reset".into(),
        };
        let r = c.classify("h", &obs, SystemTime::now());
        assert_eq!(r.category, ErrorCategory::Permanent);
    }

    #[test]
    fn bad_rules_are_explained() {
        let e = "403".parse::<ClassifyRule>().unwrap_err().to_string();
        assert!(e.contains("hint"), "{e}");
        let e = "403=SLOW".parse::<ClassifyRule>().unwrap_err().to_string();
        assert!(e.contains("unknown error category"), "{e}");
        let e = "403=THROTTLED:maybe"
            .parse::<ClassifyRule>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("maybe"), "{e}");
    }
}
