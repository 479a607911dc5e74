//! The renderer: one browser, at most `tabs` pages in it at once, and the path of a ref
//! from the rendered cache through the document's fetch to its one record (see the crate
//! documentation). The `rip-render` stage drives one; so does `rip-discover --render`,
//! with its own fetcher, to follow the links of the rendered DOM.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rip_core::{ErrorCategory, Phase, Record, Ref};
use rip_http::records::record_for;
use rip_http::{FetchOptions, Fetcher, Outcome, RequestStats, Response};
use rip_warc::write::resource::{RenderedDom, rendered_dom};
use rip_warc::write::tap::WarcTap;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::browser::{BrowserSettings, Chromium, Engine};
use crate::record::{self, RenderFailure};
use crate::shared::Shared;
use crate::tab::{self, Blank, Rendering, TabError, TabSettings};
use crate::{Allow, STAGE, Wait};

/// How pages are rendered: the browser, the tabs, when a page is done.
#[derive(Debug, Clone)]
pub struct RenderSettings {
    /// Pages rendered at once: tabs.
    pub tabs: usize,
    /// When a page is done.
    pub wait: Wait,
    /// The longest a page may take, from its navigation to its DOM read back.
    pub page_timeout: Duration,
    /// Resource types let through besides documents, scripts, stylesheets and requests
    /// made by script.
    pub allow: Allow,
    /// Requests one page may make, at most (later ones are refused and noted).
    pub max_requests: u32,
    /// How the browser is started.
    pub browser: BrowserSettings,
    /// Times a ref is rendered again in a new browser after its browser died.
    pub browser_retries: u32,
    /// Pages share one session: the browser's default context, whose cookies and storage
    /// a page's scripts (and the `Set-Cookie` of its responses) leave for the pages after
    /// it, until the browser is restarted. Off: each page has a fresh context of its own.
    /// Either way a tab shows one page only.
    pub session: bool,
}

impl RenderSettings {
    /// Makes room in `http` for the tabs' subresources: each tab's page asks for them at
    /// once, about 8 requests a tab beside the documents. For the fetcher a [`Renderer`]
    /// is given.
    pub fn make_room(&self, http: &mut rip_http::HttpConfig) {
        let room = self.tabs.max(1) * 8;
        http.politeness.total_concurrency = http.politeness.total_concurrency.max(room);
    }
}

impl Default for RenderSettings {
    fn default() -> Self {
        Self {
            tabs: 4,
            wait: Wait::Settled,
            page_timeout: Duration::from_secs(30),
            allow: Allow::default(),
            max_requests: 500,
            browser: BrowserSettings::default(),
            browser_retries: 2,
            session: false,
        }
    }
}

/// Renders refs in one browser, started on first need and again when it dies.
pub struct Renderer {
    fetcher: Fetcher,
    engine: Engine,
    tab: Arc<TabSettings>,
    tabs: Semaphore,
    spares: Arc<Spares>,
    browser_retries: u32,
    js_heap_mib: u32,
    counters: Counters,
    /// The WARC tap on the fetcher, when archiving: each rendered DOM is written there too.
    warc: Option<Arc<WarcTap>>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("tabs", &self.tabs.available_permits())
            .field("browser_starts", &self.engine.started())
            .finish_non_exhaustive()
    }
}

/// Blank tabs (each in a fresh context, or in the shared session) opened ahead, while other pages settle: a page
/// then starts in one at once instead of waiting the ~0.3 s a context and a tab take to
/// open (a new renderer process). At most one per tab.
struct Spares {
    ready: Mutex<Vec<Blank>>,
    opening: AtomicUsize,
    most: usize,
    /// Tabs open in the shared session ([`RenderSettings::session`]).
    session: bool,
    /// What the tabs are readied for.
    tab: Arc<TabSettings>,
}

impl Spares {
    /// A blank tab of the browser of `generation`; those of an earlier browser (dead) are
    /// dropped.
    fn take(&self, generation: u64) -> Option<Blank> {
        let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        ready.retain(|b| b.generation == generation);
        ready.pop()
    }

