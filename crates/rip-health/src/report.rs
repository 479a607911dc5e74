//! `crawl-health.json`: the reference's shape first (`generatedAt`, `target`, `totals`,
//! `capturedElsewhere`, `missing`, `dead`), then what this toolkit adds.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The whole report, as written to `crawl-health.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// When the report was made (RFC 3339, milliseconds, UTC).
    pub generated_at: String,
    /// The target's name.
    pub target: String,
    /// The reference's totals.
    pub totals: Totals,
    /// Failures whose content was captured under another URL.
    pub captured_elsewhere: Vec<CapturedElsewhere>,
    /// Failures with no matching content: data may be absent.
    pub missing: Vec<Missing>,
    /// Failures known not to exist.
    pub dead: Vec<Dead>,

    /// True when every URL that entered is accounted for exactly once and every stage
    /// gave a clean account (see [`Ledger`]).
    pub complete: bool,
    /// Error documents that carried no `resolution` (counted as `missing`, as the
    /// reference's default reconciler would).
    pub unreconciled: u64,
    /// Known gaps (robots, policy) with their reasons; not failures.
    pub expected: ExpectedGaps,
    /// How each URL ended.
    pub outcomes: Outcomes,
    /// Error documents by category, status, host, phase and last error code.
    pub failures_by: FailuresBy,
    /// Routing rounds and HTTP requests per URL.
    pub retries: Retries,
    /// The site's latency: each doc's or page's site fetch (`siteFetch.latencyMs`), or
    /// the `elapsedMs` of records without one that were not cache hits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Latency>,
    /// The fetches that went to the site, whichever stage made them, and the cache hits
    /// that served them again.
    #[serde(default)]
    pub site_fetches: SiteFetches,
    /// Ladon's counters and invariant.
    pub counters: Counters,
    /// Records `rip-write` could not persist (they still account for their URL in the
    /// stream, but their file is missing).
    pub not_persisted: Vec<NotPersisted>,
    /// The books: what entered, what came out, what each stage said.
    pub ledger: Ledger,
    /// What rip-health itself read.
    pub input: InputStats,
}

/// The reference's `totals`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    /// Docs.
    pub concepts: u64,
    /// Error documents.
    pub failures: u64,
    /// Failures resolved `capturedElsewhere`.
    pub captured_elsewhere: u64,
    /// Failures resolved `missing` (or not resolved at all).
    pub missing: u64,
    /// Failures resolved `dead`.
    pub dead: u64,
}

/// `{url, at}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapturedElsewhere {
    /// The failed URL.
    pub url: String,
    /// Where its content was captured.
    pub at: String,
}

/// `{url, errors}`, plus `candidates` when the reconciler found several, and where the
/// URL was linked from (`parent`, `linkText`) when its error document says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Missing {
    /// The failed URL.
    pub url: String,
    /// Its error history, `{code, message}` each.
    pub errors: Vec<BriefError>,
    /// Docs that matched ambiguously.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// The page that linked to it (the error document's `parent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// The text of that link (the error document's `linkText`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_text: Option<String>,
}

/// `{code, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BriefError {
    /// Dotted code.
    pub code: String,
    /// Detail.
    pub message: String,
}

/// `{url, reason}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dead {
    /// The failed URL.
    pub url: String,
    /// Why it is known not to exist.
    pub reason: String,
}

/// Known gaps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpectedGaps {
    /// `expected` records.
    pub total: u64,
    /// Counts by reason.
    pub by_reason: BTreeMap<String, u64>,
    /// Counts by source (`robots`, `policy`, `other`, `unknown`).
    pub by_source: BTreeMap<String, u64>,
    /// Each gap.
    pub items: Vec<ExpectedItem>,
}

/// One known gap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedItem {
    /// The URL.
    pub url: String,
    /// Why.
    pub reason: String,
    /// What decided it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The rule that matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// How URLs ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcomes {
    /// Docs captured on the first routing round (`attempt` 0).
    pub first_attempt: u64,
    /// Docs captured after at least one retry round.
    pub recovered: u64,
    /// Docs of a resolve candidate standing in for a broken URL (`resolves`).
    pub resolved: u64,
    /// Error documents that failed in their first round (no retry).
    pub failed_first_round: u64,
    /// Error documents that failed after at least one retry round.
    pub failed_after_retry: u64,
    /// Of the docs, those whose site fetch needed HTTP retries (faults the site showed
    /// and the fetch recovered from: 503s, 429s, resets…): counted again, beside
    /// `firstAttempt` and `recovered` (retry rounds of the pipeline).
    #[serde(default)]
    pub recovered_in_fetch: u64,
    /// `expected` records.
    pub expected: u64,
    /// URLs that entered and never came out.
    pub unaccounted: u64,
    /// Warnings the parse put on docs (their `errors` by `rip-parse`), by code: an
    /// infobox field it could not show (`wiki.unexpanded`), a schema broken with
    /// `onSchemaError = "warn"` (`parse.schema`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub doc_warnings: BTreeMap<String, u64>,
    /// Docs with at least one of those warnings.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub docs_with_warnings: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Error documents counted several ways.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailuresBy {
    /// By error category (`UNKNOWN` when absent).
    pub category: BTreeMap<String, u64>,
    /// By HTTP status (`none` when there was no response).
    pub status: BTreeMap<String, u64>,
    /// By URL host (with port).
    pub host: BTreeMap<String, u64>,
    /// By phase.
    pub phase: BTreeMap<String, u64>,
    /// By the code of the last error.
    pub code: BTreeMap<String, u64>,
}

