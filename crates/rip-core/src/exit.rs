//! Exit codes shared by every binary, the run status they stand for, and how a wrapper's
//! programs end with it ([`WRAPPER_PID_ENV`]).

use serde::{Deserialize, Serialize};

/// Everything was done and nothing failed.
pub const COMPLETE: u8 = 0;
/// Could not start or could not go on: bad arguments, unreadable configuration, a crash.
pub const FATAL: u8 = 1;
/// The run finished, but some records failed or some input lines were bad.
pub const PARTIAL: u8 = 2;
/// The source itself is not available yet (a start URL could not be fetched at all);
/// retry on a later schedule, as Ladon's `ExpansionNotReadyError`.
pub const NOT_READY: u8 = 3;
/// Stopped by Ctrl-C (SIGINT) or SIGTERM after flushing what was done.
pub const INTERRUPTED: u8 = 130;

/// The environment variable a wrapper (`ripperoni worker`) sets, to its own pid, on a child
/// it starts as the leader of a process group of its own: the group is to die with the
/// wrapper, even when the wrapper is killed with SIGKILL (`rip_cli::die_with_wrapper`).
pub const WRAPPER_PID_ENV: &str = "RIP_WRAPPER_PID";

/// How a stage or a run ended. Ordered from best to worst, so the status of a group
/// of stages is the [`Status::worst`] of theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Exit code 0.
    Complete,
    /// Exit code 2.
    Partial,
    /// Exit code 3.
    NotReady,
    /// Exit code 130.
    Interrupted,
    /// Exit code 1 ("fatal").
    Failed,
}

impl Status {
    /// The process exit code for this status.
    pub fn code(self) -> u8 {
        match self {
            Self::Complete => COMPLETE,
            Self::Partial => PARTIAL,
            Self::NotReady => NOT_READY,
            Self::Interrupted => INTERRUPTED,
            Self::Failed => FATAL,
        }
    }

    /// The status an exit code stands for; unknown codes (a signal, a panic) are `Failed`.
    pub fn from_code(code: i32) -> Self {
        match code {
            0 => Self::Complete,
            2 => Self::Partial,
            3 => Self::NotReady,
            130 => Self::Interrupted,
            _ => Self::Failed,
        }
    }

    /// The worse of two statuses.
    pub fn worst(self, other: Self) -> Self {
        self.max(other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_order() {
        for s in [
            Status::Complete,
            Status::Partial,
            Status::NotReady,
            Status::Interrupted,
            Status::Failed,
        ] {
            assert_eq!(Status::from_code(i32::from(s.code())), s);
        }
        assert_eq!(Status::Complete.worst(Status::Partial), Status::Partial);
        assert_eq!(Status::Failed.worst(Status::Partial), Status::Failed);
        assert_eq!(Status::from_code(101), Status::Failed);
        assert_eq!(
            serde_json::to_string(&Status::NotReady).unwrap(),
            "\"not-ready\""
        );
    }
}
