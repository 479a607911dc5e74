//! `rip-discover`'s command line: clap derive, doc comments as the help text.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::Parser;
use regex::Regex;
use rip_url::Canonicalizer;

pub mod render_args;
pub mod shared_args;
pub mod wiki_args;

/// Crawl a site breadth first from start URLs and write a `ref` record for every target
/// link found (with depth, parent, link text), `expected` records for URLs robots.txt
/// disallows, `failure` records for pages that failed, and a closing `summary`.
///
/// Start URLs come as arguments, or as `ref` records on stdin (other records pass
/// through). Scope, as the reference's link crawler: `--domain` (considered at all),
/// `--follow` (traversed: the reference's delimiter), `--target` (collected among the
/// traversed). Pages go through the shared cache, so a `rip-fetch` after this finds them
/// there. Exit code 3 when a start URL cannot be fetched; 2 when a page that is not a
/// target failed.
#[derive(Debug, Parser)]
#[command(
    name = "rip-discover",
    version,
    about = "The link crawler: BFS from start URLs within three scope regexes, robots.txt and \
             sitemaps, streaming `ref` records, resumable."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: rip_cli::StageArgs,

    /// Start URLs (without any, `ref` records are read from stdin).
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,

    /// Links must match this regex to be considered at all (default: the start URLs'
    /// origins).
    #[arg(help_heading = "Scope", long, value_name = "REGEX")]
    domain: Option<Regex>,
    /// Links matching this regex are traversed (the reference's "delimiter"; default: all
    /// considered links).
    #[arg(
        help_heading = "Scope",
        long,
        value_name = "REGEX",
        alias = "delimiter"
    )]
    follow: Option<Regex>,
    /// Traversed links matching this regex are written as refs (default: every traversed
    /// link). Others are traversed but not written.
    #[arg(help_heading = "Scope", long, value_name = "REGEX")]
    target: Option<Regex>,
    /// Follow links up to this depth (start URLs are depth 0).
    #[arg(help_heading = "Budgets", long, value_name = "N")]
    max_depth: Option<u32>,
    /// Write at most this many targets, then stop.
    #[arg(help_heading = "Budgets", long, value_name = "N")]
    max_pages: Option<u64>,
    /// Start at most this many fetches (pages and sitemaps, cache hits included), then stop.
    #[arg(help_heading = "Budgets", long, value_name = "N")]
    max_requests: Option<u64>,

    /// Follow `rel="nofollow"` links too (and links on pages whose robots meta tag says
    /// nofollow).
    #[arg(help_heading = "Scope", long)]
    follow_nofollow: bool,
    /// Drop this query parameter from URLs (repeatable; `name*` drops a prefix). `utm_*`
    /// is always dropped unless --keep-utm.
    #[arg(help_heading = "Scope", long = "drop-param", value_name = "NAME")]
    drop_params: Vec<String>,
    /// Keep `utm_*` parameters.
    #[arg(help_heading = "Scope", long)]
    keep_utm: bool,

    /// Seed the crawl from the sitemaps named in robots.txt (or /sitemap.xml): XML,
    /// sitemap indexes, text and gzipped sitemaps.
    #[arg(help_heading = "Sitemaps", long)]
    sitemaps: bool,
    /// How deep sitemap indexes may nest.
    #[arg(help_heading = "Sitemaps", long, default_value_t = 2, value_name = "N")]
    sitemap_depth: u32,
    /// Sitemap files read at most.
    #[arg(
        help_heading = "Sitemaps",
        long,
        default_value_t = 1000,
        value_name = "N"
    )]
    max_sitemaps: usize,

    /// Context rules: the CSS selector of a listing row (e.g. `table.items tbody tr`); a
    /// link inside one gets `raw.rowText` and the --field values of its row.
    #[arg(help_heading = "Context rules", long, value_name = "SELECTOR")]
    row: Option<String>,
    /// A row field, `NAME=SELECTOR` (its text) or `NAME=SELECTOR@ATTR` (repeatable).
    #[arg(
        help_heading = "Context rules",
        long = "field",
        value_name = "NAME=SELECTOR",
        requires = "row"
    )]
    fields: Vec<String>,
    /// Apply the context rules only to pages whose URL matches.
    #[arg(
        help_heading = "Context rules",
        long,
        value_name = "REGEX",
        requires = "row"
    )]
    context_pages: Option<Regex>,

    /// Write the refs at the end, deduplicated, in numeric-aware order (item-9 before
    /// item-10), instead of as they are found.
    #[arg(help_heading = "Output and resume", long)]
    sorted: bool,
    /// Persist the crawl (or the MediaWiki listing) in this folder; rerunning the same
    /// command resumes it.
    #[arg(help_heading = "Output and resume", long, value_name = "DIR")]
    state: Option<PathBuf>,
    /// Memory for URLs waiting in the frontier (estimated); past it they wait in a
    /// temporary file (in TMPDIR, removed at exit), so a crawl of millions of pages stays
    /// within this much for its queue.
    #[arg(help_heading = "Budgets", long, value_name = "SIZE", default_value = "32MiB", value_parser = rip_cli::parse_size)]
    frontier_memory: usize,
    #[command(flatten, next_help_heading = "Output and resume")]
    warc: rip_cli::WarcArgs,

    /// Crawl nothing: say, for each of these URLs, what this crawl would do with it and
    /// which rule decides (canonicalisation, --domain or the start URLs' origins, --follow,
    /// --target, robots.txt). One JSON line per URL, readable text on a terminal.
    /// robots.txt is fetched for the URLs in scope (not with --ignore-robots); no page is.
    /// Give the start URLs before it.
    #[arg(help_heading = "Dry run", long, value_name = "URL", num_args = 1.., conflicts_with = "warc")]
    pub explain: Vec<String>,
    /// The readable form of --explain, also when stdout is not a terminal.
    #[arg(help_heading = "Dry run", long, requires = "explain")]
    pub explain_text: bool,

    /// Crawl nothing: read `page` records on stdin (`rip-warc read crawl.warc.gz`,
    /// rip-fetch's output), pass every record through, and at the end write a `ref` for each
    /// link of those pages the scope keeps as a target and the input did not carry (no
    /// record of that URL came through): an archive's gaps, once per URL (depth 1, parent
    /// the page). Without --domain, the domain is the pages' own origins (and the start
    /// URLs').
    #[arg(help_heading = "Dry run", long, conflicts_with_all = ["explain", "warc", "state"])]
    pub from_pages: bool,

    /// HTTP: politeness, retries, timeouts, headers, proxy, robots.txt, cache (the same
    /// flags as rip-fetch's, under the same headings).
    #[command(flatten)]
    pub http: rip_cli::http::HttpArgs,

    #[command(flatten)]
    pub render: render_args::RenderArgs,

    #[command(flatten)]
    pub wiki: wiki_args::WikiArgs,

    #[command(flatten)]
    pub shared: shared_args::SharedArgs,
    #[command(flatten)]
    pub metrics: rip_cli::metrics::MetricsArgs,
}

