//! Each target of `rip_fuzz::TARGETS` reads every input of its corpus
//! (`fuzz/corpus/<target>/`) and of its past findings (`fuzz/regressions/<target>/`)
//! without a finding; the targets listed are exactly those in `fuzz/fuzz_targets/`.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs `name`'s target on every input of its corpus and regressions; the corpus must
/// not be empty.
fn replay(name: &str) {
    let target = rip_fuzz::target(name).expect("a target of that name");
    let corpus = files(&fuzz_dir().join("corpus").join(name));
    assert!(
        !corpus.is_empty(),
        "no corpus for {name} in fuzz/corpus/{name}"
    );
    let regressions = files(&fuzz_dir().join("regressions").join(name));
    let mut failed = Vec::new();
    for file in corpus.iter().chain(&regressions) {
        let data = std::fs::read(file).expect("a corpus file");
        if catch_unwind(AssertUnwindSafe(|| target(&data))).is_err() {
            failed.push(file.display().to_string());
        }
    }
    assert!(failed.is_empty(), "{name}: findings on {failed:#?}");
    eprintln!(
        "{name}: {} corpus inputs, {} regressions",
        corpus.len(),
        regressions.len()
    );
}

macro_rules! replays {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { replay(stringify!($name)); })*

        #[test]
        fn every_target_has_a_replay_and_a_fuzz_target() {
            let mut replayed = vec![$(stringify!($name)),*];
            replayed.sort_unstable();
            let mut listed: Vec<&str> = rip_fuzz::TARGETS.iter().map(|(n, _)| *n).collect();
            listed.sort_unstable();
            assert_eq!(replayed, listed, "rip_fuzz::TARGETS and the replays");
            let mut programs: Vec<String> = files(&fuzz_dir().join("fuzz_targets"))
                .iter()
                .filter_map(|p| Some(p.file_stem()?.to_str()?.to_owned()))
                .collect();
            programs.sort_unstable();
            assert_eq!(programs, listed, "fuzz/fuzz_targets/ and rip_fuzz::TARGETS");
        }
    };
}

replays!(
    charset,
    href_join,
    html_tokenizer,
    ndjson,
    robots,
    rules,
    sitemap,
    stream_vs_tree,
    warc,
    wikitext,
);
