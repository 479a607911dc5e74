//! [`Tally`]: one pass over the records, keeping counts and, per URL, one byte of what was
//! seen of it under its hash ([`Urls`]; never a record's body, nor the URL's text in
//! memory).

use rip_core::folder::FolderError;
use rip_core::ndjson::MalformedLine;
use rip_core::{
    ErrorDoc, Expected, Kind, Ledger, Line, Phase, Record, Resolution, SiteFetch, Summary,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::report::{
    BriefError, CapturedElsewhere, Dead, ExpectedItem, Missing, NotPersisted, SiteFetches,
};
use crate::urls::Urls;

/// The few fields of a `doc` or `page` that health reads; everything else is skipped by
/// the parser without being built.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Brief {
    url: String,
    #[serde(default)]
    resolves: Option<String>,
    #[serde(default)]
    attempt: u32,
    #[serde(default)]
    http_attempts: Option<u32>,
    #[serde(default)]
    elapsed_ms: Option<u64>,
    #[serde(default)]
    from_cache: bool,
    #[serde(default)]
    site_fetch: Option<SiteFetch>,
    /// A doc's `errors` (codes and operations only): those the parse added are warnings
    /// about the doc itself (a field it could not show, a schema it breaks).
    #[serde(default)]
    errors: Vec<BriefCode>,
}

/// An error entry's code and operation.
#[derive(Debug, Deserialize)]
struct BriefCode {
    code: String,
    #[serde(default)]
    operation: String,
}

/// The operation of the warnings the parse adds to a doc.
const PARSE: &str = "rip-parse";

/// A record of a known kind that does not decode.
#[derive(Debug, thiserror::Error)]
#[error("bad `{kind}` record: {source}")]
pub struct BadRecord {
    /// The kind its `_type` names.
    pub kind: Kind,
    /// What the decoder said.
    #[source]
    pub source: serde_json::Error,
}

/// Input that is not a valid record: the line or file, and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum BadInput {
    /// A line that is not a record at all.
    #[error("{0}")]
    Malformed(MalformedLine),
    /// A line whose record does not decode.
    #[error("{input}:{line}: {source}")]
    Line {
        /// The input's name (`-` for stdin).
        input: String,
        /// The 1-based line number.
        line: u64,
        /// What is wrong.
        source: BadRecord,
    },
    /// A record file whose record does not decode.
    #[error("{}: {source}", path.display())]
    RecordFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        source: BadRecord,
    },
    /// A record file that cannot be read, or is not JSON.
    #[error(transparent)]
    File(#[from] FolderError),
}

impl BadInput {
    /// The bad record on line `line` of `input`.
    pub fn line(input: &str, line: &Line, source: BadRecord) -> Self {
        Self::Line {
            input: input.to_owned(),
            line: line.number(),
            source,
        }
    }
}

/// Everything health accumulates from a stream or a folder.
#[derive(Debug, Default)]
pub struct Tally {
    /// Every URL: entered (times it appeared in a ledger), its terminal records (under the
    /// accounting key: `resolves`, else `url`), the last non-terminal kind seen (`ref`,
    /// `page`, `failure`; resolve candidates left out).
    pub urls: Urls,
    /// The stages that wrote ledger records.
    pub ledger_stages: Vec<String>,
    /// Number of ledger records.
    pub ledgers: u64,
    /// Stage summaries, in stream order.
    pub summaries: Vec<Summary>,
    /// Doc files found in folder mode.
    pub doc_files: Option<u64>,
    /// Records `rip-write` could not persist (its `failure` annotations, phase `write`).
    pub not_persisted: Vec<NotPersisted>,

    pub(crate) docs: u64,
    pub(crate) first_attempt: u64,
    pub(crate) recovered: u64,
    pub(crate) resolved: u64,
    pub(crate) failed_first_round: u64,
    pub(crate) failed_after_retry: u64,
    pub(crate) unreconciled: u64,
    pub(crate) captured: Vec<CapturedElsewhere>,
    pub(crate) missing: Vec<Missing>,
    pub(crate) dead: Vec<Dead>,
    pub(crate) expected: Vec<ExpectedItem>,
    pub(crate) by_category: BTreeMap<String, u64>,
    pub(crate) by_status: BTreeMap<String, u64>,
    pub(crate) by_host: BTreeMap<String, u64>,
    pub(crate) by_phase: BTreeMap<String, u64>,
    pub(crate) by_code: BTreeMap<String, u64>,
    pub(crate) docs_by_rounds: BTreeMap<u32, u64>,
    pub(crate) failures_by_rounds: BTreeMap<u32, u64>,
    pub(crate) http_attempts: BTreeMap<u32, u64>,
    /// Latency samples: how many of each number of milliseconds.
    pub(crate) latencies: BTreeMap<u64, u64>,
    pub(crate) recovered_in_fetch: u64,
    /// The parse's warnings on docs, by code, and the docs that have some.
    pub(crate) doc_warnings: BTreeMap<String, u64>,
    pub(crate) docs_with_warnings: u64,
    pub(crate) site: SiteFetches,
    /// Records by kind.
    pub records: BTreeMap<String, u64>,
    /// Bad lines or files.
    pub bad_lines: u64,
    /// The first URL seen, for a default target name.
    pub first_url: Option<String>,
    /// Read from a folder, whose files come in the order they lie on the disk: what the
    /// report lists must not depend on it ([`Tally::settle_folder_order`]).
    pub(crate) folder: bool,
}

