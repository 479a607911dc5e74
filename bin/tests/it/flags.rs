//! One flag, one meaning: every flag of every program and subcommand, read from its
//! `--help`, means the same wherever it appears (docs/guide/conventions.md: "a flag means
//! the same on every binary").
//!
//! How meaning is compared: a long flag on several programs has the same help text on
//! each (defaults and environment variables aside, white space normalised; a flag shared
//! through one `rip_cli` struct has it by construction), or it is in [`MEANINGS`], which
//! says its one meaning in words and a regex that every one of its help texts must match.
//! Its value (`<SIZE>`, `<N>`, none) is the same everywhere, and a short flag stands for one
//! long flag everywhere (`-j` is one thing).

use std::collections::BTreeMap;
use std::process::Command;

use regex::Regex;

/// Flags whose help texts differ between programs, each with its one meaning and a regex
/// every help text of it must match; and flags on one program whose meaning another
/// program must keep when it takes the flag (`--max-requests`: rip-render's per-page cap
/// is `--max-page-requests`).
const MEANINGS: &[(&str, &str, &str)] = &[
    (
        "--quiet",
        "less on stderr: errors only, no progress or summary",
        r"(?i)only errors|no (\w+ )?summary",
    ),
    ("--verbose", "more on stderr", r"(?i)stderr"),
    (
        "--render",
        "pages through headless Chromium; `auto`: only those whose content needs script",
        r"(?s)--render auto.*needs script|auto.*needs script",
    ),
    (
        "--rules",
        "the rules file (TOML) of the site's concepts: rip-parse extracts by it, rip-write \
         types its tables by it",
        r"(?i)\brules file\b",
    ),
    (
        "--concurrency",
        "how much work is in flight at once",
        r"(?i)in flight|at once",
    ),
    (
        "--cache-dir",
        "the shared cache folder",
        r"(?i)^the cache folder",
    ),
    (
        "--max-body",
        "the largest body taken, a size; a bare number is bytes",
        r"(?i)bod(y|ies).*a bare number is bytes",
    ),
    (
        "--max-requests",
        "the run's budget of requests, after which it stops",
        r"(?i)fetches.*then stop",
    ),
    (
        "--threads",
        "the process's worker threads",
        r"(?i)worker threads",
    ),
    (
        "--max-retry-after",
        "the longest Retry-After hint honoured",
        r"(?i)longest retry-after|largest retry-after",
    ),
    (
        "--ack-wait",
        "how long work taken by a process that went away waits before another takes it",
        r"(?i)another",
    ),
    (
        "--handover-wait",
        "how long a process waits after taking work over from another",
        r"(?i)waits after taking",
    ),
    (
        "--partitions",
        "the partitions hosts are spread over (a shared frontier, a stream)",
        r"(?i)partition",
    ),
    (
        "--group",
        "the group of workers that share a stream",
        r"(?i)group",
    ),
    (
        "--idle-exit",
        "stop after this long with nothing to do",
        r"(?i)(exit|stop) after this long with no",
    ),
    ("--base-url", "the site's base URL", r"(?i)base url"),
    (
        "--markdown",
        "Markdown of the page's main content",
        r"(?i)markdown",
    ),
    (
        "--name",
        "the scrape's name (rip-write's subfolder, rip-health's report)",
        r"(?i)scrape",
    ),
    (
        "--dir",
        "the folder the program works on (reads whole, serves or writes into)",
        r"(?i)folder|directory",
    ),
    (
        "--warc",
        "archive what went over the wire as WARC files in DIR (each program says what it \
         sends: rip-render adds the DOMs it rendered)",
        r"^Write every request sent .*and its response as WARC/1\.1 records into files in DIR",
    ),
];

/// Flags left with two meanings, each with why no one can mistake one for the other.
const TWO_MEANINGS: &[(&str, &str)] = &[(
    "--follow",
    "rip-discover's takes a regex (links to traverse), `rip-queue pull`'s is a switch (keep \
     reading, as `tail -f`): neither program accepts the other's form, so a mix-up is a usage \
     error, never a silently different run",
)];

