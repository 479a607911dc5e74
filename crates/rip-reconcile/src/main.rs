//! `rip-reconcile`: see the library docs. This file is glue.

use anyhow::Context as _;
use clap::Parser;
use rip_reconcile::{Reconciler, ReconcilerConfig, StreamInput};
use std::path::PathBuf;
use std::process::ExitCode;

/// Give every error document a verdict: capturedElsewhere, missing or dead.
///
/// Reads a whole stream (stdin or --input) and writes it back, every error document
/// with a `resolution`; or, with --dir, writes each verdict into the error document's
/// own file in a folder written by rip-write. Without --config every failure is
/// `missing` (the default reconciler).
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    common: rip_cli::StageArgs,

    /// Reconciler configuration (JSON): identity key, name match, dead rules.
    #[arg(long, value_name = "FILE", env = "RIP_RECONCILER")]
    config: Option<PathBuf>,
    /// The old spelling of --config (`-c` is the concurrency of the stages that fetch).
    #[arg(
        short = 'c',
        value_name = "FILE",
        hide = true,
        conflicts_with = "config"
    )]
    old_config: Option<PathBuf>,

    /// Print the JSON Schema of reconciler configurations and exit.
    #[arg(long, exclusive = true)]
    config_schema: bool,

    /// Reconcile the record files (`*.json`) of this output folder in place, instead of a
    /// stream; only the summary record is written to stdout.
    #[arg(long, value_name = "DIR", conflicts_with = "input")]
    dir: Option<PathBuf>,
}

const PROGRAM: &str = "rip-reconcile";

fn main() -> ExitCode {
    let mut cli: Cli = rip_cli::parse();
    cli.common.init_logging();
    let renamed = rip_cli::Renamed::new(PROGRAM, "-c", "--config");
    cli.config = renamed.take(cli.config, cli.old_config.take(), cli.common.quiet);
    rip_cli::exit_with(PROGRAM, run(cli))
}

fn run(cli: Cli) -> anyhow::Result<rip_core::Status> {
    if cli.config_schema {
        let schema = include_str!("../reconciler.schema.json");
        std::io::Write::write_all(&mut std::io::stdout(), schema.as_bytes())?;
        return Ok(rip_core::Status::Complete);
    }
    let reconciler = match &cli.config {
        None => Reconciler::default_reconciler(),
        Some(path) => {
            let config = ReconcilerConfig::load(path)?;
            Reconciler::from_config(&config, &path.display().to_string())?
        }
    };
    let summary = if let Some(dir) = &cli.dir {
        rip_reconcile::run_dir(&reconciler, dir, std::io::stdout())
            .with_context(|| format!("reconciling {}", dir.display()))?
    } else {
        let stop = rip_cli::install_interrupt()?;
        let mut opts = rip_core::PipeOptions::new("rip-reconcile");
        opts.strict = cli.common.strict;
        opts.stop = Some(stop);
        let input = match cli.common.input.as_deref() {
            Some(p) if p.as_os_str() != "-" && rip_reconcile::stream::is_rereadable(p) => {
                opts.input_name = p.display().to_string();
                StreamInput::File(p.to_owned())
            }
            other => {
                let (reader, name) = rip_cli::open_input(other)?;
                opts.input_name = name;
                StreamInput::Reader(reader)
            }
        };
        rip_reconcile::run_stream(&reconciler, opts, input, std::io::stdout())?
    };
    if !cli.common.quiet {
        let n = |k: &str| summary.counters.get(k).copied().unwrap_or(0);
        eprintln!(
            "rip-reconcile: {} failures: {} captured elsewhere, {} missing, {} dead",
            n("capturedElsewhere") + n("missing") + n("dead"),
            n("capturedElsewhere"),
            n("missing"),
            n("dead"),
        );
    }
    Ok(summary.status)
}
