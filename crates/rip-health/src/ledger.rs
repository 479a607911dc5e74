//! The books: did every URL that entered come out exactly once, and did every stage
//! give a clean account of itself?
//!
//! What entered is the union of the `ledger` records (written by the stage that consumed
//! each first-round `ref`). What came out are the terminal records (`doc`, `error`,
//! `expected`), each accounting for its `resolves` when it has one (a resolve candidate
//! stands for the failed URL), else for its `url`. The `summary` records, one per stage
//! process in stream order, are checked as well:
//!
//! - a stage that wrote ledger records but no summary was killed, or its output was cut;
//! - a stage that skipped bad input lines lost those records;
//! - a stage that ended `interrupted` or `failed` did not finish;
//! - in a linear pipeline (the i-th summary read i summaries), each stage must have read
//!   exactly what the stage before it wrote, kind by kind, and rip-health must have read
//!   what the last stage wrote: a record lost between two stages is named there.
//!
//! Nothing is not complete: an input with no records at all (an empty stream or folder),
//! no `ledger` record (unless `--no-ledger`), or ledgers that name no URL is a problem.
//! A URL whose last record is a `ref`, `page` or `failure` with no terminal record after
//! it is unfinished work: when it entered it is *unaccounted*, otherwise (no ledger names
//! it, e.g. refs nobody fetched) it is *in flight*; either makes the books incomplete.
//! Resolve candidates are left out of this (their outcome accounts for the URL they
//! resolve, and a group drops the candidates it does not pick).
//!
//! Without the ledger (`--no-ledger`) the URL-by-URL check is off, and complete means:
//! at least one outcome (`doc`, `error`, `expected`) was read, no URL is in flight, no
//! URL came out twice, and no stage reported a problem. An empty folder is therefore
//! never complete.
//!
//! Memory: about 20 bytes per URL, whatever its length (its hash and one byte of state,
//! see [`crate::urls`]), never a record; the texts of the URLs wait in a temporary file,
//! read again only to name those with no outcome.

use rip_core::{Status, Summary};
use std::collections::BTreeMap;

use crate::report::{Duplicated, Ledger, StageAccount, Unaccounted};
use crate::tally::Tally;
use crate::urls::State;

/// Checks the books of `tally`. With `require` false the URL check is skipped
/// (`checked: false`), but the rest still counts: see the module docs for what complete
/// means then. Fails only when the temporary file of URL texts cannot be read back.
pub fn check(tally: &Tally, require: bool) -> std::io::Result<Ledger> {
    let checked = require && tally.ledgers > 0;
    let mut problems: Vec<String> = input_problem(tally, require, checked).into_iter().collect();
    let mut notes = Vec::new();
    let urls = if checked {
        UrlAccounts::of(tally)
    } else {
        UrlAccounts::default()
    };
    let (mut unaccounted, mut in_flight) = (Vec::new(), Vec::new());
    let unfinished = |s: State| unaccounted_in(s, checked) || in_flight_in(s, checked);
    for (url, s) in tally.urls.named(unfinished)? {
        let u = Unaccounted {
            url,
            last_seen: s.last_seen().map(str::to_owned),
        };
        if unaccounted_in(s, checked) {
            unaccounted.push(u);
        } else {
            in_flight.push(u);
        }
    }
    let duplicated = duplicated(tally);
    unfetched_refs_hint(&unaccounted, &in_flight, &mut problems);
    stage_problems(tally, &mut problems, &mut notes);
    lost_records_problems(tally, &mut problems);
    let complete = problems.is_empty()
        && unaccounted.is_empty()
        && in_flight.is_empty()
        && duplicated.is_empty();
    Ok(Ledger {
        checked,
        complete,
        entered: if checked { tally.urls.entered() } else { 0 },
        accounted: urls.accounted,
        unaccounted,
        in_flight,
        duplicated,
        entered_twice: urls.entered_twice,
        not_entered: urls.not_entered,
        not_entered_expected: urls.not_entered_expected,
        stages: stage_accounts(tally),
        problems,
        notes,
    })
}

/// Entered, never came out (only when the ledger is checked).
fn unaccounted_in(s: State, checked: bool) -> bool {
    checked && s.entered() > 0 && s.terminals() == 0
}

/// Work no stage finished: last seen as a ref, page or failure, with no terminal record
/// (when the ledger is checked, those that entered are unaccounted instead).
fn in_flight_in(s: State, checked: bool) -> bool {
    s.last_seen().is_some() && s.terminals() == 0 && !(checked && s.entered() > 0)
}

