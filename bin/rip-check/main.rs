//! `rip-check`: see the `rip_check` library. This file is glue: arguments → config → run.

use rip_bin::check as args;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli: args::Cli = rip_cli::parse();
    cli.common.init_logging();
    rip_cli::exit_with("rip-check", run(cli))
}

fn run(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    let (input, pipe) = cli.common.open_pipe("rip-check")?;
    let config = rip_check::Config {
        pipe: Some(pipe),
        drop_summaries: cli.drop_summaries,
    };
    let summary = rip_check::run(config, input, rip_cli::stdout())?;
    Ok(summary.status)
}