impl Tally {
    /// Takes in one NDJSON line. A record of a known kind that does not decode is an
    /// error (the caller reports it, counts it with [`Tally::bad`] and goes on).
    pub fn line(&mut self, line: &Line) -> Result<(), BadRecord> {
        self.text(line.kind(), line.text())
    }

    /// Takes in one record's JSON text of kind `kind`.
    pub fn text(&mut self, kind: &Kind, text: &str) -> Result<(), BadRecord> {
        let bad = |source| BadRecord {
            kind: kind.clone(),
            source,
        };
        match kind {
            Kind::Doc | Kind::Page => {
                let b: Brief = serde_json::from_str(text).map_err(bad)?;
                self.brief(kind, b);
            }
            Kind::Ref => {
                let b: Brief = serde_json::from_str(text).map_err(bad)?;
                self.seen(b.url, b.resolves.is_some(), "ref");
            }
            Kind::Failure => match serde_json::from_str(text).map_err(bad)? {
                Record::Failure(f) if f.phase == Phase::Write => {
                    // rip-write's annotation: the record before it was not persisted.
                    let key = f.context.resolves.unwrap_or(f.url);
                    let message = f
                        .errors
                        .last()
                        .map(|e| e.message.clone())
                        .unwrap_or_default();
                    self.not_persisted.push(NotPersisted { url: key, message });
                }
                Record::Failure(f) => {
                    self.seen(f.url, f.context.resolves.is_some(), "failure");
                }
                _ => {}
            },
            Kind::Error | Kind::Expected | Kind::Ledger | Kind::Summary => {
                let record: Record = serde_json::from_str(text).map_err(bad)?;
                match record {
                    Record::Error(e) => self.error(e),
                    Record::Expected(e) => self.expected(e),
                    Record::Ledger(l) => self.ledger(l),
                    Record::Summary(s) => self.summaries.push(s),
                    _ => {}
                }
            }
            Kind::Other(_) => {}
        }
        *self.records.entry(kind.as_str().to_owned()).or_default() += 1;
        Ok(())
    }

    /// Counts a line or file that was not a valid record.
    pub fn bad(&mut self) {
        self.bad_lines += 1;
    }

    /// A line or file that was not a valid record: reported on stderr
    /// (`<input>:<line>: <what is wrong>`) and counted, or with `strict` the error that
    /// stops the reading.
    pub fn bad_input(
        &mut self,
        bad: impl Into<BadInput>,
        strict: bool,
    ) -> Result<(), crate::Error> {
        let bad = bad.into();
        if strict {
            return Err(crate::Error::Strict(bad));
        }
        rip_core::ndjson::report_bad_line(&bad);
        self.bad();
        Ok(())
    }

    fn note_url(&mut self, url: &str) {
        if self.first_url.is_none() {
            self.first_url = Some(url.to_owned());
        }
    }

    /// Orders what a folder's files gave as no copy of the folder changes: the lists of
    /// failures and expected gaps by URL, then content (two files of one URL), as the
    /// files' order on the disk differs between copies.
    pub(crate) fn settle_folder_order(&mut self) {
        fn by_url_then_content<T: serde::Serialize>(items: &mut [T], url: impl Fn(&T) -> &str) {
            items.sort_by_cached_key(|i| {
                let json = serde_json::to_string(i).expect("a report item serialises");
                (url(i).to_owned(), json)
            });
        }
        by_url_then_content(&mut self.captured, |c| &c.url);
        by_url_then_content(&mut self.missing, |m| &m.url);
        by_url_then_content(&mut self.dead, |d| &d.url);
        by_url_then_content(&mut self.expected, |e| &e.url);
    }

    /// A non-terminal record of `url`. A resolve candidate's (`resolves` set) is not
    /// kept: its outcome accounts for the URL it resolves, and the candidates a group did
    /// not pick are dropped on purpose.
    fn seen(&mut self, url: String, candidate: bool, kind: &'static str) {
        self.note_url(&url);
        if !candidate {
            self.urls.see(&url, kind);
        }
    }

    fn terminal(&mut self, url: &str, resolves: Option<&str>, kind: &'static str) {
        self.note_url(url);
        self.urls.terminal(resolves.unwrap_or(url), kind);
    }

