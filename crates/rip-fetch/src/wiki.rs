//! MediaWiki refs: fetched up to 50 titles per API request.
//!
//! A ref carrying both `title` and `wikiApi` is a wiki page. Instead of a GET of its `url`
//! (the article's HTML), its current wikitext is asked from the API with
//! `action=query&prop=revisions&rvslots=main&redirects=1&maxlag=5`, together with up to 49
//! other titles of the same API ([`rip_mediawiki::revisions_request`]; a POST form when the
//! titles make the URL too long). The request goes through [`Fetcher::call_api`]: the same
//! per-host politeness, retries and classification as any fetch; an API error in the 200
//! body (`maxlag`, `readonly`, …) is classified by its code ([`rip_mediawiki::classify`])
//! and a THROTTLED one retried after its `Retry-After`.
//!
//! Each title of the answer, mapped back through MediaWiki's normalisation and redirects,
//! becomes one record for its ref:
//!
//! - found: a `page` whose body is the wikitext, `contentType: text/x-wiki; charset=utf-8`,
//!   `finalUrl` the article URL of the page the title led to, `redirects` the redirect
//!   page's URL when it was one, and `pageid`, `revid`, `wikiTitle`;
//! - missing (never created, or deleted): a `failure`, PERMANENT, not retryable, code
//!   `wiki.missing`;
//! - invalid (a bad title, an interwiki or special page): a `failure`, VALIDATION,
//!   `wiki.invalid`;
//! - an answer MediaWiki cut at its size limit: the same titles again with its `continue`,
//!   at most [`MAX_CONTINUES`] times; titles still without content after that are
//!   TRANSIENT failures (`wiki.incomplete`).
//!
//! A request that fails after its retries (HTTP 5xx, a reset, a lasting `maxlag`) fails every
//! title of the batch with that classification; an answer that is not the API's
//! (`wiki.badAnswer`) likewise.
//!
//! The template calls of each found page's infobox are expanded by the wiki before the page
//! is written (`expand.rs`: many pages' calls per request), and carried on it as
//! `wikiExpansions`, or `wikiExpansionError` saying why not.
//!
//! Each found page is cached under its ref's URL ([`Fetcher::remember`]), so a later run
//! answers it from the cache without asking the wiki ([`Fetcher::cached`]), and in
//! `read-only` cache mode a title not in the cache is a `cache.miss` failure, never a
//! request.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use chrono::Utc;
use rip_core::{ErrorCategory, Page, Phase, Record, Ref};
use rip_http::{Classification, FetchFailure, Fetched, Fetcher, Outcome, RequestStats, Response};
use rip_mediawiki::{
    AnswerError, Continue, MAX_BATCH, Revision, SiteInfo, TitleOutcome, WIKITEXT_CONTENT_TYPE,
};
use tokio::sync::OnceCell;
use url::Url;

use crate::STAGE;

mod expand;
pub use expand::{ExpandStats, MAX_HELD, MAX_TEXT};
use expand::{Expanded, H_EXPANSIONS, calls_of};

/// The `maxlag` sent with every batch (seconds), as Wikimedia asks of bots.
pub const MAXLAG: u32 = 5;

/// How many times a cut answer is continued before the titles still missing are given up.
pub const MAX_CONTINUES: usize = 20;

/// Pseudo-headers of a cached wiki page (never sent or received: the cache entry's own).
const H_PAGEID: &str = "x-wiki-pageid";
const H_REVID: &str = "x-wiki-revid";
const H_TITLE: &str = "x-wiki-title";

/// True when a ref is a wiki page: it has a `title` and a `wikiApi`.
pub fn is_wiki(r: &Ref) -> bool {
    r.context.title.is_some() && r.context.wiki_api.is_some()
}

/// Counters of the wiki path, for the summary.
#[derive(Debug, Default)]
pub struct WikiStats {
    batches: AtomicU64,
    titles: AtomicU64,
    missing: AtomicU64,
    invalid: AtomicU64,
    failures: [AtomicU64; 8],
}

impl WikiStats {
    fn add(c: &AtomicU64, n: u64) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    fn failed(&self, c: ErrorCategory) {
        let i = ErrorCategory::ALL.iter().position(|x| *x == c).unwrap_or(7);
        Self::add(&self.failures[i], 1);
    }

