//! `rip-fetch`'s command line.

use clap::Parser;

/// Fetch every `ref` record on the input: write one `page`, `failure` or `expected` per ref,
/// pass every other record through, end with a `summary`.
///
/// Politeness (a per-host gap, robots.txt, Retry-After) holds across every process that
/// shares the cache folder. Exit code 2 when any ref failed.
#[derive(Debug, Parser)]
#[command(
    name = "rip-fetch",
    version,
    about = "The fetch stage: one page, failure or expected record per ref, polite, cached, \
             never losing a URL."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: rip_cli::StageArgs,

    #[command(flatten)]
    pub urls: rip_cli::UrlArgs,

    #[command(flatten)]
    pub http: rip_cli::http::HttpArgs,

    /// Write records in input order (default: as fetches end). The cost: only `-c`×4 refs
    /// are read ahead of the oldest not yet written, so grouped input keeps fewer hosts
    /// busy and a slow host holds the output back.
    #[arg(long)]
    pub ordered: bool,
    /// Memory for refs waiting for their host's turn (estimated); refs past it wait in a
    /// temporary file (in TMPDIR, removed at exit). Refs are read as they come whatever
    /// the hosts' gaps, so every host with work is served as soon as its gap allows.
    #[arg(long, value_name = "SIZE", default_value = "32MiB", value_parser = rip_cli::parse_size)]
    pub queue_memory: usize,
    /// Do not ask a wiki to expand the template calls of its pages' infoboxes (one request
    /// per many pages). Pages then carry no expansions, and rip-parse shows no value
    /// holding a template (it is null, with a `wiki.unexpanded` warning).
    #[arg(long)]
    pub no_wiki_expand: bool,
    #[command(flatten)]
    pub warc: rip_cli::WarcArgs,
    /// Worker threads of the async runtime (default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub metrics: rip_cli::metrics::MetricsArgs,
}

/// The command line parsed, `-h` short (the first sentence of each flag's help, the
/// flags grouped by what they govern, the retry flags only under `--help`) and `--help`
/// whole.
pub fn parse() -> Cli {
    rip_cli::usage::parse_with::<Cli>(|cmd| {
        rip_cli::help::short_help(
            cmd,
            &[rip_cli::http::RETRIES, rip_cli::http::NETWORK],
            "Retries and failures (--attempts, --retry-base, --retry-max, --backoff, \
             --max-retry-after, --give-up-after, --rule), network policy (--allow-network, \
             --deny-network, --resolve): listed by --help.",
        )
    })
}
