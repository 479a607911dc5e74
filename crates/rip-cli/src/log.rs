//! The one shape of every line a stage writes on stderr: `rip-x: what happened`.
//!
//! A stage's own lines (its summary, `rip-x: error: …`, `rip-x: warning: …`) and the
//! lines of `tracing` (warnings at any verbosity; debug and trace with `-v`, `-vv` or
//! `RUST_LOG`) share it, so that a pipeline's stderr reads as one story and a `grep
//! '^rip-fetch:'` finds all of a stage's lines. Timestamps only when asked
//! (`RIP_LOG_TIME=1`), in front: `2026-12-01T09:00:00.125000Z rip-x: …`, as
//! [`rip_core::stderr`] puts them on the stage's own lines.

use std::fmt;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

pub use rip_core::stderr::TIME_VAR;

/// Formats a `tracing` event as a stage's own line: `program: level: message fields`.
#[derive(Debug, Clone)]
pub struct StageLines {
    /// The program's name, e.g. `rip-fetch`.
    pub program: String,
    /// Whether each line starts with the time.
    pub time: bool,
}

impl StageLines {
    /// The lines of this process: its program's name (from `argv[0]`), timestamps as
    /// [`TIME_VAR`] asks.
    pub fn of_this_process() -> Self {
        let program = program_name(std::env::args_os().next().as_ref());
        let time = rip_core::stderr::timed();
        Self { program, time }
    }
}

/// The name a program's lines start with: the file name of its `argv[0]` (`ripperoni`
/// when there is none).
pub fn program_name(argv0: Option<&std::ffi::OsString>) -> String {
    argv0
        .and_then(|a| std::path::Path::new(a).file_name())
        .map_or_else(
            || "ripperoni".to_owned(),
            |n| n.to_string_lossy().into_owned(),
        )
}

/// The word a level's lines carry after the program's name (none for `info`).
fn level_word(level: Level) -> &'static str {
    match level {
        Level::ERROR => "error: ",
        Level::WARN => "warning: ",
        Level::INFO => "",
        Level::DEBUG => "debug: ",
        Level::TRACE => "trace: ",
    }
}

impl<S, N> FormatEvent<S, N> for StageLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        if self.time {
            writer.write_str(&rip_core::stderr::stamp())?;
        }
        let level = level_word(*event.metadata().level());
        write!(writer, "{}: {level}", self.program)?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}
