//! `rip-health`: is everything captured? Reads a reconciled stream (or an output folder)
//! and writes `crawl-health.json`, the reference's `report:crawl-health`.
//!
//! The report ([`Report`]) has the reference's shape first: `generatedAt`, `target`,
//! `totals` {`concepts`, `failures`, `capturedElsewhere`, `missing`, `dead`} and the
//! `capturedElsewhere`, `missing` and `dead` lists. After them, in the same file:
//!
//! - `complete`: every URL that entered came out exactly once and every stage gave a
//!   clean account (the [`ledger`] module says how that is proved), with the details
//!   under `ledger` (what is unaccounted, what came out twice, stage problems);
//! - `expected`: known gaps (robots, policy) with their reasons;
//! - `outcomes`: first-attempt successes, recovered pages, failures in the first round
//!   and after retry, and the docs whose fetch recovered from faults by HTTP retries;
//! - `failuresBy`: category, status, host, phase, last error code;
//! - `retries`: histograms of routing rounds and of HTTP requests;
//! - `latency`: percentiles of the site's latency for the pages and docs;
//! - `siteFetches`: the fetches that went to the site, by stage, the faults they
//!   recovered from, and the cache hits that served them again;
//! - `counters`: Ladon's `consumed`, `persisted`, `failed`, and whether
//!   `consumed + failed + expected == entered`.
//!
//! Error documents without a `resolution` count as `missing`, as the reference's default
//! reconciler would decide, and are counted in `unreconciled`. Nothing is not complete:
//! with no input at all the report has all-zero totals and says nothing was scraped;
//! without ledger records, or with URLs still in flight (last seen as a `ref`, `page` or
//! `failure`), it is incomplete too (the [`ledger`] module has the details, and what
//! complete means with `--no-ledger`). [`Report::is_healthy`] (exit code 0) is false when
//! anything is missing or the books do not balance.
//!
//! # The site's story, not the cache's
//!
//! `rip-discover` fetches the pages it crawls, and the `rip-fetch` after it reads them
//! from the shared cache: its pages say `httpAttempts: 0` and a few milliseconds. What
//! the site did travels with the cached body instead, as the `siteFetch` of every page
//! and doc (the stage that made the requests, their statuses, the faults retried, the
//! waits, the latency). The latency, the HTTP-requests histogram, `recoveredInFetch` and
//! `siteFetches` read it; records without it (earlier versions) count their own round,
//! except cache hits, which say nothing about the site and are counted apart
//! (`siteFetches.originUnknown`).
//!
//! Memory grows with the number of URLs (about 20 bytes each, whatever their length: see
//! [`urls`]) and of failures, never with the size of docs: docs are decoded into a few
//! fields, the rest skipped by the parser. The texts of the URLs wait in a temporary file
//! in `$TMPDIR`, about as large as the URLs once each.

#![deny(missing_docs)]

pub mod dir;
pub mod follow;
pub mod html;
pub mod ledger;
pub mod report;
pub mod tally;
pub mod text;
pub mod urls;

pub use report::Report;
pub use tally::{BadInput, BadRecord, Tally};

use chrono::{DateTime, SecondsFormat, Utc};
use rip_core::folder::FolderError;
use rip_core::{Kind, NdjsonReader, ReadError};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};

use report::{
    Bucket, Counters, ExpectedGaps, FailuresBy, InputStats, Latency, Outcomes, Retries, Totals,
};

/// How the report is made.
#[derive(Debug, Clone)]
pub struct Config {
    /// The target's name; default: the folder's name in folder mode, else the host of
    /// the first URL seen.
    pub target: Option<String>,
    /// Check the ledger (default). Off: `ledger.checked` is false, and `complete` needs
    /// at least one outcome, no URL in flight, none twice and no stage problem.
    pub require_ledger: bool,
    /// The time written as `generatedAt`.
    pub now: DateTime<Utc>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            target: None,
            require_ledger: true,
            now: Utc::now(),
        }
    }
}

