//! Parsing the command line: a usage error exits 1 (fatal), never clap's 2, which the
//! exit codes reserve for a partial run; renamed flags keep their old spelling working,
//! with a warning naming the new one.

use clap::Parser;
use std::ffi::OsString;
use std::io::Write as _;

/// Parses the process's arguments. `--help` and `--version` print on stdout and exit 0;
/// a bad flag, value or subcommand prints clap's message on stderr and exits 1
/// ([`rip_core::exit::FATAL`]), so that a script tells a typo from a partial scrape (2).
/// A usage error shows the usage line of `--help` ([`crate::help::plain_usage`]).
pub fn parse<P: Parser>() -> P {
    parse_with(|cmd| cmd)
}

/// [`parse`] over the given arguments (the first is the program's name).
pub fn parse_from<P, I, T>(args: I) -> P
where
    P: Parser,
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    parse_from_with(args, |cmd| cmd)
}

/// [`parse`] with the command changed first by `adjust` (e.g. [`crate::help::short_help`]).
pub fn parse_with<P: Parser>(adjust: impl FnOnce(clap::Command) -> clap::Command) -> P {
    parse_from_with(std::env::args_os(), adjust)
}

/// The one way every program parses: `adjust`, then [`crate::help::plain_usage`].
fn parse_from_with<P, I, T>(args: I, adjust: impl FnOnce(clap::Command) -> clap::Command) -> P
where
    P: Parser,
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let program = crate::log::program_name(args.first());
    let mut cmd = crate::help::plain_usage(adjust(P::command()));
    cmd.try_get_matches_from_mut(args)
        .and_then(|mut m| P::from_arg_matches_mut(&mut m))
        .unwrap_or_else(|err| exit_with_usage(&program, &err.format(&mut cmd)))
}

/// Prints a parse error (or the help, the version) and exits with [`usage_exit_code`].
fn exit_with_usage(program: &str, err: &clap::Error) -> ! {
    if err.use_stderr() {
        rip_core::stderr::say(usage_error_text(program, &err.to_string()));
    } else {
        // Printing fails only when the stream is closed (`--help | head`): nothing to say.
        let _ = err.print();
    }
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    std::process::exit(usage_exit_code(err));
}

/// clap's message for a usage error in the shape of every stderr line: `error: …`
/// becomes `program: error: …`; the usage block after it is kept as it is.
fn usage_error_text(program: &str, text: &str) -> String {
    let text = text.trim_end();
    match text.strip_prefix("error: ") {
        Some(rest) => format!("{program}: error: {rest}"),
        None => format!("{program}: {text}"),
    }
}

/// The exit code of a parse error: 0 for `--help`/`--version`, else 1.
pub fn usage_exit_code(err: &clap::Error) -> i32 {
    if err.use_stderr() {
        i32::from(rip_core::exit::FATAL)
    } else {
        i32::from(rip_core::exit::COMPLETE)
    }
}

/// A flag renamed for one meaning across the binaries: its old spelling, a hidden
/// argument, still works, with a warning on stderr naming the new one (none under `-q`).
#[derive(Debug, Clone, Copy)]
pub struct Renamed {
    /// The program, for the warning's prefix.
    pub program: &'static str,
    /// The spelling that still works, e.g. `--target`.
    pub old: &'static str,
    /// The spelling to use, e.g. `--name`.
    pub new: &'static str,
}

impl Renamed {
    /// `old` renamed `new` in `program`.
    pub const fn new(program: &'static str, old: &'static str, new: &'static str) -> Self {
        Self { program, old, new }
    }

    /// The warning, e.g. `rip-write: warning: --target is now --name (the old spelling
    /// still works)`.
    pub fn warning(&self) -> String {
        format!(
            "{}: warning: {} is now {} (the old spelling still works)",
            self.program, self.old, self.new
        )
    }

    /// The value given: the new spelling's, else the old one's, with the warning on
    /// stderr unless `quiet`. The two are declared `conflicts_with` each other, so at
    /// most one is set.
    pub fn take<T>(&self, new: Option<T>, old: Option<T>, quiet: bool) -> Option<T> {
        match old {
            Some(v) => {
                if !quiet {
                    rip_core::stderr::say(self.warning());
                }
                Some(v)
            }
            None => new,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Parser)]
    struct T {
        #[arg(long)]
        n: Option<u32>,
    }

    #[test]
    fn usage_errors_are_fatal_help_is_not() {
        let bad = T::try_parse_from(["t", "--nope"]).unwrap_err();
        assert_eq!(usage_exit_code(&bad), 1);
        let bad = T::try_parse_from(["t", "--n", "x"]).unwrap_err();
        assert_eq!(usage_exit_code(&bad), 1);
        let help = T::try_parse_from(["t", "--help"]).unwrap_err();
        assert_eq!(usage_exit_code(&help), 0);
    }

    #[test]
    fn a_usage_error_is_a_line_of_the_program() {
        let bad = T::try_parse_from(["t", "--nope"]).unwrap_err().to_string();
        let text = usage_error_text("rip-x", &bad);
        assert!(
            text.starts_with("rip-x: error: unexpected argument '--nope'"),
            "{text}"
        );
        assert!(text.contains("\nUsage: t"), "{text}");
    }

    #[test]
    fn renamed_prefers_what_was_given() {
        let r = Renamed::new("t", "--old", "--new");
        assert_eq!(r.take(Some(1), None, true), Some(1));
        assert_eq!(r.take(None, Some(2), true), Some(2));
        assert_eq!(r.take::<u32>(None, None, true), None);
        assert_eq!(
            r.warning(),
            "t: warning: --old is now --new (the old spelling still works)"
        );
    }
}