    /// `(name, value)` counters: `wikiBatches` (revision requests, continuations
    /// included), `wikiTitles`, `wikiMissing`, `wikiInvalid`, and `failed.<CATEGORY>` of wiki
    /// titles (to add to the HTTP stack's).
    pub fn counters(&self) -> Vec<(String, u64)> {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let mut v = vec![
            ("wikiBatches".to_owned(), g(&self.batches)),
            ("wikiTitles".to_owned(), g(&self.titles)),
            ("wikiMissing".to_owned(), g(&self.missing)),
            ("wikiInvalid".to_owned(), g(&self.invalid)),
        ];
        for (c, n) in ErrorCategory::ALL.iter().zip(&self.failures) {
            v.push((format!("failed.{c}"), g(n)));
        }
        v
    }
}

/// What the wiki path shares between batches: site information per API (fetched once,
/// when a title was normalised or redirected and its article URL is needed) and counters.
#[derive(Debug, Default)]
pub struct WikiState {
    sites: std::sync::Mutex<HashMap<String, Arc<OnceCell<Option<SiteInfo>>>>>,
    /// Counters.
    pub stats: WikiStats,
    /// Template expansion of infobox values, batched per API.
    expander: expand::Expander,
    /// Whether to expand (`--no-wiki-expand` turns it off).
    expand: bool,
}

impl WikiState {
    /// The state of a stage; `expand` false: no template expansion (`--no-wiki-expand`).
    pub fn new(expand: bool) -> Self {
        Self {
            expand,
            ..Self::default()
        }
    }

    /// The template calls of a page to expand: none with `--no-wiki-expand`.
    fn calls_of(&self, title: &str, wikitext: &str) -> Vec<String> {
        match self.expand {
            true => calls_of(title, wikitext),
            false => Vec::new(),
        }
    }

    /// The template expansion's counters.
    pub fn expand_stats(&self) -> &ExpandStats {
        &self.expander.stats
    }
}

impl WikiState {
    async fn site(&self, fetcher: &Fetcher, api: &Url) -> Option<SiteInfo> {
        let cell = {
            let mut map = self.sites.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(api.as_str().to_owned()).or_default().clone()
        };
        cell.get_or_init(|| async {
            let req = rip_mediawiki::siteinfo_request(api);
            let fetched = fetcher.call_api(req.url.as_str(), None, &rip_mediawiki::http::check).await;
            match fetched.outcome {
                Outcome::Page(resp) => match rip_mediawiki::parse_siteinfo(&resp.body) {
                    Ok(info) => Some(info),
                    Err(e) => {
                        tracing::warn!("{api}: siteinfo: {e}; article URLs of redirects fall back to the ref's URL");
                        None
                    }
                },
                Outcome::Failure(f) => {
                    tracing::warn!("{api}: siteinfo failed: {}; article URLs of redirects fall back to the ref's URL", f.class.message);
                    None
                }
                Outcome::Skipped(_) => None,
            }
        })
        .await
        .clone()
    }
}

fn classified(category: ErrorCategory, code: &str, message: String) -> FetchFailure {
    FetchFailure {
        class: Classification {
            category,
            retryable: category.retryable_by_default(),
            code: code.to_owned(),
            message,
            retry_after: None,
        },
        status: None,
        final_url: None,
        content_type: None,
        body: None,
    }
}

/// The cache-or-wait step before a ref joins a batch: waits for its `notBefore`, then
/// answers it from the cache when it can (asking for the expansions the cached page lacks).
/// `Ok(ref)`: it needs the API; `Err(record)`: done.
pub async fn prepare(fetcher: &Fetcher, state: &WikiState, r: Ref) -> Result<Ref, Record> {
    if let Some(nb) = r.not_before
        && let Ok(wait) = (nb - Utc::now()).to_std()
    {
        tokio::time::sleep(wait).await;
    }
    let start = tokio::time::Instant::now();
    if let Some((resp, site)) = fetcher.cached(&r.url).await {
        let stats = RequestStats {
            from_cache: true,
            elapsed: start.elapsed(),
            site,
            ..Default::default()
        };
        let page = cached_page(fetcher, state, &r, resp, &stats).await;
        return Err(Record::Page(page));
    }
    if fetcher.cache_only() {
        let f = classified(
            ErrorCategory::Resource,
            "cache.miss",
            "not in the cache (cache mode read-only: no network request)".into(),
        );
        let stats = RequestStats::default();
        return Err(Record::Failure(rip_http::records::failure_record(
            &r,
            &f,
            &stats,
            Phase::Fetch,
            STAGE,
        )));
    }
    Ok(r)
}