/// What stops `rip-health`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad line (or record file) under `--strict`, as `<input>:<line>: <what is wrong>`:
    /// the report is not made, as every stage stops at the first bad line with `--strict`.
    #[error("{0} (stopping: --strict)")]
    Strict(BadInput),
    /// The input could not be read.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// A folder or a stream in it could not be read.
    #[error(transparent)]
    Folder(#[from] FolderError),
    /// The temporary file of URL texts could not be written or read back.
    #[error("cannot use the temporary file of URLs (hint: is $TMPDIR full?): {0}")]
    Spill(#[source] std::io::Error),
}

/// Reads a stream of records into a [`Tally`]. Bad lines are reported on stderr as
/// `<input>:<line>: <what is wrong>`, counted, and skipped; with `strict` the first one
/// stops the reading instead ([`Error::Strict`]).
pub fn tally_stream<R: Read>(
    input: R,
    name: &str,
    tally: &mut Tally,
    strict: bool,
) -> Result<(), Error> {
    let lines = NdjsonReader::new(BufReader::with_capacity(256 * 1024, input), name);
    tally_lines(lines, tally, strict, |_| true)
}

/// Reads the lines of `reader` whose kind `wanted` takes into a [`Tally`], as
/// [`tally_stream`] does.
pub(crate) fn tally_lines<R: BufRead>(
    reader: NdjsonReader<R>,
    tally: &mut Tally,
    strict: bool,
    wanted: impl Fn(&Kind) -> bool,
) -> Result<(), Error> {
    let name = reader.name().clone();
    for item in reader {
        take_item(tally, &name, item, strict, &wanted)?;
    }
    Ok(())
}

/// Takes one line read into `tally` (when `wanted` takes its kind): a bad one is reported,
/// counted and skipped, or stops the reading with `strict`.
pub(crate) fn take_item(
    tally: &mut Tally,
    name: &std::sync::Arc<str>,
    item: Result<rip_core::Line, ReadError>,
    strict: bool,
    wanted: impl Fn(&Kind) -> bool,
) -> Result<(), Error> {
    let bad = match item {
        Ok(line) if !wanted(line.kind()) => return Ok(()),
        Ok(line) => match tally.line(&line) {
            Ok(()) => return Ok(()),
            Err(source) => BadInput::line(name, &line, source),
        },
        Err(ReadError::Malformed(m)) => BadInput::Malformed(m),
        Err(e) => return Err(e.into()),
    };
    tally.bad_input(bad, strict)
}

/// Writes a report file (`crawl-health.json`, `report.html`) atomically: a temporary
/// file in the same folder, then a rename. The file is made `0644` less the umask, as
/// every file of the output folder (a bare temporary file would be `0600`). Its content is
/// written by `write` (through a buffer), so a large report is never held as one string.
///
/// A path that is there and is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is
/// written into as it is: a rename would put a file in its place (run as root, `--json
/// /dev/null` replaced the machine's `/dev/null` with a regular file).
pub fn write_file(
    path: &std::path::Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write as _;
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        let file = std::fs::OpenOptions::new().write(true).open(path)?;
        let mut out = std::io::BufWriter::new(file);
        write(&mut out)?;
        return out.flush();
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let mut b = tempfile::Builder::new();
    b.prefix(".rip-health-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = b.tempfile_in(dir)?;
    let mut out = std::io::BufWriter::new(&mut tmp);
    write(&mut out)?;
    out.flush()?;
    drop(out);
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes `report` as `crawl-health.json` is: pretty-printed JSON, then a newline.
pub fn write_json(report: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    out.write_all(b"\n")
}

/// Makes the report from what was read, moving the lists of failures and gaps into it
/// (they are the bulk of what grows with the failures: not copied). Fails only when the
/// URLs to name cannot be read back from their temporary file ([`Error::Spill`]).
pub fn build(mut tally: Tally, config: &Config) -> Result<Report, Error> {
    assemble(&mut tally, config, false)
}

/// The report of what has been read so far, leaving `tally` as it is so that reading goes
/// on (`--follow`): [`build`] on a copy of the lists, which grow with the failures only.
pub fn snapshot(tally: &mut Tally, config: &Config) -> Result<Report, Error> {
    assemble(tally, config, true)
}

/// `x`, moved out (`keep` false) or copied.
fn grab<T: Clone + Default>(x: &mut T, keep: bool) -> T {
    if keep { x.clone() } else { std::mem::take(x) }
}

fn assemble(t: &mut Tally, config: &Config, keep: bool) -> Result<Report, Error> {
    let ledger = ledger::check(t, config.require_ledger).map_err(Error::Spill)?;
    let totals = totals(t);
    let expected = expected_gaps(t, keep);
    Ok(Report {
        generated_at: config.now.to_rfc3339_opts(SecondsFormat::Millis, true),
        target: target_name(t, config),
        captured_elsewhere: by_url(grab(&mut t.captured, keep), |c| &c.url),
        missing: by_url(grab(&mut t.missing, keep), |m| &m.url),
        dead: by_url(grab(&mut t.dead, keep), |d| &d.url),
        complete: ledger.complete,
        unreconciled: t.unreconciled,
        outcomes: outcomes(t, &ledger, &expected),
        failures_by: FailuresBy {
            category: grab(&mut t.by_category, keep),
            status: grab(&mut t.by_status, keep),
            host: grab(&mut t.by_host, keep),
            phase: grab(&mut t.by_phase, keep),
            code: grab(&mut t.by_code, keep),
        },
        retries: retries(t),
        latency: latency(&t.latencies),
        site_fetches: t.site.clone(),
        counters: counters(t, &ledger, &totals, &expected),
        not_persisted: grab(&mut t.not_persisted, keep),
        ledger,
        input: InputStats {
            records: grab(&mut t.records, keep),
            bad_lines: t.bad_lines,
        },
        totals,
        expected,
    })
}

/// The report's name: the configured one, else the host of the first URL seen.
fn target_name(tally: &Tally, config: &Config) -> String {
    config
        .target
        .clone()
        .or_else(|| tally.first_url.as_deref().map(tally::host_of))
        .unwrap_or_else(|| "unknown".into())
}

/// `items`, sorted by URL (stable: records of one URL keep their order).
fn by_url<T>(mut items: Vec<T>, url: impl Fn(&T) -> &String) -> Vec<T> {
    items.sort_by(|a, b| url(a).cmp(url(b)));
    items
}

/// The reference's totals: docs, and failures by verdict.
fn totals(tally: &Tally) -> Totals {
    Totals {
        concepts: tally.docs,
        failures: (tally.captured.len() + tally.missing.len() + tally.dead.len()) as u64,
        captured_elsewhere: tally.captured.len() as u64,
        missing: tally.missing.len() as u64,
        dead: tally.dead.len() as u64,
    }
}

/// The known gaps (moved out of `tally`, or copied with `keep`), counted by reason and by
/// source.
fn expected_gaps(tally: &mut Tally, keep: bool) -> ExpectedGaps {
    let mut expected = ExpectedGaps {
        total: tally.expected.len() as u64,
        items: grab(&mut tally.expected, keep),
        ..ExpectedGaps::default()
    };
    for e in &expected.items {
        *expected.by_reason.entry(e.reason.clone()).or_default() += 1;
        let source = e.source.clone().unwrap_or_else(|| "unknown".into());
        *expected.by_source.entry(source).or_default() += 1;
    }
    expected
}

/// How each URL ended.
fn outcomes(tally: &Tally, ledger: &report::Ledger, expected: &ExpectedGaps) -> Outcomes {
    Outcomes {
        first_attempt: tally.first_attempt,
        recovered: tally.recovered,
        resolved: tally.resolved,
        failed_first_round: tally.failed_first_round,
        failed_after_retry: tally.failed_after_retry,
        recovered_in_fetch: tally.recovered_in_fetch,
        expected: expected.total,
        unaccounted: ledger.unaccounted.len() as u64,
        doc_warnings: tally.doc_warnings.clone(),
        docs_with_warnings: tally.docs_with_warnings,
    }
}

/// The histograms of routing rounds and HTTP requests.
fn retries(tally: &Tally) -> Retries {
    let rounds = |m: &BTreeMap<u32, u64>| -> u64 { m.iter().map(|(r, n)| u64::from(*r) * n).sum() };
    Retries {
        docs_by_rounds: tally.docs_by_rounds.clone(),
        failures_by_rounds: tally.failures_by_rounds.clone(),
        http_attempts: tally.http_attempts.clone(),
        total_rounds: rounds(&tally.docs_by_rounds) + rounds(&tally.failures_by_rounds),
    }
}

/// Ladon's counters, and whether `consumed + failed + expected == entered` holds.
fn counters(
    tally: &Tally,
    ledger: &report::Ledger,
    totals: &Totals,
    expected: &ExpectedGaps,
) -> Counters {
    let docs_not_persisted = tally
        .not_persisted
        .iter()
        .filter(|n| tally.urls.terminal_kinds(&n.url).contains(&"doc"))
        .count() as u64;
    let consumed = tally.docs;
    let entered = ledger.entered;
    Counters {
        consumed,
        persisted: tally
            .doc_files
            .unwrap_or(consumed.saturating_sub(docs_not_persisted)),
        failed: totals.failures,
        expected: expected.total,
        entered,
        not_entered: ledger.not_entered,
        invariant_holds: !ledger.checked
            || consumed + totals.failures + expected.total == entered + ledger.not_entered,
    }
}

/// Upper bounds (ms) of the latency histogram's buckets; the last bucket is open.
pub const LATENCY_BUCKETS: &[u64] = &[10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000];

/// Percentiles (nearest rank) and a histogram of latency samples, given as how many
/// samples there are of each number of milliseconds.
pub fn latency(counts: &BTreeMap<u64, u64>) -> Option<Latency> {
    let samples: u64 = counts.values().sum();
    if samples == 0 {
        return None;
    }
    // The sample of 1-based rank `r` in sorted order.
    let at_rank = |r: u64| -> u64 {
        let mut seen = 0;
        for (&ms, &n) in counts {
            seen += n;
            if seen >= r {
                return ms;
            }
        }
        0
    };
    let rank = |p: f64| -> u64 {
        let i = ((p / 100.0) * samples as f64).ceil() as u64;
        at_rank(i.clamp(1, samples))
    };
    let mut histogram: Vec<Bucket> = LATENCY_BUCKETS
        .iter()
        .map(|&le| Bucket {
            le: Some(le),
            count: 0,
        })
        .collect();
    histogram.push(Bucket { le: None, count: 0 });
    for (&ms, &n) in counts {
        let i = LATENCY_BUCKETS
            .iter()
            .position(|&le| ms <= le)
            .unwrap_or(LATENCY_BUCKETS.len());
        histogram[i].count += n;
    }
    Some(Latency {
        samples,
        p50: rank(50.0),
        p90: rank(90.0),
        p95: rank(95.0),
        p99: rank(99.0),
        max: counts.keys().next_back().copied().unwrap_or(0),
        mean: counts.iter().map(|(ms, n)| ms * n).sum::<u64>() as f64 / samples as f64,
        histogram,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(samples: &[u64]) -> BTreeMap<u64, u64> {
        let mut counts = BTreeMap::new();
        for &ms in samples {
            *counts.entry(ms).or_default() += 1;
        }
        counts
    }

    #[test]
    fn nearest_rank_percentiles() {
        let samples: Vec<u64> = (1..=100).collect();
        let l = latency(&counts(&samples)).unwrap();
        assert_eq!((l.p50, l.p90, l.p95, l.p99, l.max), (50, 90, 95, 99, 100));
        assert_eq!(l.histogram[0].count, 10, "1..=10 in the first bucket");
        assert_eq!(l.histogram.iter().map(|b| b.count).sum::<u64>(), 100);
        assert_eq!(l.mean, 50.5);
        assert_eq!(latency(&counts(&[7])).unwrap().p99, 7);
        assert!(latency(&BTreeMap::new()).is_none());
    }

    /// Counted samples give what the sorted samples give: the same ranks, with repeats.
    #[test]
    fn repeated_samples_rank_as_a_sorted_list_would() {
        let samples = [5, 5, 5, 40, 40, 900, 12_000, 5, 40, 3];
        let l = latency(&counts(&samples)).unwrap();
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let rank = |p: f64| sorted[((p / 100.0 * 10.0_f64).ceil() as usize).clamp(1, 10) - 1];
        assert_eq!((l.p50, l.p90, l.p99), (rank(50.0), rank(90.0), rank(99.0)));
        assert_eq!((l.samples, l.max), (10, 12_000));
        assert_eq!(l.mean, samples.iter().sum::<u64>() as f64 / 10.0);
        assert_eq!(
            l.histogram.last().unwrap().count,
            1,
            "12 s in the open bucket"
        );
    }

    #[test]
    fn no_input_gives_zero_totals_and_is_not_complete() {
        for require_ledger in [true, false] {
            let config = Config {
                require_ledger,
                ..Config::default()
            };
            let r = build(Tally::default(), &config).unwrap();
            assert_eq!(r.totals, Totals::default());
            assert!(!r.complete && !r.ledger.checked && !r.is_healthy());
            assert_eq!(
                r.verdict(),
                report::Verdict::Incomplete("nothing was scraped")
            );
            assert_eq!(r.target, "unknown");
        }
    }
}
