//! What the shared response cache may do: the one set of modes behind every stage's
//! `--cache` flag (rip-http's cache) and a state file's `cache.mode` (ripperoni), so that
//! the names a person writes in either place are the same four.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What the cache may do (`--cache`): `read-write`, `read-only`, `write-only` or `off`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(description = "What the cache may do (`--cache`).")
)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// Read fresh entries, revalidate stale ones, write responses (the default).
    #[default]
    #[cfg_attr(
        feature = "schema",
        schemars(description = "Serve from the cache and store what is fetched.")
    )]
    ReadWrite,
    /// Serve only from the cache, fresh or stale; a miss is a failure, never a request
    /// (a replay).
    #[cfg_attr(
        feature = "schema",
        schemars(
            description = "Serve from the cache only: no network request for what is missing (a replay)."
        )
    )]
    ReadOnly,
    /// Never read; always fetch, and write what was fetched.
    #[cfg_attr(
        feature = "schema",
        schemars(description = "Store what is fetched, never serve from the cache.")
    )]
    WriteOnly,
    /// No cache at all.
    #[cfg_attr(feature = "schema", schemars(description = "No cache."))]
    Off,
}

impl CacheMode {
    /// The four modes.
    pub const ALL: [Self; 4] = [Self::ReadWrite, Self::ReadOnly, Self::WriteOnly, Self::Off];

    /// The name: the `--cache` value and the state file's `cache.mode`.
    pub fn as_arg(self) -> &'static str {
        match self {
            Self::ReadWrite => "read-write",
            Self::ReadOnly => "read-only",
            Self::WriteOnly => "write-only",
            Self::Off => "off",
        }
    }
}

impl fmt::Display for CacheMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_arg())
    }
}

/// A cache mode that is none of the four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cache mode `{given}` (expected read-write, read-only, write-only or off)")]
pub struct UnknownCacheMode {
    /// The mode as given.
    pub given: String,
}

impl FromStr for CacheMode {
    type Err = UnknownCacheMode;

    /// A name, or its short form on the command line (`rw`, `ro`, `wo`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-write" | "rw" => Ok(Self::ReadWrite),
            "read-only" | "ro" => Ok(Self::ReadOnly),
            "write-only" | "wo" => Ok(Self::WriteOnly),
            "off" => Ok(Self::Off),
            _ => Err(UnknownCacheMode {
                given: s.to_owned(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_name_per_mode_in_json_and_on_the_command_line() {
        for mode in CacheMode::ALL {
            let name = mode.as_arg();
            assert_eq!(serde_json::to_string(&mode).unwrap(), format!("\"{name}\""));
            assert_eq!(
                serde_json::from_str::<CacheMode>(&format!("\"{name}\"")).unwrap(),
                mode
            );
            assert_eq!(name.parse::<CacheMode>(), Ok(mode));
            assert_eq!(mode.to_string(), name);
        }
        assert_eq!("ro".parse::<CacheMode>(), Ok(CacheMode::ReadOnly));
        assert_eq!(CacheMode::default(), CacheMode::ReadWrite);
        let err = "sometimes".parse::<CacheMode>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown cache mode `sometimes` (expected read-write, read-only, write-only or off)"
        );
    }
}
