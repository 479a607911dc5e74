//! `rip-cache`'s command line.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// Keep a cache folder over time: what it holds, whether every entry reads back, and the
/// space of replaced, corrupt or old entries reclaimed.
///
/// Every command is safe while other stages read and write the cache, and a compaction is
/// safe to interrupt (even with SIGKILL): the cache in use is replaced in one rename, and
/// the next compaction removes what an interrupted one left. Each command writes its
/// report as one JSON line on stdout, and a summary on stderr.
///
/// Exit codes: 0 done (and, for verify, every entry reads back); 2 verify or compact found
/// entries that do not read back (named in the report; a compaction drops them); 1 the
/// command could not run (another compaction holds the folder, a file cannot be read).
#[derive(Debug, Parser)]
#[command(
    name = "rip-cache",
    version,
    about = "Stats, verify, compact and prune a ripperoni cache folder."
)]
pub struct Cli {
    /// The cache folder, as given to the stages.
    #[arg(
        long,
        env = "RIP_CACHE_DIR",
        default_value = ".rip-cache",
        global = true
    )]
    pub cache_dir: PathBuf,

    /// No summary on stderr (the JSON report is still written).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// What the cache holds: entries, packs, bytes live and reclaimable (reads the index
    /// only).
    Stats,
    /// Reads every entry back and checks it (metadata, URL, body length and SHA-256).
    Verify,
    /// Rewrites the cache with its live entries only, reclaiming replaced and corrupt ones.
    Compact,
    /// Compacts, also dropping entries stored (or last revalidated) before a given age.
    Prune {
        /// Drop entries older than this, e.g. `30d`, `12h`.
        #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
        older_than: Duration,
    },
}
