//! The HTML report: one self-contained file (inline CSS and SVG, no script, no network),
//! with charts of the outcome breakdown, failures by category and by host, retries and
//! latency, and tables of what is missing, unaccounted or otherwise wrong. Every string
//! that came from the crawl (URLs, messages) is escaped.

use html_escape::encode_quoted_attribute as esc;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::Report;
use crate::report::{Unaccounted, Verdict};

const CSS: &str = "
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
header{padding:24px 32px;color:#fff}
header.ok{background:#1e7a46} header.missing{background:#b7791f} header.incomplete{background:#b42318}
header h1{margin:0;font-size:26px} header p{margin:4px 0 0;opacity:.9}
main{padding:20px 32px;display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:20px}
section{background:#fff;border-radius:8px;padding:16px 20px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
section.wide{grid-column:1/-1}
h2{font-size:17px;margin:0 0 12px}
.tiles{display:flex;flex-wrap:wrap;gap:12px}
.tile{flex:1 1 120px;border-radius:6px;padding:10px 14px;background:#eef1f5}
.tile b{display:block;font-size:26px}
table{border-collapse:collapse;width:100%;font-size:13px}
td,th{text-align:left;padding:4px 8px;border-bottom:1px solid #e4e7ec;vertical-align:top;overflow-wrap:break-word}
td.u{word-break:break-all} td.n{white-space:nowrap}
th{color:#555;font-weight:600}
.legend span{display:inline-block;margin:4px 14px 0 0;font-size:13px}
.legend i{display:inline-block;width:12px;height:12px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.muted{color:#667085}
.live{margin:0;padding:8px 32px;background:#1d4ed8;color:#fff}
";

/// Outcome slices: label, colour, count; together, the URLs that entered (with the ledger
/// checked).
fn outcome_slices(r: &Report) -> Vec<(&'static str, &'static str, u64)> {
    vec![
        ("first try", "#2f9e5b", r.outcomes.first_attempt),
        ("recovered", "#14b8a6", r.outcomes.recovered),
        ("resolved", "#6366f1", r.outcomes.resolved),
        ("captured elsewhere", "#3b82f6", r.totals.captured_elsewhere),
        ("dead", "#98a2b3", r.totals.dead),
        ("expected", "#cbd5e1", entered_expected(r)),
        ("missing", "#e8590c", r.totals.missing),
        ("unaccounted", "#b42318", r.outcomes.unaccounted),
    ]
}

/// Renders the whole report: the header with the verdict, then one section per part
/// of the story (outcomes, failures, retries, latency, the books, the lists).
///
/// Written with small typed builders (`section`, `table`, the charts) rather than a
/// template engine: the page is one fixed layout, every string from the crawl is
/// escaped (`html_escape::encode_quoted_attribute`: `&`, `<`, `>`, `"`, `'`) at the one
/// place it is written, and no build-time dependency is needed.
pub fn render(r: &Report) -> String {
    let mut h = String::new();
    header(&mut h, r);
    outcomes(&mut h, r);
    for (title, data, colour) in [
        ("Failures by category", &r.failures_by.category, "#e8590c"),
        ("Failures by host", &r.failures_by.host, "#7c3aed"),
        ("Failures by status", &r.failures_by.status, "#b7791f"),
    ] {
        section(&mut h, Width::Half, Some(title), |h| {
            h.push_str(&bars(data, colour, 10));
        });
    }
    section(&mut h, Width::Half, Some("Retries"), |h| retries(h, r));
    section(
        &mut h,
        Width::Half,
        Some("Fetch latency (the site's)"),
        |h| {
            latency(h, r);
        },
    );
    section(&mut h, Width::Wide, Some("The books"), |h| books(h, r));
    section(&mut h, Width::Wide, None, |h| failure_lists(h, r));
    h.push_str("</main></body></html>\n");
    h
}

/// The report of a run still going on (`rip-health --follow`): [`render`]'s page, reloading
/// itself every `refresh` seconds (a `<meta http-equiv="refresh">`: still no script), with
/// a line under the header saying that the run is going on and when the page was made.
pub fn render_live(r: &Report, refresh: u64) -> String {
    let page = render(r);
    let meta =
        format!("<meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"{refresh}\">");
    let banner = format!(
        "</header><p class=\"live\" id=\"live\">Live: the run is going on. This page is made \
         again every few seconds and reloads itself every {refresh} s; the numbers are what has \
         come out so far, and URLs still on their way count as unaccounted.</p>"
    );
    page.replacen("<meta charset=\"utf-8\">", &meta, 1)
        .replacen("</header>", &banner, 1)
}

/// How much of the page's grid a section takes.
#[derive(Clone, Copy)]
enum Width {
    Half,
    Wide,
}

/// A `<section>` with an optional heading (a literal, not escaped) around `body`.
fn section(h: &mut String, width: Width, title: Option<&str>, body: impl FnOnce(&mut String)) {
    h.push_str(match width {
        Width::Half => "<section>",
        Width::Wide => "<section class=\"wide\">",
    });
    if let Some(title) = title {
        let _ = write!(h, "<h2>{title}</h2>");
    }
    body(h);
    h.push_str("</section>");
}

/// The document's head and the header: the target, the verdict, when.
fn header(h: &mut String, r: &Report) {
    let (class, verdict) = match r.verdict() {
        Verdict::Ok => ("ok", "Everything captured or explained".to_owned()),
        Verdict::Incomplete(why) => ("incomplete", format!("Incomplete: {why}")),
        Verdict::Missing => ("missing", "Some content is missing".to_owned()),
    };
    let _ = write!(
        h,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <title>Crawl health · {t}</title><style>{CSS}</style></head><body>\
         <header class=\"{class}\"><h1>Crawl health · {t}</h1><p>{verdict} · generated {g}</p></header><main>",
        t = esc(&r.target),
        g = esc(&r.generated_at),
    );
}

/// The `expected` records of URLs that entered: all of them, less those of links that never
/// entered (robots.txt disallowed them at discovery), when the ledger is checked.
fn entered_expected(r: &Report) -> u64 {
    if r.ledger.checked {
        r.expected
            .total
            .saturating_sub(r.ledger.not_entered_expected)
    } else {
        r.expected.total
    }
}

/// The totals as tiles, the sum they make, and the outcome bar. The tiles of outcomes add
/// up to `entered`; known gaps that never entered are said apart.
fn outcomes(h: &mut String, r: &Report) {
    let t = &r.totals;
    let expected = entered_expected(r);
    section(h, Width::Wide, Some("Outcomes"), |h| {
        h.push_str("<div class=\"tiles\">");
        for (label, n) in [
            ("entered", r.counters.entered),
            ("docs", t.concepts),
            ("failures", t.failures),
            ("captured elsewhere", t.captured_elsewhere),
            ("missing", t.missing),
            ("dead", t.dead),
            ("expected", expected),
            ("unaccounted", r.outcomes.unaccounted),
        ] {
            let _ = write!(h, "<div class=\"tile\"><b>{n}</b>{label}</div>");
        }
        h.push_str("</div>");
        if r.ledger.checked {
            let _ = write!(
                h,
                "<p>{} entered = {} docs + {} failures ({} captured elsewhere, {} missing, {} \
                 dead) + {expected} expected + {} unaccounted</p>",
                r.counters.entered,
                t.concepts,
                t.failures,
                t.captured_elsewhere,
                t.missing,
                t.dead,
                r.outcomes.unaccounted,
            );
        }
        let never = r.ledger.not_entered_expected;
        if r.ledger.checked && never > 0 {
            let _ = write!(
                h,
                "<p class=\"muted\">Besides: {never} expected, never entered (links the \
                 crawler found and robots.txt disallowed; not fetched, so not in the sum).</p>"
            );
        }
        h.push_str(&stacked_bar(&outcome_slices(r)));
    });
}

/// Routing rounds, HTTP requests per page, and what the site fetches recovered from.
fn retries(h: &mut String, r: &Report) {
    let rounds = |m: &BTreeMap<u32, u64>, what: &str| -> Vec<(String, u64)> {
        m.iter()
            .map(|(k, v)| match k {
                0 => (format!("{what}, first round"), *v),
                1 => (format!("{what} after 1 retry round"), *v),
                k => (format!("{what} after {k} retry rounds"), *v),
            })
            .collect()
    };
    let mut retry_rows = rounds(&r.retries.docs_by_rounds, "docs");
    retry_rows.extend(rounds(&r.retries.failures_by_rounds, "failures"));
    h.push_str(&bar_rows(&retry_rows, "#14b8a6"));
    let _ = write!(h, "<p class=\"muted\">{}.</p>", esc(&rounds_sentence(r)));
    if !r.retries.http_attempts.is_empty() {
        h.push_str("<h2>HTTP requests per page (the site fetch)</h2>");
        let rows: Vec<(String, u64)> = r
            .retries
            .http_attempts
            .iter()
            .map(|(n, count)| {
                let label = match n {
                    0 => "cache hit, site unknown".to_owned(),
                    1 => "1 request".to_owned(),
                    n => format!("{n} requests"),
                };
                (label, *count)
            })
            .collect();
        h.push_str(&bar_rows(&rows, "#0ea5e9"));
    }
    let site = r.site_fetches.phrases();
    if !site.is_empty() {
        let _ = write!(
            h,
            "<p class=\"muted\">Site fetches: {}.</p>",
            esc(&site.join(" · "))
        );
    }
    if !r.site_fetches.faults.is_empty() {
        h.push_str("<h2>Faults recovered inside the fetch</h2>");
        h.push_str(&bars(&r.site_fetches.faults, "#f59e0b", 10));
    }
}

/// How many fetch rounds ran (the `rip-fetch` processes of a linear pipeline) and how many
/// URLs needed a later one, e.g. `3 fetch rounds ran; 2 URLs needed a retry round (3 retry
/// rounds in all, counted per URL)`.
fn rounds_sentence(r: &Report) -> String {
    let fetches = r
        .ledger
        .stages
        .iter()
        .filter(|s| s.stage == "rip-fetch")
        .count();
    let later = |m: &BTreeMap<u32, u64>| m.range(1..).map(|(_, n)| n).sum::<u64>();
    let retried = later(&r.retries.docs_by_rounds) + later(&r.retries.failures_by_rounds);
    let ran = match fetches {
        0 => String::new(),
        1 => "1 fetch round ran; ".to_owned(),
        n => format!("{n} fetch rounds ran; "),
    };
    let in_all = if r.retries.total_rounds > retried {
        format!(
            " ({} retry rounds in all, counted per URL)",
            r.retries.total_rounds
        )
    } else {
        String::new()
    };
    match retried {
        0 => format!("{ran}no URL needed a retry round"),
        1 => format!("{ran}1 URL needed a retry round{in_all}"),
        n => format!("{ran}{n} URLs needed a retry round{in_all}"),
    }
}

/// The latency histogram and its percentiles.
fn latency(h: &mut String, r: &Report) {
    let Some(l) = &r.latency else {
        h.push_str(
            "<p class=\"muted\">No record carried a site fetch or <code>elapsedMs</code>.</p>",
        );
        return;
    };
    let rows: Vec<(String, u64)> = l
        .histogram
        .iter()
        .map(|b| {
            let label =
                b.le.map_or_else(|| "more".to_owned(), |le| format!("≤{le}"));
            (label, b.count)
        })
        .collect();
    h.push_str(&columns(&rows, "#3b82f6"));
    let _ = write!(
        h,
        "<p>p50 <b>{}</b> ms · p90 <b>{}</b> ms · p95 <b>{}</b> ms · p99 <b>{}</b> ms · max <b>{}</b> ms · {} samples</p>",
        l.p50, l.p90, l.p95, l.p99, l.max, l.samples
    );
}

/// The books: the counters, then what is wrong with them, and each stage's account.
fn books(h: &mut String, r: &Report) {
    let c = &r.counters;
    let _ = write!(
        h,
        "<p>consumed <b>{}</b> · persisted <b>{}</b> · failed <b>{}</b> · expected <b>{}</b> · entered <b>{}</b>{} · {}</p>",
        c.consumed,
        c.persisted,
        c.failed,
        c.expected,
        c.entered,
        if c.not_entered > 0 {
            format!(" · not entered <b>{}</b>", c.not_entered)
        } else {
            String::new()
        },
        if !r.ledger.checked {
            "ledger not checked"
        } else if r.complete {
            "every URL accounted for exactly once"
        } else {
            "<b>incomplete</b>"
        }
    );
    let ledger = &r.ledger;
    let last_seen = |u: &Unaccounted| vec![u.url.clone(), u.last_seen.clone().unwrap_or_default()];
    table(
        h,
        "Problems",
        &["problem"],
        ledger.problems.iter().map(|p| vec![p.clone()]),
    );
    table(
        h,
        "Unaccounted",
        &["url", "last seen as"],
        ledger.unaccounted.iter().map(last_seen),
    );
    table(
        h,
        "In flight (never finished, never entered)",
        &["url", "last seen as"],
        ledger.in_flight.iter().map(last_seen),
    );
    table(
        h,
        "Not persisted by rip-write",
        &["url", "why"],
        r.not_persisted
            .iter()
            .map(|n| vec![n.url.clone(), n.message.clone()]),
    );
    table(
        h,
        "Came out more than once",
        &["url", "records"],
        ledger
            .duplicated
            .iter()
            .map(|d| vec![d.url.clone(), d.records.join(", ")]),
    );
    stages(h, r);
}

/// Each stage's account of itself, from its summary.
fn stages(h: &mut String, r: &Report) {
    table(
        h,
        "Stages",
        &[
            "stage",
            "pid",
            "status",
            "read",
            "wrote",
            "bad lines",
            "ms",
            "peak memory",
        ],
        r.ledger.stages.iter().map(|s| {
            vec![
                s.stage.clone(),
                s.pid.to_string(),
                s.status.clone(),
                counts(&s.input),
                counts(&s.output),
                s.bad_lines.to_string(),
                s.elapsed_ms.to_string(),
                s.peak_rss_bytes
                    .map_or_else(String::new, crate::text::megabytes),
            ]
        }),
    );
}

/// The failures by verdict, and the known gaps.
fn failure_lists(h: &mut String, r: &Report) {
    table(
        h,
        "Missing",
        &["url", "linked from", "link text", "errors", "candidates"],
        r.missing.iter().map(|m| {
            let errors: Vec<String> = m
                .errors
                .iter()
                .map(|e| format!("{}: {}", e.code, e.message))
                .collect();
            vec![
                m.url.clone(),
                m.parent.clone().unwrap_or_default(),
                m.link_text.clone().unwrap_or_default(),
                errors.join("; "),
                m.candidates.join(" "),
            ]
        }),
    );
    table(
        h,
        "Captured elsewhere",
        &["url", "at"],
        r.captured_elsewhere
            .iter()
            .map(|c| vec![c.url.clone(), c.at.clone()]),
    );
    table(
        h,
        "Dead",
        &["url", "reason"],
        r.dead.iter().map(|d| vec![d.url.clone(), d.reason.clone()]),
    );
    table(
        h,
        "Expected gaps",
        &["url", "reason", "source"],
        r.expected.items.iter().map(|e| {
            vec![
                e.url.clone(),
                e.reason.clone(),
                e.source.clone().unwrap_or_default(),
            ]
        }),
    );
}

fn counts(m: &BTreeMap<String, u64>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The columns of [`table`]s that hold URLs.
const URL_COLUMNS: &[&str] = &["url", "at", "linked from", "candidates"];

/// The columns of [`table`]s whose cells are not broken: stage names, numbers, statuses.
const WHOLE_COLUMNS: &[&str] = &["stage", "pid", "status", "bad lines", "ms", "peak memory"];

/// A table with a heading; nothing when there are no rows. Cells are escaped here.
fn table(h: &mut String, title: &str, head: &[&str], rows: impl Iterator<Item = Vec<String>>) {
    let rows: Vec<Vec<String>> = rows.collect();
    if rows.is_empty() {
        return;
    }
    let _ = write!(h, "<h2>{} ({})</h2><table><tr>", esc(title), rows.len());
    for c in head {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for row in rows.iter().take(500) {
        h.push_str("<tr>");
        for (cell, name) in row.iter().zip(head) {
            // URLs break anywhere (they have no spaces); names and numbers nowhere.
            let class = if URL_COLUMNS.contains(name) {
                " class=\"u\""
            } else if WHOLE_COLUMNS.contains(name) {
                " class=\"n\""
            } else {
                ""
            };
            let _ = write!(h, "<td{class}>{}</td>", esc(cell));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    if rows.len() > 500 {
        let _ = write!(
            h,
            "<p class=\"muted\">… and {} more (see crawl-health.json)</p>",
            rows.len() - 500
        );
    }
}

/// A 100% stacked horizontal bar with a legend.
fn stacked_bar(slices: &[(&str, &str, u64)]) -> String {
    let total: u64 = slices.iter().map(|s| s.2).sum();
    let (w, bar_h) = (1000.0, 44.0);
    let mut svg = format!(
        "<svg viewBox=\"0 0 {w} {bar_h}\" width=\"100%\" role=\"img\" aria-label=\"outcome breakdown\" style=\"margin-top:14px\">"
    );
    if total == 0 {
        let _ = write!(
            svg,
            "<rect width=\"{w}\" height=\"{bar_h}\" rx=\"6\" fill=\"#e4e7ec\"/>\
             <text x=\"{}\" y=\"28\" text-anchor=\"middle\" fill=\"#667085\">no records</text>",
            w / 2.0
        );
    }
    let mut x = 0.0;
    for (label, colour, n) in slices {
        if *n == 0 || total == 0 {
            continue;
        }
        let width = w * *n as f64 / total as f64;
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" width=\"{width:.1}\" height=\"{bar_h}\" fill=\"{colour}\"><title>{}: {n}</title></rect>",
            esc(label)
        );
        x += width;
    }
    svg.push_str("</svg><div class=\"legend\">");
    for (label, colour, n) in slices {
        let _ = write!(
            svg,
            "<span><i style=\"background:{colour}\"></i>{} {n}</span>",
            esc(label)
        );
    }
    svg.push_str("</div>");
    svg
}

/// Horizontal bars, largest first, at most `max` rows.
fn bars(data: &BTreeMap<String, u64>, colour: &str, max: usize) -> String {
    let mut rows: Vec<(String, u64)> = data.iter().map(|(k, v)| (k.clone(), *v)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    rows.truncate(max);
    bar_rows(&rows, colour)
}

/// Horizontal bars in the given order.
fn bar_rows(rows: &[(String, u64)], colour: &str) -> String {
    if rows.is_empty() {
        return "<p class=\"muted\">None.</p>".into();
    }
    let top = rows.iter().map(|r| r.1).max().unwrap_or(1).max(1) as f64;
    let row_h = 26.0;
    let height = row_h * rows.len() as f64 + 4.0;
    let (label_w, bar_w) = (210.0, 330.0);
    let mut svg =
        format!("<svg viewBox=\"0 0 600 {height}\" width=\"100%\" role=\"img\" font-size=\"13\">");
    for (i, (label, n)) in rows.iter().enumerate() {
        let y = i as f64 * row_h + 2.0;
        let width = (bar_w * *n as f64 / top).max(2.0);
        let shown: String = if label.chars().count() > 30 {
            label.chars().take(29).chain(['…']).collect()
        } else {
            label.clone()
        };
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#344054\">{}<title>{}</title></text>\
             <rect x=\"{}\" y=\"{y}\" width=\"{width:.1}\" height=\"{}\" rx=\"3\" fill=\"{colour}\"/>\
             <text x=\"{}\" y=\"{}\" fill=\"#1d2330\">{n}</text>",
            label_w - 8.0,
            y + 16.0,
            esc(&shown),
            esc(label),
            label_w,
            row_h - 6.0,
            label_w + width + 6.0,
            y + 16.0,
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Vertical columns in the given order (a histogram).
fn columns(data: &[(String, u64)], colour: &str) -> String {
    let top = data.iter().map(|d| d.1).max().unwrap_or(0).max(1) as f64;
    let (w, h, base) = (600.0, 200.0, 170.0);
    let slot = w / data.len().max(1) as f64;
    let mut svg =
        format!("<svg viewBox=\"0 0 {w} {h}\" width=\"100%\" role=\"img\" font-size=\"12\">");
    let _ = write!(
        svg,
        "<line x1=\"0\" y1=\"{base}\" x2=\"{w}\" y2=\"{base}\" stroke=\"#98a2b3\"/>"
    );
    for (i, (label, n)) in data.iter().enumerate() {
        let bar_h = (base - 20.0) * *n as f64 / top;
        let x = i as f64 * slot + slot * 0.15;
        let _ = write!(
            svg,
            "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bar_h:.1}\" fill=\"{colour}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{n}</text>\
             <text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#475467\">{}</text>",
            base - bar_h,
            slot * 0.7,
            x + slot * 0.35,
            base - bar_h - 4.0,
            x + slot * 0.35,
            base + 18.0,
            esc(label),
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_strings_are_escaped() {
        assert_eq!(
            esc("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;&quot;"
        );
        let mut m = BTreeMap::new();
        m.insert("<img src=x onerror=alert(1)>".to_owned(), 3);
        let svg = bars(&m, "#000", 5);
        assert!(!svg.contains("<img"), "{svg}");
    }
}