/// The page of a cached response: the expansions stored with it, and those it lacks asked
/// for (and stored) unless the cache mode forbids requests.
async fn cached_page(
    fetcher: &Fetcher,
    state: &WikiState,
    r: &Ref,
    mut resp: Response,
    stats: &RequestStats,
) -> Page {
    let title = resp.header(H_TITLE).unwrap_or(title_of(r)).to_owned();
    let calls = state.calls_of(&title, &String::from_utf8_lossy(&resp.body));
    let stored: BTreeMap<String, String> = resp
        .header(H_EXPANSIONS)
        .and_then(|json| serde_json::from_str(json).ok())
        .unwrap_or_default();
    let lacking: Vec<String> = calls
        .iter()
        .filter(|c| !stored.contains_key(*c))
        .cloned()
        .collect();
    let expanded = if lacking.is_empty() {
        Ok(stored)
    } else if fetcher.cache_only() {
        Err("not expanded: cache mode read-only (no network request)".to_owned())
    } else {
        let api = r
            .context
            .wiki_api
            .as_deref()
            .and_then(|a| Url::parse(a).ok());
        match api {
            Some(api) => {
                state
                    .expander
                    .expand(fetcher, &api, &title, calls.clone())
                    .await
            }
            None => Err("not expanded: the ref's wikiApi is not a URL".to_owned()),
        }
    };
    let complete = store_expansions(&mut resp, &calls, &expanded);
    if complete && !lacking.is_empty() {
        fetcher.remember(&r.url, &resp, stats.site.as_ref()).await;
    }
    expanded_page(state, r, &resp, stats, &calls, expanded)
}

/// True when a ref should go through [`prepare`] before joining a batch.
pub fn needs_prepare(fetcher: &Fetcher, r: &Ref) -> bool {
    use rip_http::CacheMode;
    let reads = matches!(
        fetcher.config().cache.mode,
        CacheMode::ReadWrite | CacheMode::ReadOnly
    ) && fetcher.config().cache.dir.is_some();
    reads || r.not_before.is_some_and(|nb| nb > Utc::now())
}

/// A page record from a response the wiki path built (fresh or from the cache).
fn page_from_response(r: &Ref, resp: &Response, stats: &RequestStats) -> Page {
    let mut page = rip_http::records::page_record(r, resp, stats);
    page.pageid = resp.header(H_PAGEID).and_then(|v| v.parse().ok());
    page.revid = resp.header(H_REVID).and_then(|v| v.parse().ok());
    page.wiki_title = resp.header(H_TITLE).map(str::to_owned);
    page
}

/// The page record of `resp` with the expansions of its `calls` (or why there are none).
fn expanded_page(
    state: &WikiState,
    r: &Ref,
    resp: &Response,
    stats: &RequestStats,
    calls: &[String],
    expanded: Expanded,
) -> Page {
    let mut page = page_from_response(r, resp, stats);
    match expanded {
        Ok(mut map) => {
            map.retain(|call, _| calls.contains(call));
            if map.len() < calls.len() {
                state.expander.stats.page_failed();
                page.wiki_expansion_error = Some("the wiki's answer lacks some calls".into());
            }
            page.wiki_expansions = map;
        }
        Err(why) => {
            state.expander.stats.page_failed();
            page.wiki_expansion_error = Some(why);
        }
    }
    page
}

/// Stores the expansions of `calls` with `resp` (for the cache) when every call has one;
/// true then.
fn store_expansions(resp: &mut Response, calls: &[String], expanded: &Expanded) -> bool {
    let Ok(map) = expanded else {
        return false;
    };
    let mine: BTreeMap<&String, &String> = map.iter().filter(|(c, _)| calls.contains(c)).collect();
    if mine.len() < calls.len() {
        return false;
    }
    resp.headers.retain(|(k, _)| k != H_EXPANSIONS);
    if !mine.is_empty() {
        let json = serde_json::to_string(&mine).unwrap_or_default();
        resp.headers.push((H_EXPANSIONS.to_owned(), json));
    }
    true
}

