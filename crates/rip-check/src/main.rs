//! `rip-check`: see the library docs. This file is glue.

use clap::Parser;
use std::process::ExitCode;

/// Check NDJSON records against the ripperoni record contract and pass them through.
///
/// Valid lines are written back unchanged; bad ones are reported on stderr as
/// `<input>:<line>: <what is wrong>` and dropped. Exit code 2 when any line was bad.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    common: rip_cli::StageArgs,

    /// Do not pass on the `summary` records of upstream stages.
    #[arg(long)]
    drop_summaries: bool,
}

fn main() -> ExitCode {
    let cli: Cli = rip_cli::parse();
    cli.common.init_logging();
    rip_cli::exit_with("rip-check", run(cli))
}

fn run(cli: Cli) -> anyhow::Result<rip_core::Status> {
    let stop = rip_cli::install_interrupt()?;
    let (input, input_name) = cli.common.open_input()?;
    let mut pipe = rip_core::PipeOptions::new("rip-check");
    pipe.input_name = input_name;
    pipe.strict = cli.common.strict;
    pipe.stop = Some(stop);
    let config = rip_check::Config {
        pipe: Some(pipe),
        drop_summaries: cli.drop_summaries,
    };
    let summary = rip_check::run(config, input, std::io::stdout())?;
    Ok(summary.status)
}
