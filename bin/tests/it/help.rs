//! Every program's and subcommand's help: `-h` a short summary (a flag a sentence, grouped
//! under headings where there are many), `--help` every flag with its whole text; and a
//! usage error shows the usage line of `--help`, not the flags given (which read as if
//! they were required).

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::flags::{PROGRAMS, flags, help, subcommands};

/// The most lines a `-h` may take: about a screen.
const MAX_SHORT_LINES: usize = 64;

/// Programs allowed a longer `-h`, with why.
const LONGER: &[(&str, usize, &str)] = &[(
    "rip-discover",
    110,
    "nine groups of flags of its own (scope, budgets, sitemaps, context rules, output, dry \
     run, rendering, MediaWiki, shared crawl); its HTTP flags are only in --help",
)];

/// What a program with grouped flags shows: `headings` in both helps, `long_only` headings
/// and `long_only_flags` only in `--help`, `short` (words) in `-h`, `whole` in `--help`.
struct Grouped {
    program: &'static str,
    headings: &'static [&'static str],
    long_only: &'static [&'static str],
    long_only_flags: &'static [&'static str],
    short: &'static str,
    whole: &'static str,
}

const HTTP: &[&str] = &[
    "Politeness",
    "Retries and failures",
    "Timeouts and limits",
    "Requests",
    "Cache",
];

const GROUPED: &[Grouped] = &[
    Grouped {
        program: "rip-discover",
        headings: &[
            "Scope",
            "Budgets",
            "Sitemaps",
            "Context rules",
            "Output and resume",
            "Rendering",
            "MediaWiki",
            "Shared crawl",
        ],
        long_only: HTTP,
        long_only_flags: &["--delay", "--retry-max", "--cache-dir", "--ignore-robots"],
        short: "--follow <REGEX> Links matching this regex are traversed --target",
        whole: "(the reference's \"delimiter\"; default: all considered links)",
    },
    Grouped {
        program: "rip-fetch",
        headings: &["Politeness", "Timeouts and limits", "Requests", "Cache"],
        long_only: &["Retries and failures"],
        long_only_flags: &["--attempts", "--retry-max", "--rule"],
        short: "--max-body <SIZE> Largest body kept, after decompression [default: 16MiB]",
        whole: "(a size: 16MiB, 500k; a bare number is bytes); longer ones are cut and marked \
                `truncated`",
    },
    Grouped {
        program: "rip-render",
        headings: &["Rendering", "Which refs", "Archiving"],
        long_only: HTTP,
        long_only_flags: &["--delay", "--retry-max", "--cache-dir", "--ignore-robots"],
        short: "-c, --concurrency <N> Pages rendered at once: browser tabs [default: 4]",
        whole: "crashes its own page (a `render.crashed` failure) at this size",
    },
];

/// Every program and subcommand: its name (`rip-queue work`), path and arguments.
fn commands() -> Vec<(String, &'static str, Vec<String>)> {
    let mut all = Vec::new();
    for (name, path) in PROGRAMS {
        all.push((name.to_string(), *path, Vec::new()));
        for sub in subcommands(&help(path, &[])) {
            all.push((format!("{name} {sub}"), *path, vec![sub]));
        }
    }
    all
}

