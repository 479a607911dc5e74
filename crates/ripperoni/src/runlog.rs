//! The run history: one [`RunRecord`] per `ripperoni run`, appended to
//! `<basePath>/runs.ndjson` (Ladon's run audit). "When did the last complete run of
//! `emberfall` end" is one line of jq:
//!
//! ```sh
//! jq -r 'select(.target == "emberfall" and .status == "complete") | .end' out/runs.ndjson | tail -1
//! ```

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// Everything entered came out, nothing is missing, every stage finished cleanly.
    Complete,
    /// Finished, but something failed, is missing, or the run was interrupted (rerun the
    /// same command to resume).
    Partial,
    /// A stage could not start or go on.
    Failed,
    /// The source is not there yet (Ladon's `ExpansionNotReadyError`): try again later.
    NotReady,
}

impl RunStatus {
    /// The wrapper's exit code for this status.
    pub fn exit_code(self) -> u8 {
        match self {
            Self::Complete => rip_core::exit::COMPLETE,
            Self::Partial => rip_core::exit::PARTIAL,
            Self::Failed => rip_core::exit::FATAL,
            Self::NotReady => rip_core::exit::NOT_READY,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Partial => "partial",
            Self::Failed => "failed",
            Self::NotReady => "not-ready",
        }
    }
}

/// One stage process of a run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageRun {
    /// The program.
    pub stage: String,
    /// Its process id.
    pub pid: u32,
    /// Its exit code (`None`: killed by a signal).
    pub exit: Option<i32>,
    /// The status its summary record gave, when one arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// One line of `runs.ndjson`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    /// The run's id: its start time and the wrapper's pid.
    pub id: String,
    /// The target's name.
    pub target: String,
    /// The state file.
    pub state_file: String,
    /// When the run started.
    pub start: DateTime<Utc>,
    /// When it ended.
    pub end: DateTime<Utc>,
    /// How it ended.
    pub status: RunStatus,
    /// The wrapper's exit code.
    pub exit_code: u8,
    /// Stopped by Ctrl-C or SIGTERM.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// The id of the interrupted run this one resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumed: Option<String>,
    /// Ladon's counters (`consumed`, `persisted`, `failed`) and the rest of
    /// crawl-health's, plus the progress counts (`discovered`, `fetched`, `parsed`).
    pub counters: BTreeMap<String, u64>,
    /// The run's diagnostics: stages that failed, books that did not balance, URLs
    /// missing.
    pub errors: Vec<String>,
    /// Every stage process.
    pub stages: Vec<StageRun>,
    /// The output folder (`<basePath>/<target>`).
    pub output: String,
    /// Set when this run was not put in the output folder (not ready, failed, stopped
    /// before anything came out): the previous output, left there as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<String>,
    /// Set when this run was not put in the output folder: where it is, report and all
    /// (`<basePath>/.<target>.staging/<target>`, until the next run of the target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<String>,
    /// This run's stage logs (one file per stage's stderr), in the output folder or in
    /// `attempt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<String>,
}

impl RunRecord {
    /// Appends this record as one line to `path` (created when missing).
    pub fn append(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut line = serde_json::to_string(self).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        // One write of the whole line: concurrent appenders never interleave inside it.
        f.write_all(line.as_bytes())?;
        f.sync_data()
    }
}
