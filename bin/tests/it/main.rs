//! The programs of this package, run as built (`cargo test -p rip-bin` builds them).
//!
//! Their flags, outputs and exit codes are tested by the libraries' integration tests and
//! `rip-cli`'s, which run the same binaries; here, what moving them into one package could
//! break: each program still says what it is.

use std::process::Command;

/// Every program, its path, and the first paragraph of its `-h`. The package's
/// `description` (what `#[command(about)]` would print) is shared by all of them, so each
/// program names itself.
const PROGRAMS: &[(&str, &str, &str)] = &[
    (
        "rip-cache",
        env!("CARGO_BIN_EXE_rip-cache"),
        "Stats, verify, compact and prune a ripperoni cache folder.",
    ),
    (
        "rip-check",
        env!("CARGO_BIN_EXE_rip-check"),
        "A pass-through stage that checks every record against the ripperoni record contract.",
    ),
    (
        "rip-discover",
        env!("CARGO_BIN_EXE_rip-discover"),
        "The link crawler: BFS from start URLs within three scope regexes, robots.txt and \
         sitemaps, streaming `ref` records, resumable.",
    ),
    (
        "rip-fetch",
        env!("CARGO_BIN_EXE_rip-fetch"),
        "The fetch stage: one page, failure or expected record per ref, polite, cached, never \
         losing a URL.",
    ),
    (
        "rip-health",
        env!("CARGO_BIN_EXE_rip-health"),
        "Is everything captured? The crawl-health report of a ripperoni scrape: JSON, a \
         one-screen summary, and an HTML report.",
    ),
    (
        "rip-parse",
        env!("CARGO_BIN_EXE_rip-parse"),
        "Turns fetched pages into documents: generic extraction, or a declarative rules file \
         with concept routing and JSON Schema validation.",
    ),
    (
        "rip-reconcile",
        env!("CARGO_BIN_EXE_rip-reconcile"),
        "Gives every error document of a scrape a verdict: captured elsewhere, missing, or dead.",
    ),
    (
        "rip-render",
        env!("CARGO_BIN_EXE_rip-render"),
        "The render stage: one page (the DOM after scripts ran), failure or expected record \
         per ref, through headless Chromium.",
    ),
    (
        "rip-route",
        env!("CARGO_BIN_EXE_rip-route"),
        "The failure-routing stage: retry, resolve, capture or expect each failure, by policy.",
    ),
    (
        "rip-testserver",
        env!("CARGO_BIN_EXE_rip-testserver"),
        "A fault-injecting HTTP/1.1 test server",
    ),
    (
        "rip-write",
        env!("CARGO_BIN_EXE_rip-write"),
        "A pass-through stage persisting docs and error documents to an output folder, \
         atomically.",
    ),
    (
        "ripperoni",
        env!("CARGO_BIN_EXE_ripperoni"),
        "The ripperoni wrapper: runs a whole scrape, described by one state file, as a \
         pipeline of the rip-* stages.",
    ),
];

fn run(path: &str, arg: &str) -> String {
    let out = Command::new(path).arg(arg).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{path} {arg}");
    String::from_utf8(out.stdout).unwrap()
}

/// Words separated by single spaces, however clap wrapped them.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn each_program_describes_itself_not_the_package() {
    for (name, path, about) in PROGRAMS {
        let help = run(path, "-h");
        let (first, _) = help.split_once("\n\n").expect("a paragraph, then usage");
        assert_eq!(words(first), *about, "{name} -h");
        assert!(
            help.contains(&format!("Usage: {name} ")),
            "{name} -h: {help}"
        );
    }
}

#[test]
fn each_program_says_its_own_name_and_version() {
    for (name, path, _) in PROGRAMS {
        let version = run(path, "--version");
        assert_eq!(
            version,
            format!("{name} {}\n", env!("CARGO_PKG_VERSION")),
            "{name}"
        );
    }
}
