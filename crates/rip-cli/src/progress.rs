//! A progress display on stderr that is drawn only when stderr is a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// A spinner with a message, hidden unless stderr is a terminal (and not `--quiet`).
/// Stages update its message with their counters; it never touches stdout.
#[derive(Clone)]
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A progress display prefixed with `stage`; hidden when `quiet` or stderr is not a tty.
    pub fn new(stage: &str, quiet: bool) -> Self {
        let visible = !quiet && std::io::stderr().is_terminal();
        let bar = if visible {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
            bar.enable_steady_tick(Duration::from_millis(125));
            bar
        } else {
            ProgressBar::hidden()
        };
        let style = ProgressStyle::with_template("{spinner} {prefix:.bold} [{elapsed}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(stage.to_owned());
        Self { bar }
    }

    /// True when something is drawn.
    pub fn is_visible(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// Replaces the message (cheap; drawing is rate-limited).
    pub fn set(&self, msg: impl Into<std::borrow::Cow<'static, str>>) {
        self.bar.set_message(msg);
    }

    /// Clears the display.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
