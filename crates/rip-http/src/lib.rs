#![deny(missing_docs)]
//! `rip-http`: all HTTP of ripperoni, in one crate.
//!
//! # The entry point: [`Fetcher`]
//!
//! Build one [`Fetcher`] per process from an [`HttpConfig`], share it (it is `Clone`), and
//! call [`Fetcher::fetch`] (or [`Fetcher::fetch_with`] for a `notBefore`) for each URL
//! ([`Fetcher::fetch_parsed`] when the caller has parsed it already). A fetch never panics
//! and never returns `Err`: it returns a [`Fetched`], whose [`Outcome`] is
//!
//! - [`Outcome::Page`]: a 2xx [`Response`] (from the network or the cache; body
//!   decompressed and bounded, `truncated` when cut; the redirect chain);
//! - [`Outcome::Failure`]: a [`FetchFailure`], classified ([`Classification`]: category,
//!   retryability, stable code, message, Retry-After hint), after the retries;
//! - [`Outcome::Skipped`]: a [`Skip`], not fetched on purpose (robots.txt, or a redirect
//!   out of scope), which becomes an `expected` record;
//!
//! and whose [`RequestStats`] say what it cost (HTTP requests, retries, cache hit,
//! revalidation, time, waits) and, in `site`, what the site did for the response: the
//! [`rip_core::SiteFetch`] this fetch made (statuses, retried faults, waits, latency,
//! named by [`HttpConfig::stage`]), or for a cache hit the one stored with the entry, so
//! that a stage reading pages another stage fetched still reports the site's story.
//! [`Fetcher::stats`] sums them over the process.
//! A [`WireTap`] set with [`Fetcher::set_tap`] is told of every request sent and what came
//! back (an archive of the exchanges: `rip-fetch --warc`).
//! [`records::record_for`] turns a `Fetched` into the `page` / `failure` / `expected`
//! record for a [`rip_core::Ref`], decoding text ([`decode`]) and keeping the ref's context.
//!
//! # API calls
//!
//! [`Fetcher::call_api`] sends one API request (GET, or a POST form when the query is too
//! long for a URL) under the same politeness, retries and classification, without
//! robots.txt and without the cache; a `check` closure reads each 2xx answer and may call
//! it a failure (MediaWiki reports `maxlag` in a 200 body), which is then retried like an
//! HTTP failure with its Retry-After. Callers that batch several items per request cache
//! each item under its own URL with [`Fetcher::remember`] and [`Fetcher::cached`], the
//! request's [`Fetcher::site_fetch`] beside it.
//!
//! # The path of a fetch
//!
//! 1. **URL checks**: http(s) with a host, at most `max_url_len` bytes; else `VALIDATION`.
//! 2. **`notBefore`**: waited for.
//! 3. **Cache** ([`cache`]): a fresh entry is returned at once, bypassing politeness; a
//!    stale one with an `ETag`/`Last-Modified` is revalidated (a 304 refreshes it); in
//!    `read-only` mode a miss is a failure (`cache.miss`), never a request. Corrupt entries
//!    are misses, counted as `cacheCorrupt`. What an entry gives is what this fetcher's
//!    limits make of it, as of a response from the site: the body cut at `max_body`
//!    (`truncated`), the redirect chain checked against `max_redirects` and the scope.
//! 4. **robots.txt** ([`robots`]): fetched once per origin (through this same path, so
//!    cached and polite); 4xx allows all; 5xx, 429 or a failed read make the URL a
//!    retryable failure (`robots.unreachable`) rather than guessing, and a host that does
//!    not answer at all fails the URL with its own cause (`network.refused`, …); a
//!    disallowed URL is a [`Skip`] naming the rule. `Crawl-delay` becomes the host's gap.
//!    Callers that decide before fetching ask the same question:
//!    [`Fetcher::disallowed_by_robots`].
//! 5. **Politeness** ([`politeness`]): the host's concurrency permit, its start slot
//!    (min gap + jitter, or Crawl-delay), the global rate, the total concurrency permit; a
//!    host whose circuit is open fails at once (`circuit.open`, retryable, with the time
//!    left as its Retry-After hint). Slots are kept in `<cache dir>/hosts/` when there is a
//!    cache folder, so every process sharing it shares each host's budget ([`slots`]).
//! 6. **Request** ([`client`]): the address connected to checked by the network policy
//!    ([`network`]: a refused one is `network.denied`, `PERMANENT`, never retried);
//!    connect, read-idle and total timeouts; body limit after decompression; redirects followed by hand (http(s) only, `max_redirects` hops, loops
//!    detected, scope checked, robots.txt checked per hop, each hop polite).
//! 7. **Classification** ([`classify`]): user rules first, then 429 → `THROTTLED`, 5xx →
//!    `TRANSIENT`, 4xx → `PERMANENT`, resets → `NETWORK`, timeouts → `TIMEOUT`, …
//! 8. **Retry** ([`retry`]): retryable failures are tried again up to `max_attempts`
//!    (first included) after a decorrelated-jitter backoff; a Retry-After (seconds or
//!    HTTP-date, capped at `max_retry_after`) replaces the backoff and pushes back the
//!    *whole host's* schedule, so no request to it starts earlier, in this process or
//!    another; the next attempt also waits for its politeness slot, so no wait is ever
//!    shorter than the host's gap.
//!
//! # Several processes
//!
//! Everything that must hold across processes goes through the cache folder: entries are
//! written by atomic rename, and each host's next allowed start is a small file updated
//! under `flock`. Two `rip-fetch` in one pipeline, or eight under `xargs -P8`, therefore
//! together keep each host's gap, at the site: a request does not start while the previous
//! one to its host is unanswered, whichever process sent it (see [`slots`]), so a send that
//! slipped late on a busy machine pushes the next one back. Concurrency caps and the
//! circuit breaker are per process.

pub mod cache;
pub mod classify;
pub mod client;
pub mod config;
pub mod decode;
mod fetcher;
pub mod network;
pub mod outcome;
pub mod politeness;
pub mod records;
pub mod retry;
pub mod robots;
pub mod slots;
pub mod wire;

pub use classify::{Classification, Classifier, ClassifyRule, RuleError};
pub use client::BuildError;
pub use config::{
    BackoffKind, CacheConfig, CacheMode, ClientConfig, HttpConfig, PolitenessConfig, RedirectScope,
    RetryConfig, UnknownCacheMode,
};
pub use fetcher::{FetchOptions, Fetcher, host_key};
pub use network::{Denied, IpNet, NetworkConfig, NetworkPolicy};
pub use outcome::{FetchFailure, Fetched, Outcome, RequestStats, Response, Skip, StatsSnapshot};
pub use robots::{Robots, RobotsRules, Verdict};
pub use wire::{WireAnswer, WireExchange, WireTap};