/// Fetches one batch (at most [`MAX_BATCH`] refs of one API) and returns one record per
/// ref, tagged with its sequence number.
pub async fn fetch_batch(
    fetcher: &Fetcher,
    state: &WikiState,
    api: &str,
    batch: Vec<(u64, Ref)>,
) -> Vec<(u64, Record)> {
    debug_assert!(batch.len() <= MAX_BATCH);
    WikiStats::add(&state.stats.titles, batch.len() as u64);
    let api_url = match Url::parse(api) {
        Ok(u) => u,
        Err(e) => {
            let f = classified(
                ErrorCategory::Validation,
                "validation.url",
                format!("wikiApi `{api}` is not a URL: {e}"),
            );
            return fail_all(state, batch, &f, &RequestStats::default());
        }
    };
    let titles = titles_of(&batch);
    let fetching = state.expander.fetching();
    let mut answers = Answers::ask(fetcher, state, &api_url, &titles).await;
    // Article URLs are built from the site's settings, asked once per API, and only when
    // a title led elsewhere (normalised or redirected): otherwise the ref's URL is it.
    let site = if answers.led_elsewhere(&batch) {
        state.site(fetcher, &api_url).await
    } else {
        None
    };
    // Every page of the batch came from its requests: that is each one's site fetch.
    answers.total.site = Some(fetcher.site_fetch(&answers.total));
    let mut out = Vec::with_capacity(batch.len());
    let mut found = Vec::new();
    for (seq, r) in batch {
        match answers.outcomes.get(title_of(&r)) {
            Some(TitleOutcome::Found(rev)) => {
                let resp = response_for(&r, rev, site.as_ref(), &api_url, answers.fetched_at);
                let calls = state.calls_of(&rev.title, &rev.content);
                found.push((seq, r, resp, calls));
            }
            _ => out.push((
                seq,
                failure(state, &r, &answers.why_not(state, &r), &answers.total),
            )),
        }
    }
    drop(fetching);
    let expanded = expand_batch(fetcher, state, &api_url, &found).await;
    for (seq, r, mut resp, calls) in found {
        store_expansions(&mut resp, &calls, &expanded);
        fetcher
            .remember(&r.url, &resp, answers.total.site.as_ref())
            .await;
        let page = expanded_page(state, &r, &resp, &answers.total, &calls, expanded.clone());
        out.push((seq, Record::Page(page)));
    }
    out
}

/// The expansions of every call of the found pages of a batch, asked in one go.
async fn expand_batch(
    fetcher: &Fetcher,
    state: &WikiState,
    api: &Url,
    found: &[(u64, Ref, Response, Vec<String>)],
) -> Expanded {
    let mut calls: Vec<String> = Vec::new();
    let mut title = None;
    for (_, _, resp, page_calls) in found {
        if !page_calls.is_empty() && title.is_none() {
            title = resp.header(H_TITLE).map(str::to_owned);
        }
        for call in page_calls {
            if !calls.contains(call) {
                calls.push(call.clone());
            }
        }
    }
    let title = title.unwrap_or_default();
    state.expander.expand(fetcher, api, &title, calls).await
}

/// The title a wiki ref asks for (empty when it has none).
fn title_of(r: &Ref) -> &str {
    r.context.title.as_deref().unwrap_or_default()
}

/// The titles of a batch in request order, each once (two refs may name one title).
fn titles_of(batch: &[(u64, Ref)]) -> Vec<String> {
    let mut titles: Vec<String> = Vec::new();
    for (_, r) in batch {
        let t = title_of(r);
        if !titles.iter().any(|known| known == t) {
            titles.push(t.to_owned());
        }
    }
    titles
}

/// What the requests of a batch found.
struct Answers {
    /// Each title asked, as the API settled it.
    outcomes: HashMap<String, TitleOutcome>,
    /// The requests' cost, summed.
    total: RequestStats,
    /// When the last answer arrived.
    fetched_at: chrono::DateTime<Utc>,
    /// Why the titles not answered yet will not be: a failed request, a bad answer.
    stop: Option<FetchFailure>,
}

impl Answers {
    /// Asks the API for `titles`, continuing a cut answer at most [`MAX_CONTINUES`]
    /// times while titles wait for their content.
    async fn ask(fetcher: &Fetcher, state: &WikiState, api: &Url, titles: &[String]) -> Self {
        let mut answers = Self {
            outcomes: HashMap::new(),
            total: RequestStats::default(),
            fetched_at: Utc::now(),
            stop: None,
        };
        let mut cont = Continue::new();
        for round in 0..=MAX_CONTINUES {
            match answers.request(fetcher, state, api, titles, &cont).await {
                Err(f) => {
                    answers.stop = Some(f);
                    break;
                }
                Ok(Some(c)) if answers.waiting(titles) && round < MAX_CONTINUES => cont = c,
                Ok(_) => break,
            }
        }
        answers
    }

