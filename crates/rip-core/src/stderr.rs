//! The one way a ripperoni program writes a line on stderr: `rip-x: what happened`, with
//! the time in front when `RIP_LOG_TIME=1` asks (`2026-12-01T09:00:00.125000Z rip-x: …`).
//!
//! Every line of a stage's own (its summary, `rip-x: error: …`, a bad input line) goes
//! through [`say`], and the tracing lines of `rip-cli`'s formatter take their time from
//! [`time_prefix`], so that one setting gives every line one shape. It lives here, in the
//! crate every program and stage library depends on, rather than in `rip-cli`, because
//! libraries (this crate's NDJSON reader among them) write some of those lines.

use std::fmt::Display;
use std::io::Write as _;
use std::sync::OnceLock;

/// The environment variable that asks for timestamps on stderr's lines.
pub const TIME_VAR: &str = "RIP_LOG_TIME";

/// Whether this process's stderr lines carry the time ([`TIME_VAR`] set, not empty or `0`).
pub fn timed() -> bool {
    static TIMED: OnceLock<bool> = OnceLock::new();
    *TIMED.get_or_init(|| std::env::var_os(TIME_VAR).is_some_and(|v| !v.is_empty() && v != "0"))
}

/// The time in front of a line, `2026-12-01T09:00:00.125000Z ` (UTC, microseconds, a
/// space after), or nothing when [`timed`] is false.
pub fn time_prefix() -> String {
    if timed() { stamp() } else { String::new() }
}

/// Now, as a line's time: `2026-12-01T09:00:00.125000Z ` (with the space).
pub fn stamp() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ ")
        .to_string()
}

/// Writes `text` on stderr, each of its lines (blank ones aside) with the time in front
/// when asked: the text is the line(s) as they read, `rip-x: …` included. A closed
/// stderr is not an error a program can report anywhere, so it is ignored.
pub fn say(text: impl Display) {
    let _ = std::io::stderr()
        .lock()
        .write_all(shape(&text.to_string(), &time_prefix()).as_bytes());
}

/// `text` with `time` before each line that is not blank, ending with a newline.
fn shape(text: &str, time: &str) -> String {
    let mut out = String::with_capacity(text.len() + time.len() + 1);
    for line in text.strip_suffix('\n').unwrap_or(text).split('\n') {
        // A blank line (between a usage error and its usage block) stays blank.
        if !line.is_empty() {
            out.push_str(time);
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_gets_the_time_and_one_newline() {
        assert_eq!(shape("rip-x: done", ""), "rip-x: done\n");
        assert_eq!(
            shape("rip-x: a\nrip-x: b\n", "T "),
            "T rip-x: a\nT rip-x: b\n"
        );
        assert_eq!(
            shape("rip-x: a\n\nUsage: x", "T "),
            "T rip-x: a\n\nT Usage: x\n"
        );
        let s = stamp();
        assert!(s.starts_with("20") && s.ends_with("Z "), "{s}");
        assert_eq!(s.len(), "2026-12-01T09:00:00.125000Z ".len(), "{s}");
    }
}
