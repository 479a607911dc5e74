//! `-h` is a short, grouped summary; `--help` has every flag's whole text.

use rip_testkit::Stage;

fn help(flag: &str) -> String {
    let r = Stage::new("rip-discover").arg(flag).run();
    assert_eq!(r.code, 0, "{flag}: {}", r.stderr);
    r.stdout
}

/// The `--long` flags a help text lists, in order: `      --flag …` or `  -f, --flag …`.
fn flags(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("      --").or_else(|| {
                (l.starts_with("  -") && l.get(4..8) == Some(", --"))
                    .then(|| l.get(8..))
                    .flatten()
            })?;
            Some(format!("--{}", rest.split([' ', '.']).next().unwrap()))
        })
        .collect()
}

#[test]
fn dash_h_is_short_and_grouped_and_dash_dash_help_has_every_flag_whole() {
    let (short, long) = (help("-h"), help("--help"));
    let headings = [
        "Scope:",
        "Budgets:",
        "Sitemaps:",
        "Context rules:",
        "Output and resume:",
        "Rendering:",
        "MediaWiki:",
        "Shared crawl:",
    ];
    for h in headings {
        assert!(short.lines().any(|l| l == h), "{h} in -h:\n{short}");
        assert!(long.lines().any(|l| l == h), "{h} in --help:\n{long}");
    }
    assert!(long.lines().any(|l| l == "HTTP:"), "{long}");
    assert!(
        short.lines().count() < 110,
        "-h is {} lines:\n{short}",
        short.lines().count()
    );
    // -h: one sentence a flag, the HTTP flags (rip-fetch's) named as a group.
    assert!(
        short.contains("--follow <REGEX>     Links matching this regex are traversed\n"),
        "{short}"
    );
    assert!(
        short.contains("the same flags as\nrip-fetch's, listed by --help"),
        "{short}"
    );
    // --help: every flag of -h and the HTTP ones, each with its whole text.
    let (short_flags, long_flags) = (flags(&short), flags(&long));
    for f in &short_flags {
        assert!(long_flags.contains(f), "{f} only in -h");
    }
    for f in ["--delay", "--retry-max", "--cache-dir", "--ignore-robots"] {
        assert!(long_flags.iter().any(|l| l == f), "{f} in --help");
        assert!(!short_flags.iter().any(|l| l == f), "{f} not in -h");
    }
    let words = long.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("(the reference's \"delimiter\"; default: all considered links)"),
        "{long}"
    );
}
