//! The human summary on stderr: one screen (at most about 24 lines), lists cut to a few
//! entries with "… and N more".

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::Report;
use crate::report::{Unaccounted, Verdict};

const SHOWN: usize = 4;

/// Renders the summary; `paths` are the files written, shown at the end.
pub fn summary(r: &Report, paths: &[String]) -> String {
    let mut s = String::new();
    totals(&mut s, r);
    lists(&mut s, r);
    breakdowns(&mut s, r);
    counters(&mut s, r);
    stages(&mut s, r);
    memory(&mut s, r);
    for p in paths {
        let _ = writeln!(s, "  wrote {p}");
    }
    s
}

/// The one line `--follow` writes each time it makes the report: what has come out so
/// far and how many records were read.
pub fn live_line(r: &Report) -> String {
    let records: u64 = r.input.records.values().sum();
    format!(
        "so far: entered {} · docs {} · failures {} · expected {} · not yet out {} · {} records read",
        r.counters.entered,
        r.totals.concepts,
        r.totals.failures,
        r.expected.total,
        r.outcomes.unaccounted + r.ledger.in_flight.len() as u64,
        records
    )
}

/// The verdict, what came out, and how the failures were reconciled.
fn totals(s: &mut String, r: &Report) {
    let verdict = match r.verdict() {
        Verdict::Ok => "OK: everything captured or explained".to_owned(),
        Verdict::Incomplete(why) => format!("INCOMPLETE: {why}"),
        Verdict::Missing => "MISSING: some content was not captured".to_owned(),
    };
    let _ = writeln!(s, "crawl health · {} · {verdict}", r.target);
    let t = &r.totals;
    let o = &r.outcomes;
    // As the report's cards: the gaps that entered add up with the rest to `entered`; the
    // links discovery found and robots.txt disallowed never entered, and are said apart.
    let never = match r.ledger.checked {
        true => r.ledger.not_entered_expected,
        false => 0,
    };
    let apart = match never {
        0 => String::new(),
        n => format!(" (and {n} never entered: disallowed by robots.txt)"),
    };
    let _ = writeln!(
        s,
        "  entered {} · docs {} ({} first try, {} recovered, {} resolved) · failures {} · expected {}{apart}",
        r.counters.entered,
        t.concepts,
        o.first_attempt,
        o.recovered,
        o.resolved,
        t.failures,
        r.expected.total.saturating_sub(never)
    );
    if !o.doc_warnings.is_empty() {
        let codes: Vec<String> = o
            .doc_warnings
            .iter()
            .map(|(c, n)| format!("{c} {n}"))
            .collect();
        let _ = writeln!(
            s,
            "  doc warnings ({} docs): {}",
            o.docs_with_warnings,
            codes.join(" · ")
        );
    }
    let _ = writeln!(
        s,
        "  failures: {} captured elsewhere · {} missing · {} dead{}",
        t.captured_elsewhere,
        t.missing,
        t.dead,
        if r.unreconciled > 0 {
            format!(" ({} unreconciled)", r.unreconciled)
        } else {
            String::new()
        }
    );
}

/// What is wrong, URL by URL, a few of each.
fn lists(s: &mut String, r: &Report) {
    let last_seen = |u: &Unaccounted| match &u.last_seen {
        Some(k) => format!("{} (last seen as {k})", u.url),
        None => u.url.clone(),
    };
    list(
        s,
        "missing",
        r.missing.iter().map(|m| {
            let why = m
                .errors
                .last()
                .map(|e| format!(" ({})", e.message))
                .unwrap_or_default();
            format!("{}{why}", m.url)
        }),
    );
    list(s, "unaccounted", r.ledger.unaccounted.iter().map(last_seen));
    list(s, "in flight", r.ledger.in_flight.iter().map(last_seen));
    list(
        s,
        "twice",
        r.ledger
            .duplicated
            .iter()
            .map(|d| format!("{} ({})", d.url, d.records.join(", "))),
    );
    list(
        s,
        "unwritten",
        r.not_persisted
            .iter()
            .map(|n| format!("{} ({})", n.url, n.message)),
    );
    list(s, "problem", r.ledger.problems.iter().cloned());
}

