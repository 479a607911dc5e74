//! The command line every binary shares, run on the real binaries (build them first:
//! `cargo build --workspace --bins`): exit codes of bad arguments, renamed flags, error
//! messages.

mod codes;
mod log_shape;
mod messages;
mod renamed;
mod secrets;
mod summaries;

pub use rip_testkit::Ran;

/// Runs a workspace binary with `input` as its stdin, in a folder of its own (what a stage
/// leaves in its working folder, e.g. `.rip-cache`, goes with it).
pub fn run(bin: &str, args: &[&str], input: &[u8]) -> Ran {
    let cwd = tempfile::tempdir().unwrap();
    rip_testkit::Stage::new(bin)
        .args(args)
        .stdin(input)
        .current_dir(cwd.path())
        .run()
}
