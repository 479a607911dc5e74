//! `rip-check`'s command line.

use clap::Parser;

/// Check NDJSON records against the ripperoni record contract and pass them through.
///
/// Valid lines are written back unchanged; bad ones are reported on stderr as
/// `<input>:<line>: <what is wrong>` and dropped. Exit code 2 when any line was bad.
#[derive(Debug, Parser)]
#[command(
    name = "rip-check",
    version,
    about = "A pass-through stage that checks every record against the ripperoni record contract."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: rip_cli::StageArgs,

    /// Do not pass on the `summary` records of upstream stages.
    #[arg(long)]
    pub drop_summaries: bool,
}
