//! Integration tests: `rip-discover --mediawiki` (this crate, run by the program) against the
//! real test MediaWiki (`rip-testwiki`), its output read back with rip-core types; and whole
//! wiki runs through the later stages.

mod listing;
mod pipeline;
mod values;

use std::path::Path;

use rip_core::{Failure, Record, Ref};
pub use rip_testkit::Ran;
use rip_testkit::Stage;

/// What a listing wrote, by kind.
pub trait Crawled {
    /// The `ref` records.
    fn refs(&self) -> Vec<&Ref>;
    /// The `failure` records.
    fn failures(&self) -> Vec<&Failure>;
}

impl Crawled for Ran {
    fn refs(&self) -> Vec<&Ref> {
        self.records()
            .iter()
            .filter_map(|r| match r {
                Record::Ref(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    fn failures(&self) -> Vec<&Failure> {
        self.records()
            .iter()
            .filter_map(|r| match r {
                Record::Failure(f) => Some(f),
                _ => None,
            })
            .collect()
    }
}

/// Runs `rip-discover` with `args` (plus no politeness delay and a private cache unless the
/// caller passes `--cache-dir`), feeding `stdin` when given. Every line of its output
/// must decode, the last one as the summary.
pub fn run_with(args: &[&str], cache: &Path, stdin: Option<&str>) -> Ran {
    let r = Stage::new("rip-discover")
        .args([
            "--delay",
            "0",
            "--jitter",
            "0",
            "--retry-base",
            "10ms",
            "-q",
        ])
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .maybe_stdin(stdin)
        .run();
    assert_eq!(
        r.records().len(),
        r.lines().len(),
        "every line a record of a known kind: {}",
        r.stdout
    );
    r
}

/// Runs `rip-discover` with `args` and a fresh cache.
pub fn run(args: &[&str]) -> Ran {
    let cache = tempfile::tempdir().unwrap();
    run_with(args, cache.path(), None)
}