/// What is wrong with the input as a whole: nothing in it, no ledger, a ledger naming no
/// URL, or (without the ledger) no outcome.
fn input_problem(tally: &Tally, require: bool, checked: bool) -> Option<String> {
    if tally.records.is_empty() {
        Some(format!(
            "{NOTHING_SCRAPED} (an empty stream, or a folder without record files)"
        ))
    } else if require && !checked {
        Some(match not_ready_source(tally) {
            // Nothing entered because the site was not there: the hint is to try again,
            // not how to read a stream without ledgers.
            Some(source) => format!(
                "no ledger records in the input: nothing entered, as the source, {source}, \
                 was not ready (hint: is the site up? run the scrape again once it answers)"
            ),
            // Every stage says it received nothing: what feeds the first failed (a queue
            // whose broker was away, say), and its own error says why.
            None if starved(tally) => format!(
                "no ledger records in the input: nothing entered, as no stage received a \
                 record (hint: what feeds {} failed or gave nothing; its error says why)",
                tally
                    .summaries
                    .first()
                    .map_or("the first stage", |s| s.stage.as_str())
            ),
            None => "no ledger records in the input: nothing shows which URLs entered \
                     (hint: give rip-health the whole stream, including the stage that \
                     fetched the first-round refs; or pass --no-ledger)"
                .to_owned(),
        })
    } else if checked && tally.urls.entered() == 0 {
        Some("the ledger records name no URL: nothing entered".to_owned())
    } else if !require && tally.urls.with_terminal() == 0 {
        Some(
            "no outcome in the input (no doc, error document or expected record): nothing \
             was captured"
                .to_owned(),
        )
    } else {
        None
    }
}

/// Whether the input is stage summaries only, each saying its stage received no record
/// (an earlier stage's summary aside).
fn starved(tally: &Tally) -> bool {
    !tally.summaries.is_empty()
        && tally.urls.states().next().is_none()
        && tally
            .summaries
            .iter()
            .all(|s| s.input.iter().all(|(kind, n)| kind == "summary" || *n == 0))
}

/// The stage whose summary says it was not ready (its start URL could not be fetched).
fn not_ready_source(tally: &Tally) -> Option<String> {
    tally
        .summaries
        .iter()
        .find(|s| s.status == Status::NotReady)
        .map(label)
}

/// The counts of the URL-by-URL check of what entered against what came out (the URLs
/// with no outcome are named apart, from the texts).
#[derive(Default)]
struct UrlAccounts {
    /// Entered more than once (sorted).
    entered_twice: Vec<String>,
    /// Entered and came out exactly once.
    accounted: u64,
    /// Terminal records of URLs no ledger names.
    not_entered: u64,
    /// Of those, the records of URLs whose first terminal record is `expected`.
    not_entered_expected: u64,
}

impl UrlAccounts {
    fn of(tally: &Tally) -> Self {
        let urls = &tally.urls;
        Self {
            entered_twice: urls.entered_twice(),
            accounted: urls
                .states()
                .filter(|s| s.entered() > 0 && s.terminals() == 1)
                .count() as u64,
            not_entered: urls.terminal_records(|s| s.entered() == 0),
            not_entered_expected: urls
                .terminal_records(|s| s.entered() == 0 && s.first_terminal() == Some("expected")),
        }
    }
}

/// URLs with more than one terminal record, sorted.
fn duplicated(tally: &Tally) -> Vec<Duplicated> {
    tally
        .urls
        .duplicated()
        .into_iter()
        .map(|(url, mut kinds)| {
            // A folder's files come in no order of their own.
            if tally.folder {
                kinds.sort_unstable();
            }
            Duplicated {
                url,
                records: kinds.into_iter().map(str::to_owned).collect(),
            }
        })
        .collect()
}

/// The code of a doc's warning for an infobox field the parse could not show.
const UNEXPANDED: &str = "wiki.unexpanded";

/// Records lost on the way: not persisted by rip-write, or on bad lines rip-health skipped,
/// and values lost in docs (infobox fields the wiki did not expand).
fn lost_records_problems(tally: &Tally, problems: &mut Vec<String>) {
    if !tally.not_persisted.is_empty() {
        problems.push(format!(
            "rip-write could not persist {} record(s): their files are missing from the \
             output folder (see notPersisted)",
            tally.not_persisted.len()
        ));
    }
    if tally.bad_lines > 0 {
        problems.push(format!(
            "rip-health skipped {} bad input line(s): the records on them are lost",
            tally.bad_lines
        ));
    }
    if let Some(n) = tally.doc_warnings.get(UNEXPANDED).filter(|n| **n > 0) {
        problems.push(format!(
            "{n} infobox field(s) not shown: the wiki did not expand their templates \
             (`{UNEXPANDED}` in the docs' errors says why); a rerun asks for the expansions \
             again"
        ));
    }
}

