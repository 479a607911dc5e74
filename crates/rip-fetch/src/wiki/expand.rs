//! Template expansion: the template calls of a wiki page's infobox, expanded by the wiki
//! itself (`action=expandtemplates`), many pages' calls per request.
//!
//! A value holding a template call (`{{Coin|gp=2238|sp=7}}`) shows what the template's page
//! on that wiki says, which no offline table knows; rip-parse therefore shows such a value
//! only through the expansion carried on the page record (`wikiExpansions`). Values without
//! calls cost nothing: a page with none asks nothing.
//!
//! **Batching.** The calls of the pages of a revision batch are handed to one expander per
//! API, which holds them (and their pages) until [`MAX_TEXT`] bytes of calls or
//! [`MAX_HELD`] asks are waiting, or until no revision batch of the stage is being fetched
//! and nothing was asked for [`IDLE`]; then one request carries them all, each call once.
//! So the expansion costs a fraction of the revision requests, and memory stays bounded.
//! The request goes through [`Fetcher::call_api`] like the revision requests: same host
//! politeness, `maxlag`, retries and classification.
//!
//! **Caching.** A page's expansions are stored with its cache entry (a pseudo-header), so a
//! rerun from the cache asks nothing; a cached page without them (an earlier run whose
//! expansion failed, an earlier version) asks for them and the entry is stored again.
//!
//! **When it cannot be done** (the request failed after its retries, a bad answer, the
//! cache-only mode), the page goes on without the expansions and says why in
//! `wikiExpansionError`; rip-parse then reports each field it could not show.
//!
//! One context title per request: a template that reads the page's own name inside it
//! (`{{PAGENAME}}` in the template's source, not in the call) shows the first page's name
//! for every call of the request. `{{PAGENAME}}` written in a value is answered from the
//! page's title and never asked.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rip_http::{Fetcher, Outcome};
use tokio::sync::{mpsc, oneshot};
use url::Url;

use super::MAXLAG;

/// The pseudo-header holding a cached page's expansions (JSON: call → wikitext).
pub(super) const H_EXPANSIONS: &str = "x-wiki-expansions";

/// Bytes of calls that make a request go at once.
pub const MAX_TEXT: usize = 64 * 1024;

/// Asks (a revision batch, or a page from the cache) held at most before a request goes.
pub const MAX_HELD: usize = 200;

/// How long nothing must be asked, with no revision batch being fetched, before the held
/// calls are sent.
pub const IDLE: Duration = Duration::from_millis(50);

/// Expansions remembered between requests (calls repeated across pages are asked once).
const MEMO: usize = 100_000;

/// The calls a page needs expanded: those of its infobox's values, each once.
pub fn calls_of(title: &str, wikitext: &str) -> Vec<String> {
    let page = rip_wikitext::parse(title, wikitext);
    let Some(infobox) = page.infobox else {
        return Vec::new();
    };
    let mut calls: Vec<String> = Vec::new();
    for value in infobox.wikitext.values() {
        for call in rip_wikitext::template_calls(value) {
            if !calls.contains(&call) {
                calls.push(call);
            }
        }
    }
    calls
}

/// Each call's expansion, or why there is none.
pub type Expanded = Result<BTreeMap<String, String>, String>;

/// Counters of the expansion, for the summary.
#[derive(Debug, Default)]
pub struct ExpandStats {
    requests: AtomicU64,
    calls: AtomicU64,
    failed_pages: AtomicU64,
}

impl ExpandStats {
    /// `wikiExpandRequests`, `wikiExpandedCalls` (asked, each once per request),
    /// `wikiUnexpandedPages`.
    pub fn counters(&self) -> [(&'static str, u64); 3] {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        [
            ("wikiExpandRequests", g(&self.requests)),
            ("wikiExpandedCalls", g(&self.calls)),
            ("wikiUnexpandedPages", g(&self.failed_pages)),
        ]
    }

    /// A page goes on without (some of) its expansions.
    pub fn page_failed(&self) {
        self.failed_pages.fetch_add(1, Ordering::Relaxed);
    }
}

/// One expander per API, started when first asked.
#[derive(Debug, Default)]
pub struct Expander {
    apis: Mutex<HashMap<String, mpsc::UnboundedSender<Ask>>>,
    fetching: Arc<AtomicUsize>,
    /// Counters.
    pub stats: Arc<ExpandStats>,
}

/// A revision batch being fetched: the expanders wait for it before sending what they hold.
pub struct Fetching(Arc<AtomicUsize>);

impl Drop for Fetching {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Ask {
    calls: Vec<String>,
    title: String,
    reply: oneshot::Sender<Expanded>,
}

impl Expander {
    /// Marks a revision batch as being fetched until the guard is dropped.
    pub fn fetching(&self) -> Fetching {
        self.fetching.fetch_add(1, Ordering::SeqCst);
        Fetching(self.fetching.clone())
    }

