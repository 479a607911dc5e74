//! `rip-write`: see the `rip_write` library. This file is glue: arguments → config → run.

use rip_bin::write as args;

use rip_write::{Config, Mode};
use std::process::ExitCode;

const PROGRAM: &str = "rip-write";

fn main() -> ExitCode {
    let mut cli: args::Cli = rip_cli::parse();
    cli.common.init_logging();
    let renamed = rip_cli::Renamed::new(PROGRAM, "--target", "--name");
    cli.name = renamed.take(cli.name, cli.old_target.take(), cli.common.quiet);
    rip_cli::exit_with(PROGRAM, run(cli))
}

fn run(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    let (input, pipe) = cli.common.open_pipe(PROGRAM)?;
    let mut config = Config::new(cli.out);
    config.pipe = pipe;
    config.target = cli.name;
    config.mode = match (cli.format, cli.jsonl) {
        (Some(f), _) => f.into(),
        (None, true) => Mode::Jsonl,
        (None, false) => Mode::Files,
    };
    config.columns = rip_write::feed::columns::ColumnChoice::new(cli.fields, cli.rules.as_deref())?;
    config.row_group = rip_write::feed::parquet_table::RowGroupLimit {
        rows: cli.row_group_rows.max(1),
        bytes: cli.row_group_size.max(1),
    };
    config.layout = cli.layout.map(Into::into);
    config.markdown = cli.markdown;
    config.raw = cli.raw;
    config.failures_file = !cli.no_failures_file;
    config.sync = cli.sync;
    let summary = rip_write::run(config, input, rip_cli::stdout())?;
    Ok(summary.status)
}
