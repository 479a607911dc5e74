//! The programs of this package, run as built (`cargo test -p rip-bin` builds them).
//!
//! Their flags, outputs and exit codes are tested by the libraries' integration tests and
//! `rip-cli`'s, which run the same binaries; here, what moving them into one package could
//! break: each program still says what it is.

mod flags;
mod follow_broker;
mod help;
mod metrics;
mod netlab;
mod netns;
mod render_auto;
mod shell;

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
        "rip-warc",
        env!("CARGO_BIN_EXE_rip-warc"),
        "Reads WARC and WARC.gz archives into page records (rip-fetch's contract): `rip-warc \
         read crawl.warc.gz | rip-parse`.",
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

/// The `MALLOC_MMAP_THRESHOLD_` in the environment of a running rip-parse started with
/// `user` (none: the variable removed), read from `/proc` while it waits for input.
fn threshold_seen_by_rip_parse(user: Option<&str>) -> Option<String> {
    use std::process::{Command, Stdio};
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rip-parse"));
    cmd.arg("-q").stdin(Stdio::piped()).stdout(Stdio::null());
    match user {
        Some(v) => cmd.env("MALLOC_MMAP_THRESHOLD_", v),
        None => cmd.env_remove("MALLOC_MMAP_THRESHOLD_"),
    };
    let mut child = cmd.spawn().unwrap();
    let environ = format!("/proc/{}/environ", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let seen = loop {
        // After the start again the same process holds the new environment.
        let text = std::fs::read(&environ).unwrap_or_default();
        let vars = String::from_utf8_lossy(&text).into_owned();
        let seen = vars
            .split('\0')
            .find_map(|v| v.strip_prefix("MALLOC_MMAP_THRESHOLD_="))
            .map(str::to_owned);
        if seen.is_some() || std::time::Instant::now() > deadline {
            break seen;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    seen
}

#[test]
fn rip_parse_runs_with_a_fixed_mmap_threshold_unless_the_user_set_one() {
    assert_eq!(
        threshold_seen_by_rip_parse(None).as_deref(),
        Some(rip_cli::malloc::THRESHOLD)
    );
    assert_eq!(
        threshold_seen_by_rip_parse(Some("1048576")).as_deref(),
        Some("1048576")
    );
}