/// The command line parsed, `-h` short (the first sentence of each flag's help; the HTTP
/// flags, rip-fetch's, only under `--help`) and `--help` whole.
pub fn parse() -> Cli {
    rip_cli::usage::parse_with::<Cli>(|cmd| {
        rip_cli::help::short_help(cmd, rip_cli::http::HEADINGS, rip_cli::http::SHORT_NOTE)
    })
}

impl Cli {
    /// The library's configuration.
    pub fn config(&self) -> anyhow::Result<rip_discover::Config> {
        let mut canon = if self.keep_utm {
            Canonicalizer::keeping_all_params()
        } else {
            Canonicalizer::default()
        };
        canon = canon.drop_params(&self.drop_params);
        for u in &self.urls {
            canon
                .parse(u)
                .with_context(|| format!("bad start URL `{u}` (hint: an absolute http(s) URL)"))?;
        }
        let context = match &self.row {
            Some(row) => Some(rip_discover::ContextRules::new(
                row,
                &self.fields,
                self.context_pages.clone(),
            )?),
            None => None,
        };
        let sitemap_limits = rip_discover::sitemap::Limits {
            max_index_depth: self.sitemap_depth,
            max_files: self.max_sitemaps,
            ..Default::default()
        };
        Ok(rip_discover::Config {
            http: self.http.config(),
            starts: self.urls.clone(),
            domain: self.domain.clone(),
            follow: self.follow.clone(),
            target: self.target.clone(),
            canon,
            follow_nofollow: self.follow_nofollow,
            max_depth: self.max_depth,
            max_pages: self.max_pages,
            max_requests: self.max_requests,
            sitemaps: self.sitemaps,
            sitemap_limits,
            context,
            sorted: self.sorted,
            state_dir: self.state.clone(),
            frontier_memory: self.frontier_memory,
            concurrency: self.http.concurrency.max(1),
            render: self.render.settings()?,
            render_auto: self.render.auto(),
            warc: self.warc.config(),
            ..Default::default()
        })
    }
}
