//! Standard output for a stage's records, without the line buffering of
//! [`std::io::Stdout`].
//!
//! Rust's `Stdout` is a `LineWriter`: each write looks for the last newline in what it is
//! given (`memrchr`, a word at a time), to flush up to it. A stage already buffers its
//! records (rip-core's `NdjsonWriter`: 64 KiB, flushed whenever its input pauses), so that
//! search over every byte written is pure cost, over the bodies of rip-fetch's page records
//! as over everything else (`docs/benchmarks-log.md`, figures moved from module docs).
//! [`stdout`] writes to a duplicate of file descriptor 1 instead (safe: `try_clone_to_owned`).

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;

/// Where a stage writes its records: file descriptor 1 unbuffered, or `Stdout` when it
/// cannot be duplicated (then as before).
pub enum Output {
    /// A duplicate of file descriptor 1.
    Fd(File),
    /// Rust's line-buffered standard output.
    Std(io::Stdout),
}

/// The program's standard output, for a stage that buffers and flushes its records itself.
/// Nothing else should write to standard output alongside it: the two would not share a
/// buffer.
pub fn stdout() -> Output {
    let out = io::stdout();
    match out.as_fd().try_clone_to_owned() {
        Ok(fd) => Output::Fd(File::from(fd)),
        Err(_) => Output::Std(out),
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::Fd(f) => f.write(buf),
            Output::Std(s) => s.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::Fd(f) => f.write_all(buf),
            Output::Std(s) => s.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Fd(f) => f.flush(),
            Output::Std(s) => s.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_output_is_a_duplicate_of_descriptor_one() {
        // The test harness has a standard output: it is duplicated, not wrapped.
        assert!(matches!(stdout(), Output::Fd(_)));
    }
}
