//! `rip-route`'s command line.

use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

/// Which pages `--render` sends to the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RenderMode {
    /// The pages whose content needs script.
    Auto,
}

/// Route each failure by policy: retry it, resolve it to candidate URLs, capture it as an
/// `error` document, or mark it `expected`. Every other record passes through unchanged.
///
/// Default policy: retry while the failure is retryable and its round is at most
/// --max-retries, else capture. In a pipeline with k rounds of `rip-fetch | rip-route`,
/// give every rip-route `--max-retries k-1`, so that the last one captures what is left,
/// or give the last one (and the one after rip-parse) `--final`.
#[derive(Debug, Parser)]
#[command(
    name = "rip-route",
    version,
    about = "The failure-routing stage: retry, resolve, capture or expect each failure, by policy."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: rip_cli::StageArgs,

    /// A policy file (TOML, or JSON when named *.json): ordered rules and resolve settings.
    #[arg(long, short = 'p', value_name = "FILE", env = "RIP_ROUTE_POLICY")]
    pub policy: Option<PathBuf>,

    /// Retry (or resolve) a failure only while its round, 1-based, is at most this
    /// [default: the policy's maxRetries, else 2].
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,

    /// Print the JSON Schema of policy files and exit.
    #[arg(long, exclusive = true)]
    pub policy_schema: bool,

    /// The last rip-route of the pipeline: no rip-fetch follows, so a failure that would
    /// be retried or resolved is captured instead (whatever --max-retries says). Give it to
    /// the rip-route of the last fetch round and to the one after rip-parse.
    #[arg(long = "final")]
    pub final_round: bool,

    /// Send every fetched HTML page whose URL matches this regex on to the browser: a ref
    /// marked needsBrowser for the rip-render after this stage (repeatable; adds to the
    /// policy's render rules).
    #[arg(long, value_name = "REGEX")]
    pub render_url: Vec<String>,

    /// `auto`: send on to the browser every fetched HTML page whose content needs script,
    /// as measured in the HTML as sent (an empty application root, JSON data the body
    /// lacks, empty lists, ...), the decision learnt per URL pattern and checked again
    /// now and then; each ref says why (renderedBecause). Adds an `auto` render rule after
    /// the policy's.
    #[arg(long, value_name = "MODE", value_enum)]
    pub render: Option<RenderMode>,

    /// The longest Retry-After hint honoured between rounds, e.g. 90s or 5m
    /// [default: the policy's maxRetryAfter, else 5m].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub max_retry_after: Option<Duration>,
}
