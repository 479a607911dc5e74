//! One page in one tab: a fresh browser context (no cookies, storage or cache from any
//! other page; with a session, the browser's one context that every page shares), a tab in
//! it with every request intercepted ([`crate::intercept`]), the page's script errors,
//! dialogs and crash watched, the navigation, the wait, the DOM read back, and the tab
//! closed (its fresh context disposed, which ends its renderer), whatever happened. A tab
//! shows one page only, in either case: nothing a page's script leaked lives on in a tab.

use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::browser_protocol::target::{
    CreateBrowserContextParams, CreateTargetParams,
};
use chromiumoxide::error::CdpError;
use rip_core::Rendered;
use rip_http::{Fetcher, Response};
use tokio::time::Instant;

use crate::browser::Chromium;
use crate::intercept::Allow;
use crate::seen::Seen;
use crate::settle::{self, PageState};
use crate::shared::Shared;
use crate::wait::{GRACE, IDLE, SETTLE_QUIET, Wait};
use crate::watch::{self, Watched};

/// How often the wait looks at the page.
const POLL: Duration = Duration::from_millis(50);
/// The longest a DevTools command that should be quick may take (closing, reading back).
const QUICK: Duration = Duration::from_secs(5);
/// The longest reading a page that did not settle may take (what was seen, for its
/// failure): past the page timeout already, so shorter than [`QUICK`], but room for a
/// renderer on a loaded machine.
const SEEN_READ: Duration = Duration::from_secs(3);

/// What the tabs share.
pub(crate) struct TabSettings {
    pub fetcher: Fetcher,
    /// The subresources pages share ([`crate::shared`]).
    pub shared: Arc<Shared>,
    pub wait: Wait,
    pub timeout: Duration,
    pub allow: Allow,
    pub max_requests: u32,
    /// Characters of DOM kept at most.
    pub max_body: usize,
}

/// How a render ended.
pub(crate) enum Rendering {
    /// The page settled: its DOM, cut at `max_body` characters (`truncated`).
    Done {
        html: String,
        truncated: bool,
        info: Rendered,
    },
    /// The page did not settle in time: what it was doing, and its DOM when it could still
    /// be read.
    TimedOut {
        why: String,
        seen: Option<String>,
        info: Rendered,
    },
    /// Its renderer crashed (out of memory, most often).
    Crashed { info: Rendered },
    /// The navigation itself failed (the browser's net error).
    NavigationFailed { why: String, info: Rendered },
}

/// Why a render could not be done in this browser.
#[derive(Debug)]
pub(crate) enum TabError {
    /// The browser is gone (killed, crashed, disconnected): try again in another.
    Lost(String),
}

fn lost(chromium: &Chromium, e: CdpError) -> TabError {
    let alive = if chromium.is_alive() {
        "browser still connected"
    } else {
        "browser gone"
    };
    TabError::Lost(format!("{e} ({alive})"))
}

/// A blank tab, opened ahead of the page it will show (the renderer keeps some ready while
/// other pages settle), used for one page only: in a fresh browser context of its own, or
/// in the browser's default context when pages share a session. It is readied for its page
/// already ([`crate::watch`]): interception, listeners and settle script in place.
pub(crate) struct Blank {
    /// The browser it was opened in ([`Chromium::generation`]).
    pub generation: u64,
    /// Its own context (disposed with it); `None` in a shared session.
    context: Option<BrowserContextId>,
    page: Page,
    watched: Watched,
    /// How long its context, its tab and its readying took.
    opening: [Duration; 3],
}

