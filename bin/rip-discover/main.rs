//! `rip-discover`: see the `rip_discover` library. This file is glue: arguments → config →
//! run.

use rip_bin::discover as args;

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;

fn main() -> ExitCode {
    let cli = args::parse();
    cli.common.init_logging();
    rip_cli::raise_open_files_limit();
    rip_cli::exit_with("rip-discover", run(cli))
}

fn run(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    let stop = rip_cli::install_interrupt()?;
    let _metrics = cli.metrics.start("rip-discover", cli.common.quiet)?;
    if !cli.explain.is_empty() {
        return run_explain(&cli);
    }
    if cli.wiki.active() {
        return run_wiki(cli);
    }
    if cli.from_pages {
        return run_from_pages(&cli, stop);
    }
    // Start URLs as arguments: stdin is read only when asked (`-i -`), so that
    // `rip-discover URL | rip-fetch` does not wait on a terminal.
    // A process joining a shared crawl without start URLs reads none either.
    let joining = cli.urls.is_empty() && cli.shared.crawl.is_some();
    let input = if (cli.urls.is_empty() && !joining) || cli.common.input.is_some() {
        Some(cli.common.open_input()?)
    } else {
        None
    };
    let input_name = input.as_ref().map_or("-".to_owned(), |(_, n)| n.clone());
    let progress = rip_cli::progress::Progress::new("rip-discover", cli.common.quiet);
    let bar = progress.clone();
    let on_progress: rip_discover::ProgressFn = Arc::new(move |p: &rip_discover::Progress| {
        let rate = p.done as f64 / p.elapsed.as_secs_f64().max(0.001);
        bar.set(format!(
            "depth {}: {} pages, {} targets, {} queued, {} in flight, {rate:.0} pages/s, {} failed",
            p.depth,
            p.done,
            p.targets,
            p.queued,
            p.in_flight,
            p.http.failed()
        ));
    });
    let mut config = cli.config()?;
    config.pipe = cli
        .common
        .pipe_options(rip_discover::STAGE, input_name, stop);
    config.on_progress = progress.is_visible().then_some(on_progress);
    config.shared = cli.shared.config(cli.common.quiet);
    let quiet = cli.common.quiet;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let summary = runtime.block_on(rip_discover::run(
        config,
        input.map(|(r, _)| r),
        rip_cli::stdout(),
    ));
    progress.finish();
    let summary = summary?;
    if !quiet {
        rip_core::stderr::say(rip_discover::summary_line(&summary));
    }
    Ok(summary.status)
}

/// `--from-pages`: the links of the pages read on the input, as refs; no fetch.
fn run_from_pages(
    cli: &args::Cli,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> anyhow::Result<rip_core::Status> {
    let (input, input_name) = cli.common.open_input()?;
    let mut config = cli.config()?;
    config.pipe = cli
        .common
        .pipe_options(rip_discover::STAGE, input_name, stop);
    let summary = rip_discover::from_pages::run(&config, input, rip_cli::stdout())?;
    if !cli.common.quiet {
        rip_core::stderr::say(format!(
            "rip-discover --from-pages: {} refs, links of the {} HTML pages read ({} pages) \
             that the input did not carry ({} it did)",
            summary.counters.get("targets").copied().unwrap_or(0),
            summary.counters.get("htmlPages").copied().unwrap_or(0),
            summary.counters.get("pages").copied().unwrap_or(0),
            summary.counters.get("carried").copied().unwrap_or(0),
        ));
    }
    Ok(summary.status)
}

/// `--mediawiki`: list the wiki's pages (no crawl, no input).
fn run_wiki(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    let config = cli.config()?;
    if config.warc.is_some() {
        anyhow::bail!(
            "--warc is not written in MediaWiki mode (hint: archive the pages with \
             `rip-fetch --warc DIR` on the refs this writes)"
        );
    }
    let mut wiki = cli.wiki.config(config.max_pages);
    wiki.state_dir = config.state_dir.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let summary = runtime.block_on(rip_wikilist::run(wiki, config.http, rip_cli::stdout()))?;
    if !cli.common.quiet {
        rip_core::stderr::say(rip_wikilist::summary_line(&summary));
    }
    Ok(summary.status)
}

/// `--explain URL…`: what the crawl would do with each URL, and why; no crawl.
fn run_explain(cli: &args::Cli) -> anyhow::Result<rip_core::Status> {
    use std::io::{IsTerminal as _, Write as _};
    let config = cli.config()?;
    if config.starts.is_empty() && config.domain.is_none() {
        // Without them the domain is nobody's origins: every URL would be out of it.
        anyhow::bail!(
            "--explain judges URLs by a crawl's scope, and this one has no start URLs and no \
             --domain (hint: give the crawl's start URLs first, `rip-discover URL… --explain \
             URL…`, or a --domain regex)"
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let explained = runtime.block_on(rip_discover::explain::explain(&config, &cli.explain))?;
    let readable = cli.explain_text || std::io::stdout().is_terminal();
    let mut out = std::io::BufWriter::new(rip_cli::stdout());
    for e in &explained {
        if readable {
            out.write_all(rip_discover::explain::text(e).as_bytes())?;
        } else {
            serde_json::to_writer(&mut out, e)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(rip_core::Status::Complete)
}
