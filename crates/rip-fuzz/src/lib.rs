//! `rip-fuzz`: the bodies of the fuzz targets under `fuzz/` (cargo-fuzz, libFuzzer).
//!
//! Each target reads arbitrary bytes through code that reads what strangers wrote and
//! panics on a finding: a crash, a broken invariant, or (the differential targets) two
//! readers of the same input that disagree. `fuzz/fuzz_targets/*.rs` are one line each,
//! calling a function of [`TARGETS`]; this crate's tests replay the corpus each target
//! keeps in `fuzz/corpus/<target>/` and the inputs of past findings in
//! `fuzz/regressions/<target>/`, so `make test` runs them all on stable Rust.
//! `scripts/fuzz` runs the fuzzers (see docs/conformance.md for what they found).

mod html;
mod input;
mod ndjson;
mod robots;
mod sitemap;
mod text;
mod url;
mod warc;

/// A fuzz target's body: panics on a finding.
pub type Target = fn(&[u8]);

/// Every target by name (the name of its file in `fuzz/fuzz_targets/` and of its corpus
/// folder).
pub const TARGETS: &[(&str, Target)] = &[
    ("html_tokenizer", html::tokenizer),
    ("stream_vs_tree", html::stream_vs_tree),
    ("ndjson", ndjson::reader),
    ("href_join", url::href_join),
    ("robots", robots::robots),
    ("sitemap", sitemap::sitemap),
    ("wikitext", text::wikitext),
    ("charset", text::charset),
    ("rules", text::rules),
    ("warc", warc::warc),
];

/// The target called `name`.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}
