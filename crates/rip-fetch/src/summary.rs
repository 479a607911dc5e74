//! The one-line account printed on stderr at the end of a run.

use rip_core::Summary;

/// `rip-fetch: 120 refs: 112 pages (30 from cache, 2 revalidated), 6 failed (TIMEOUT 2,
/// TRANSIENT 4), 2 expected; 15 requests, 3 retries; 4.2s, 28.6 refs/s; passed through:
/// page 48, summary 1`. Pages, failures and expected are the records made for the refs,
/// not those that only passed through (a second round's input holds the first's pages).
pub fn summary_line(s: &Summary) -> String {
    let c = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let o = |k: &str| s.made(k);
    let refs = s.input.get("ref").copied().unwrap_or(0);
    let secs = (s.ended_at - s.started_at).num_milliseconds().max(1) as f64 / 1000.0;
    let failed: Vec<String> = s
        .counters
        .iter()
        .filter_map(|(k, v)| k.strip_prefix("failed.").map(|cat| format!("{cat} {v}")))
        .collect();
    let mut line = format!(
        "{}: {refs} refs: {} pages ({} from cache, {} revalidated), {} failed",
        s.stage,
        o("page"),
        c("cacheHits"),
        c("revalidated"),
        o("failure"),
    );
    if !failed.is_empty() {
        line.push_str(&format!(" ({})", failed.join(", ")));
    }
    line.push_str(&format!(
        ", {} expected; {} requests, {} retries; {secs:.1}s, {:.1} refs/s",
        o("expected"),
        c("requests"),
        c("retries"),
        refs as f64 / secs
    ));
    if c("wikiTitles") > 0 {
        line.push_str(&format!(
            "; {} wiki titles in {} API requests ({} missing)",
            c("wikiTitles"),
            c("wikiBatches"),
            c("wikiMissing")
        ));
    }
    if c("wikiExpandRequests") > 0 || c("wikiUnexpandedPages") > 0 {
        line.push_str(&format!(
            "; {} template calls expanded in {} requests ({} pages not expanded)",
            c("wikiExpandedCalls"),
            c("wikiExpandRequests"),
            c("wikiUnexpandedPages")
        ));
    }
    line.push_str(&s.books_text());
    line
}