/// Opens a blank tab readied for a page of `settings`: in a fresh context, or with
/// `session` in the browser's default context, whose cookies and storage every page of the
/// session shares.
pub(crate) async fn open(
    chromium: &Chromium,
    session: bool,
    settings: &TabSettings,
) -> Result<Blank, TabError> {
    let began = Instant::now();
    let context = match session {
        true => None,
        false => Some(fresh_context(chromium).await?),
    };
    let context_took = began.elapsed();
    let mut target = CreateTargetParams::new("about:blank");
    target.browser_context_id = context.clone();
    let opened = tokio::time::timeout(QUICK * 2, chromium.browser.new_page(target)).await;
    let tab_took = began.elapsed() - context_took;
    let failed = match opened {
        Ok(Ok(page)) => match tokio::time::timeout(QUICK, watch::ready(&page, settings)).await {
            Ok(Ok(watched)) => {
                return Ok(Blank {
                    generation: chromium.generation,
                    context,
                    page,
                    watched,
                    opening: [
                        context_took,
                        tab_took,
                        began.elapsed() - context_took - tab_took,
                    ],
                });
            }
            not_ready => {
                let _ = tokio::time::timeout(QUICK, page.close()).await;
                match not_ready {
                    Ok(Err(e)) => lost(chromium, e),
                    _ => TabError::Lost("no answer to readying a tab".into()),
                }
            }
        },
        Ok(Err(e)) => lost(chromium, e),
        Err(_) => TabError::Lost("no answer to opening a tab".into()),
    };
    if let Some(context) = context {
        let dispose = chromium.browser.dispose_browser_context(context);
        let _ = tokio::time::timeout(QUICK, dispose).await;
    }
    Err(failed)
}

async fn fresh_context(chromium: &Chromium) -> Result<BrowserContextId, TabError> {
    let create = chromium
        .browser
        .create_browser_context(CreateBrowserContextParams::default());
    tokio::time::timeout(QUICK, create)
        .await
        .map_err(|_| TabError::Lost("no answer to creating a browser context".into()))?
        .map_err(|e| lost(chromium, e))
}

/// Closes a tab: disposes of its own context (which closes it and ends its renderer), or
/// closes the tab alone in a shared session. False when the browser did not confirm it.
async fn close(chromium: &Chromium, context: Option<BrowserContextId>, page: Page) -> bool {
    let closed = match context {
        Some(context) => {
            let dispose = chromium.browser.dispose_browser_context(context);
            tokio::time::timeout(QUICK, dispose)
                .await
                .map(|r| r.is_ok())
        }
        None => tokio::time::timeout(QUICK, page.close())
            .await
            .map(|r| r.is_ok()),
    };
    closed.unwrap_or(false)
}

/// Closes a blank tab that will show nothing.
pub(crate) async fn discard(chromium: &Chromium, blank: Blank) {
    drop(blank.watched);
    close(chromium, blank.context, blank.page).await;
}

/// Renders `doc` (already fetched, served from `url`) in `blank`, then closes the tab
/// (disposing of its fresh context), whatever happened.
pub(crate) async fn render(
    chromium: &Chromium,
    settings: &TabSettings,
    url: &str,
    doc: Arc<Response>,
    blank: Blank,
) -> Result<Rendering, TabError> {
    let Blank {
        context,
        page,
        watched,
        opening,
        ..
    } = blank;
    watched.interceptor.set_document(doc);
    let mut phases = Phases::default();
    let result = render_in(chromium, settings, url, &page, &watched.seen, &mut phases).await;
    drop(watched);
    let closing = Instant::now();
    if !close(chromium, context, page).await && result.is_ok() {
        tracing::debug!("could not close the tab of {url}");
    }
    phases.close = closing.elapsed();
    let [context, tab, ready] = opening;
    tracing::debug!(
        target: "rip_render::phases",
        "{url}: context {context:?}, tab {tab:?}, ready {ready:?}, load {:?}, settle {:?}, read {:?}, close {:?}",
        phases.load, phases.settle, phases.read, phases.close
    );
    result
}