/// The failures' top categories and hosts, the latency, the site fetches.
fn breakdowns(s: &mut String, r: &Report) {
    if r.totals.failures > 0 {
        let _ = writeln!(
            s,
            "  by category: {} · by host: {}",
            top(&r.failures_by.category),
            top(&r.failures_by.host)
        );
    }
    if let Some(l) = &r.latency {
        let _ = writeln!(
            s,
            "  latency ms: p50 {} · p90 {} · p99 {} · max {} ({} samples)",
            l.p50, l.p90, l.p99, l.max, l.samples
        );
    }
    let site = r.site_fetches.phrases();
    if !site.is_empty() {
        let _ = writeln!(s, "  site fetches: {}", site.join(" · "));
    }
}

/// Ladon's counters, and whether they balance.
fn counters(s: &mut String, r: &Report) {
    let c = &r.counters;
    let _ = writeln!(
        s,
        "  counters: consumed {} · persisted {} · failed {} · expected {} · entered {}{}{}",
        c.consumed,
        c.persisted,
        c.failed,
        c.expected,
        c.entered,
        // The expected records of URLs that never entered (a robots-disallowed link) are
        // in `expected`: said here, so that the line adds up as the HTML's does.
        if c.not_entered > 0 {
            format!(" + {} never entered", c.not_entered)
        } else {
            String::new()
        },
        if !r.ledger.checked {
            " (ledger not checked)"
        } else if c.invariant_holds {
            " (balanced)"
        } else {
            " (does not balance)"
        }
    );
}

/// The pipeline's stages, and those that did not end complete.
fn stages(s: &mut String, r: &Report) {
    let stages = &r.ledger.stages;
    if stages.is_empty() {
        return;
    }
    let names = stage_names(stages.iter().map(|st| st.stage.as_str()));
    let not_complete: Vec<String> = stages
        .iter()
        .filter(|st| st.status != "complete")
        .map(|st| format!("{} (pid {}) {}", st.stage, st.pid, st.status))
        .collect();
    if not_complete.is_empty() {
        let _ = writeln!(s, "  stages: all {} complete: {names}", stages.len());
    } else {
        let mut shown = not_complete[..not_complete.len().min(SHOWN)].join(" · ");
        if not_complete.len() > SHOWN {
            shown += &format!(" · … and {} more", not_complete.len() - SHOWN);
        }
        let _ = writeln!(s, "  stages: {names} · {shown}");
    }
}

/// Each stage's peak memory, as its summary said: the largest of its processes, in the
/// order first seen (`rip-fetch 26 MB (largest of 3)`).
fn memory(s: &mut String, r: &Report) {
    let mut peaks: Vec<(&str, u64, usize)> = Vec::new();
    for st in &r.ledger.stages {
        let Some(bytes) = st.peak_rss_bytes else {
            continue;
        };
        match peaks.iter_mut().find(|(name, _, _)| *name == st.stage) {
            Some((_, peak, n)) => {
                *peak = (*peak).max(bytes);
                *n += 1;
            }
            None => peaks.push((&st.stage, bytes, 1)),
        }
    }
    if peaks.is_empty() {
        return;
    }
    let shown: Vec<String> = peaks
        .iter()
        .map(|(name, peak, n)| match n {
            1 => format!("{name} {}", megabytes(*peak)),
            n => format!("{name} {} (largest of {n})", megabytes(*peak)),
        })
        .collect();
    let _ = writeln!(s, "  peak memory: {}", shown.join(" · "));
}

/// Bytes as megabytes, one decimal: `26.4 MB`.
pub(crate) fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The stages in the order they ended, `a → b → c`; when stages ran many times (workers
/// running them batch after batch), each name once with its count, in the order first seen.
fn stage_names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for name in &names {
        match counted.iter_mut().find(|(n, _)| n == name) {
            Some((_, count)) => *count += 1,
            None => counted.push((name, 1)),
        }
    }
    if counted.len() == names.len() {
        return names.join(" → ");
    }
    let counted: Vec<String> = counted
        .iter()
        .map(|(name, n)| match n {
            1 => (*name).to_owned(),
            n => format!("{name} ×{n}"),
        })
        .collect();
    format!("{} processes of {}", names.len(), counted.join(", "))
}

fn list(s: &mut String, label: &str, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    for item in items.iter().take(SHOWN) {
        let _ = writeln!(s, "  {label:<11} {item}");
    }
    if items.len() > SHOWN {
        let _ = writeln!(s, "  {:<11} … and {} more", "", items.len() - SHOWN);
    }
}

fn top(m: &BTreeMap<String, u64>) -> String {
    let mut v: Vec<(&String, &u64)> = m.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut out: Vec<String> = v.iter().take(3).map(|(k, n)| format!("{k} {n}")).collect();
    if v.len() > 3 {
        out.push(format!("+{} more", v.len() - 3));
    }
    out.join(", ")
}