/// Runs `path args`, killed if it has not ended within a minute (a usage error ends at
/// once; a program that took the arguments would wait for stdin or serve).
fn run(path: &str, args: &[String]) -> Output {
    let mut child = Command::new(path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("{path} {args:?} still running after a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn short_help(path: &str, args: &[String]) -> String {
    let args: Vec<String> = args.iter().cloned().chain(["-h".to_owned()]).collect();
    let out = run(path, &args);
    assert_eq!(out.status.code(), Some(0), "{path} {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Words separated by single spaces, however clap wrapped and aligned them.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `--long` flags a help text lists.
fn longs(name: &str, text: &str) -> Vec<String> {
    flags(name, text)
        .into_iter()
        .filter_map(|f| f.long)
        .collect()
}

/// The headings of a help text: unindented lines ending with `:` (`Usage:` is not alone).
fn headings(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.starts_with(' ') && l.len() > 1)
        .filter_map(|l| l.strip_suffix(':'))
        .collect()
}

#[test]
fn dash_h_is_short_and_grouped_and_dash_dash_help_has_every_flag_whole() {
    for (name, path, args) in commands() {
        let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
        let (short, long) = (short_help(path, &args), help(path, &args_ref));
        let max = LONGER
            .iter()
            .find(|(p, _, _)| *p == name)
            .map_or(MAX_SHORT_LINES, |(_, n, _)| *n);
        let lines = short.lines().count();
        assert!(
            lines <= max,
            "{name} -h is {lines} lines (at most {max}):\n{short}"
        );
        // --help lists every flag of -h (and, where -h leaves some out, those too).
        let long_flags = longs(&name, &long);
        for f in longs(&name, &short) {
            assert!(long_flags.contains(&f), "{name}: {f} in -h, not in --help");
        }
    }
    for g in GROUPED {
        let path = PROGRAMS.iter().find(|(p, _)| *p == g.program).unwrap().1;
        let (short, long) = (short_help(path, &[]), help(path, &[]));
        let (short_headings, long_headings) = (headings(&short), headings(&long));
        for h in g.headings {
            assert!(
                short_headings.contains(h),
                "{h}: in -h of {}:\n{short}",
                g.program
            );
            assert!(
                long_headings.contains(h),
                "{h}: in --help of {}:\n{long}",
                g.program
            );
        }
        for h in g.long_only {
            assert!(
                !short_headings.contains(h),
                "{h}: not in -h of {}:\n{short}",
                g.program
            );
            assert!(
                long_headings.contains(h),
                "{h}: in --help of {}:\n{long}",
                g.program
            );
        }
        let (short_flags, long_flags) = (longs(g.program, &short), longs(g.program, &long));
        for f in g.long_only_flags {
            assert!(
                !short_flags.iter().any(|s| s == f),
                "{f} in -h of {}",
                g.program
            );
            assert!(
                long_flags.iter().any(|s| s == f),
                "{f} in --help of {}",
                g.program
            );
        }
        // -h says where the flags it leaves out are.
        assert!(words(&short).ends_with("listed by --help."), "{short}");
        assert!(!words(&long).contains("listed by --help"), "{long}");
        assert!(
            words(&short).contains(g.short),
            "{}: {:?} in -h:\n{short}",
            g.program,
            g.short
        );
        assert!(
            !words(&short).contains(g.whole),
            "{}: {:?} in -h",
            g.program,
            g.whole
        );
        assert!(
            words(&long).contains(g.whole),
            "{}: {:?} in --help",
            g.program,
            g.whole
        );
    }
}

/// The usage block of a help text or an error: from `Usage:` to the blank line after it.
fn usage(text: &str) -> Option<String> {
    let start = text.find("Usage:")?;
    let block = text[start..].split("\n\n").next()?;
    Some(block.trim_end().to_owned())
}

#[test]
fn a_usage_error_shows_the_usage_line_of_help_not_the_flags_given() {
    let mut checked = 0;
    for (name, path, args) in commands() {
        let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
        let long = help(path, &args_ref);
        let expected = usage(&long).unwrap_or_else(|| panic!("{name} --help: {long}"));
        // A flag of this command given first, which clap would list in the usage line: a
        // switch, else one taking a path (any value will do).
        let own: Vec<_> = flags(&name, &long)
            .into_iter()
            .filter(|f| {
                f.long
                    .as_deref()
                    .is_some_and(|l| l != "--help" && l != "--version")
            })
            .collect();
        let switch = own.iter().find(|f| f.value.is_none());
        let path_flag = own
            .iter()
            .find(|f| matches!(f.value.as_deref(), Some("DIR" | "FILE" | "PATH")));
        let flag: Vec<String> = match (switch, path_flag) {
            (Some(f), _) => vec![f.long.clone().unwrap()],
            (None, Some(f)) => vec![f.long.clone().unwrap(), "x".to_owned()],
            (None, None) => Vec::new(),
        };
        let mut given = args.clone();
        given.extend(flag.iter().cloned());
        given.push("--no-such-flag".to_owned());
        let out = run(path, &given);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name} {given:?}: {stderr}");
        // The error is a line of the program, as every other stderr line is.
        let program = name.split(' ').next().unwrap();
        assert!(
            stderr.starts_with(&format!("{program}: error: ")),
            "{name} {given:?}: {stderr}"
        );
        assert_eq!(
            usage(&stderr).as_deref(),
            Some(expected.as_str()),
            "{name} {given:?}: {stderr}"
        );
        checked += usize::from(!flag.is_empty());
    }
    assert!(
        checked >= 23,
        "commands checked with a flag given: {checked}"
    );
}
