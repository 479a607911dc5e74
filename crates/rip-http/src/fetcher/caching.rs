//! What the fetcher reads from and writes to the cache ([`crate::cache`]), as the cache
//! mode allows.
//!
//! The cache's work (an `fstat` of its index, a read or two appends to open files) runs
//! on the calling runtime thread, as the politeness slot files do. Handing each lookup and
//! write to tokio's blocking pool cost more CPU than the fetch itself: with 64 fetches in
//! flight the pool grew to 30-odd threads and every hand-off was a futex wake and a
//! context switch (measured in `docs/benchmarks-log.md`, the crawl on 2026-12-02). A
//! stalled disk therefore stalls that runtime thread; the others go on.

use rip_core::SiteFetch;
use url::Url;

use super::Fetcher;
use super::limits::Limited;
use crate::cache::{CacheEntry, CacheMeta, Lookup, now_ms};
use crate::config::CacheMode;
use crate::outcome::{Outcome, Response, Stats};

/// What the cache holds for a URL, as far as the cache mode lets the fetcher read it and
/// under the fetcher's limits ([`super::limits`]).
pub(super) enum Stored {
    /// An entry to serve as it is: fresh, or any entry in `read-only` mode.
    Fresh(CacheEntry),
    /// An entry past its TTL: revalidated when it has validators.
    Stale(CacheEntry),
    /// An entry whose redirect chain a fetch under these limits would not have followed:
    /// how that fetch ends instead.
    Refused(Outcome),
    /// No usable entry (none, corrupt, cut shorter than the body limit, or the mode does
    /// not read).
    Nothing,
}

impl Fetcher {
    /// The cache's fresh entry for `url` as a response (counted as a cache hit), as a
    /// fetch would serve it, with the site fetch stored with it (`None` for entries of
    /// earlier versions): `None` when it is not cached, stale, corrupt, the cache mode
    /// does not read, or a fetch under this fetcher's limits would not have made it (see
    /// [`Fetcher::fetch`]'s path: the body is cut at the limit, marked `truncated`). In
    /// `read-only` mode any entry, fresh or stale, is served.
    pub async fn cached(&self, url: &str) -> Option<(Response, Option<SiteFetch>)> {
        match self.stored(url) {
            Stored::Fresh(entry) => {
                let site = entry.meta.site_fetch.clone();
                Some((self.serve(entry), site))
            }
            Stored::Stale(_) | Stored::Refused(_) | Stored::Nothing => None,
        }
    }

    /// True when the cache mode is `read-only` with a cache folder: a miss must become a
    /// failure (`cache.miss`), never a request.
    pub fn cache_only(&self) -> bool {
        self.inner.cfg.cache.mode == CacheMode::ReadOnly && self.inner.cache.is_some()
    }

    /// Stores `resp` as the cache entry of `url`, with the site fetch that got it, when
    /// the cache mode writes (what a fetch does with a success; for API callers that
    /// cache per item, see [`Fetcher::site_fetch`]).
    pub async fn remember(&self, url: &str, resp: &Response, site: Option<&SiteFetch>) {
        self.store(url, resp, site);
    }

    /// The entry of `url` when the cache mode reads, under the fetcher's limits; a
    /// corrupt one is counted and reported, and is no entry.
    pub(super) fn stored(&self, url: &str) -> Stored {
        let cfg = &self.inner.cfg.cache;
        let (Some(cache), CacheMode::ReadWrite | CacheMode::ReadOnly) =
            (&self.inner.cache, cfg.mode)
        else {
            return Stored::Nothing;
        };
        match cache.get(url) {
            Lookup::Hit(entry) => match self.limited(entry) {
                Limited::Entry(entry)
                    if cfg.mode == CacheMode::ReadOnly || entry.is_fresh(cfg.ttl) =>
                {
                    Stored::Fresh(entry)
                }
                Limited::Entry(entry) => Stored::Stale(entry),
                Limited::Refused(outcome) => Stored::Refused(outcome),
                Limited::Short => Stored::Nothing,
            },
            Lookup::Miss => Stored::Nothing,
            Lookup::Corrupt(why) => {
                Stats::add(&self.inner.stats.cache_corrupt, 1);
                tracing::warn!("corrupt cache entry for {url}, treated as a miss: {why}");
                Stored::Nothing
            }
        }
    }

    /// An entry served as the response, counted as a cache hit.
    pub(super) fn serve(&self, entry: CacheEntry) -> Response {
        Stats::add(&self.inner.stats.cache_hits, 1);
        self.entry_response(entry)
    }

    /// A cache entry as the response a fetch under this fetcher's limits makes of it.
    pub(super) fn entry_response(&self, entry: CacheEntry) -> Response {
        self.within_limit(Response {
            final_url: entry.meta.final_url,
            status: entry.meta.status,
            headers: entry.meta.headers,
            body: entry.body,
            truncated: entry.meta.truncated,
            redirects: entry.meta.redirects,
            fetched_at: entry.meta.fetched_at,
        })
    }

    /// Writes the entry of `url` when the cache mode writes.
    pub(super) fn store(&self, url: &str, resp: &Response, site: Option<&SiteFetch>) {
        let Some(cache) = &self.inner.cache else {
            return;
        };
        if !matches!(
            self.inner.cfg.cache.mode,
            CacheMode::ReadWrite | CacheMode::WriteOnly
        ) {
            return;
        }
        let meta = CacheMeta {
            url: url.to_owned(),
            final_url: resp.final_url.clone(),
            status: resp.status,
            headers: resp.headers.clone(),
            redirects: resp.redirects.clone(),
            fetched_at: resp.fetched_at,
            stored_at_ms: now_ms(),
            etag: resp.header("etag").map(str::to_owned),
            last_modified: resp.header("last-modified").map(str::to_owned),
            truncated: resp.truncated,
            body_len: 0,
            body_xxh3: String::new(),
            body_sha256: String::new(),
            site_fetch: site.cloned(),
        };
        if let Err(e) = cache.put(meta, &resp.body) {
            tracing::warn!("cannot write the cache entry for {url}: {e}");
        }
    }

    /// Marks the entry of `url` fresh again after a 304, `site` its fetch from now on.
    pub(super) fn refresh(&self, url: &Url, entry: &CacheEntry, site: &SiteFetch) {
        if let Some(cache) = &self.inner.cache
            && let Err(e) = cache.refresh(entry, Some(site.clone()))
        {
            tracing::warn!("cannot refresh the cache entry for {url}: {e}");
        }
    }
}
