//! `rip-write`: see the library docs. This file is glue.

use clap::Parser;
use rip_write::{Config, Mode};
use std::path::PathBuf;
use std::process::ExitCode;

/// Persist docs, error documents and expected records as files while passing every record
/// through unchanged.
///
/// Files go to <OUT>/<NAME>/<slug>.json (or <OUT>/<slug>.json without --name), written
/// atomically. A record that cannot be written is still passed on, followed by a `failure`
/// (category RESOURCE, phase write) saying so; the run goes on and exits 2.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    common: rip_cli::StageArgs,

    /// The output folder.
    #[arg(long, short = 'o', value_name = "DIR", env = "RIP_OUT")]
    out: PathBuf,

    /// A subfolder of --out for this scrape, e.g. the site's name.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// The old spelling of --name.
    #[arg(
        long = "target",
        short = 't',
        value_name = "NAME",
        hide = true,
        conflicts_with = "name"
    )]
    old_target: Option<String>,

    /// Append records to docs.jsonl, errors.jsonl and expected.jsonl instead of one file
    /// per record (each file replaced atomically at the end of the run).
    #[arg(long)]
    jsonl: bool,

    /// Also write a Markdown page, <slug>.md, beside each JSON file.
    #[arg(long, conflicts_with = "jsonl")]
    markdown: bool,

    /// Also write each page's body under raw/<slug>.<ext>.
    #[arg(long)]
    raw: bool,

    /// Do not write failures.json at the end.
    #[arg(long)]
    no_failures_file: bool,

    /// Sync each file to disk before renaming it into place (durable across power loss;
    /// slower).
    #[arg(long)]
    sync: bool,
}

const PROGRAM: &str = "rip-write";

fn main() -> ExitCode {
    let mut cli: Cli = rip_cli::parse();
    cli.common.init_logging();
    let renamed = rip_cli::Renamed::new(PROGRAM, "--target", "--name");
    cli.name = renamed.take(cli.name, cli.old_target.take(), cli.common.quiet);
    rip_cli::exit_with(PROGRAM, run(cli))
}

fn run(cli: Cli) -> anyhow::Result<rip_core::Status> {
    let stop = rip_cli::install_interrupt()?;
    let (input, input_name) = cli.common.open_input()?;
    let mut config = Config::new(cli.out);
    config.target = cli.name;
    config.mode = if cli.jsonl { Mode::Jsonl } else { Mode::Files };
    config.markdown = cli.markdown;
    config.raw = cli.raw;
    config.failures_file = !cli.no_failures_file;
    config.sync = cli.sync;
    config.pipe.input_name = input_name;
    config.pipe.strict = cli.common.strict;
    config.pipe.stop = Some(stop);
    let summary = rip_write::run(config, input, std::io::stdout())?;
    Ok(summary.status)
}