    /// The expansions of `calls` (of the page `title`), asked of `api` with others.
    pub async fn expand(
        &self,
        fetcher: &Fetcher,
        api: &Url,
        title: &str,
        calls: Vec<String>,
    ) -> Expanded {
        if calls.is_empty() {
            return Ok(BTreeMap::new());
        }
        let (reply, answer) = oneshot::channel();
        let ask = Ask {
            calls,
            title: title.to_owned(),
            reply,
        };
        self.sender(fetcher, api)
            .send(ask)
            .map_err(|_| "the expander stopped".to_owned())?;
        answer
            .await
            .unwrap_or_else(|_| Err("the expander stopped".to_owned()))
    }

    fn sender(&self, fetcher: &Fetcher, api: &Url) -> mpsc::UnboundedSender<Ask> {
        let mut apis = self.apis.lock().unwrap_or_else(|p| p.into_inner());
        let sender = apis.entry(api.as_str().to_owned()).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            let batcher = ApiExpander {
                fetcher: fetcher.clone(),
                api: api.clone(),
                fetching: self.fetching.clone(),
                stats: self.stats.clone(),
                memo: HashMap::new(),
            };
            tokio::spawn(batcher.run(rx));
            tx
        });
        sender.clone()
    }
}

/// The loop of one API's expander.
struct ApiExpander {
    fetcher: Fetcher,
    api: Url,
    fetching: Arc<AtomicUsize>,
    stats: Arc<ExpandStats>,
    memo: HashMap<String, String>,
}

impl ApiExpander {
    async fn run(mut self, mut asks: mpsc::UnboundedReceiver<Ask>) {
        let mut held: Vec<Ask> = Vec::new();
        let mut bytes = 0;
        loop {
            let next = if held.is_empty() {
                asks.recv().await
            } else {
                match tokio::time::timeout(IDLE, asks.recv()).await {
                    Ok(next) => next,
                    Err(_idle) if self.fetching.load(Ordering::SeqCst) == 0 => {
                        self.send(std::mem::take(&mut held)).await;
                        bytes = 0;
                        continue;
                    }
                    Err(_idle) => continue,
                }
            };
            let Some(ask) = next else {
                self.send(held).await;
                return;
            };
            bytes += ask.calls.iter().map(String::len).sum::<usize>();
            held.push(ask);
            if bytes >= MAX_TEXT || held.len() >= MAX_HELD {
                self.send(std::mem::take(&mut held)).await;
                bytes = 0;
            }
        }
    }

    /// One request for the calls of `held` not remembered, then every ask's answer.
    async fn send(&mut self, held: Vec<Ask>) {
        let Some(title) = held.first().map(|a| a.title.clone()) else {
            return;
        };
        let mut known: HashMap<String, String> = HashMap::new();
        let mut unknown: Vec<String> = Vec::new();
        for call in held.iter().flat_map(|a| &a.calls) {
            match self.memo.get(call) {
                Some(text) => {
                    known.insert(call.clone(), text.clone());
                }
                None if !unknown.contains(call) => unknown.push(call.clone()),
                None => {}
            }
        }
        let asked = match unknown.is_empty() {
            true => Ok(Vec::new()),
            false => self.request(&title, &unknown).await,
        };
        let failed = asked.as_ref().err().cloned();
        let fresh: Vec<(String, String)> =
            unknown.into_iter().zip(asked.unwrap_or_default()).collect();
        known.extend(fresh.iter().cloned());
        for ask in held {
            let answer = match &failed {
                None => Ok(ask
                    .calls
                    .iter()
                    .filter_map(|c| Some((c.clone(), known.get(c)?.clone())))
                    .collect()),
                Some(why) => Err(why.clone()),
            };
            let _ = ask.reply.send(answer);
        }
        if self.memo.len() + fresh.len() > MEMO {
            self.memo.clear();
        }
        self.memo.extend(fresh);
    }

    /// Asks the wiki for `calls` (as on the page `title`): their expansions, in order.
    async fn request(&mut self, title: &str, calls: &[String]) -> Result<Vec<String>, String> {
        let refs: Vec<&str> = calls.iter().map(String::as_str).collect();
        let batch =
            rip_mediawiki::expand_request(&self.api, &refs, title, Some(MAXLAG), fastrand::u64(..));
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        self.stats
            .calls
            .fetch_add(calls.len() as u64, Ordering::Relaxed);
        let fetched = self
            .fetcher
            .call_api(
                batch.request.url.as_str(),
                batch.request.form.as_deref(),
                &rip_mediawiki::http::check,
            )
            .await;
        match fetched.outcome {
            Outcome::Page(resp) => batch
                .parse(&resp.body)
                .map_err(|e| format!("expandtemplates: {e}")),
            Outcome::Failure(f) => Err(format!("expandtemplates: {}", f.class.message)),
            Outcome::Skipped(s) => Err(format!("expandtemplates not sent: {}", s.reason)),
        }
    }
}
