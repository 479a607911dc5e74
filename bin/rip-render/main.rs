//! `rip-render`: see the `rip_render` library. This file is glue: arguments → config → run.

use rip_bin::render as args;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut cli = args::parse();
    cli.common.init_logging();
    let renamed = rip_cli::Renamed::new("rip-render", "--max-requests", "--max-page-requests");
    cli.max_page_requests = renamed
        .take(
            Some(cli.max_page_requests),
            cli.old_max_requests.take(),
            cli.common.quiet,
        )
        .unwrap_or(cli.max_page_requests);
    rip_cli::raise_open_files_limit();
    rip_cli::exit_with("rip-render", run(cli))
}

fn run(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    let _metrics = cli.metrics.start("rip-render", cli.common.quiet)?;
    let (input, pipe) = cli.urls.open_pipe(&cli.common, rip_render::STAGE)?;
    let config = rip_render::Config {
        http: cli.http.config(),
        render: rip_render::RenderSettings {
            tabs: cli.http.concurrency.max(1),
            wait: cli.wait.clone(),
            page_timeout: cli.page_timeout,
            allow: cli.allow(),
            max_requests: cli.max_page_requests,
            browser: rip_render::BrowserSettings {
                executable: cli.chromium.clone(),
                js_heap_mib: cli.js_heap.max(16),
                ..Default::default()
            },
            browser_retries: cli.browser_retries,
            session: cli.session,
        },
        threads: cli.threads.max(1),
        only: cli.only.clone(),
        only_marked: cli.only_marked,
        warc: cli.warc.config(),
        pipe: rip_core::PipeOptions {
            read_ahead_bytes: 64 << 20,
            ..pipe
        },
    };
    let summary = rip_render::run(config, input, rip_cli::stdout())?;
    if !cli.common.quiet {
        rip_core::stderr::say(rip_render::summary_line(&summary));
    }
    Ok(summary.status)
}