/// Every program, with its subcommands as its `--help` lists them.
pub(crate) const PROGRAMS: &[(&str, &str)] = &[
    ("rip-cache", env!("CARGO_BIN_EXE_rip-cache")),
    ("rip-check", env!("CARGO_BIN_EXE_rip-check")),
    ("rip-discover", env!("CARGO_BIN_EXE_rip-discover")),
    ("rip-fetch", env!("CARGO_BIN_EXE_rip-fetch")),
    ("rip-health", env!("CARGO_BIN_EXE_rip-health")),
    ("rip-parse", env!("CARGO_BIN_EXE_rip-parse")),
    ("rip-queue", env!("CARGO_BIN_EXE_rip-queue")),
    ("rip-reconcile", env!("CARGO_BIN_EXE_rip-reconcile")),
    ("rip-render", env!("CARGO_BIN_EXE_rip-render")),
    ("rip-route", env!("CARGO_BIN_EXE_rip-route")),
    ("rip-testserver", env!("CARGO_BIN_EXE_rip-testserver")),
    ("rip-warc", env!("CARGO_BIN_EXE_rip-warc")),
    ("rip-write", env!("CARGO_BIN_EXE_rip-write")),
    ("ripperoni", env!("CARGO_BIN_EXE_ripperoni")),
];

/// A flag as one program's `--help` shows it.
#[derive(Debug, Clone)]
pub(crate) struct Flag {
    /// `rip-queue work`, `rip-fetch`.
    program: String,
    short: Option<String>,
    pub(crate) long: Option<String>,
    /// `SIZE` of `<SIZE>`.
    pub(crate) value: Option<String>,
    /// The help text, white space normalised, defaults and environment left out.
    text: String,
}

