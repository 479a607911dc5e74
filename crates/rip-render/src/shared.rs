//! Subresources shared between pages: a script bundle, a stylesheet or a JSON file that
//! many pages ask for is fetched once, and the pages after the first are answered with
//! that response (`Fetch.fulfillRequest`) without a request.
//!
//! The same rules as the stage's cache (`--cache`, `--ttl`; see rip-http's cache): pages
//! share only when the cache mode reads (`read-write`, `read-only`; not `off`, nor
//! `write-only`, whose archive wants every exchange on the wire), and only for the cache's
//! time to live. Two more things the disk cache alone does not give:
//!
//! - **one fetch at a time per URL**: pages that ask for a URL while it is being fetched
//!   for another wait for that fetch instead of making their own (the first pages of a
//!   crawl all ask for the bundle at once); when it fails, each fetches it itself, so a
//!   failure is each page's own, as before;
//! - **in memory**: the response is served without reading the cache folder again, up to
//!   [`MOST_BYTES`] of bodies (then the disk cache serves the rest).
//!
//! Isolation is unchanged: every request goes through the stage's one HTTP client
//! whichever page makes it, and no browser state (cookies, storage) comes with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rip_http::{CacheMode, FetchOptions, Fetched, Fetcher, Outcome, RequestStats, Response};
use tokio::sync::watch;
use tokio::time::Instant;

/// Bytes of bodies kept in memory at most.
pub const MOST_BYTES: usize = 64 << 20;
/// A body larger than this is not kept in memory (the disk cache keeps it).
const MOST_ONE: usize = 8 << 20;

/// What a fetch for other pages ended with: the response to share, or nothing (each
/// fetches it itself).
type Flight = watch::Receiver<Option<Option<Arc<Response>>>>;

/// The subresources of a renderer's pages.
pub(crate) struct Shared {
    /// Pages share (the cache mode reads).
    on: bool,
    ttl: Option<Duration>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    kept: HashMap<String, (Arc<Response>, Instant)>,
    bytes: usize,
    flights: HashMap<String, Flight>,
    /// Requests answered with another page's response.
    served: u64,
}

/// Ends a flight when dropped: the pages waiting get its response, or fetch themselves
/// (also when the page that fetched went away mid-fetch).
struct Leader<'a> {
    shared: &'a Shared,
    url: &'a str,
    tx: watch::Sender<Option<Option<Arc<Response>>>>,
}

impl Drop for Leader<'_> {
    fn drop(&mut self) {
        self.shared.with(|s| s.flights.remove(self.url));
        self.tx.send_if_modified(|v| {
            if v.is_none() {
                *v = Some(None);
                true
            } else {
                false
            }
        });
    }
}

impl Shared {
    /// Sharing as the fetcher's cache mode and time to live allow.
    pub fn new(fetcher: &Fetcher) -> Self {
        let cache = &fetcher.config().cache;
        Self {
            on: matches!(cache.mode, CacheMode::ReadWrite | CacheMode::ReadOnly),
            ttl: cache.ttl,
            state: Mutex::new(State::default()),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Requests answered with a response another page's request got.
    pub fn served(&self) -> u64 {
        self.with(|s| s.served)
    }

    /// The response for `url`: kept from another page's fetch, that fetch's when one is
    /// under way, or fetched now with `fetcher`.
    pub async fn fetch(&self, fetcher: &Fetcher, url: &str) -> Fetched {
        if !self.on {
            return fetcher.fetch_with(url, &FetchOptions::default()).await;
        }
        enum Step {
            Kept(Arc<Response>),
            Wait(Flight),
            Lead(watch::Sender<Option<Option<Arc<Response>>>>),
        }
        let step = self.with(|s| {
            if let Some((resp, at)) = s.kept.get(url) {
                if self.ttl.is_none_or(|ttl| at.elapsed() < ttl) {
                    s.served += 1;
                    return Step::Kept(resp.clone());
                }
                let (resp, _) = s.kept.remove(url).expect("just seen");
                s.bytes -= resp.body.len();
            }
            if let Some(flight) = s.flights.get(url) {
                return Step::Wait(flight.clone());
            }
            let (tx, rx) = watch::channel(None);
            s.flights.insert(url.to_owned(), rx);
            Step::Lead(tx)
        });
        match step {
            Step::Kept(resp) => page(resp),
            Step::Wait(mut flight) => {
                let got = flight
                    .wait_for(Option::is_some)
                    .await
                    .ok()
                    .and_then(|v| v.clone());
                match got.flatten() {
                    Some(resp) => {
                        self.with(|s| s.served += 1);
                        page(resp)
                    }
                    None => fetcher.fetch_with(url, &FetchOptions::default()).await,
                }
            }
            Step::Lead(tx) => {
                let leader = Leader {
                    shared: self,
                    url,
                    tx,
                };
                let fetched = fetcher.fetch_with(url, &FetchOptions::default()).await;
                let share = match &fetched.outcome {
                    Outcome::Page(resp) if !resp.truncated => Some(Arc::new(resp.clone())),
                    _ => None,
                };
                if let Some(resp) = &share {
                    self.keep(url, resp.clone());
                }
                leader.tx.send_replace(Some(share));
                fetched
            }
        }
    }

    fn keep(&self, url: &str, resp: Arc<Response>) {
        let len = resp.body.len();
        self.with(|s| {
            if len <= MOST_ONE && s.bytes + len <= MOST_BYTES {
                s.bytes += len;
                if let Some((old, _)) = s.kept.insert(url.to_owned(), (resp, Instant::now())) {
                    s.bytes -= old.body.len();
                }
            }
        });
    }
}

/// A shared response as a fetch's page: no request was made for it.
fn page(resp: Arc<Response>) -> Fetched {
    let stats = RequestStats {
        from_cache: true,
        ..RequestStats::default()
    };
    Fetched {
        outcome: Outcome::Page(Arc::unwrap_or_clone(resp)),
        stats,
    }
}
