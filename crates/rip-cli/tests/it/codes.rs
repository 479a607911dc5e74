//! A typo in a flag is a fatal usage error (exit 1), never "partial" (2); `--help` and
//! `--version` exit 0. One table over every binary and subcommand.

use crate::run;

/// Every binary, with the arguments that reach each of its (sub)commands.
const COMMANDS: &[(&str, &[&str])] = &[
    ("rip-check", &[]),
    ("rip-discover", &[]),
    ("rip-fetch", &[]),
    ("rip-health", &[]),
    ("rip-parse", &[]),
    ("rip-reconcile", &[]),
    ("rip-route", &[]),
    ("rip-write", &[]),
    ("rip-testserver", &[]),
    ("ripperoni", &[]),
    ("ripperoni", &["run"]),
    ("ripperoni", &["pipeline"]),
    ("ripperoni", &["check"]),
    ("ripperoni", &["scaffold"]),
    ("ripperoni", &["schema"]),
    ("ripperoni", &["completions"]),
    ("ripperoni", &["man"]),
];

#[test]
fn a_bad_flag_exits_1_on_every_binary_and_subcommand() {
    for (bin, sub) in COMMANDS {
        let mut args = sub.to_vec();
        args.push("--no-such-flag");
        let r = run(bin, &args, b"");
        assert_eq!(r.code, 1, "{bin} {args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("--no-such-flag"),
            "{bin} {args:?}: {}",
            r.stderr
        );
        assert!(r.stdout.is_empty(), "{bin} {args:?}: {}", r.stdout);
    }
}

#[test]
fn a_bad_value_and_a_missing_argument_exit_1() {
    for (bin, args) in [
        ("rip-fetch", &["--delay", "soon"][..]),
        ("rip-route", &["--max-retries", "many"]),
        ("rip-write", &[]),
        ("ripperoni", &[]),
        ("ripperoni", &["run"]),
        ("ripperoni", &["no-such-command"]),
    ] {
        let r = run(bin, args, b"");
        assert_eq!(r.code, 1, "{bin} {args:?}: {}", r.stderr);
    }
}

#[test]
fn help_and_version_exit_0_on_stdout() {
    for (bin, sub) in COMMANDS {
        for flag in ["--help", "-h"] {
            let mut args = sub.to_vec();
            args.push(flag);
            let r = run(bin, &args, b"");
            assert_eq!(r.code, 0, "{bin} {args:?}: {}", r.stderr);
            assert!(r.stdout.contains("Usage:"), "{bin} {args:?}: {}", r.stdout);
        }
        if sub.is_empty() {
            let r = run(bin, &["--version"], b"");
            assert_eq!(r.code, 0, "{bin} --version: {}", r.stderr);
            assert!(r.stdout.starts_with(bin), "{bin} --version: {}", r.stdout);
        }
    }
    let r = run("ripperoni", &["help", "run"], b"");
    assert_eq!(r.code, 0, "ripperoni help run: {}", r.stderr);
}
