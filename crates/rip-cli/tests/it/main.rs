//! The command line every binary shares, run on the real binaries (build them first:
//! `cargo build --workspace --bins`): exit codes of bad arguments, renamed flags, error
//! messages.

mod codes;
mod messages;
mod renamed;
mod summaries;

use std::process::Command;

/// What a binary did.
pub struct Ran {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

/// Runs a workspace binary with `input` as its stdin (a file, so no writer thread), in
/// a folder of its own (what a stage leaves in its working folder, e.g. `.rip-cache`, goes
/// with it).
pub fn run(bin: &str, args: &[&str], input: &[u8]) -> Ran {
    let cwd = tempfile::tempdir().unwrap();
    let mut stdin = tempfile::tempfile().unwrap();
    std::io::Write::write_all(&mut stdin, input).unwrap();
    std::io::Seek::rewind(&mut stdin).unwrap();
    let out = Command::new(rip_testkit::bin(bin))
        .args(args)
        .stdin(stdin)
        .current_dir(cwd.path())
        .output()
        .unwrap();
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