    /// Opens one more blank tab in the background, unless enough are ready or one is
    /// opening (one at a time: opening is a burst of browser work, and one every ~0.3 s
    /// keeps up with every tab).
    fn refill(self: &Arc<Self>, chromium: Arc<Chromium>) {
        let ready = self.ready.lock().unwrap_or_else(|e| e.into_inner()).len();
        if ready >= self.most || self.opening.load(Ordering::Relaxed) > 0 {
            return;
        }
        self.opening.fetch_add(1, Ordering::Relaxed);
        let spares = self.clone();
        tokio::spawn(async move {
            let opened = tab::open(&chromium, spares.session, &spares.tab).await;
            spares.opening.fetch_sub(1, Ordering::Relaxed);
            match opened {
                Ok(blank) => spares
                    .ready
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(blank),
                Err(TabError::Lost(why)) => tracing::debug!("no blank tab ahead: {why}"),
            }
        });
    }
}

#[derive(Default)]
struct Counters {
    rendered: AtomicU64,
    from_cache: AtomicU64,
    not_html: AtomicU64,
    timeouts: AtomicU64,
    crashes: AtomicU64,
    subrequests: AtomicU64,
    blocked: AtomicU64,
    console_errors: AtomicU64,
    dom_archived: AtomicU64,
    dom_not_archived: AtomicU64,
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl Renderer {
    /// A renderer whose documents and subresources all go through `fetcher` (its cache,
    /// robots.txt, politeness and classifier), made with room for the tabs' subresources
    /// ([`RenderSettings::make_room`]). No browser starts until a page
    /// needs one. Call within a tokio runtime.
    pub fn new(settings: &RenderSettings, fetcher: Fetcher, max_body: usize) -> Self {
        let tab = Arc::new(TabSettings {
            fetcher: fetcher.clone(),
            shared: Arc::new(Shared::new(&fetcher)),
            wait: settings.wait.clone(),
            timeout: settings.page_timeout,
            allow: settings.allow,
            max_requests: settings.max_requests,
            max_body,
        });
        Self {
            fetcher,
            engine: Engine::new(settings.browser.clone()),
            tabs: Semaphore::new(settings.tabs.max(1)),
            spares: Arc::new(Spares {
                ready: Mutex::new(Vec::new()),
                opening: AtomicUsize::new(0),
                most: settings.tabs.max(1),
                session: settings.session,
                tab: tab.clone(),
            }),
            tab,
            browser_retries: settings.browser_retries,
            js_heap_mib: settings.browser.js_heap_mib,
            counters: Counters::default(),
            warc: None,
        }
    }

    /// This renderer, archiving: `tap` is set on its fetcher (every exchange, documents and
    /// subresources, as request, response and metadata records), and the DOM of each page
    /// rendered is written through it as a `resource` record (`urn:dom:` and the page's
    /// URL) tied to the page's response. Give a tap
    /// [remembering responses](WarcTap::remembering_responses), or the DOM records are
    /// tied to nothing. A fetcher that has a tap already keeps it (a stage sharing its
    /// fetcher with the renderer, as `rip-discover --render`, sets the same tap on it).
    #[must_use]
    pub fn with_warc(mut self, tap: Arc<WarcTap>) -> Self {
        self.fetcher.set_tap(tap.clone());
        self.warc = Some(tap);
        self
    }

    /// Writes the DOM of the page `doc` as a `resource` record, when archiving (a record
    /// that cannot be written is said on stderr; the page is written all the same).
    fn archive_dom(&self, doc: &Response, html: &str, truncated: bool) {
        let Some(tap) = &self.warc else { return };
        let Ok(page) = url::Url::parse(&doc.final_url) else {
            return;
        };
        let response = tap.response_id(&page);
        let dom = RenderedDom {
            page: &page,
            html,
            response: response.as_ref(),
            truncated,
        };
        if let Err(e) = rendered_dom(&dom).and_then(|r| tap.write_records(&[r])) {
            add(&self.counters.dom_not_archived, 1);
            tracing::warn!("--warc: the DOM of {page} not archived: {e}");
        } else {
            add(&self.counters.dom_archived, 1);
        }
    }

    /// The fetcher every request goes through.
    pub fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    /// Browsers started so far.
    pub fn browser_starts(&self) -> u64 {
        self.engine.started()
    }

    /// Closes the browser (when one runs), and the blank tabs opened ahead in it.
    pub async fn close(&self) {
        let patience = Instant::now() + Duration::from_secs(5);
        while self.spares.opening.load(Ordering::Relaxed) > 0 && Instant::now() < patience {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if let Some(chromium) = self.engine.running().await {
            while let Some(blank) = self.spares.take(chromium.generation) {
                tab::discard(&chromium, blank).await;
            }
        }
        self.engine.close().await;
    }

    /// The one record of a ref: its rendered variant from the cache, or its document
    /// fetched and rendered (a document that is not HTML, or a failed fetch, is written as
    /// `rip-fetch` writes it).
    pub async fn page(&self, r: &Ref) -> Record {
        let start = Instant::now();
        // The network policy's start URLs: a ref without a parent, or a link's page. Its
        // subresources go through the same fetcher, so the same policy.
        self.fetcher.admit_ref(r);
        if let Some(page) = self.cached(r).await {
            return page;
        }
        let opts = FetchOptions {
            not_before: r.not_before,
            ignore_robots: false,
        };
        let fetched = self.fetcher.fetch_with(&r.url, &opts).await;
        match &fetched.outcome {
            Outcome::Page(resp) if record::is_html(resp) => {
                self.render(r, Arc::new(resp.clone()), fetched.stats.clone(), start)
                    .await
            }
            Outcome::Page(_) => {
                add(&self.counters.not_html, 1);
                record_for(r, &fetched, Phase::Fetch, STAGE)
            }
            _ => record_for(r, &fetched, Phase::Fetch, STAGE),
        }
    }

    /// The record of an HTML document already fetched (`doc`, at a cost of `stats`): its
    /// rendered variant from the cache, or the document rendered now.
    pub async fn fetched(&self, r: &Ref, doc: Arc<Response>, stats: RequestStats) -> Record {
        let start = Instant::now();
        match self.cached(r).await {
            Some(page) => page,
            None => self.render(r, doc, stats, start).await,
        }
    }

    /// The rendered variant of `r` in the cache, as its page.
    async fn cached(&self, r: &Ref) -> Option<Record> {
        let (resp, site) = self.fetcher.cached(&record::cache_key(&r.url)).await?;
        let page = record::cached_page(r, &resp, site)?;
        add(&self.counters.from_cache, 1);
        Some(Record::Page(page))
    }

    /// A fresh context and tab in `chromium`: one opened ahead, or one opened now; else
    /// why not (a browser no longer connected is given up for another).
    async fn blank(&self, chromium: &Chromium) -> Result<Blank, String> {
        if let Some(blank) = self.spares.take(chromium.generation) {
            return Ok(blank);
        }
        match tab::open(chromium, self.spares.session, &self.tab).await {
            Ok(blank) => Ok(blank),
            // A browser still connected is busy, not lost: the pages in its other tabs go
            // on; this ref tries again.
            Err(TabError::Lost(why)) if chromium.is_alive() => Err(why),
            Err(TabError::Lost(why)) => {
                self.browser_lost(chromium).await;
                Err(why)
            }
        }
    }

    /// Gives up `chromium`: the next page starts another browser (its loss counted once,
    /// however many of its pages see it).
    async fn browser_lost(&self, chromium: &Chromium) {
        self.engine.lost(chromium).await;
    }

    /// Renders `doc` in a tab, in a new browser when the one it was in died.
    async fn render(
        &self,
        r: &Ref,
        doc: Arc<Response>,
        mut stats: RequestStats,
        start: Instant,
    ) -> Record {
        let _tab = self.tabs.acquire().await;
        let mut last = String::new();
        for _ in 0..=self.browser_retries {
            let chromium = match self.engine.get().await {
                Ok(c) => c,
                Err(e) => {
                    last = e.to_string();
                    break;
                }
            };
            let blank = match self.blank(&chromium).await {
                Ok(blank) => blank,
                Err(why) => {
                    last = why;
                    continue;
                }
            };
            self.spares.refill(chromium.clone());
            let url = doc.final_url.clone();
            match tab::render(&chromium, &self.tab, &url, doc.clone(), blank).await {
                Ok(rendering) => {
                    stats.elapsed = start.elapsed();
                    return self
                        .rendered(r, &doc, &stats, rendering, &chromium.version)
                        .await;
                }
                Err(TabError::Lost(why)) => {
                    tracing::warn!("{}: the browser was lost rendering it: {why}", r.url);
                    self.browser_lost(&chromium).await;
                    last = why;
                }
            }
        }
        stats.elapsed = start.elapsed();
        let f = RenderFailure {
            category: ErrorCategory::Resource,
            retryable: true,
            code: "render.browserLost",
            message: format!(
                "the browser was lost {} times rendering this page: {last}",
                self.browser_retries + 1
            ),
            seen: None,
            info: None,
        };
        record::failure(r, Some(&doc), &stats, f)
    }

    /// The record of a render that ended in this browser.
    async fn rendered(
        &self,
        r: &Ref,
        doc: &Response,
        stats: &RequestStats,
        rendering: Rendering,
        version: &str,
    ) -> Record {
        let c = &self.counters;
        let info_of = |mut info: rip_core::Rendered| {
            info.browser = version.to_owned();
            add(&c.subrequests, u64::from(info.requests));
            add(&c.blocked, u64::from(info.blocked));
            add(&c.console_errors, info.console_errors.len() as u64);
            info
        };
        let f = match rendering {
            Rendering::Done {
                html,
                truncated,
                info,
            } => {
                add(&c.rendered, 1);
                self.archive_dom(doc, &html, truncated);
                let page = record::rendered_page(r, doc, stats, html, truncated, info_of(info));
                record::remember(&self.fetcher, r, doc, stats, &page).await;
                return Record::Page(page);
            }
            Rendering::TimedOut { why, seen, info } => {
                add(&c.timeouts, 1);
                RenderFailure {
                    category: ErrorCategory::Timeout,
                    retryable: true,
                    code: "render.timeout",
                    message: why,
                    seen,
                    info: Some(info_of(info)),
                }
            }
            Rendering::Crashed { info } => {
                add(&c.crashes, 1);
                RenderFailure {
                    category: ErrorCategory::Resource,
                    retryable: false,
                    code: "render.crashed",
                    message: format!(
                        "the page's renderer crashed (most often out of memory: a page's script \
                         heap is capped at {} MiB, --js-heap)",
                        self.js_heap_mib
                    ),
                    seen: None,
                    info: Some(info_of(info)),
                }
            }
            Rendering::NavigationFailed { why, info } => RenderFailure {
                category: ErrorCategory::Network,
                retryable: true,
                code: "render.navigation",
                message: why,
                seen: None,
                info: Some(info_of(info)),
            },
        };
        record::failure(r, Some(doc), stats, f)
    }

    /// The renderer's counters and its fetcher's, for a summary: the fetcher's failures
    /// left out (those of subresources are no failure of a ref: they are on their pages;
    /// the refs' own are counted from the records).
    pub fn counters(&self) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = self
            .fetcher
            .stats()
            .counters()
            .into_iter()
            .filter(|(k, v)| {
                !k.starts_with("failed.")
                    && (*v > 0 || matches!(k.as_str(), "cacheHits" | "retries" | "requests"))
            })
            .collect();
        out.extend(self.render_counters());
        out
    }

    /// The renderer's own counters (`rendered`, `renderCacheHits`, `renderTimeouts`, …,
    /// `browserStarts`), without its fetcher's.
    pub fn render_counters(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let c = &self.counters;
        let ours = [
            ("rendered", c.rendered.load(Ordering::Relaxed)),
            ("renderCacheHits", c.from_cache.load(Ordering::Relaxed)),
            ("notHtml", c.not_html.load(Ordering::Relaxed)),
            ("renderTimeouts", c.timeouts.load(Ordering::Relaxed)),
            ("renderCrashes", c.crashes.load(Ordering::Relaxed)),
            ("browserLost", self.engine.losses()),
            ("subrequests", c.subrequests.load(Ordering::Relaxed)),
            ("subrequestsShared", self.tab.shared.served()),
            ("blockedRequests", c.blocked.load(Ordering::Relaxed)),
            ("consoleErrors", c.console_errors.load(Ordering::Relaxed)),
            ("warcDoms", c.dom_archived.load(Ordering::Relaxed)),
            ("warcDomsFailed", c.dom_not_archived.load(Ordering::Relaxed)),
        ];
        for (k, v) in ours {
            if v > 0 || k == "rendered" {
                out.push((k.to_owned(), v));
            }
        }
        out.push(("browserStarts".to_owned(), self.engine.started()));
        out
    }
}
