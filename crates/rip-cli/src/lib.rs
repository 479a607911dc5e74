//! Glue shared by the ripperoni binaries, so that every `main` stays a few lines:
//! parsing the command line ([`parse`]: a usage error exits 1), logging on stderr, the
//! mapping from a run's result to an exit code (a broken pipe is a clean exit), Ctrl-C
//! handling, input opening, the arguments every stage takes ([`StageArgs`]) and the HTTP
//! flags of the stages that fetch ([`http::HttpArgs`]).
//!
//! With the binaries' own argument modules in the top-level `bin/` package, this is the
//! only crate that knows clap. Stage libraries never depend on it: each takes a config
//! struct, which `bin/<program>/main.rs` builds from the parsed arguments.

#![deny(missing_docs)]

use anyhow::Context as _;
use clap::Args;
use rip_core::{PipeOptions, Status};
use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub mod broker;
pub mod cache_dir;
pub mod help;
pub mod http;
pub mod log;
pub mod malloc;
pub mod metrics;
pub mod output;
pub mod progress;
pub mod size;
pub mod tree;
pub mod urls;
pub mod usage;
pub mod warc;

pub use output::stdout;
pub use size::{SizeError, SizeOnceMib, parse_size};
pub use tree::die_with_wrapper;
pub use urls::UrlArgs;
pub use usage::{Renamed, parse, parse_from};
pub use warc::WarcArgs;

/// Arguments every record-at-a-time stage takes.
#[derive(Debug, Clone, Args)]
pub struct StageArgs {
    /// Input file of NDJSON records; `-` or nothing reads stdin.
    #[arg(long, short = 'i', value_name = "FILE", global = true)]
    pub input: Option<PathBuf>,

    /// Stop at the first malformed input line instead of reporting and skipping it.
    #[arg(long, global = true)]
    pub strict: bool,

    /// More log output on stderr (-v: debug, -vv: trace). `RUST_LOG` overrides.
    #[arg(long, short = 'v', action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// Only errors on stderr: no progress bar, no summary line.
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

impl StageArgs {
    /// Starts logging at the level these arguments ask for.
    pub fn init_logging(&self) {
        init_logging(self.verbose, self.quiet);
    }

    /// Opens the input: the file, or stdin. Returns the reader and its name for messages.
    pub fn open_input(&self) -> anyhow::Result<(Box<dyn Read + Send>, String)> {
        open_input(self.input.as_deref())
    }

    /// Starts a record-at-a-time `stage`: installs the Ctrl-C handler
    /// ([`install_interrupt`]), then opens the input. Returns the reader and the
    /// [`PipeOptions`] these arguments describe.
    pub fn open_pipe(&self, stage: &str) -> anyhow::Result<(Box<dyn Read + Send>, PipeOptions)> {
        let stop = install_interrupt()?;
        let (input, input_name) = self.open_input()?;
        Ok((input, self.pipe_options(stage, input_name, stop)))
    }

    /// The [`PipeOptions`] of `stage` reading the input named `input_name` (as
    /// [`open_input`] names it), stopped by `stop` ([`install_interrupt`]'s flag).
    pub fn pipe_options(
        &self,
        stage: &str,
        input_name: String,
        stop: Arc<AtomicBool>,
    ) -> PipeOptions {
        let mut pipe = PipeOptions::new(stage);
        pipe.input_name = input_name;
        pipe.strict = self.strict;
        pipe.stop = Some(stop);
        pipe
    }
}

/// Opens `path` for reading, or stdin for `None` and `-`.
pub fn open_input(
    path: Option<&std::path::Path>,
) -> anyhow::Result<(Box<dyn Read + Send>, String)> {
    match path {
        None => Ok((Box::new(io::stdin()), "-".to_owned())),
        Some(p) if p.as_os_str() == "-" => Ok((Box::new(io::stdin()), "-".to_owned())),
        Some(p) => {
            let f = File::open(p).with_context(|| format!("cannot open input {}", p.display()))?;
            Ok((Box::new(f), p.display().to_string()))
        }
    }
}

/// Logs to stderr (never stdout: stdout carries records). `RUST_LOG` overrides the level.
pub fn init_logging(verbose: u8, quiet: bool) {
    // Without -v, only the workspace's own warnings (targets `rip_*`): the libraries'
    // lines (html5ever's "foster parenting not implemented", the NATS client's on each
    // failed reconnect) are not the program's to say; rip-queue says what they mean in one
    // line of its own.
    let level = match (quiet, verbose) {
        (true, _) => "off,rip=error",
        (false, 0) => "off,rip=warn",
        // `-v` is the stages' own story; the libraries' debug chatter (html5ever logs
        // every token) stays out unless `-vv` asks for everything.
        (false, 1) => {
            "debug,html5ever=info,markup5ever=info,selectors=info,hyper=info,hyper_util=info,\
             h2=info,rustls=info,reqwest=info,chromiumoxide=info,tungstenite=info,async_nats=info"
        }
        (false, _) => "trace",
    };
    // An empty `RUST_LOG` is no `RUST_LOG` (it would be a filter of no directives).
    let filter = std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .and_then(|v| tracing_subscriber::EnvFilter::try_new(v).ok())
        .unwrap_or_else(|| tracing_subscriber::EnvFilter::new(level));
    // Each line in the stage's own shape, `rip-x: warning: …` (see [`log`]).
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(false)
        .event_format(log::StageLines::of_this_process())
        .try_init();
}

/// Installs SIGINT and SIGTERM handlers. The first signal sets the returned flag, which
/// stages poll to stop reading, flush and exit with code 130; a second signal exits at once.
pub fn install_interrupt() -> anyhow::Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(
            sig,
            i32::from(rip_core::exit::INTERRUPTED),
            flag.clone(),
        )
        .context("cannot install the signal handler")?;
        signal_hook::flag::register(sig, flag.clone())
            .context("cannot install the signal handler")?;
    }
    Ok(flag)
}

