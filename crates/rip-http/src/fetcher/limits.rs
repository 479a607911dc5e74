//! The limits of a fetch, applied to what the cache answers: a cache hit is what a fetch
//! under this configuration would have made of the response the entry stores, not what the
//! fetch that stored it made under its own limits.
//!
//! - **Body size**: a body longer than `max_body` is cut there and marked `truncated`, as
//!   the client cuts a body it reads. An entry cut shorter than `max_body` (stored under a
//!   smaller limit; a cut at a character boundary within three bytes of it counts as this
//!   limit's) is not served: a fetch would read more of the page, so one is made; in
//!   `read-only` mode, where no request is made, it is served as it is, `truncated`.
//! - **Redirects**: the stored chain is replayed through the checks each `Location` of a
//!   fetch goes through (length, scheme, loops, `max_redirects`, the redirect scope); a
//!   chain they refuse ends as the fetch would: a `validation.*` failure, or a skip out of
//!   scope (without the redirect's status, which the entry does not keep).
//! - The URL's own checks (length, scheme, host) come before the cache, as for any fetch.
//!
//! robots.txt is not asked again for a cache hit: its answer was given when the entry was
//! fetched (a fresh entry is served without politeness or robots.txt, see the crate docs).

use url::Url;

use super::Fetcher;
use super::hops::Chain;
use crate::cache::CacheEntry;
use crate::config::{CacheMode, ClientConfig};
use crate::outcome::{FetchFailure, Outcome, Response, Skip};

/// How much shorter than the limit a body cut at that limit may be: a cut at a character
/// boundary (rip-render's DOM) drops at most the three first bytes of a UTF-8 character.
const CHAR_SLACK: usize = 3;

/// What the limits make of a cache entry.
pub(super) enum Limited {
    /// The entry, to be served under these limits ([`Fetcher::within_limit`]).
    Entry(CacheEntry),
    /// The entry's body was cut shorter than `max_body` allows: a fetch would read more.
    Short,
    /// A fetch under these limits would not have followed the stored redirect chain: how
    /// it would have ended instead.
    Refused(Outcome),
}

impl Fetcher {
    /// Whether `entry` may be served under this fetcher's limits (see the module docs).
    pub(super) fn limited(&self, entry: CacheEntry) -> Limited {
        let client = &self.inner.cfg.client;
        if let Some(refused) = replay(&entry.meta.redirects, &entry.meta.final_url, client) {
            return Limited::Refused(match refused {
                Ok(skip) => Outcome::Skipped(skip),
                Err(f) => Outcome::Failure(f),
            });
        }
        let read_only = self.inner.cfg.cache.mode == CacheMode::ReadOnly;
        let short = entry.body.len() + CHAR_SLACK < client.max_body;
        if entry.meta.truncated && short && !read_only {
            return Limited::Short;
        }
        Limited::Entry(entry)
    }

    /// An entry's response as a fetch would have it: its body cut at `max_body`, then
    /// marked `truncated`. The entry in the cache keeps its whole body (a revalidation
    /// writes it back as it was).
    pub(super) fn within_limit(&self, mut resp: Response) -> Response {
        let max = self.inner.cfg.client.max_body;
        if resp.body.len() > max {
            resp.body.truncate(max);
            resp.truncated = true;
        }
        resp
    }
}

/// The stored chain (`redirects`, the URLs that answered with a redirect, first first, and
/// where it ended) through the checks of each hop of a fetch: `None` when every hop passes,
/// else how the attempt would have ended (a skip, or a failure). A chain that does not
/// parse is not refused (the entry was written by a fetch, which parsed each URL).
fn replay(
    redirects: &[String],
    final_url: &str,
    client: &ClientConfig,
) -> Option<Result<Skip, FetchFailure>> {
    let (first, rest) = redirects.split_first()?;
    let start = Url::parse(first).ok()?;
    let mut chain = Chain::new(&start);
    for next in rest.iter().map(String::as_str).chain([final_url]) {
        match chain.next(next, client) {
            Ok(url) => chain.follow(url),
            Err(refusal) => return Some(chain.refusal(refusal, None)),
        }
    }
    None
}
