//! `rip-fetch`: see the library docs. This file is glue: arguments → config → run.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;

/// mimalloc: every fetch allocates headers, URLs and a page record, from whichever runtime
/// thread runs it, where it measured faster than glibc's allocator (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Fetch every `ref` record on the input: write one `page`, `failure` or `expected` per ref,
/// pass every other record through, end with a `summary`.
///
/// Politeness (a per-host gap, robots.txt, Retry-After) holds across every process that
/// shares the cache folder. Exit code 2 when any ref failed.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    common: rip_cli::StageArgs,

    #[command(flatten)]
    http: rip_http::cli::HttpArgs,

    /// Write records in input order (default: as fetches end).
    #[arg(long)]
    ordered: bool,
    /// Worker threads of the async runtime (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

fn main() -> ExitCode {
    let cli: Cli = rip_cli::parse();
    cli.common.init_logging();
    rip_cli::exit_with("rip-fetch", run(cli))
}

fn run(cli: Cli) -> anyhow::Result<rip_core::Status> {
    let stop = rip_cli::install_interrupt()?;
    let (input, input_name) = cli.common.open_input()?;
    let progress = rip_cli::progress::Progress::new("rip-fetch", cli.common.quiet);
    let bar = progress.clone();
    let on_progress: rip_fetch::ProgressFn = Arc::new(move |p: &rip_fetch::Progress| {
        let rate = p.done as f64 / p.elapsed.as_secs_f64().max(0.001);
        bar.set(format!(
            "{}/{} done, {rate:.0}/s, {} failed, {} from cache, {} retries",
            p.done,
            p.refs,
            p.http.failed(),
            p.http.cache_hits,
            p.http.retries
        ));
    });
    let mut pipe = rip_core::PipeOptions::new(rip_fetch::STAGE);
    pipe.input_name = input_name;
    pipe.strict = cli.common.strict;
    pipe.stop = Some(stop);
    let config = rip_fetch::Config {
        http: cli.http.config(),
        window: cli.http.concurrency.max(1) * 4,
        ordered: cli.ordered,
        pipe,
        on_progress: progress.is_visible().then_some(on_progress),
    };
    let mut builder = match cli.threads {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        Some(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n.max(1));
            b
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = builder
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let summary = runtime.block_on(rip_fetch::run(config, input, std::io::stdout()));
    progress.finish();
    let summary = summary?;
    if !cli.common.quiet {
        eprintln!("{}", rip_fetch::summary_line(&summary));
    }
    Ok(summary.status)
}
