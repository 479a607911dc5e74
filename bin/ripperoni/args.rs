//! `ripperoni`'s command line: one subcommand per thing it does.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Run a whole scrape, described by one state file, as a pipeline of the rip-* stages.
///
/// `ripperoni run site.state.json` checks the state file, runs rip-discover | rip-fetch |
/// rip-route (one pair per round) | rip-parse | rip-route | rip-write, then rip-reconcile
/// and rip-health, and writes everything to <basePath>/site/. Exit codes: 0 complete,
/// 1 fatal, 2 partial, 3 not ready, 130 interrupted (the same command resumes).
#[derive(Debug, Parser)]
#[command(
    name = "ripperoni",
    version,
    about = "The ripperoni wrapper: runs a whole scrape, described by one state file, as a \
             pipeline of the rip-* stages."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the scrape a state file describes.
    Run {
        /// The state file, `<target>.state.json`.
        state: PathBuf,
        /// Start over even when an interrupted run could be resumed.
        #[arg(long)]
        restart: bool,
        /// No progress and no health summary on stderr; a run that is not complete still
        /// says so, with what is missing or failed and where its report is.
        #[arg(long, short = 'q')]
        quiet: bool,
        /// Also show every stage's stderr (always saved under <target>/.ripperoni/logs/).
        #[arg(long, short = 'v')]
        verbose: bool,
        /// Use this base URL instead of the state file's (the same scrape against another
        /// host, e.g. a staging copy or a test server).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        /// Where the rip-* binaries are (default: beside ripperoni, else PATH).
        #[arg(long, env = "RIP_BIN_DIR", value_name = "DIR")]
        bin_dir: Option<PathBuf>,
        /// Every stage's metrics on one address, each sample labelled with its `step`.
        #[command(flatten)]
        metrics: rip_cli::metrics::MetricsArgs,
    },
    /// Be one worker of a scrape spread over machines (the state file's `queue`): fetch,
    /// parse and route the pages `ripperoni run` (the coordinator, on any machine) sends,
    /// until stopped (Ctrl-C). Start as many as you like, anywhere, with the same state
    /// file and its companions; a worker that dies leaves its pages to the others.
    Worker {
        /// The state file.
        state: PathBuf,
        /// Stop after this long with nothing to do (e.g. `30s`; default: run until stopped).
        #[arg(long, value_name = "DURATION")]
        idle_exit: Option<String>,
        /// Where the rip-* binaries are (default: beside ripperoni, else PATH).
        #[arg(long, env = "RIP_BIN_DIR", value_name = "DIR")]
        bin_dir: Option<PathBuf>,
        /// `rip-queue work` serves the worker's metrics (records, runs, the queue's lag).
        #[command(flatten)]
        metrics: rip_cli::metrics::MetricsArgs,
    },
    /// Print the shell pipeline `run` would run, to copy, change and run by hand.
    Pipeline {
        /// The state file.
        state: PathBuf,
        /// Use this base URL instead of the state file's.
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
    },
    /// Check a state file and say what it would do.
    Check {
        /// The state file.
        state: PathBuf,
    },
    /// Write a starter state file and rules file that run as they are against the bundled
    /// demo site (`rip-testserver --dir testdata/site --bind 127.0.0.1:8080`).
    Scaffold {
        /// The target's name (the files are `<name>.state.json`, `<name>.rules.toml`).
        name: String,
        /// The folder to write them in.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// The site's base URL.
        #[arg(long, default_value = ripperoni::scaffold::DEMO_BASE_URL, value_name = "URL")]
        base_url: String,
    },
    /// Print the JSON Schema of state files.
    Schema,
    /// Print the shell completions of every ripperoni program (rip-discover, rip-fetch,
    /// rip-render, rip-parse, rip-route, rip-write, rip-reconcile, rip-health, rip-queue,
    /// rip-cache, rip-check, rip-warc and ripperoni), made from the same definitions as
    /// their --help, as one script to source (`source <(ripperoni completions bash)`);
    /// with --dir, write one file per program where the shell finds it by the program's
    /// name.
    Completions {
        /// The shell.
        shell: CompletionShell,
        /// Write one file per program in this folder (made if missing), named as the
        /// shell looks them up: bash `rip-fetch` (e.g. in
        /// ~/.local/share/bash-completion/completions), zsh `_rip-fetch` (a folder of
        /// `$fpath`), fish `rip-fetch.fish` (~/.config/fish/completions); the paths
        /// written are printed, one a line.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Write the man page of every ripperoni program into a folder (`<program>.1`), and
    /// one for each subcommand (`rip-queue-push.1`, `ripperoni-run.1`), made from the same
    /// definitions as their --help; the paths written are printed, one a line.
    Man {
        /// The folder, e.g. ~/.local/share/man/man1 (made if missing).
        dir: PathBuf,
    },
}

/// A shell `ripperoni completions` writes for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    /// Bash (with the bash-completion package for --dir's folder).
    Bash,
    /// Zsh (after `compinit`).
    Zsh,
    /// Fish.
    Fish,
}