    /// One request for `titles` (continuing with `cont`): the titles it settles are kept,
    /// and its `continue` returned; `Err`: why the titles not settled yet will not be.
    async fn request(
        &mut self,
        fetcher: &Fetcher,
        state: &WikiState,
        api: &Url,
        titles: &[String],
        cont: &Continue,
    ) -> Result<Option<Continue>, FetchFailure> {
        let req = rip_mediawiki::revisions_request(api, titles, Some(MAXLAG), cont);
        WikiStats::add(&state.stats.batches, 1);
        let Fetched {
            outcome,
            stats: got,
        } = fetcher
            .call_api(
                req.url.as_str(),
                req.form.as_deref(),
                &rip_mediawiki::http::check,
            )
            .await;
        add_cost(&mut self.total, got);
        let resp = match outcome {
            Outcome::Page(resp) => resp,
            Outcome::Failure(f) => return Err(f),
            Outcome::Skipped(s) => {
                return Err(classified(
                    ErrorCategory::Validation,
                    "wiki.redirected",
                    format!("the API request was not sent: {}", s.reason),
                ));
            }
        };
        self.fetched_at = resp.fetched_at;
        let answer = rip_mediawiki::parse_revisions(titles, &resp.body).map_err(|e| {
            let mut f = answer_failure(&e, resp.truncated);
            f.status = Some(resp.status);
            f.final_url = Some(resp.final_url.clone());
            f
        })?;
        for (asked, outcome) in answer.outcomes {
            if outcome != TitleOutcome::Pending {
                self.outcomes.entry(asked).or_insert(outcome);
            }
        }
        Ok(answer.cont)
    }

    /// Some of `titles` wait for their content.
    fn waiting(&self, titles: &[String]) -> bool {
        titles.iter().any(|t| !self.outcomes.contains_key(t))
    }

    /// Some title of the batch led to another page (normalised or redirected).
    fn led_elsewhere(&self, batch: &[(u64, Ref)]) -> bool {
        batch.iter().any(|(_, r)| {
            let asked = title_of(r);
            matches!(self.outcomes.get(asked), Some(TitleOutcome::Found(rev)) if rev.title != asked)
        })
    }

    /// Why the ref `r` gets no page: its title is missing or invalid, the requests
    /// stopped, or the answers never gave its content.
    fn why_not(&self, state: &WikiState, r: &Ref) -> Cow<'_, FetchFailure> {
        let title = title_of(r);
        match self.outcomes.get(title) {
            Some(TitleOutcome::Missing { title }) => {
                WikiStats::add(&state.stats.missing, 1);
                Cow::Owned(classified(
                    ErrorCategory::Permanent,
                    rip_mediawiki::MISSING_CODE,
                    format!("no page `{title}` on the wiki (never created, or deleted)"),
                ))
            }
            Some(TitleOutcome::Invalid { reason }) => {
                WikiStats::add(&state.stats.invalid, 1);
                Cow::Owned(classified(
                    ErrorCategory::Validation,
                    rip_mediawiki::INVALID_CODE,
                    format!("`{title}` is not a page title the wiki can answer: {reason}"),
                ))
            }
            _ => match &self.stop {
                Some(f) => Cow::Borrowed(f),
                None => Cow::Owned(classified(
                    ErrorCategory::Transient,
                    "wiki.incomplete",
                    format!(
                        "the API gave no content for `{title}` (answer cut {MAX_CONTINUES} \
                         times, or no `continue` given)"
                    ),
                )),
            },
        }
    }
}

/// Adds the cost of one request of a batch to the batch's.
fn add_cost(total: &mut RequestStats, got: RequestStats) {
    total.http_attempts += got.http_attempts;
    total.retries += got.retries;
    total.elapsed += got.elapsed;
    total.waited += got.waited;
    total.retry_waited += got.retry_waited;
    total.latency += got.latency;
    total.statuses.extend(got.statuses);
    total.faults.extend(got.faults);
}

fn fail_all(
    state: &WikiState,
    batch: Vec<(u64, Ref)>,
    f: &FetchFailure,
    stats: &RequestStats,
) -> Vec<(u64, Record)> {
    batch
        .into_iter()
        .map(|(seq, r)| (seq, failure(state, &r, f, stats)))
        .collect()
}

fn failure(state: &WikiState, r: &Ref, f: &FetchFailure, stats: &RequestStats) -> Record {
    state.stats.failed(f.class.category);
    Record::Failure(rip_http::records::failure_record(
        r,
        f,
        stats,
        Phase::Fetch,
        STAGE,
    ))
}

