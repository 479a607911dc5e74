//! `rip-route`: see the `rip_route` library. This file is glue: arguments → config → run.

use rip_bin::route as args;

use rip_route::{Config, Policy};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli: args::Cli = rip_cli::parse();
    cli.common.init_logging();
    rip_cli::exit_with("rip-route", run(cli))
}

fn run(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    if cli.policy_schema {
        let schema = rip_route::spec::json_schema();
        std::io::Write::write_all(&mut std::io::stdout(), schema.as_bytes())?;
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
    for url in &cli.render_url {
        let rule = rip_route::policy::RenderRule::for_url(url).map_err(|field| {
            rip_route::PolicyError::Invalid {
                path: "<arguments>".into(),
                field,
            }
        })?;
        policy.render.push(rule);
    }
    if cli.render.is_some() {
        policy.render.push(rip_route::policy::RenderRule::auto());
    }
    let (input, pipe) = cli.common.open_pipe("rip-route")?;
    let config = Config {
        policy,
        final_round: cli.final_round,
        pipe,
    };
    let summary = rip_route::run(config, input, rip_cli::stdout())?;
    if let Some(line) = rip_route::auto_line(&summary)
        && !cli.common.quiet
    {
        rip_core::stderr::say(line);
    }
    Ok(summary.status)
}
