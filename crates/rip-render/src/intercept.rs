//! Every request of a rendering page, answered through rip-http.
//!
//! Chromium asks nothing of the network itself: the page's `Fetch` domain pauses each
//! request, and this module answers it. The page's own document is answered with the
//! response the stage already fetched (so its status was classified before the browser
//! was opened); a subresource (script, stylesheet, XHR, `fetch()`) is fetched with the
//! stage's [`Fetcher`], under the same per-host gap, robots.txt, Retry-After, circuit
//! breaker, retries, body limit and cache as `rip-fetch`; images, fonts and media are
//! refused unless allowed; requests other than `GET` and `HEAD` are refused (rip-http
//! sends neither bodies nor other methods); a subresource another page fetched is
//! answered with that response while the cache's rules allow ([`crate::shared`]); a navigation of the page away from itself is
//! answered `204 No Content` (the page stays) and noted.

use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EventRequestPaused, FailRequestParams, FulfillRequestParams, HeaderEntry,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use chromiumoxide::listeners::EventStream;
use futures::StreamExt;
use rip_core::FailedRequest;
use rip_http::{FetchFailure, Fetcher, Outcome, Response};
use tokio::sync::Mutex;
use tokio::task::JoinSet;

use crate::seen::Seen;
use crate::shared::Shared;

/// Resource types refused unless allowed (`--allow`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allow {
    /// Images (`<img>`, CSS backgrounds, favicons).
    pub images: bool,
    /// Web fonts.
    pub fonts: bool,
    /// Audio and video.
    pub media: bool,
}

impl Allow {
    fn refuses(&self, kind: &ResourceType, url: &str) -> bool {
        match kind {
            // The browser's own favicon request: an image the page did not ask for.
            ResourceType::Other if is_favicon(url) => !self.images,
            ResourceType::Image => !self.images,
            ResourceType::Font => !self.fonts,
            ResourceType::Media => !self.media,
            _ => false,
        }
    }
}

fn is_favicon(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| u.path() == "/favicon.ico")
}

/// Response headers not passed to the browser: the body it gets is decompressed and
/// whole, so these would describe another one.
const DROPPED_HEADERS: &[&str] = &[
    "content-encoding",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
];

/// What answers one page's requests.
pub(crate) struct Interceptor {
    pub fetcher: Fetcher,
    /// The subresources the renderer's pages share.
    pub shared: Arc<Shared>,
    pub seen: Seen,
    /// The page's document, fetched before the browser was opened; set when it is known
    /// (the tab was readied before: [`Interceptor::set_document`]).
    document: OnceLock<Arc<Response>>,
    pub allow: Allow,
    /// Subresource requests answered per page at most; later ones are refused.
    pub max_requests: u32,
    /// The frame of the page's document, once asked for.
    main_frame: Mutex<Option<String>>,
}

impl Interceptor {
    pub fn new(
        fetcher: Fetcher,
        shared: Arc<Shared>,
        seen: Seen,
        allow: Allow,
        max_requests: u32,
    ) -> Self {
        Self {
            fetcher,
            shared,
            seen,
            document: OnceLock::new(),
            allow,
            max_requests,
            main_frame: Mutex::new(None),
        }
    }

    /// The document the tab's navigation is answered with (once: a tab shows one page).
    pub fn set_document(&self, document: Arc<Response>) {
        let _ = self.document.set(document);
    }
}

/// Answers the paused requests of `page` until the stream ends (or the task is dropped,
/// which drops the answers in flight with it).
pub(crate) async fn serve(
    page: Page,
    mut events: EventStream<EventRequestPaused>,
    ctx: Arc<Interceptor>,
) {
    let mut answers = JoinSet::new();
    loop {
        tokio::select! {
            event = events.next() => {
                let Some(event) = event else { break };
                let (page, ctx) = (page.clone(), ctx.clone());
                answers.spawn(async move { answer(&page, &ctx, &event).await });
            }
            Some(_) = answers.join_next(), if !answers.is_empty() => {}
        }
    }
    while answers.join_next().await.is_some() {}
}

/// What to do with one paused request.
enum Decision {
    Document,
    /// A navigation away: answered `204 No Content`, which leaves the page where it is (a
    /// refused request would put an error page in its place).
    StayPut,
    Refuse {
        reason: ErrorReason,
        failed: Option<(&'static str, String)>,
    },
    Continue,
    Fetch,
}

async fn decide(ctx: &Interceptor, ev: &EventRequestPaused) -> Decision {
    let url = &ev.request.url;
    if ev.resource_type == ResourceType::Document {
        let mut main = ctx.main_frame.lock().await;
        match main.as_deref() {
            None => {
                *main = Some(ev.frame_id.as_ref().to_owned());
                return Decision::Document;
            }
            Some(frame) if frame == ev.frame_id.as_ref() => {
                ctx.seen.navigation_blocked(url);
                return Decision::StayPut;
            }
            Some(_) => {}
        }
    }
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Decision::Continue;
    }
    let blocked = ctx.allow.refuses(&ev.resource_type, url);
    let n = ctx.seen.request(url, blocked);
    if blocked {
        return Decision::Refuse {
            reason: ErrorReason::BlockedByClient,
            failed: None,
        };
    }
    if !matches!(ev.request.method.as_str(), "GET" | "HEAD") {
        let why = format!(
            "{} requests are not sent (rip-render sends GET and HEAD only)",
            ev.request.method
        );
        return Decision::Refuse {
            reason: ErrorReason::BlockedByClient,
            failed: Some(("render.method", why)),
        };
    }
    if n > ctx.max_requests {
        let why = format!("more than {} requests on one page", ctx.max_requests);
        return Decision::Refuse {
            reason: ErrorReason::BlockedByClient,
            failed: Some(("render.tooManyRequests", why)),
        };
    }
    Decision::Fetch
}

