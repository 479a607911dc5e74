//! `rip-route`: see the library docs. This file is glue.

use clap::Parser;
use rip_route::{Config, Policy};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Route each failure by policy: retry it, resolve it to candidate URLs, capture it as an
/// `error` document, or mark it `expected`. Every other record passes through unchanged.
///
/// Default policy: retry while the failure is retryable and its round is at most
/// --max-retries, else capture. In a pipeline with k rounds of `rip-fetch | rip-route`,
/// give every rip-route `--max-retries k-1`, so that the last one captures what is left,
/// or give the last one (and the one after rip-parse) `--final`.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    common: rip_cli::StageArgs,

    /// A policy file (TOML, or JSON when named *.json): ordered rules and resolve settings.
    #[arg(long, short = 'p', value_name = "FILE", env = "RIP_ROUTE_POLICY")]
    policy: Option<PathBuf>,

    /// Retry (or resolve) a failure only while its round, 1-based, is at most this
    /// [default: the policy's maxRetries, else 2].
    #[arg(long, value_name = "N")]
    max_retries: Option<u32>,

    /// Print the JSON Schema of policy files and exit.
    #[arg(long, exclusive = true)]
    policy_schema: bool,

    /// The last rip-route of the pipeline: no rip-fetch follows, so a failure that would
    /// be retried or resolved is captured instead (whatever --max-retries says). Give it to
    /// the rip-route of the last fetch round and to the one after rip-parse.
    #[arg(long = "final")]
    final_round: bool,

    /// The longest Retry-After hint honoured between rounds, e.g. 90s or 5m
    /// [default: the policy's maxRetryAfter, else 5m].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    max_retry_after: Option<Duration>,
}

fn main() -> ExitCode {
    let cli: Cli = rip_cli::parse();
    cli.common.init_logging();
    rip_cli::exit_with("rip-route", run(cli))
}

fn run(cli: Cli) -> anyhow::Result<rip_core::Status> {
    if cli.policy_schema {
        let schema = schemars::schema_for!(rip_route::PolicySpec);
        let text = serde_json::to_string_pretty(&schema)? + "\n";
        std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes())?;
        return Ok(rip_core::Status::Complete);
    }
    let mut policy = match &cli.policy {
        Some(path) => Policy::from_file(path)?,
        None => Policy::default(),
    };
    if let Some(n) = cli.max_retries {
        policy.max_retries = n;
    }
    if let Some(d) = cli.max_retry_after {
        policy.max_retry_after = d;
    }
    let stop = rip_cli::install_interrupt()?;
    let (input, input_name) = cli.common.open_input()?;
    let mut config = Config {
        policy,
        final_round: cli.final_round,
        ..Config::default()
    };
    config.pipe.input_name = input_name;
    config.pipe.strict = cli.common.strict;
    config.pipe.stop = Some(stop);
    let summary = rip_route::run(config, input, std::io::stdout())?;
    Ok(summary.status)
}