/// Where a page's time went, past the opening of its tab (logged at debug level, target
/// `rip_render::phases`: what `docs/benchmarks-log.md`'s per-phase table is made of).
#[derive(Default)]
struct Phases {
    /// From the navigation to the `load` event.
    load: Duration,
    /// From the `load` event to the wait rule's end.
    settle: Duration,
    /// Reading the DOM back.
    read: Duration,
    /// Closing the tab (disposing of its context).
    close: Duration,
}

async fn render_in(
    chromium: &Chromium,
    settings: &TabSettings,
    url: &str,
    page: &Page,
    seen: &Seen,
    phases: &mut Phases,
) -> Result<Rendering, TabError> {
    seen.arm();
    let start = Instant::now();
    let nav = page.clone();
    let url_owned = url.to_owned();
    let mut navigation = tokio::spawn(async move {
        let resp = nav.execute(NavigateParams::new(url_owned)).await?;
        Ok(resp.result.error_text.clone())
    });
    let outcome = settle(chromium, page, seen, settings, &mut navigation, start).await;
    navigation.abort();
    let settled = start.elapsed();
    phases.load = seen.loaded_after(start).unwrap_or(settled);
    phases.settle = settled.saturating_sub(phases.load);
    let reading = Instant::now();
    let rendering = match outcome {
        Settled::Done => read_back(page, seen, settings, start).await,
        Settled::TimedOut => {
            let dom = tokio::time::timeout(SEEN_READ, page.content()).await;
            Rendering::TimedOut {
                why: format!(
                    "the page did not settle ({}) within {}: {}",
                    settings.wait,
                    humantime_short(settings.timeout),
                    seen.state_line()
                ),
                seen: dom.ok().and_then(Result::ok),
                info: info_at(seen, settings, start),
            }
        }
        Settled::Crashed => Rendering::Crashed {
            info: info_at(seen, settings, start),
        },
        Settled::NavigationFailed(why) => Rendering::NavigationFailed {
            why,
            info: info_at(seen, settings, start),
        },
        Settled::Lost(why) => return Err(TabError::Lost(why)),
    };
    phases.read = reading.elapsed();
    if !chromium.is_alive() {
        return Err(TabError::Lost("browser gone".into()));
    }
    Ok(rendering)
}

fn info_at(seen: &Seen, settings: &TabSettings, start: Instant) -> Rendered {
    Rendered {
        wait: settings.wait.to_string(),
        render_ms: start.elapsed().as_millis() as u64,
        ..seen.info()
    }
}