pub(crate) fn help(path: &str, args: &[&str]) -> String {
    let out = Command::new(path)
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{path} {args:?} --help");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a `--help` lists (`help` aside).
pub(crate) fn subcommands(help: &str) -> Vec<String> {
    let Some((_, rest)) = help.split_once("\nCommands:\n") else {
        return Vec::new();
    };
    rest.lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The flags of a `--help`: a line indented 2 to 6 spaces starting with `-` opens one, and
/// the lines indented deeper after it are its text.
pub(crate) fn flags(program: &str, help: &str) -> Vec<Flag> {
    let opening = Regex::new(
        r"^ {2,6}(?:(-[A-Za-z0-9])(?:, )?)?(--[a-z0-9-]+)?(?:[ =]\[?<([^>]+)>\]?)?(?:\.\.\.)?(.*)$",
    )
    .unwrap();
    let mut found: Vec<Flag> = Vec::new();
    let mut open = false;
    for line in help.lines() {
        let indent = line.len() - line.trim_start().len();
        if (2..=6).contains(&indent) && line.trim_start().starts_with('-') {
            let c = opening.captures(line).unwrap();
            let group = |i: usize| c.get(i).map(|m| m.as_str().to_owned());
            found.push(Flag {
                program: program.to_owned(),
                short: group(1),
                long: group(2),
                value: group(3),
                text: group(4).unwrap_or_default(),
            });
            open = true;
        } else if open && (line.trim().is_empty() || indent > 6) {
            let text = &mut found.last_mut().unwrap().text;
            text.push(' ');
            text.push_str(line.trim());
        } else {
            open = false;
        }
    }
    for f in &mut found {
        f.text = normalised(&f.text);
    }
    found
}

/// A help text without clap's bracketed notes (`[default: …]`, `[env: …]`, `[possible
/// values: …]`), its white space collapsed.
fn normalised(text: &str) -> String {
    let notes = Regex::new(r"\[(default|env|possible values|aliases): [^\]]*\]").unwrap();
    let text = notes.replace_all(text, " ");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every flag of every program and subcommand; clap's own `--help` and `--version` aside.
fn all_flags() -> Vec<Flag> {
    let mut all = Vec::new();
    for (name, path) in PROGRAMS {
        let top = help(path, &[]);
        all.extend(flags(name, &top));
        for sub in subcommands(&top) {
            let text = help(path, &[&sub]);
            all.extend(flags(&format!("{name} {sub}"), &text));
        }
    }
    all.retain(|f| !matches!(f.long.as_deref(), Some("--help" | "--version")));
    all
}

/// What is wrong with the flags: each problem a line naming the flag and the programs.
fn problems(all: &[Flag]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut by_long: BTreeMap<&str, Vec<&Flag>> = BTreeMap::new();
    let mut by_short: BTreeMap<&str, Vec<&Flag>> = BTreeMap::new();
    for f in all {
        if let Some(long) = &f.long {
            by_long.entry(long).or_default().push(f);
        }
        if let Some(short) = &f.short {
            by_short.entry(short).or_default().push(f);
        }
    }
    let listed = |fs: &[&Flag], show: &dyn Fn(&Flag) -> String| {
        fs.iter()
            .map(|f| format!("{}: {}", f.program, show(f)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    for (short, fs) in &by_short {
        let longs: std::collections::BTreeSet<_> = fs.iter().map(|f| &f.long).collect();
        if longs.len() > 1 {
            let shown = listed(fs, &|f| format!("{:?}", f.long));
            problems.push(format!("{short} stands for several flags: {shown}"));
        }
    }
    for (long, fs) in &by_long {
        if TWO_MEANINGS.iter().any(|(f, _)| f == long) {
            continue;
        }
        let values: std::collections::BTreeSet<_> = fs.iter().map(|f| &f.value).collect();
        if values.len() > 1 {
            let shown = listed(fs, &|f| format!("{:?}", f.value));
            problems.push(format!("{long} takes different values: {shown}"));
        }
        let meaning = MEANINGS.iter().find(|(f, _, _)| f == long);
        let texts: std::collections::BTreeSet<_> = fs.iter().map(|f| &f.text).collect();
        let Some((_, meaning, pattern)) = meaning else {
            if texts.len() > 1 {
                let shown = listed(fs, &|f| f.text.clone());
                problems.push(format!(
                    "{long} is described differently, and MEANINGS does not say its one \
                     meaning: {shown}"
                ));
            }
            continue;
        };
        let pattern = Regex::new(pattern).unwrap();
        for f in fs.iter().filter(|f| !pattern.is_match(&f.text)) {
            problems.push(format!(
                "{long} of {} does not mean {meaning:?} (/{pattern}/): {}",
                f.program, f.text
            ));
        }
    }
    problems
}

#[test]
fn a_flag_means_the_same_on_every_program() {
    let all = all_flags();
    assert!(all.len() > 300, "flags read: {}", all.len());
    let problems = problems(&all);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_reader_of_help_texts_finds_each_form_of_flag() {
    let help = "Options:\n  -i, --input <FILE>\n          Input file\n          \n          \
                [default: -]\n\n      --strict\n          Stop\n  -j, --parallel <N>    Runs at \
                once [default: 2]\n                        of the program\n  -q  Quiet\n\nMore:\n";
    let got: Vec<String> = flags("p", help)
        .into_iter()
        .map(|f| format!("{:?} {:?} {:?} {}", f.short, f.long, f.value, f.text))
        .collect();
    assert_eq!(
        got,
        [
            r#"Some("-i") Some("--input") Some("FILE") Input file"#,
            r#"None Some("--strict") None Stop"#,
            r#"Some("-j") Some("--parallel") Some("N") Runs at once of the program"#,
            r#"Some("-q") None None Quiet"#,
        ]
    );
}

#[test]
fn every_meaning_is_of_a_flag_that_exists() {
    let all = all_flags();
    let count = |long: &str| {
        all.iter()
            .filter(|f| f.long.as_deref() == Some(long))
            .count()
    };
    for (long, _, _) in MEANINGS {
        assert!(
            count(long) > 0,
            "{long} is on no program: drop it from MEANINGS"
        );
    }
    for (long, _) in TWO_MEANINGS {
        assert!(
            count(long) > 1,
            "{long} is on one program only: drop it from TWO_MEANINGS"
        );
    }
}
