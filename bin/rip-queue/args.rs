//! `rip-queue`'s command line.

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Move ripperoni records between shell pipelines and NATS JetStream streams, so that one
/// scrape can run on many machines. `push` stores stdin's records in a stream, `pull` writes a
/// stream's records to stdout, `work` runs a stage on a stream's records and stores what it
/// writes in another, acknowledging each record only once its output is stored, and `relay`
/// is the workers as one stage of a pipeline: `source | rip-queue relay refs docs | rip-write
/// …` sends the records to the workers of `refs` and writes what they made of them.
#[derive(Debug, Parser)]
#[command(
    name = "rip-queue",
    version,
    about = "Records between pipelines and NATS JetStream."
)]
pub struct Cli {
    #[command(flatten)]
    pub broker: rip_cli::broker::BrokerArgs,

    /// More log output on stderr (-v: debug, -vv: trace). `RUST_LOG` overrides.
    #[arg(long, short = 'v', action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// Only errors on stderr: no summary line.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Store the records of stdin (or --input) in STREAM, created when needed. Exits once the
    /// broker has acknowledged every one.
    Push {
        /// The stream (letters, digits, `-`, `_`).
        stream: String,
        /// URLs to store, each as a `ref` record, instead of the input (stdin is not read).
        #[arg(value_name = "URL", value_parser = rip_core::ndjson::url_argument, conflicts_with = "input")]
        urls: Vec<String>,
        /// Input file of NDJSON records; `-` or nothing reads stdin.
        #[arg(long, short = 'i', value_name = "FILE")]
        input: Option<PathBuf>,
        /// Create the stream partitioned by host into N partitions (0: not partitioned): the
        /// workers of a group then share it by partition, each host's records going to one
        /// worker at a time, which keeps the host's politeness. An existing stream must have
        /// the same number.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1024))]
        partitions: Option<u32>,
    },
    /// Write the records of STREAM to stdout, in the stream's order: those it holds now, or
    /// with --follow those and every later one until stopped.
    Pull {
        /// The stream.
        stream: String,
        /// Keep writing records as they arrive.
        #[arg(long, short = 'f', conflicts_with = "after")]
        follow: bool,
        /// Keep writing records as they arrive until the workers reading the stream IN
        /// (`IN` or `IN/GROUP`; the group defaults to STREAM's name, as `work` does) have
        /// done every one of its records: the end of a crawl whose workers run anywhere.
        #[arg(long, value_name = "IN[/GROUP]")]
        after: Option<String>,
    },
    /// Send stdin's records to the workers of IN (on any machines) and write what they store
    /// in OUT for them, until they have done all of them: `source | rip-queue relay refs docs
    /// | rip-write …` runs the workers' stages as if they were in the pipe.
    ///
    /// Each relay is a run of its own: it never reads another run's records (another
    /// coordinator's on the same streams, or an earlier relay's). It ends once its input is
    /// all sent and the group has done every record of it (none waiting, none held) and what
    /// they stored is written; a broker that restarts is waited for (--patience). The
    /// workers: `rip-queue work IN OUT -- COMMAND`, on any machine.
    Relay {
        /// The stream the workers read.
        input: String,
        /// The stream they write.
        output: String,
        /// Input file of NDJSON records; `-` or nothing reads stdin.
        #[arg(long = "input", short = 'i', value_name = "FILE")]
        file: Option<PathBuf>,
        /// The old spelling of --input.
        #[arg(
            long = "file",
            value_name = "FILE",
            hide = true,
            conflicts_with = "file"
        )]
        old_file: Option<PathBuf>,
        /// Create IN partitioned by host into N partitions (as `push --partitions`).
        #[arg(long, value_name = "N")]
        partitions: Option<u32>,
        /// The workers' group [default: OUT's name, as `work`'s].
        #[arg(long, value_name = "NAME")]
        group: Option<String>,
    },
    /// Run a stage on the records of IN, storing what it writes in OUT. Workers with the same
    /// --group (on any machine) share the records; a worker that dies leaves its records to
    /// the others after --ack-wait.
    Work(WorkArgs),
}

/// `rip-queue work`'s arguments.
#[derive(Debug, Args)]
pub struct WorkArgs {
    /// The stream read.
    pub input: String,
    /// The stream written.
    pub output: String,
    /// The program and its arguments, after `--`: `-- rip-fetch --delay 200ms`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
    /// The worker group: workers of one group share IN's records (a JetStream durable
    /// consumer) [default: OUT's name].
    #[arg(long, value_name = "NAME")]
    pub group: Option<String>,
    /// Create IN partitioned by host into N partitions when it does not exist yet (as `push
    /// --partitions`; an existing IN must have as many).
    #[arg(long, value_name = "N")]
    pub partitions: Option<u32>,
    /// Records given to one run of the program at most.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u16).range(1..))]
    pub batch: u16,
    /// Runs of the program at once.
    #[arg(long, short = 'j', value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    pub parallel: u16,
    /// How long to wait for a batch to fill.
    #[arg(long, value_name = "DURATION", default_value = "200ms", value_parser = humantime::parse_duration)]
    pub linger: Duration,
    /// How long the broker waits for a worker's acknowledgement before delivering its
    /// records to another worker: the records of a killed worker, and a delivery lost with a
    /// broker that restarted, come back after this. A running batch keeps its records (it
    /// says it is still working every third of this).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    pub ack_wait: Duration,
    /// Deliveries of a record the program keeps failing on before it becomes a `failure`
    /// (`queue.workFailed`). A record delivered more than twice runs alone; past this (its
    /// workers died), with no other run beside it; one that takes down a worker running it
    /// so becomes a `failure` (`queue.workerLost`).
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub max_deliver: u16,
    /// On a stream partitioned by host: how long a worker waits after taking a partition
    /// (at the start, or from a worker that left or died) before working on it. Make it at
    /// least the longest per-host gap or Crawl-delay of the command: the host's previous
    /// worker kept its politeness in a cache folder this one does not see.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = humantime::parse_duration)]
    pub handover_wait: Duration,
    /// Exit after this long with no record to work on, once IN has had one (a worker started
    /// before anything is pushed waits for it; default: run until stopped).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub idle_exit: Option<Duration>,
    #[command(flatten)]
    pub metrics: rip_cli::metrics::MetricsArgs,
}
