//! `rip-testserver`: the test server as a process, for scripts and cross-process tests.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, ValueEnum};
use rip_testserver::{EXAMPLE_PLAN, FaultPlan, LinkGraph, LinkStyle, TestServer};

/// A fault-injecting HTTP/1.1 test server.
///
/// Serves a directory or a generated link graph on 127.0.0.1, applies a JSON fault plan,
/// and logs every request. Prints `listening on http://127.0.0.1:PORT` as its first line on
/// stdout, then serves until SIGINT or SIGTERM (exit 0). Other processes read the request
/// log at `GET /__rip/log` (JSON array; `?path=/p` filters), `GET /__rip/count?path=/p`,
/// or in the `--log` file (NDJSON, one line per request). `localhost:PORT` and
/// `127.0.0.1:PORT` reach the same server as two different hosts.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// Serve this directory (index.html for directories, 404 for missing files).
    #[arg(long, value_name = "DIR", conflicts_with = "graph")]
    dir: Option<PathBuf>,

    /// Serve a generated link graph of this many pages (/, /item-1, ...).
    #[arg(long, value_name = "PAGES")]
    graph: Option<u32>,

    /// The fault plan (JSON; `--example-plan` prints an example).
    #[arg(long, value_name = "PLAN.json")]
    faults: Option<PathBuf>,

    /// Also write each request as one NDJSON line to this file.
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,

    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    bind: SocketAddr,

    /// Do not serve the /__rip/ control endpoints.
    #[arg(long)]
    no_control: bool,

    /// Do not send computed ETag / Last-Modified headers nor answer 304.
    #[arg(long)]
    no_validators: bool,

    /// Print an example fault plan and exit.
    #[arg(long)]
    example_plan: bool,

    #[command(flatten)]
    graph_options: GraphOptions,
}

/// Options of `--graph`.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Link graph (with --graph)")]
struct GraphOptions {
    /// Seed of the hashed links.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Hashed links per page, besides home and children.
    #[arg(long, default_value_t = 3)]
    fan_out: u32,
    /// Children per page in the spanning tree.
    #[arg(long, default_value_t = 2)]
    tree_degree: u32,
    /// Number of /section-k/ prefixes (1 = none).
    #[arg(long, default_value_t = 1)]
    sections: u32,
    /// Zero-pad page numbers to this width (0 = item-9, item-10).
    #[arg(long, default_value_t = 0)]
    pad: usize,
    /// How links are written.
    #[arg(long, value_enum, default_value_t = StyleArg::Root)]
    link_style: StyleArg,
    /// Filler words per page.
    #[arg(long, default_value_t = 12)]
    filler_words: usize,
    /// Add a Disallow line to robots.txt (repeatable).
    #[arg(long, value_name = "PREFIX")]
    disallow: Vec<String>,
    /// Add a Crawl-delay line to robots.txt (seconds, e.g. 0.5).
    #[arg(long, value_name = "SECONDS")]
    crawl_delay: Option<String>,
    /// URLs per sitemap file; more pages make /sitemap.xml an index.
    #[arg(long, default_value_t = 50_000)]
    sitemap_chunk: u32,
    /// Point robots.txt and the sitemap index at the .xml.gz sitemaps.
    #[arg(long)]
    gzip_sitemaps: bool,
    /// Answer 404 for /robots.txt.
    #[arg(long)]
    no_robots: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum StyleArg {
    Root,
    Absolute,
    Relative,
}

impl GraphOptions {
    fn graph(&self, pages: u32) -> LinkGraph {
        let mut graph = LinkGraph::new(pages)
            .seed(self.seed)
            .fan_out(self.fan_out)
            .tree_degree(self.tree_degree)
            .sections(self.sections)
            .pad(self.pad)
            .link_style(match self.link_style {
                StyleArg::Root => LinkStyle::Root,
                StyleArg::Absolute => LinkStyle::Absolute,
                StyleArg::Relative => LinkStyle::Relative,
            })
            .filler_words(self.filler_words)
            .sitemap_chunk(self.sitemap_chunk)
            .gzip_sitemaps(self.gzip_sitemaps)
            .robots(!self.no_robots);
        for prefix in &self.disallow {
            graph = graph.disallow(prefix.clone());
        }
        if let Some(delay) = &self.crawl_delay {
            graph = graph.crawl_delay(delay.clone());
        }
        graph
    }
}

fn main() -> ExitCode {
    let args: Args = rip_cli::parse();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => rip_cli::exit_with_error("rip-testserver", &error),
    }
}

fn run(args: Args) -> anyhow::Result<()> {
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
        eprintln!("rip-testserver: stopped after {total} logged requests");
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
