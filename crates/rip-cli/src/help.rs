//! Short help for `-h`, long help for `--help`, from one doc comment per flag.
//!
//! clap shows an argument's doc comment whole under `-h` when it is one paragraph, which
//! most of ours are: a program with many flags then prints hundreds of lines for `-h`.
//! [`short_help`] keeps each flag's text for `--help` and gives `-h` its first sentence
//! without its parentheses, and leaves the flags of some headings (those every fetching
//! stage shares, say) out of `-h` altogether, with a line saying where they are.
//!
//! [`plain_usage`] makes a usage error show the usage line of `--help`, not clap's list of
//! the flags that were given, which reads as if they were required; every program parses
//! through it ([`crate::parse`]).

use clap::Command;
use clap::builder::StyledStr;

/// `cmd`, and each of its subcommands, with the usage line `--help` shows
/// (`rip-cache prune [OPTIONS] --older-than <DURATION>`) in its usage errors too. Left
/// alone, clap's error names the flags given in place of `[OPTIONS]`
/// (`Usage: rip-cache prune --older-than <DURATION> --cache-dir <CACHE_DIR>`), so that an
/// optional flag (one with a default or an environment variable) reads as required.
pub fn plain_usage(mut cmd: Command) -> Command {
    cmd.build();
    with_help_usage(cmd)
}

fn with_help_usage(mut cmd: Command) -> Command {
    let usage = cmd.render_usage().ansi().to_string();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        cmd = cmd.mut_subcommand(name, with_help_usage);
    }
    cmd.override_usage(StyledStr::from(untitled(&usage).to_owned()))
}

/// A rendered usage without its `Usage:` title (and the title's style, when styled).
fn untitled(usage: &str) -> &str {
    let Some((_, rest)) = usage.split_once("Usage:") else {
        return usage;
    };
    let rest = rest.strip_prefix("\u{1b}[0m").unwrap_or(rest);
    rest.strip_prefix(' ').unwrap_or(rest)
}

/// `cmd` with a short help for `-h` (the first sentence of each flag's help, its
/// parentheses left out) and the whole text for `--help`; the flags under the headings
/// `long_only` are listed by `--help` only, and `-h` ends with `note` (what they are;
/// none when empty).
pub fn short_help(cmd: Command, long_only: &'static [&'static str], note: &'static str) -> Command {
    let cmd = cmd.mut_args(|a| {
        // Hidden from `-h` by its heading, or by itself (`--metrics`).
        let hidden = a.is_hide_short_help_set()
            || a.get_help_heading().is_some_and(|h| long_only.contains(&h));
        let a = a.hide_short_help(hidden);
        if a.get_long_help().is_some() {
            return a;
        }
        let Some(full) = a.get_help().map(ToString::to_string) else {
            return a;
        };
        let short = first_sentence(&full);
        if short == full {
            return a;
        }
        a.help(short).long_help(full)
    });
    if note.is_empty() {
        return cmd;
    }
    cmd.after_help(note).after_long_help("")
}

