//! `rip-write`'s command line.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;

/// Persist docs, error documents and expected records as files while passing every record
/// through unchanged.
///
/// Files go to <OUT>/<NAME>/<slug>.json (or <OUT>/<slug>.json without --name), written
/// atomically; with --layout sharded, to <OUT>/<NAME>/<shard>/<slug>.json. A record that cannot be written is still passed on, followed by a `failure`
/// (category RESOURCE, phase write) saying so; the run goes on and exits 2.
#[derive(Debug, Parser)]
#[command(
    name = "rip-write",
    version,
    about = "A pass-through stage persisting docs and error documents to an output folder, atomically."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: rip_cli::StageArgs,

    /// The output folder.
    #[arg(long, short = 'o', value_name = "DIR", env = "RIP_OUT")]
    pub out: PathBuf,

    /// A subfolder of --out for this scrape, e.g. the site's name.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The old spelling of --name.
    #[arg(
        long = "target",
        short = 't',
        value_name = "NAME",
        hide = true,
        conflicts_with = "name"
    )]
    pub old_target: Option<String>,

    /// Append records to docs.jsonl, errors.jsonl and expected.jsonl instead of one file
    /// per record (each file replaced atomically at the end of the run). The same as
    /// --format jsonl.
    #[arg(long, conflicts_with = "format")]
    pub jsonl: bool,

    /// How records are written: `files` (one <slug>.json per record, the default),
    /// `jsonl`, or a table per concept for data tools, `csv` (<concept>.csv, RFC 4180, a
    /// header row) or `parquet` (<concept>.parquet, typed columns). With csv and parquet,
    /// error documents and expected records go to errors.jsonl and expected.jsonl.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,

    /// The tables' columns, for every concept: doc fields, comma-separated (e.g.
    /// `url,name,price`). Default: url, id, name and the fields the concept's rules
    /// declare (--rules), or the generic doc's fields, or the first doc's fields.
    #[arg(long, value_name = "FIELDS", value_delimiter = ',')]
    pub fields: Option<Vec<String>>,

    /// The rules file rip-parse ran with: each concept's columns and their types in the
    /// tables (csv, parquet). A field it does not type is a column of JSON text.
    #[arg(long, short = 'r', value_name = "FILE", env = "RIP_RULES")]
    pub rules: Option<PathBuf>,

    /// Parquet: write a row group every this many rows ...
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub row_group_rows: usize,

    /// ... or once its values reach this size, whichever comes first: what bounds the
    /// memory a Parquet table holds.
    #[arg(long, value_name = "SIZE", default_value = "32MiB", value_parser = rip_cli::parse_size)]
    pub row_group_size: usize,

    /// Where the record files go: `flat`, directly in the folder, or `sharded`, in 256
    /// sub-folders named by two hex digits (the first two of the SHA-256 of the file
    /// name's part before any `~`; raw bodies under raw/<shard>/), for folders of 100,000
    /// records and more. Default: the folder's own layout, flat for a new folder; a
    /// layout the folder's record files contradict is refused.
    #[arg(long, value_enum, value_name = "LAYOUT")]
    pub layout: Option<Layout>,

    /// Also write a Markdown page, <slug>.md, beside each JSON file: a generic doc's is
    /// the page's Markdown (rip-parse --markdown) or text under a front matter of title and
    /// URL; a rules doc's lists its fields; an error document's what failed and where.
    #[arg(long, conflicts_with_all = ["jsonl", "format"])]
    pub markdown: bool,

    /// Also write each page's body under raw/<slug>.<ext>.
    #[arg(long)]
    pub raw: bool,

    /// Do not write failures.json at the end.
    #[arg(long)]
    pub no_failures_file: bool,

    /// Sync each file to disk before renaming it into place (durable across power loss;
    /// slower).
    #[arg(long)]
    pub sync: bool,
}

/// `--format`: rip_write::Mode.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// One <slug>.json file per record.
    Files,
    /// docs.jsonl, errors.jsonl, expected.jsonl.
    Jsonl,
    /// <concept>.csv per concept.
    Csv,
    /// <concept>.parquet per concept.
    Parquet,
}

impl From<Format> for rip_write::Mode {
    fn from(f: Format) -> Self {
        match f {
            Format::Files => Self::Files,
            Format::Jsonl => Self::Jsonl,
            Format::Csv => Self::Csv,
            Format::Parquet => Self::Parquet,
        }
    }
}

/// `--layout`: rip_write::Layout.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Layout {
    /// Every record file directly in the folder.
    Flat,
    /// Record files in sub-folders 00 … ff.
    Sharded,
}

impl From<Layout> for rip_write::Layout {
    fn from(l: Layout) -> Self {
        match l {
            Layout::Flat => Self::Flat,
            Layout::Sharded => Self::Sharded,
        }
    }
}
