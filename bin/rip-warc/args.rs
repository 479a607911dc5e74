//! `rip-warc`'s command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use regex::Regex;

/// Web archives (WARC, ISO 28500) as a stage of the pipeline.
#[derive(Debug, Parser)]
#[command(
    name = "rip-warc",
    version,
    about = "Reads WARC and WARC.gz archives into page records (rip-fetch's contract): `rip-warc read crawl.warc.gz | rip-parse`."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// One `page` per archived response (and HTML resource), a `failure` per error status
    /// or damaged record (naming the file and offset), then on to the next record.
    Read(ReadArgs),
    /// A CDXJ index of WARC files on stdout, as pywb reads it: one sorted line per
    /// response, revisit and resource record (SURT key, timestamp, JSON with url, mime,
    /// status, digest, length, offset, filename).
    Index(IndexArgs),
}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// WARC files, plain or gzip.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Largest record block read (a size: 256MiB, 500k; a bare number is bytes); a larger
    /// one is a damaged record (`warc.tooLarge`), never an allocation.
    #[arg(long, default_value = "256MiB", value_parser = rip_cli::parse_size, value_name = "SIZE")]
    pub max_record: usize,

    /// Only errors on stderr: no summary line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// WARC files, plain or gzip (`.warc.gz`, one gzip member per record or several), or
    /// WACZ files (`.wacz`: the WARCs under `archive/`); `-` or none reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Only records whose WARC-Target-URI matches this regex.
    #[arg(long, value_name = "REGEX")]
    pub url: Option<Regex>,

    /// Only records whose media type starts with this (`text/html`); repeatable.
    #[arg(long, value_name = "TYPE")]
    pub mime: Vec<String>,

    /// Largest record block read (a size: 256MiB, 500k; a bare number is bytes); a larger
    /// one is a damaged record (`warc.tooLarge`), never an allocation.
    #[arg(long, default_value = "256MiB", value_parser = rip_cli::parse_size, value_name = "SIZE")]
    pub max_record: usize,

    /// Write every capture of a URL the archives hold more than once (a recrawl), not
    /// only the first.
    #[arg(long)]
    pub every_capture: bool,

    /// Largest page body kept, after its Content-Encoding is undone (a size: 16MiB, 500k;
    /// a bare number is bytes); a longer one is cut and marked `truncated`, as rip-fetch's.
    #[arg(long, default_value = "16MiB", value_parser = rip_cli::parse_size, value_name = "SIZE")]
    pub max_body: usize,

    /// More log output on stderr (-v: debug, -vv: trace). `RUST_LOG` overrides.
    #[arg(long, short = 'v', action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Only errors on stderr: no summary line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}