/// The first sentence of `text` (up to a `. ` or a `;` outside parentheses and
/// backquotes), its parenthesised parts left out; `text` itself when that leaves nothing.
fn first_sentence(text: &str) -> String {
    let (mut out, mut depth, mut quoted) = (String::new(), 0usize, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted && depth > 0 => {
                depth -= 1;
                continue;
            }
            // `e.g.` and `i.e.` do not end a sentence.
            '.' if !quoted
                && depth == 0
                && chars.peek().is_none_or(|n| n.is_whitespace())
                && !out.ends_with("e.g")
                && !out.ends_with("i.e") =>
            {
                break;
            }
            // A clause after a `;` is a detail for `--help`.
            ';' if !quoted && depth == 0 => break,
            _ => {}
        }
        if depth == 0 {
            out.push(c);
        }
    }
    // `word (aside) word` leaves two spaces, `word (aside), word` a space before the comma.
    let mut short = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for p in [",", ";", ":"] {
        short = short.replace(&format!(" {p}"), p);
    }
    let short = short.trim_end_matches([',', ';', ':', ' ']).to_owned();
    if short.is_empty() {
        text.to_owned()
    } else {
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction};

    #[test]
    fn the_first_sentence_without_its_parentheses() {
        for (text, short) in [
            (
                "Follow links up to this depth (start URLs are depth 0).",
                "Follow links up to this depth",
            ),
            (
                "Links matching this regex are traversed (the reference's \"delimiter\"; \
                 default: all considered links)",
                "Links matching this regex are traversed",
            ),
            (
                "Write at most this many targets. Then stop (really).",
                "Write at most this many targets",
            ),
            (
                "Follow `rel=\"nofollow\"` links too (and more).",
                "Follow `rel=\"nofollow\"` links too",
            ),
            (
                "A size: 16MiB, 1.5k (a bare number is bytes)",
                "A size: 16MiB, 1.5k",
            ),
            ("(all of it in parentheses)", "(all of it in parentheses)"),
            (
                "A rule, `S=C`, e.g. `403=THROTTLED` (repeatable). More.",
                "A rule, `S=C`, e.g. `403=THROTTLED`",
            ),
            (
                "Memory for refs waiting (estimated); refs past it wait in a file.",
                "Memory for refs waiting",
            ),
            ("Keep `utm_*` parameters", "Keep `utm_*` parameters"),
        ] {
            assert_eq!(first_sentence(text), short, "{text}");
        }
    }

    #[test]
    fn a_usage_error_shows_the_usage_of_help_not_the_flags_given() {
        let cmd = || {
            Command::new("t")
                .arg(Arg::new("dir").long("dir").default_value(".t").global(true))
                .subcommand(Command::new("stats"))
                .subcommand(Command::new("prune").arg(Arg::new("age").long("age").required(true)))
        };
        let usage_of = |args: &[&str]| {
            let err = plain_usage(cmd()).try_get_matches_from(args).unwrap_err();
            let text = err.render().to_string();
            let line = text.lines().find(|l| l.starts_with("Usage:"));
            line.map(str::to_owned).unwrap_or(text)
        };
        assert_eq!(
            usage_of(&["t", "prune", "--dir", "x"]),
            "Usage: t prune [OPTIONS] --age <age>"
        );
        assert_eq!(
            usage_of(&["t", "stats", "--dir", "x", "--bogus"]),
            "Usage: t stats [OPTIONS]"
        );
        assert_eq!(
            usage_of(&["t", "--dir", "x", "--bogus"]),
            "Usage: t [OPTIONS] [COMMAND]"
        );
        let help = plain_usage(cmd()).render_help().to_string();
        assert!(help.contains("Usage: t [OPTIONS] [COMMAND]\n"), "{help}");
    }

    #[test]
    fn dash_h_is_short_and_dash_dash_help_whole() {
        let cmd = || {
            short_help(
                Command::new("t")
                    .arg(
                        Arg::new("depth")
                            .long("depth")
                            .help("Follow links up to this depth (start URLs are depth 0). More."),
                    )
                    .arg(
                        Arg::new("delay")
                            .long("delay")
                            .help_heading("HTTP")
                            .help("The gap between two requests")
                            .action(ArgAction::Set),
                    ),
                &["HTTP"],
                "HTTP flags: see --help.",
            )
        };
        let short = cmd().render_help().to_string();
        let long = cmd().render_long_help().to_string();
        assert!(
            short.contains("--depth <depth>  Follow links up to this depth\n"),
            "{short}"
        );
        assert!(
            !short.contains("--delay") && short.contains("HTTP flags: see --help."),
            "{short}"
        );
        assert!(
            long.contains("Follow links up to this depth (start URLs are depth 0). More."),
            "{long}"
        );
        assert!(
            long.contains("--delay") && !long.contains("HTTP flags: see"),
            "{long}"
        );
    }
}
