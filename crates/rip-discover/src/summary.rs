//! What a run counts, and the one-line account printed on stderr at its end.

use rip_core::Summary;

use crate::task::LinkStats;

/// What the crawl counts, for its summary record.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) fetched: u64,
    pub(crate) targets: u64,
    pub(crate) failed: u64,
    pub(crate) targets_failed: u64,
    pub(crate) robots_denied: u64,
    pub(crate) links: u64,
    pub(crate) rejected: u64,
    pub(crate) out_of_domain: u64,
    pub(crate) not_followed: u64,
    pub(crate) nofollow: u64,
    pub(crate) duplicates: u64,
    pub(crate) depth_limited: u64,
    pub(crate) redirect_duplicates: u64,
    pub(crate) links_dropped: u64,
    pub(crate) sitemaps: u64,
    pub(crate) sitemap_urls: u64,
    pub(crate) non_html: u64,
    pub(crate) resumed: u64,
    pub(crate) max_depth: u32,
    pub(crate) rendered_pages: u64,
    pub(crate) render_fallbacks: u64,
    pub(crate) auto_kept: u64,
}

impl Counters {
    pub(crate) fn add_links(&mut self, s: &LinkStats) {
        self.links += s.links;
        self.rejected += s.rejected;
        self.out_of_domain += s.out_of_domain;
        self.not_followed += s.not_followed;
        self.nofollow += s.nofollow;
        self.links_dropped += s.dropped;
        self.rendered_pages += s.rendered;
        self.render_fallbacks += s.render_failed;
        self.auto_kept += s.auto_kept;
    }

    /// The counters under their names in the summary record.
    pub(crate) fn named(&self) -> [(&'static str, u64); 22] {
        [
            ("fetched", self.fetched),
            ("targets", self.targets),
            ("failed", self.failed),
            ("targetsFailed", self.targets_failed),
            ("robotsDenied", self.robots_denied),
            ("links", self.links),
            ("outOfDomain", self.out_of_domain),
            ("notFollowed", self.not_followed),
            ("nofollowSkipped", self.nofollow),
            ("rejected", self.rejected),
            ("duplicates", self.duplicates),
            ("depthLimited", self.depth_limited),
            ("redirectDuplicates", self.redirect_duplicates),
            ("linksDropped", self.links_dropped),
            ("nonHtml", self.non_html),
            ("sitemaps", self.sitemaps),
            ("sitemapUrls", self.sitemap_urls),
            ("maxDepth", u64::from(self.max_depth)),
            ("resumed", self.resumed),
            ("renderedPages", self.rendered_pages),
            ("renderFallbacks", self.render_fallbacks),
            ("autoKept", self.auto_kept),
        ]
    }
}

/// `rip-discover: 47 targets from 50 pages fetched, 3 failure records (2 pages could not be
/// fetched, 1 of them a target left to rip-fetch), 1 disallowed by robots.txt, 512 links
/// (130 duplicates, 2 off-domain), max depth 2; 52 requests, 0 from cache; 1.2s, 41.7
/// pages/s; passed through: failure 2`, plus the notes (budget exhausted, …). The failure
/// records are those it wrote (start URLs, listing pages, sitemaps), not those that passed
/// through; a target that could not be fetched is written as a ref, for rip-fetch to record.
pub fn summary_line(s: &Summary) -> String {
    let c = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let secs = (s.ended_at - s.started_at).num_milliseconds().max(1) as f64 / 1000.0;
    let done = c("fetched") + c("failed");
    let mut unfetched = format!("{} pages could not be fetched", c("failed"));
    if c("targetsFailed") > 0 {
        unfetched.push_str(&format!(
            ", {} of them targets left to rip-fetch",
            c("targetsFailed")
        ));
    }
    let mut line = format!(
        "{}: {} targets from {} pages fetched, {} failure records ({unfetched}), {} disallowed \
         by robots.txt, {} links ({} duplicates, {} off-domain, {} not followed, {} nofollow), \
         max depth {}",
        s.stage,
        c("targets"),
        c("fetched"),
        s.made("failure"),
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
    if c("autoChecked") + c("autoLearnt") > 0 {
        line.push_str(&format!(
            "; render auto: {} pages rendered, {} kept from the browser, {} decided by a learnt \
             URL pattern ({} patterns learnt)",
            c("renderedPages") + c("renderFallbacks"),
            c("autoKept"),
            c("autoLearnt"),
            c("patternsLearnt"),
        ));
    }
    line.push_str(&format!(
        "; {} requests, {} from cache; {secs:.1}s, {:.1} pages/s",
        c("requests"),
        c("cacheHits"),
        done as f64 / secs
    ));
    line.push_str(&s.books_text());
    for n in &s.notes {
        line.push_str(&format!("\n{}: {n}", s.stage));
    }
    line
}
