//! Errors of the library: starting a server and loading a fault plan.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listening socket could not be bound.
    #[error("cannot bind {addr}: {source} (hint: tests bind 127.0.0.1:0 and read the port back)")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        source: io::Error,
    },
    /// The directory to serve does not exist or cannot be read.
    #[error("cannot serve directory {path}: {source}")]
    Root {
        /// The directory asked for.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The NDJSON request log file could not be created.
    #[error("cannot create request log {path}: {source}")]
    LogFile {
        /// The log file asked for.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The background thread or its runtime could not be started.
    #[error("cannot start the server thread: {0}")]
    Thread(io::Error),
}

/// Why a fault plan could not be loaded or is invalid.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The plan file could not be read.
    #[error("cannot read fault plan {path}: {source}")]
    Read {
        /// The plan file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The plan is not JSON of the expected shape.
    #[error("fault plan {origin}: {source} (hint: see the crate docs for the format)")]
    Json {
        /// The file the plan came from, or `<string>`.
        origin: String,
        /// The JSON error, with its line and column.
        source: serde_json::Error,
    },
    /// The plan is well-formed JSON but one of its entries makes no sense.
    #[error("fault plan {origin}: {entry}: {problem}")]
    Invalid {
        /// The file the plan came from, or `<string>`.
        origin: String,
        /// Which entry, e.g. `rules[2].sequence[0]`.
        entry: String,
        /// What is wrong with it.
        problem: PlanProblem,
    },
}

/// What is wrong with one entry of a fault plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanProblem {
    /// A rule has none of `path`, `prefix`, `glob`, or more than one.
    #[error("a rule needs exactly one of `path`, `prefix` or `glob`")]
    Matcher,
    /// A path pattern does not start with `/`.
    #[error("pattern {0:?} must start with `/`")]
    Pattern(String),
    /// Two fields that exclude each other were both given.
    #[error("`{0}` and `{1}` cannot be combined")]
    Conflict(&'static str, &'static str),
    /// A status code outside 100..=999.
    #[error("status {0} is not a three-digit HTTP status")]
    Status(u16),
    /// A duration that humantime cannot parse.
    #[error("`{field}`: {value:?} is not a duration (hint: write \"250ms\", \"2s\", \"1m\")")]
    Duration {
        /// The field.
        field: &'static str,
        /// The value given.
        value: String,
    },
    /// A date that is neither RFC 3339 nor an HTTP-date.
    #[error(
        "`{field}`: {value:?} is not a date (hint: \"2024-01-01T00:00:00Z\" or \"Mon, 01 Jan 2024 00:00:00 GMT\")"
    )]
    Date {
        /// The field.
        field: &'static str,
        /// The value given.
        value: String,
    },
    /// `body_base64` is not valid base64.
    #[error("`body_base64` is not valid base64")]
    Base64,
    /// A header name or value that cannot be sent (empty name, CR or LF).
    #[error("header {0:?} cannot be sent (names are tokens, values have no CR/LF)")]
    Header(String),
    /// A count that must be positive was zero.
    #[error("`{0}` must be at least 1")]
    Zero(&'static str),
    /// A redirect chain or loop with no paths.
    #[error("`paths` must not be empty")]
    NoPaths,
}