async fn answer(page: &Page, ctx: &Interceptor, ev: &EventRequestPaused) {
    let url = ev.request.url.clone();
    let result = match decide(ctx, ev).await {
        Decision::Document => match ctx.document.get() {
            Some(doc) => fulfill(page, ev, doc).await,
            // A navigation before the page's document was given: nothing of the page's.
            None => refuse(page, ev, ErrorReason::BlockedByClient).await,
        },
        Decision::StayPut => {
            let params = FulfillRequestParams::new(ev.request_id.clone(), 204);
            page.execute(params).await.map(|_| ())
        }
        Decision::Continue => page
            .execute(ContinueRequestParams::new(ev.request_id.clone()))
            .await
            .map(|_| ()),
        Decision::Refuse { reason, failed } => {
            if let Some((code, message)) = failed {
                ctx.seen.failed(failed_request(ev, None, code, message));
                ctx.seen.answered(&url);
            }
            refuse(page, ev, reason).await
        }
        Decision::Fetch => {
            let r = fetch(page, ctx, ev).await;
            ctx.seen.answered(&url);
            r
        }
    };
    if let Err(e) = result {
        // The page went away meanwhile (closed, crashed, navigated): nothing to answer.
        tracing::debug!("cannot answer the request for {url}: {e}");
    }
}

async fn fetch(
    page: &Page,
    ctx: &Interceptor,
    ev: &EventRequestPaused,
) -> chromiumoxide::error::Result<()> {
    let fetched = ctx.shared.fetch(&ctx.fetcher, &ev.request.url).await;
    match fetched.outcome {
        Outcome::Page(resp) => fulfill(page, ev, &resp).await,
        Outcome::Failure(f) => {
            let failed = failed_request(ev, f.status, &f.class.code, f.class.message.clone());
            ctx.seen.failed(failed);
            match f.status {
                Some(status) => fulfill_failure(page, ev, status, &f).await,
                None => refuse(page, ev, reason_of(&f)).await,
            }
        }
        Outcome::Skipped(s) => {
            ctx.seen
                .failed(failed_request(ev, s.status, "render.skipped", s.reason));
            refuse(page, ev, ErrorReason::BlockedByClient).await
        }
    }
}

fn failed_request(
    ev: &EventRequestPaused,
    status: Option<u16>,
    code: &str,
    message: String,
) -> FailedRequest {
    FailedRequest {
        url: ev.request.url.clone(),
        resource_type: ev.resource_type.as_ref().to_owned(),
        status,
        code: code.to_owned(),
        message,
    }
}

/// The network error the browser is told for a failure without a response.
fn reason_of(f: &FetchFailure) -> ErrorReason {
    match f.class.code.as_str() {
        c if c.starts_with("timeout") => ErrorReason::TimedOut,
        c if c.contains("reset") => ErrorReason::ConnectionReset,
        c if c.contains("refused") => ErrorReason::ConnectionRefused,
        c if c.starts_with("validation") => ErrorReason::AddressUnreachable,
        _ => ErrorReason::Failed,
    }
}

fn headers_of(headers: &[(String, String)]) -> Vec<HeaderEntry> {
    headers
        .iter()
        .filter(|(k, _)| !DROPPED_HEADERS.contains(&k.to_ascii_lowercase().as_str()))
        .map(|(k, v)| HeaderEntry::new(k.clone(), v.clone()))
        .collect()
}

async fn fulfill(
    page: &Page,
    ev: &EventRequestPaused,
    resp: &Response,
) -> chromiumoxide::error::Result<()> {
    let mut params = FulfillRequestParams::new(ev.request_id.clone(), i64::from(resp.status));
    params.response_headers = Some(headers_of(&resp.headers));
    params.body = Some(
        base64::engine::general_purpose::STANDARD
            .encode(&resp.body)
            .into(),
    );
    page.execute(params).await.map(|_| ())
}

/// A failed subresource that had a response (a 404, a 503 after retries): the page's
/// script sees that status, as it would without rip-render.
async fn fulfill_failure(
    page: &Page,
    ev: &EventRequestPaused,
    status: u16,
    f: &FetchFailure,
) -> chromiumoxide::error::Result<()> {
    let mut params = FulfillRequestParams::new(ev.request_id.clone(), i64::from(status));
    if let Some(ct) = &f.content_type {
        params.response_headers = Some(vec![HeaderEntry::new("content-type", ct.clone())]);
    }
    let body = f.body.as_deref().unwrap_or_default();
    params.body = Some(
        base64::engine::general_purpose::STANDARD
            .encode(body)
            .into(),
    );
    page.execute(params).await.map(|_| ())
}

async fn refuse(
    page: &Page,
    ev: &EventRequestPaused,
    reason: ErrorReason,
) -> chromiumoxide::error::Result<()> {
    page.execute(FailRequestParams::new(ev.request_id.clone(), reason))
        .await
        .map(|_| ())
}
