//! `rip-health`'s command line.

use clap::Parser;
use std::path::PathBuf;

/// Is everything captured? Write crawl-health.json from a reconciled stream or folder.
///
/// Reads the records (stdin, --input, or the record files of --dir) and writes the
/// report: stdout by default, `<dir>/crawl-health.json` with --dir, or --json. A summary
/// fitting one screen goes to stderr. Exit code 0 when nothing is missing and every URL
/// that entered is accounted for; 2 otherwise (so it can gate a scheduled scrape).
#[derive(Debug, Parser)]
#[command(
    name = "rip-health",
    version,
    about = "Is everything captured? The crawl-health report of a ripperoni scrape: JSON, a \
             one-screen summary, and an HTML report."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: rip_cli::StageArgs,

    /// Read an output folder written by rip-write instead of a stream.
    #[arg(long, value_name = "DIR", conflicts_with = "input")]
    pub dir: Option<PathBuf>,

    /// Where to write crawl-health.json (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The old spelling of --json.
    #[arg(
        long = "out",
        short = 'o',
        value_name = "FILE",
        hide = true,
        conflicts_with = "json"
    )]
    pub old_out: Option<PathBuf>,

    /// Also write a self-contained HTML report here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// The scrape's name in the report (default: the folder's name, or the first host).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The old spelling of --name.
    #[arg(
        long = "target",
        value_name = "NAME",
        hide = true,
        conflicts_with = "name"
    )]
    pub old_target: Option<String>,

    /// Keep the report up to date while the run goes on: read the stream as it comes
    /// (stdin, or an --input file still being written) and make the HTML report (and a
    /// line on stderr) again every --every, the page reloading itself; when the stream
    /// ends, write the final report, the same as without --follow.
    #[arg(long, conflicts_with = "dir")]
    pub follow: bool,

    /// With --follow: how often the report is made again (at least ten times what making
    /// it takes, so that it never costs more than a tenth of the time).
    #[arg(long, value_name = "DURATION", default_value = "3s", value_parser = humantime::parse_duration, requires = "follow")]
    pub every: std::time::Duration,

    /// With --follow and an --input file: the stream has ended when the file has not grown
    /// for this long (or on Ctrl-C).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration, requires = "follow")]
    pub idle: std::time::Duration,

    /// Do not require ledger records (the books are then not checked URL by URL).
    #[arg(long)]
    pub no_ledger: bool,
}
