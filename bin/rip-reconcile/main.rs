//! `rip-reconcile`: see the `rip_reconcile` library. This file is glue: arguments → config
//! → run.

use rip_bin::reconcile as args;

use anyhow::Context as _;
use rip_reconcile::{Reconciler, ReconcilerConfig, StreamInput};
use std::process::ExitCode;

const PROGRAM: &str = "rip-reconcile";

fn main() -> ExitCode {
    let mut cli: args::Cli = rip_cli::parse();
    cli.common.init_logging();
    let renamed = rip_cli::Renamed::new(PROGRAM, "-c", "--config");
    cli.config = renamed.take(cli.config, cli.old_config.take(), cli.common.quiet);
    rip_cli::exit_with(PROGRAM, run(cli))
}

fn run(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    if cli.config_schema {
        let schema = include_str!("../../docs/schemas/reconciler.schema.json");
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
        rip_reconcile::run_dir(&reconciler, dir, rip_cli::stdout())
            .with_context(|| format!("reconciling {}", dir.display()))?
    } else {
        let stop = rip_cli::install_interrupt()?;
        let (input, input_name) = match cli.common.input.as_deref() {
            Some(p) if p.as_os_str() != "-" && rip_reconcile::stream::is_rereadable(p) => {
                (StreamInput::File(p.to_owned()), p.display().to_string())
            }
            other => {
                let (reader, name) = rip_cli::open_input(other)?;
                (StreamInput::Reader(reader), name)
            }
        };
        let opts = cli.common.pipe_options(PROGRAM, input_name, stop);
        rip_reconcile::run_stream(&reconciler, opts, input, rip_cli::stdout())?
    };
    if !cli.common.quiet {
        let n = |k: &str| summary.counters.get(k).copied().unwrap_or(0);
        rip_core::stderr::say(format_args!(
            "rip-reconcile: {} failures: {} captured elsewhere, {} missing, {} dead",
            n("capturedElsewhere") + n("missing") + n("dead"),
            n("capturedElsewhere"),
            n("missing"),
            n("dead"),
        ));
    }
    Ok(summary.status)
}
