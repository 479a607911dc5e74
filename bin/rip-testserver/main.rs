//! `rip-testserver`: the `rip_testserver` library's server as a process, for scripts and
//! cross-process tests. This file is glue: arguments → server → exit code.

mod args;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use rip_testserver::{EXAMPLE_PLAN, FaultPlan, TestServer};

fn main() -> ExitCode {
    let args: args::Args = rip_cli::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => rip_cli::exit_with_error("rip-testserver", &error),
    }
}

fn run(args: args::Args) -> anyhow::Result<()> {
    if args.example_plan {
        let mut out = std::io::stdout().lock();
        out.write_all(EXAMPLE_PLAN.as_bytes())
            .and_then(|()| out.flush())
            .context("writing the example plan")?;
        return Ok(());
    }
    let mut builder = TestServer::builder()
        .bind(args.bind)
        .control_endpoints(!args.no_control)
        .validators(!args.no_validators);
    if let Some(dir) = &args.dir {
        builder = builder.dir(dir);
    }
    if let Some(pages) = args.graph {
        builder = builder.graph(args.graph_options.graph(pages));
    }
    if let Some(path) = &args.faults {
        builder = builder.plan(FaultPlan::from_file(path)?);
    }
    if let Some(path) = &args.log {
        builder = builder.log_file(path);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    runtime.block_on(async move {
        let server = builder.start().await?;
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "listening on {}", server.origin())
                .and_then(|()| out.flush())
                .context("writing the address to stdout")?;
        }
        wait_for_signal().await?;
        let total = server.total();
        server.shutdown().await;
        rip_core::stderr::say(format_args!(
            "rip-testserver: stopped after {total} logged requests"
        ));
        Ok(())
    })
}

async fn wait_for_signal() -> anyhow::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("listening for SIGINT")?;
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    Ok(())
}