/// Each stage's account of itself, from its summary.
fn stage_accounts(tally: &Tally) -> Vec<StageAccount> {
    tally
        .summaries
        .iter()
        .map(|s| StageAccount {
            stage: s.stage.clone(),
            pid: s.pid,
            status: status_name(s.status).to_owned(),
            input: s.input.clone(),
            output: s.output.clone(),
            bad_lines: s.bad_lines,
            elapsed_ms: (s.ended_at - s.started_at).num_milliseconds(),
            peak_rss_bytes: s.peak_rss_bytes,
        })
        .collect()
}

/// The start of the problem an empty input gives.
pub const NOTHING_SCRAPED: &str = "no records in the input: nothing was scraped";

/// The wire name of a status.
pub fn status_name(s: Status) -> &'static str {
    match s {
        Status::Complete => "complete",
        Status::Partial => "partial",
        Status::NotReady => "not-ready",
        Status::Interrupted => "interrupted",
        Status::Failed => "failed",
    }
}

fn label(s: &Summary) -> String {
    format!("{} (pid {})", s.stage, s.pid)
}

fn stage_problems(tally: &Tally, problems: &mut Vec<String>, notes: &mut Vec<String>) {
    let sums = &tally.summaries;
    for stage in &tally.ledger_stages {
        if !sums.iter().any(|s| &s.stage == stage) {
            problems.push(format!(
                "{stage} wrote ledger records but no summary: it was killed or its output \
                 was cut, so records may be lost after it"
            ));
        }
    }
    for s in sums {
        if s.bad_lines > 0 {
            problems.push(format!(
                "{} skipped {} bad input line(s): the records on them are lost",
                label(s),
                s.bad_lines
            ));
        }
        if matches!(s.status, Status::Interrupted | Status::Failed) {
            problems.push(format!(
                "{} ended {}: it did not finish",
                label(s),
                status_name(s.status)
            ));
        }
    }
    let linear = sums
        .iter()
        .enumerate()
        .all(|(i, s)| s.input.get("summary").copied().unwrap_or(0) == i as u64);
    if !linear {
        notes.push(
            "the summaries do not form one linear pipeline (merged streams?): record counts \
             between stages were not compared"
                .to_owned(),
        );
        return;
    }
    for pair in sums.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        for (kind, wrote, read) in diff(&a.output, &b.input) {
            problems.push(format!(
                "between {} and {}: {} wrote {wrote} `{kind}`, {} read {read}",
                label(a),
                label(b),
                a.stage,
                b.stage
            ));
        }
    }
    if let Some(last) = sums.last() {
        let mut read = tally.records.clone();
        read.remove("summary");
        for (kind, wrote, got) in diff(&last.output, &read) {
            problems.push(format!(
                "after {}: it wrote {wrote} `{kind}`, rip-health read {got}",
                label(last)
            ));
        }
    }
    if let Some(first) = sums.first() {
        let read: u64 = first.input.values().sum();
        if read > 0 {
            notes.push(format!(
                "{} read {read} record(s) with no upstream summary: its input came from a \
                 command that writes none, or from a stage that did not finish",
                label(first)
            ));
        }
    }
}

/// Kinds (other than `summary`) whose counts differ: `(kind, a, b)`.
fn diff(a: &BTreeMap<String, u64>, b: &BTreeMap<String, u64>) -> Vec<(String, u64, u64)> {
    let mut kinds: Vec<&String> = a.keys().chain(b.keys()).collect();
    kinds.sort();
    kinds.dedup();
    kinds
        .into_iter()
        .filter(|k| k.as_str() != "summary")
        .filter_map(|k| {
            let (x, y) = (
                a.get(k).copied().unwrap_or(0),
                b.get(k).copied().unwrap_or(0),
            );
            (x != y).then(|| (k.clone(), x, y))
        })
        .collect()
}

/// URLs whose last record is a `ref` were handed to a fetch that never came: a retry or a
/// resolve candidate after the last round, or a pipeline cut short. Says how to fix it.
fn unfetched_refs_hint(
    unaccounted: &[Unaccounted],
    in_flight: &[Unaccounted],
    problems: &mut Vec<String>,
) {
    let refs = unaccounted
        .iter()
        .chain(in_flight)
        .filter(|u| u.last_seen.as_deref() == Some("ref"))
        .count();
    if refs > 0 {
        problems.push(format!(
            "{refs} URL(s) last seen as a `ref`: nothing fetched them (a retry or resolve \
             candidate written after the last fetch round, or a pipeline cut short; hint: \
             give the last round's rip-route and the one after rip-parse `--final`, or add \
             a `rip-fetch | rip-route` round)"
        ));
    }
}