    /// What the site did for a doc's or page's body: its `siteFetch` when it carries one
    /// (whichever stage made it, the record's own stage may have read the cache); else, for
    /// records of earlier versions, its own round's `elapsedMs` and `httpAttempts`, unless
    /// that round was a cache hit (0 requests), which says nothing of the site.
    fn site_fetch(&mut self, kind: &Kind, b: &Brief) {
        let from_cache = b.from_cache || b.http_attempts == Some(0);
        let site = &mut self.site;
        site.records += 1;
        site.from_cache += u64::from(from_cache);
        let Some(f) = &b.site_fetch else {
            if from_cache {
                site.origin_unknown += 1;
            } else if let Some(ms) = b.elapsed_ms {
                *self.latencies.entry(ms).or_default() += 1;
            }
            if let Some(n) = b.http_attempts {
                *self.http_attempts.entry(n).or_default() += 1;
            }
            return;
        };
        site.recorded += 1;
        *site.fetched_by.entry(f.fetched_by.clone()).or_default() += 1;
        for code in &f.faults {
            *site.faults.entry(code.clone()).or_default() += 1;
        }
        site.waited_ms += f.waited_ms;
        if f.retries() > 0 {
            site.recovered += 1;
            self.recovered_in_fetch += u64::from(kind == &Kind::Doc);
        }
        *self.latencies.entry(f.latency_ms).or_default() += 1;
        *self.http_attempts.entry(f.http_attempts).or_default() += 1;
    }

    fn brief(&mut self, kind: &Kind, b: Brief) {
        self.site_fetch(kind, &b);
        if kind == &Kind::Page {
            self.seen(b.url, b.resolves.is_some(), "page");
            return;
        }
        self.docs += 1;
        if b.resolves.is_some() {
            self.resolved += 1;
        } else if b.attempt == 0 {
            self.first_attempt += 1;
        } else {
            self.recovered += 1;
        }
        *self.docs_by_rounds.entry(b.attempt).or_default() += 1;
        let warnings = b.errors.iter().filter(|e| e.operation == PARSE);
        let mut any = false;
        for e in warnings {
            *self.doc_warnings.entry(e.code.clone()).or_default() += 1;
            any = true;
        }
        self.docs_with_warnings += u64::from(any);
        self.terminal(&b.url, b.resolves.as_deref(), "doc");
    }

    fn error(&mut self, e: ErrorDoc) {
        self.terminal(&e.url, e.context.resolves.as_deref(), "error");
        if e.attempt > 1 {
            self.failed_after_retry += 1;
        } else {
            self.failed_first_round += 1;
        }
        *self
            .failures_by_rounds
            .entry(e.attempt.saturating_sub(1))
            .or_default() += 1;
        let category = e.category.map_or("UNKNOWN", |c| c.as_str());
        *self.by_category.entry(category.to_owned()).or_default() += 1;
        let status = e
            .status
            .map_or_else(|| "none".to_owned(), |s| s.to_string());
        *self.by_status.entry(status).or_default() += 1;
        *self.by_host.entry(host_of(&e.url)).or_default() += 1;
        let phase = e.phase.map_or("unknown", |p| p.as_str());
        *self.by_phase.entry(phase.to_owned()).or_default() += 1;
        let code = e.errors.last().map_or("none", |x| x.code.as_str());
        *self.by_code.entry(code.to_owned()).or_default() += 1;
        match e.resolution {
            Some(Resolution::CapturedElsewhere { at }) => {
                self.captured.push(CapturedElsewhere { url: e.url, at });
            }
            Some(Resolution::Dead { reason }) => self.dead.push(Dead { url: e.url, reason }),
            other => {
                let candidates = match other {
                    Some(Resolution::Missing { candidates }) => candidates,
                    _ => {
                        self.unreconciled += 1;
                        Vec::new()
                    }
                };
                let errors = e
                    .errors
                    .into_iter()
                    .map(|x| BriefError {
                        code: x.code,
                        message: x.message,
                    })
                    .collect();
                self.missing.push(Missing {
                    url: e.url,
                    errors,
                    candidates,
                    parent: e.context.parent,
                    link_text: e.context.link_text,
                });
            }
        }
    }

    fn expected(&mut self, e: Expected) {
        self.terminal(&e.url, e.context.resolves.as_deref(), "expected");
        let source = e.source.map(|s| {
            serde_json::to_value(s)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        });
        self.expected.push(ExpectedItem {
            url: e.url,
            reason: e.reason,
            source,
            rule: e.rule,
        });
    }

    fn ledger(&mut self, l: Ledger) {
        self.ledgers += 1;
        if !self.ledger_stages.contains(&l.stage) {
            self.ledger_stages.push(l.stage);
        }
        for url in l.entered {
            self.note_url(&url);
            self.urls.enter(&url);
        }
    }
}

/// The host (and port, when given) of a URL, or `(no host)`.
pub fn host_of(url: &str) -> String {
    rip_core::live::host_and_port(url).unwrap_or_else(|| "(no host)".into())
}
