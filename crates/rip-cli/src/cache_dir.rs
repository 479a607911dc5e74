//! Where the cache folder in effect was named (`--cache-dir`, `RIP_CACHE_DIR`, or the
//! default), for the messages about a folder that is not there: a mistyped path, or a
//! variable set long ago, is found by what the message says.

use std::ffi::{OsStr, OsString};

/// The flag naming the cache folder, on every program that takes one.
pub const FLAG: &str = "--cache-dir";
/// The variable naming it when the flag is not given.
pub const ENV: &str = "RIP_CACHE_DIR";
/// The folder when neither names one.
pub const DEFAULT: &str = ".rip-cache";

/// Where this process's cache folder was named, as clap read it: `given by --cache-dir`,
/// `from RIP_CACHE_DIR`, or `the default (.rip-cache, in the working folder)`.
pub fn named_by() -> String {
    named_by_of(std::env::args_os().skip(1), std::env::var_os(ENV))
}

/// [`named_by`] for these arguments (without the program's name) and this value of
/// [`ENV`].
pub fn named_by_of(args: impl IntoIterator<Item = OsString>, env: Option<OsString>) -> String {
    let flag_eq = format!("{FLAG}=");
    let given = args
        .into_iter()
        .take_while(|a| a != OsStr::new("--"))
        .any(|a| {
            a.to_str()
                .is_some_and(|a| a == FLAG || a.starts_with(&flag_eq))
        });
    if given {
        format!("given by {FLAG}")
    } else if env.is_some_and(|v| !v.is_empty()) {
        format!("from {ENV}")
    } else {
        format!("the default ({DEFAULT}, in the working folder)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(args: &[&str], env: Option<&str>) -> String {
        named_by_of(args.iter().map(OsString::from), env.map(OsString::from))
    }

    #[test]
    fn the_flag_then_the_variable_then_the_default() {
        let flag = "given by --cache-dir";
        assert_eq!(of(&["--cache-dir", "x"], Some("/c")), flag);
        assert_eq!(of(&["stats", "--cache-dir=x"], None), flag);
        assert_eq!(of(&["-q"], Some("/c")), "from RIP_CACHE_DIR");
        let default = "the default (.rip-cache, in the working folder)";
        assert_eq!(of(&["-q"], None), default);
        assert_eq!(
            of(&[], Some("")),
            default,
            "an empty variable names nothing"
        );
        assert_eq!(
            of(&["--", "--cache-dir"], None),
            default,
            "after --: an argument"
        );
    }
}