/// Retry histograms: routing rounds (failure routing) and HTTP requests (transport).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Retries {
    /// Docs by retry rounds before success (their `attempt`).
    pub docs_by_rounds: BTreeMap<u32, u64>,
    /// Error documents by retry rounds before giving up (`attempt` - 1).
    pub failures_by_rounds: BTreeMap<u32, u64>,
    /// Docs and pages by the HTTP requests of their site fetch (`siteFetch.httpAttempts`,
    /// whichever stage made it); records without one count their own round's
    /// `httpAttempts`, so `0` is a cache hit whose site fetch is unknown.
    pub http_attempts: BTreeMap<u32, u64>,
    /// Retry rounds in all (sum over docs and error documents).
    pub total_rounds: u64,
}

/// The fetches that went to the site for the docs' and pages' bodies (their `siteFetch`),
/// and the cache hits beside them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteFetches {
    /// Docs and pages read.
    pub records: u64,
    /// Of them, those carrying their site fetch (the others, of earlier versions, count
    /// their own round's `elapsedMs` and `httpAttempts`).
    pub recorded: u64,
    /// Of them, those the writing stage served from the cache (the site fetch, when
    /// known, was made earlier, e.g. by `rip-discover`).
    pub from_cache: u64,
    /// Cache hits whose entry recorded no site fetch (written by an earlier version):
    /// not in the latency, and under `0` in `retries.httpAttempts`.
    pub origin_unknown: u64,
    /// Site fetches that needed HTTP retries and succeeded.
    pub recovered: u64,
    /// Site fetches by the stage that made them.
    pub fetched_by: BTreeMap<String, u64>,
    /// Failed attempts retried inside the site fetches, by code (`httpError.transient`,
    /// `httpError.throttled`, `network.reset`, …).
    pub faults: BTreeMap<String, u64>,
    /// Time the site fetches waited before their retries in all (backoff, Retry-After).
    pub waited_ms: u64,
}

impl SiteFetches {
    /// One phrase per fact worth saying, for the summary and the HTML report:
    /// `7 by rip-discover`, `7 from the cache`, `3 recovered by HTTP retries (…)`.
    pub fn phrases(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .fetched_by
            .iter()
            .map(|(stage, n)| format!("{n} by {stage}"))
            .collect();
        if self.from_cache > 0 {
            out.push(format!("{} from the cache", self.from_cache));
        }
        if self.origin_unknown > 0 {
            out.push(format!(
                "{} cache hits with no site fetch recorded (entries of an earlier version)",
                self.origin_unknown
            ));
        }
        if self.recovered > 0 {
            let faults: Vec<String> = self
                .faults
                .iter()
                .map(|(code, n)| format!("{code} {n}"))
                .collect();
            out.push(format!(
                "{} recovered by HTTP retries ({})",
                self.recovered,
                faults.join(", ")
            ));
        }
        if self.waited_ms > 0 {
            out.push(format!(
                "waited {:.1} s before retries",
                self.waited_ms as f64 / 1000.0
            ));
        }
        out
    }
}

/// Latency percentiles, in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    /// Records that gave a sample (see [`Report::latency`]).
    pub samples: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Slowest.
    pub max: u64,
    /// Mean.
    pub mean: f64,
    /// Counts by upper bound in ms (`"10"`, `"25"`, …, `"inf"`), for charts.
    pub histogram: Vec<Bucket>,
}

/// One latency bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// Upper bound in ms (inclusive), `None` for the last, open bucket.
    pub le: Option<u64>,
    /// Samples in the bucket.
    pub count: u64,
}

/// A record that could not be written to the output folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotPersisted {
    /// The URL it accounts for.
    pub url: String,
    /// Why, e.g. `cannot write out/site/a.json: Permission denied`.
    pub message: String,
}

