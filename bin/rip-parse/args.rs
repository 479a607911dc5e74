//! `rip-parse`'s command line.

use clap::{Parser, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

/// Turn fetched pages into documents.
///
/// Reads NDJSON `page` records and writes one `doc` per page (or a `failure` with
/// `phase: parse`); every other record passes through. Without `--rules`, each HTML
/// page gives a generic doc (title, canonical, lang, description, keywords, headings,
/// text, links). With `--rules site.toml`, pages are routed to the concepts the file
/// describes and their fields extracted and validated.
#[derive(Debug, Parser)]
#[command(
    name = "rip-parse",
    version,
    about = "Turns fetched pages into documents: generic extraction, or a declarative rules file \
             with concept routing and JSON Schema validation."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: rip_cli::StageArgs,

    /// A rules file (TOML) describing the site's concepts. Checked before any input is read.
    #[arg(long, short = 'r', value_name = "FILE", env = "RIP_RULES")]
    pub rules: Option<PathBuf>,

    /// Check the rules file (and the --output-schema file, if any) and exit (0 when
    /// they are valid).
    #[arg(long)]
    pub check_rules: bool,

    /// Print the JSON Schema of rules files and exit.
    #[arg(long, exclusive = true)]
    pub rules_schema: bool,

    /// A JSON Schema file every doc must satisfy, whatever its concept (after the
    /// concept's own schema). Checked before any input is read.
    #[arg(long, value_name = "FILE", env = "RIP_OUTPUT_SCHEMA")]
    pub output_schema: Option<PathBuf>,

    /// What a doc that breaks --output-schema becomes: skip (a VALIDATION failure
    /// `parse.schema`), warn (the doc, with the violations in its errors and on stderr)
    /// or halt (that failure, then stop with exit code 1).
    #[arg(
        long,
        value_enum,
        value_name = "WHAT",
        default_value = "skip",
        requires = "output_schema"
    )]
    pub on_schema_error: OnSchemaError,

    /// Pages that are not HTML (images, PDFs, JSON, plain text) become docs of concept
    /// `unknown` with `contentType` and `bytes`, instead of `parse.notHtml` failures.
    #[arg(long)]
    pub keep_other: bool,

    /// Add the main content as Markdown (`markdown` field) to generic docs.
    #[arg(long)]
    pub markdown: bool,

    /// Build a tree for every page. By default generic extraction reads a page in one
    /// streaming pass with no tree, and builds one only for a page whose markup needs
    /// it (misnested tags, content a table moves, …; the summary's `treePages`): the
    /// docs are the same either way, the streaming pass is several times cheaper.
    #[arg(long)]
    pub no_stream: bool,

    /// Worker threads (default: one per core).
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub threads: usize,

    /// The old spelling of --threads (`-j` is `rip-queue work`'s parallel runs).
    #[arg(short = 'j', value_name = "N", hide = true, conflicts_with = "threads")]
    pub old_j: Option<usize>,

    /// Write docs as they are ready, not in input order (faster when page sizes vary).
    #[arg(long)]
    pub unordered: bool,

    /// Most pages in flight at once (default: 64 per thread; --window-mib bounds their bytes).
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub window: usize,

    /// Most MiB of page records in flight at once (memory: parsing takes about ten
    /// times a page's size).
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    pub window_mib: usize,

    /// Pages whose body is larger than this become failures (a size: 32MiB, 500k; a bare
    /// number is bytes, as in rip-fetch's --max-body).
    #[arg(long, value_name = "SIZE", default_value = "32MiB", value_parser = rip_cli::SizeOnceMib::parse)]
    pub max_body: rip_cli::SizeOnceMib,

    /// Pages whose elements nest deeper than this become failures.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_nesting: usize,
    /// The old spelling of --max-nesting (--max-depth is rip-discover's link depth).
    #[arg(
        long = "max-depth",
        value_name = "N",
        hide = true,
        conflicts_with = "max_nesting"
    )]
    pub old_max_depth: Option<usize>,

    /// Pages whose HTML takes longer than this to parse become failures.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    pub parse_timeout: Duration,
    #[command(flatten)]
    pub metrics: rip_cli::metrics::MetricsArgs,
}

/// `--on-schema-error`: the flag's values, each the library's
/// [`rip_parse::OnSchemaError`] of the same name.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OnSchemaError {
    /// Stop the run after writing the failure (exit code 1).
    Halt,
    /// A `failure` record with category VALIDATION instead of the doc.
    Skip,
    /// The doc anyway, with the violations in its `errors` and a warning on stderr.
    Warn,
}

impl From<OnSchemaError> for rip_parse::OnSchemaError {
    fn from(arg: OnSchemaError) -> Self {
        match arg {
            OnSchemaError::Halt => Self::Halt,
            OnSchemaError::Skip => Self::Skip,
            OnSchemaError::Warn => Self::Warn,
        }
    }
}