/// Raises this process's soft limit of open files to its hard limit (at most 65,536),
/// quietly keeping it where that fails: a crawl of many hosts holds a connection and a
/// schedule file per host (many systems start programs at 1,024).
pub fn raise_open_files_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    let want = limit.maximum.map_or(65_536, |m| m.min(65_536));
    if limit.current.is_some_and(|c| c < want) {
        limit.current = Some(want);
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

/// Maps a run's result to the process exit code. An error whose cause is a broken pipe
/// (the reader downstream went away) is a clean exit 0 without a message; any other
/// error is printed as `<program>: error: <cause chain>` ([`error_text`]) and exits 1.
pub fn exit_with(program: &str, result: anyhow::Result<Status>) -> ExitCode {
    rip_core::ndjson::report_unshown_bad_lines(program);
    match result {
        Ok(status) => ExitCode::from(status.code()),
        Err(err) => exit_with_error(program, &err),
    }
}

/// The exit of a run that failed: 0 quietly for a broken pipe, else the message and 1.
pub fn exit_with_error(program: &str, err: &anyhow::Error) -> ExitCode {
    if err.chain().any(rip_core::is_broken_pipe) {
        return ExitCode::SUCCESS;
    }
    rip_core::ndjson::report_unshown_bad_lines(program);
    rip_core::stderr::say(format_args!("{program}: error: {}", error_text(err)));
    ExitCode::from(rip_core::exit::FATAL)
}

/// An error and its causes on one line, `outer: inner: root`, each said once: a cause
/// whose text its outer message already quotes (a `thiserror` message with `{source}`
/// whose `#[source]` is the same error) is not repeated.
pub fn error_text(err: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in err.chain() {
        let part = cause.to_string();
        if part.is_empty() || text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_exits_zero_and_other_errors_one() {
        let bp: anyhow::Error = io::Error::from(io::ErrorKind::BrokenPipe).into();
        let bp = bp.context("writing output");
        assert_eq!(exit_with("t", Err(bp)), ExitCode::SUCCESS);
        let other = anyhow::anyhow!("boom");
        assert_eq!(exit_with("t", Err(other)), ExitCode::from(1));
        assert_eq!(exit_with("t", Ok(Status::Partial)), ExitCode::from(2));
    }

    #[test]
    fn a_cause_is_said_once() {
        #[derive(Debug)]
        struct Quoting(io::Error);
        impl std::fmt::Display for Quoting {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "cannot read policy p.toml: {}", self.0)
            }
        }
        impl std::error::Error for Quoting {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let err = anyhow::Error::new(Quoting(io::Error::from(io::ErrorKind::NotFound)));
        let root = io::Error::from(io::ErrorKind::NotFound).to_string();
        assert_eq!(
            error_text(&err),
            format!("cannot read policy p.toml: {root}")
        );
        let err = err.context("loading the rules");
        assert_eq!(
            error_text(&err),
            format!("loading the rules: cannot read policy p.toml: {root}")
        );
    }
}
