//! `rip-reconcile`'s command line.

use clap::Parser;
use std::path::PathBuf;

/// Give every error document a verdict: capturedElsewhere, missing or dead.
///
/// Reads a whole stream (stdin or --input) and writes it back, every error document
/// with a `resolution`; or, with --dir, writes each verdict into the error document's
/// own file in a folder written by rip-write. Without --config every failure is
/// `missing` (the default reconciler).
#[derive(Debug, Parser)]
#[command(
    name = "rip-reconcile",
    version,
    about = "Gives every error document of a scrape a verdict: captured elsewhere, missing, or dead."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: rip_cli::StageArgs,

    /// Reconciler configuration (JSON): identity key, name match, dead rules.
    #[arg(long, value_name = "FILE", env = "RIP_RECONCILER")]
    pub config: Option<PathBuf>,
    /// The old spelling of --config (`-c` is the concurrency of the stages that fetch).
    #[arg(
        short = 'c',
        value_name = "FILE",
        hide = true,
        conflicts_with = "config"
    )]
    pub old_config: Option<PathBuf>,

    /// Print the JSON Schema of reconciler configurations and exit.
    #[arg(long, exclusive = true)]
    pub config_schema: bool,

    /// Reconcile the record files (`*.json`) of this output folder in place, instead of a
    /// stream; only the summary record is written to stdout.
    #[arg(long, value_name = "DIR", conflicts_with = "input")]
    pub dir: Option<PathBuf>,
}
