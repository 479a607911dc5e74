//! `rip-testserver`'s command line.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use rip_testserver::{LinkGraph, LinkStyle};

/// A fault-injecting HTTP/1.1 test server.
///
/// Serves a directory or a generated link graph on 127.0.0.1, applies a JSON fault plan,
/// and logs every request. Prints `listening on http://127.0.0.1:PORT` as its first line on
/// stdout, then serves until SIGINT or SIGTERM (exit 0). Other processes read the request
/// log at `GET /__rip/log` (JSON array; `?path=/p` filters), `GET /__rip/count?path=/p`,
/// or in the `--log` file (NDJSON, one line per request). `localhost:PORT` and
/// `127.0.0.1:PORT` reach the same server as two different hosts.
#[derive(Debug, Parser)]
#[command(name = "rip-testserver", version)]
pub struct Args {
    /// Serve this directory (index.html for directories, 404 for missing files).
    #[arg(long, value_name = "DIR", conflicts_with = "graph")]
    pub dir: Option<PathBuf>,

    /// Serve a generated link graph of this many pages (/, /item-1, ...).
    #[arg(long, value_name = "PAGES")]
    pub graph: Option<u32>,

    /// The fault plan (JSON; `--example-plan` prints an example).
    #[arg(long, value_name = "PLAN.json")]
    pub faults: Option<PathBuf>,

    /// Also write each request as one NDJSON line to this file.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    pub bind: SocketAddr,

    /// Do not serve the /__rip/ control endpoints.
    #[arg(long)]
    pub no_control: bool,

    /// Do not send computed ETag / Last-Modified headers nor answer 304.
    #[arg(long)]
    pub no_validators: bool,

    /// Print an example fault plan and exit.
    #[arg(long)]
    pub example_plan: bool,

    #[command(flatten)]
    pub graph_options: GraphOptions,
}

/// Options of `--graph`.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Link graph (with --graph)")]
pub struct GraphOptions {
    /// Seed of the hashed links.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Hashed links per page, besides home and children.
    #[arg(long, default_value_t = 3)]
    pub fan_out: u32,
    /// Children per page in the spanning tree.
    #[arg(long, default_value_t = 2)]
    pub tree_degree: u32,
    /// Number of /section-k/ prefixes (1 = none).
    #[arg(long, default_value_t = 1)]
    pub sections: u32,
    /// Zero-pad page numbers to this width (0 = item-9, item-10).
    #[arg(long, default_value_t = 0)]
    pub pad: usize,
    /// How links are written.
    #[arg(long, value_enum, default_value_t = StyleArg::Root)]
    pub link_style: StyleArg,
    /// Filler words per page.
    #[arg(long, default_value_t = 12)]
    pub filler_words: usize,
    /// Add a Disallow line to robots.txt (repeatable).
    #[arg(long, value_name = "PREFIX")]
    pub disallow: Vec<String>,
    /// Add a Crawl-delay line to robots.txt (seconds, e.g. 0.5).
    #[arg(long, value_name = "SECONDS")]
    pub crawl_delay: Option<String>,
    /// URLs per sitemap file; more pages make /sitemap.xml an index.
    #[arg(long, default_value_t = 50_000)]
    pub sitemap_chunk: u32,
    /// Point robots.txt and the sitemap index at the .xml.gz sitemaps.
    #[arg(long)]
    pub gzip_sitemaps: bool,
    /// Answer 404 for /robots.txt.
    #[arg(long)]
    pub no_robots: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum StyleArg {
    Root,
    Absolute,
    Relative,
}

impl GraphOptions {
    /// The link graph these options describe, of `pages` pages.
    pub fn graph(&self, pages: u32) -> LinkGraph {
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