fn humantime_short(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// The DOM of a settled page.
async fn read_back(page: &Page, seen: &Seen, settings: &TabSettings, start: Instant) -> Rendering {
    let left = settings.timeout.saturating_sub(start.elapsed()).max(QUICK);
    match tokio::time::timeout(left, content(page)).await {
        Ok(Ok(mut html)) => {
            let truncated = html.len() > settings.max_body;
            if truncated {
                let mut at = settings.max_body;
                while !html.is_char_boundary(at) {
                    at -= 1;
                }
                html.truncate(at);
            }
            Rendering::Done {
                html,
                truncated,
                info: info_at(seen, settings, start),
            }
        }
        Ok(Err(_)) if seen.has_crashed() => Rendering::Crashed {
            info: info_at(seen, settings, start),
        },
        Ok(Err(e)) => Rendering::NavigationFailed {
            why: format!("cannot read the DOM back: {e}"),
            info: info_at(seen, settings, start),
        },
        Err(_) => Rendering::TimedOut {
            why: format!(
                "the page settled but its DOM could not be read within {}: {}",
                humantime_short(left),
                seen.state_line()
            ),
            seen: None,
            info: info_at(seen, settings, start),
        },
    }
}

/// The page's DOM; asked again twice when its script context was being replaced.
async fn content(page: &Page) -> Result<String, CdpError> {
    let mut tries = 0;
    loop {
        match page.content().await {
            Err(e) if tries < 2 && e.to_string().contains("context") => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => return other,
        }
    }
}

/// How the wait ended.
enum Settled {
    Done,
    TimedOut,
    Crashed,
    NavigationFailed(String),
    Lost(String),
}

/// The navigation's task: the browser's net error, if any.
type Navigation = tokio::task::JoinHandle<Result<Option<String>, CdpError>>;

/// What a page waiting in a browser that died is told.
const GONE: &str = "the browser is gone (its connection ended or its process exited)";

/// Waits until the page is done by the wait rule, crashed, failed to navigate, its
/// browser is gone (at once: the page is done again in another), or the page timeout
/// passed.
async fn settle(
    chromium: &Chromium,
    page: &Page,
    seen: &Seen,
    settings: &TabSettings,
    navigation: &mut Navigation,
    start: Instant,
) -> Settled {
    let deadline = start + settings.timeout;
    let probe = settings.wait.probe();
    let mut navigating = true;
    loop {
        if seen.has_crashed() {
            return Settled::Crashed;
        }
        if !chromium.is_alive() {
            return Settled::Lost(GONE.into());
        }
        if Instant::now() >= deadline {
            return Settled::TimedOut;
        }
        let done = match &settings.wait {
            Wait::Load => seen.is_loaded(),
            Wait::NetworkIdle => network_idle(seen),
            Wait::Settled => network_idle(seen) || settled_now(page, seen).await,
            Wait::Selector(_) => match &probe {
                Some(p) => matches_now(page, p).await,
                None => false,
            },
        };
        if done {
            return Settled::Done;
        }
        tokio::select! {
            joined = &mut *navigation, if navigating => {
                navigating = false;
                match joined {
                    Ok(Ok(Some(err))) => {
                        return Settled::NavigationFailed(format!("navigation failed: {err}"));
                    }
                    Ok(Ok(None)) => {}
                    Ok(Err(CdpError::Timeout)) => {}
                    Ok(Err(e)) if seen.has_crashed() => { let _ = e; return Settled::Crashed; }
                    Ok(Err(e)) => return Settled::Lost(e.to_string()),
                    Err(_) => {}
                }
            }
            () = chromium.gone() => return Settled::Lost(GONE.into()),
            _ = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Loaded, and no request in flight for [`IDLE`], as both the browser and the
/// interception count them ([`Wait::NetworkIdle`]).
fn network_idle(seen: &Seen) -> bool {
    let quiet = seen.quiet_since().map(|t| t.elapsed());
    seen.is_loaded()
        && quiet.is_some_and(|q| q >= IDLE && (seen.is_browser_idle() || q >= IDLE + GRACE))
}

/// Loaded, no request in flight for [`SETTLE_QUIET`], and the page says it has no work
/// pending and did nothing for as long ([`crate::settle`]). The interception is looked at
/// again once the page has answered: a request the page started before it answered has
/// reached the interception by then, or is one of the page's pending.
async fn settled_now(page: &Page, seen: &Seen) -> bool {
    let quiet_enough = || {
        seen.is_loaded()
            && seen
                .quiet_since()
                .is_some_and(|t| t.elapsed() >= SETTLE_QUIET)
    };
    if !quiet_enough() {
        return false;
    }
    let asked = tokio::time::timeout(Duration::from_millis(500), page.evaluate(settle::PROBE));
    let state = match asked.await {
        Ok(Ok(result)) => result.value().and_then(PageState::from_value),
        _ => None,
    };
    state.is_some_and(|s| s.pending <= 0 && s.quiet_ms >= SETTLE_QUIET.as_millis() as f64)
        && quiet_enough()
}

/// True when the selector probe matches now (a busy page answers later: false).
async fn matches_now(page: &Page, probe: &str) -> bool {
    match tokio::time::timeout(Duration::from_millis(500), page.evaluate(probe)).await {
        Ok(Ok(result)) => result.value().and_then(|v| v.as_bool()).unwrap_or(false),
        _ => false,
    }
}
