//! `rip-fetch`: see the `rip_fetch` library. This file is glue: arguments → config → run.

use rip_bin::fetch as args;

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;

fn main() -> ExitCode {
    let cli = args::parse();
    cli.common.init_logging();
    rip_cli::raise_open_files_limit();
    rip_cli::exit_with("rip-fetch", run(cli))
}

fn run(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    let _metrics = cli.metrics.start("rip-fetch", cli.common.quiet)?;
    let (input, pipe) = cli.urls.open_pipe(&cli.common, rip_fetch::STAGE)?;
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
    let config = rip_fetch::Config {
        http: cli.http.config(),
        window: cli.http.concurrency.max(1) * 4,
        queue_memory: cli.queue_memory,
        ordered: cli.ordered,
        wiki_expand: !cli.no_wiki_expand,
        pipe,
        on_progress: progress.is_visible().then_some(on_progress),
        warc: cli.warc.config(),
    };
    let runtime = runtime(cli.threads)?;
    let summary = runtime.block_on(rip_fetch::run(config, input, rip_cli::stdout()));
    progress.finish();
    let summary = summary?;
    if !cli.common.quiet {
        rip_core::stderr::say(rip_fetch::summary_line(&summary));
    }
    Ok(summary.status)
}

/// The async runtime `--threads` asks for: one thread runs everything on itself.
fn runtime(threads: Option<usize>) -> anyhow::Result<tokio::runtime::Runtime> {
    let mut builder = match threads {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        Some(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n.max(1));
            b
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    builder
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}