fn answer_failure(e: &AnswerError, truncated: bool) -> FetchFailure {
    let mut message = e.to_string();
    if truncated {
        message.push_str(" (the answer was cut at the body limit: hint: raise --max-body)");
    }
    let category = if truncated {
        ErrorCategory::Resource
    } else {
        e.category()
    };
    classified(category, &e.error_code(), message)
}

/// The response cached for a found title: the wikitext, with its ids as pseudo-headers.
fn response_for(
    r: &Ref,
    rev: &Revision,
    site: Option<&SiteInfo>,
    api: &Url,
    fetched_at: chrono::DateTime<Utc>,
) -> Response {
    let asked = r.context.title.as_deref().unwrap_or_default();
    let article = |title: &str| site.map(|s| s.article_url(api, title));
    let final_url = if rev.title == asked {
        r.url.clone()
    } else {
        article(&rev.title).unwrap_or_else(|| r.url.clone())
    };
    let redirects = match &rev.redirected_from {
        Some(from) if from == asked => vec![r.url.clone()],
        Some(from) => article(from).into_iter().collect(),
        None => Vec::new(),
    };
    let format = rev
        .content_format
        .as_deref()
        .unwrap_or(WIKITEXT_CONTENT_TYPE);
    let mut headers = vec![
        (
            "content-type".to_owned(),
            format!("{format}; charset=utf-8"),
        ),
        (H_PAGEID.to_owned(), rev.pageid.to_string()),
        (H_REVID.to_owned(), rev.revid.to_string()),
        (H_TITLE.to_owned(), rev.title.clone()),
    ];
    if let Some(ts) = &rev.timestamp {
        headers.push(("x-wiki-timestamp".to_owned(), ts.clone()));
    }
    Response {
        final_url,
        status: 200,
        headers,
        body: Bytes::from(rev.content.clone().into_bytes()),
        truncated: false,
        redirects,
        fetched_at,
    }
}

/// Groups wiki refs by API into batches of at most [`MAX_BATCH`].
#[derive(Debug, Default)]
pub struct Batcher {
    groups: HashMap<String, Vec<(u64, Ref)>>,
    waiting: usize,
}

impl Batcher {
    /// Adds a ref; returns a full batch when its API's group reached [`MAX_BATCH`].
    pub fn push(&mut self, seq: u64, r: Ref) -> Option<(String, Vec<(u64, Ref)>)> {
        let api = r.context.wiki_api.clone().unwrap_or_default();
        let group = self.groups.entry(api.clone()).or_default();
        group.push((seq, r));
        self.waiting += 1;
        if group.len() >= MAX_BATCH {
            let full = std::mem::take(group);
            self.groups.remove(&api);
            self.waiting -= full.len();
            return Some((api, full));
        }
        None
    }

    /// Every group, however small (the input is idle or ended).
    pub fn drain(&mut self) -> Vec<(String, Vec<(u64, Ref)>)> {
        self.waiting = 0;
        self.groups.drain().filter(|(_, g)| !g.is_empty()).collect()
    }

    /// Refs waiting for their batch.
    pub fn waiting(&self) -> usize {
        self.waiting
    }
}

/// How long the input must be quiet before partial batches are sent.
pub const IDLE: Duration = Duration::from_millis(50);

#[cfg(test)]
mod tests {
    use super::*;

    fn wiki_ref(title: &str, api: &str) -> Ref {
        let mut r = Ref::new(format!("http://w/index.php/{title}"));
        r.context.title = Some(title.into());
        r.context.wiki_api = Some(api.into());
        r
    }

    #[test]
    fn batches_are_per_api_and_at_most_fifty() {
        let mut b = Batcher::default();
        let mut full = Vec::new();
        for i in 0..120u64 {
            let api = if i % 3 == 0 {
                "http://a/api.php"
            } else {
                "http://b/api.php"
            };
            if let Some(batch) = b.push(i, wiki_ref(&format!("T{i}"), api)) {
                full.push(batch);
            }
        }
        assert_eq!(full.len(), 1, "80 refs of b make one full batch");
        assert_eq!(full[0].0, "http://b/api.php");
        assert_eq!(full[0].1.len(), 50);
        assert_eq!(b.waiting(), 70);
        let mut rest = b.drain();
        rest.sort_by(|x, y| x.0.cmp(&y.0));
        let sizes: Vec<(&str, usize)> = rest.iter().map(|(a, g)| (a.as_str(), g.len())).collect();
        assert_eq!(sizes, [("http://a/api.php", 40), ("http://b/api.php", 30)]);
        assert_eq!(b.waiting(), 0);
    }
}