/// Ladon's `RunResult` counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Counters {
    /// Docs (Ladon's `leaves_consumed`).
    pub consumed: u64,
    /// Docs persisted: `consumed` less the docs `rip-write` reported it could not write
    /// (in folder mode: the doc files found). Without a writer this equals `consumed`, as
    /// Ladon's does without an `on_leaf` callback.
    pub persisted: u64,
    /// Error documents (Ladon's `leaves_failed`).
    pub failed: u64,
    /// `expected` records (no Ladon equivalent).
    pub expected: u64,
    /// URLs that entered (the ledgers).
    pub entered: u64,
    /// Terminal records for URLs that never entered (see [`Ledger::not_entered`]).
    pub not_entered: u64,
    /// `consumed + failed + expected == entered + notEntered`: Ladon's
    /// `leaves_consumed + leaves_failed == total leaves`, with known gaps. (The ledger's
    /// URL-by-URL check is the proof; this is the summary line.)
    pub invariant_holds: bool,
}

/// The books.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    /// False when the check was switched off or there was nothing to check it with.
    pub checked: bool,
    /// Every URL that entered came out exactly once and no stage reported a problem.
    pub complete: bool,
    /// Distinct URLs in the ledgers.
    pub entered: u64,
    /// Entered URLs with exactly one terminal record.
    pub accounted: u64,
    /// Entered URLs with no terminal record; `lastSeen` is the last kind of record
    /// seen for it (e.g. `failure`: no `rip-route` captured it), if any.
    pub unaccounted: Vec<Unaccounted>,
    /// URLs whose last record is a `ref`, `page` or `failure` with no terminal record,
    /// that did not enter (no ledger names them; those that did are `unaccounted`):
    /// work no stage finished, e.g. refs nobody fetched.
    #[serde(default)]
    pub in_flight: Vec<Unaccounted>,
    /// URLs with more than one terminal record.
    pub duplicated: Vec<Duplicated>,
    /// URLs listed in more than one ledger entry (entered twice).
    pub entered_twice: Vec<String>,
    /// Terminal records for URLs that never entered (e.g. `expected` records written by
    /// discovery for robots-disallowed links, which are never fetched).
    pub not_entered: u64,
    /// Of `notEntered`, the `expected` records (the URL's first terminal record): links
    /// discovery found and robots.txt disallowed, known gaps that never entered.
    #[serde(default)]
    pub not_entered_expected: u64,
    /// Stage accounts, in stream order.
    pub stages: Vec<StageAccount>,
    /// What is wrong with the books, each with its stage and a hint.
    pub problems: Vec<String>,
    /// Observations that do not make the books wrong.
    pub notes: Vec<String>,
}

/// An entered URL with no outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unaccounted {
    /// The URL.
    pub url: String,
    /// The last non-terminal record kind seen for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<String>,
}

/// A URL with several outcomes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Duplicated {
    /// The URL.
    pub url: String,
    /// The kinds of its terminal records, in stream order (by name from a folder).
    pub records: Vec<String>,
}

/// One stage's `summary`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageAccount {
    /// The stage.
    pub stage: String,
    /// Its process id.
    pub pid: u32,
    /// How it ended.
    pub status: String,
    /// Records read by kind.
    pub input: BTreeMap<String, u64>,
    /// Records written by kind.
    pub output: BTreeMap<String, u64>,
    /// Bad input lines it skipped.
    pub bad_lines: u64,
    /// Wall time in ms.
    pub elapsed_ms: i64,
    /// Its process's peak memory (resident set), from its summary, when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_rss_bytes: Option<u64>,
}

/// What rip-health read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputStats {
    /// Records by kind.
    pub records: BTreeMap<String, u64>,
    /// Lines (or files) that were not valid records.
    pub bad_lines: u64,
}

/// The report's one-line verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Everything captured or explained.
    Ok,
    /// The books do not balance, for the reason given (`nothing was scraped`, …).
    Incomplete(&'static str),
    /// The books balance, but some content was not captured.
    Missing,
}

impl Report {
    /// True when the report should fail a scheduled scrape: something is missing or
    /// unaccounted (exit code 2).
    pub fn is_healthy(&self) -> bool {
        self.totals.missing == 0 && self.complete
    }

    /// The verdict, for the summary and the HTML report.
    pub fn verdict(&self) -> Verdict {
        let l = &self.ledger;
        if self.is_healthy() {
            Verdict::Ok
        } else if self.complete {
            Verdict::Missing
        } else if self.input.records.is_empty() {
            Verdict::Incomplete("nothing was scraped")
        } else if !l.in_flight.is_empty() || l.unaccounted.iter().any(|u| u.last_seen.is_some()) {
            Verdict::Incomplete("some URLs never finished")
        } else {
            Verdict::Incomplete("the books do not balance")
        }
    }
}
