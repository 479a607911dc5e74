//! The bookkeeping records that let `rip-health` prove the books balance:
//! `ledger` (URLs entering the pipeline) and `summary` (what each stage read and wrote).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use crate::exit::Status;

/// `ledger`: URLs that entered the pipeline, written by the stage that consumed their
/// first-round `ref` (see [`Ref::is_entry`](crate::Ref::is_entry)), in batches.
///
/// Every later stage passes ledger records through, so the end of the pipeline holds
/// the full list of what entered, and can name any URL that did not come out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    /// The stage that wrote this batch, e.g. `rip-fetch`.
    pub stage: String,
    /// URLs that entered, exactly as in their `ref`s.
    pub entered: Vec<String>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `summary`: the last record a stage writes: what it read and wrote, by record kind.
///
/// Upstream summaries pass through, so the end of a pipeline holds one per stage process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The stage, e.g. `rip-fetch`.
    pub stage: String,
    /// The process id (two `rip-fetch` processes in one pipeline tell apart by it).
    pub pid: u32,
    /// When the stage started.
    pub started_at: DateTime<Utc>,
    /// When the stage wrote this record.
    pub ended_at: DateTime<Utc>,
    /// Records read, by `_type` (summaries and ledgers of upstream stages included).
    #[serde(default)]
    pub input: BTreeMap<String, u64>,
    /// Records written, by `_type`, this summary excluded (what passed through included).
    #[serde(default)]
    pub output: BTreeMap<String, u64>,
    /// Of `output`, the records written back unchanged, by `_type`: what only passed
    /// through this stage (upstream summaries and ledgers included). What the stage made
    /// is `output` less these ([`Summary::made`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub passed_through: BTreeMap<String, u64>,
    /// Input lines that were not valid records and were skipped.
    #[serde(default)]
    pub bad_lines: u64,
    /// How the stage ended.
    pub status: Status,
    /// Stage-specific counters, e.g. `cacheHits`, `retries`, `robotsDenied`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counters: BTreeMap<String, u64>,
    /// Stage-level problems (not per-record failures), e.g. `budget exhausted: maxPages`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The most memory the stage's process held at once (its peak resident set, from
    /// [`peak_rss_bytes`]), when the system says; absent from summaries of earlier versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// This process's peak resident set so far, in bytes (`VmHWM` in `/proc/self/status`;
/// `None` where there is no such file).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl Summary {
    /// Records of `kind` the stage wrote itself: its output less what passed through.
    pub fn made(&self, kind: &str) -> u64 {
        let n = |m: &BTreeMap<String, u64>| m.get(kind).copied().unwrap_or(0);
        n(&self.output).saturating_sub(n(&self.passed_through))
    }

    /// What every stage's stderr line ends with: `; 3 bad input lines` when there were any,
    /// and `; passed through: …` ([`Summary::passed_through_text`]) when anything was.
    pub fn books_text(&self) -> String {
        let mut text = String::new();
        if self.bad_lines > 0 {
            text.push_str(&format!("; {} bad input lines", self.bad_lines));
        }
        if let Some(passed) = self.passed_through_text() {
            text.push_str(&format!("; {passed}"));
        }
        text
    }

    /// `passed through: failure 2, page 48, summary 1`, for a stage's stderr line; `None`
    /// when nothing passed through.
    pub fn passed_through_text(&self) -> Option<String> {
        (!self.passed_through.is_empty()).then(|| {
            let kinds: Vec<String> = self
                .passed_through
                .iter()
                .map(|(kind, n)| format!("{kind} {n}"))
                .collect();
            format!("passed through: {}", kinds.join(", "))
        })
    }
}
