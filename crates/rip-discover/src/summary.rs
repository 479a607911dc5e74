//! The one-line account printed on stderr at the end of a run.

use rip_core::Summary;

/// `rip-discover: 47 targets from 50 pages fetched (2 failed, 1 disallowed by robots.txt),
/// 512 links (130 duplicates, 2 off-domain), max depth 2; 52 requests, 0 from cache;
/// 1.2s, 41.7 pages/s`, plus the notes (budget exhausted, …).
pub fn summary_line(s: &Summary) -> String {
    let c = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let secs = (s.ended_at - s.started_at).num_milliseconds().max(1) as f64 / 1000.0;
    let done = c("fetched") + c("failed");
    let mut line = format!(
        "{}: {} targets from {} pages fetched ({} failed, {} disallowed by robots.txt), {} links \
         ({} duplicates, {} off-domain, {} not followed, {} nofollow), max depth {}",
        s.stage,
        c("targets"),
        c("fetched"),
        c("failed"),
        c("robotsDenied"),
        c("links"),
        c("duplicates"),
        c("outOfDomain"),
        c("notFollowed"),
        c("nofollowSkipped"),
        c("maxDepth"),
    );
    if c("sitemaps") > 0 {
        line.push_str(&format!(
            ", {} URLs from {} sitemaps",
            c("sitemapUrls"),
            c("sitemaps")
        ));
    }
    line.push_str(&format!(
        "; {} requests, {} from cache; {secs:.1}s, {:.1} pages/s",
        c("requests"),
        c("cacheHits"),
        done as f64 / secs
    ));
    if s.bad_lines > 0 {
        line.push_str(&format!("; {} bad input lines", s.bad_lines));
    }
    for n in &s.notes {
        line.push_str(&format!("\n{}: {n}", s.stage));
    }
    line
}
