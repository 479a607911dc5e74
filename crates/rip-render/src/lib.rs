#![deny(missing_docs)]
//! `rip-render`: turns `ref` records into `page`, `failure` or `expected` records whose
//! body is the page's DOM after headless Chromium ran its scripts.
//!
//! The same contract as `rip-fetch`: exactly one record per ref, every other line passed
//! through unchanged, first-round refs in `ledger` records, a closing `summary`. So
//! `rip-discover | rip-render | rip-parse` and `rip-fetch | rip-route | rip-render` read as
//! they do with `rip-fetch`.
//!
//! # The path of a ref
//!
//! 1. **The rendered variant in the cache** ([`record::cache_key`]): a fresh one is the
//!    page at once, without a browser.
//! 2. **The document**, fetched by [`rip_http::Fetcher`] exactly as `rip-fetch` fetches it:
//!    cache, robots.txt (a disallowed URL is an `expected` record and never reaches the
//!    browser), the per-host gap and Retry-After shared through the cache folder, the
//!    circuit breaker, retries, and the same classifier, so a 503 is a retryable
//!    `failure` and a 404 a permanent one, as from `rip-fetch`. A response that is not
//!    HTML (an image, a PDF, JSON) is written as `rip-fetch` writes it, unrendered.
//! 3. **The render** (`tab`): a fresh browser context and tab per page; the document is
//!    served to Chromium from the response just fetched, and every request the page makes
//!    goes through the same `Fetcher` ([`intercept`]): Chromium itself asks the network for
//!    nothing. Images, fonts and media are refused unless allowed ([`Allow`]).
//! 4. **Done** by [`Wait`]: `settled` (the default: loaded, nothing in flight, and the page
//!    says it has no work pending, see `settle`), `load`, `network-idle` (loaded, and no
//!    request in flight for 500 ms) or `selector:CSS`, within [`RenderSettings::page_timeout`]; a page that does not
//!    settle is a `TIMEOUT` failure (`render.timeout`) naming what it was doing, with the
//!    DOM seen so far as the failure's body. A renderer that crashes (a script allocating
//!    without end reaches the heap cap, [`BrowserSettings::js_heap_mib`]) is a `RESOURCE`
//!    failure (`render.crashed`). Dialogs are dismissed and counted; a navigation away
//!    from the page is refused and noted.
//! 5. **The page record**: the document's record (`status`, `headers`, `finalUrl`,
//!    `siteFetch` of the raw fetch) with the DOM as `body` and a `render` object: browser,
//!    wait rule, time, requests, blocked requests, console errors, failed subresources
//!    (see `docs/records.md`). It is cached as the rendered variant.
//!
//! # The browser
//!
//! One Chromium per stage ([`browser`]), started on first need with a profile folder of
//! its own, `-c` tabs at once. While pages settle, a fresh context with a blank tab is
//! opened ahead (one at a time, at most one per tab) and readied for its page (the
//! interception, the event listeners and the settle script in place: a dozen DevTools
//! commands), so the next page starts at once instead of waiting the ~0.3 s a context and
//! a tab take to open and the ~0.1 s of that set-up. The DevTools domains chromiumoxide
//! enables that a render does not read (`Network`, `Performance`, `Log`) are turned off.
//! When it dies (killed, crashed) the renders in flight fail
//! with it as soon as that is known (its DevTools connection ends or its process exits, not
//! at their page timeout) and are done again in a new one, up to
//! [`RenderSettings::browser_retries`] times per ref; then the ref is a retryable `RESOURCE`
//! failure (`render.browserLost`), for `rip-route` to send round again. The summary's
//! `browserLost` counts each browser lost once, however many pages were in it.
//! Each page has its own context, so nothing a page
//! leaves (cookies, storage, a leaking tab) outlives it; with
//! [`RenderSettings::session`] the pages share the browser's default context instead, so
//! cookies and storage carry over (a sign-in done once), and each page still has a tab of
//! its own, closed after it.

//!
//! # Archiving: `--warc`
//!
//! With [`Config::warc`], the stage's fetcher has `rip_warc`'s WARC tap, as `rip-fetch
//! --warc` has: every exchange on the wire (the document, and each subresource the pages
//! were given: scripts, stylesheets, XHR and `fetch()` data, images when allowed; each retry
//! too) is written as `request`, `response` and `metadata` records. Chromium asks the network
//! for nothing itself (every request is answered through the fetcher, see [`intercept`]), so
//! these are the responses the browser received, recorded where they came in, rather than
//! read back from the browser (`Network.getResponseBody`) as Browsertrix and brozzler must.
//! Cache hits are not archived (nothing went over the wire). The DOM of each page rendered
//! is then written as a `resource` record, `urn:dom:` and the page's URL, tied to the page's
//! `response` by `WARC-Concurrent-To` (`rip_warc::write::resource` says why a resource).

pub mod browser;
pub mod intercept;
pub mod record;
pub mod renderer;
mod seen;
mod settle;
mod shared;
mod stage;
mod tab;
pub mod wait;
mod watch;

use rip_core::{PipeOptions, Summary};
use rip_http::HttpConfig;

pub use browser::{BrowserSettings, DEFAULT_CHROMIUM, LaunchError};
pub use intercept::Allow;
pub use renderer::{RenderSettings, Renderer};
pub use stage::summary_line;
pub use wait::{BadWait, Wait};

/// The stage name in records.
pub const STAGE: &str = "rip-render";

/// What `rip-render` does.
#[derive(Debug, Clone)]
pub struct Config {
    /// The HTTP stack (documents and every subresource).
    pub http: HttpConfig,
    /// The browser, the tabs, when a page is done.
    pub render: RenderSettings,
    /// Worker threads of the async runtime.
    pub threads: usize,
    /// Only refs whose URL matches are rendered; the others pass through untouched, as
    /// refs, for a `rip-fetch` after this stage (`rip-render --only RE | rip-fetch`).
    /// `None`: every ref. A ref marked `needsBrowser` is rendered whatever this says.
    pub only: Option<regex::Regex>,
    /// Render only refs marked `needsBrowser` (sent by a `rip-route` render rule) and pass
    /// the others through, for a `rip-fetch` after (`--only-marked`).
    pub only_marked: bool,
    /// Write every exchange on the wire (the documents and the subresources the pages were
    /// given) and each rendered DOM as WARC records into these files (`--warc DIR`; see
    /// the crate's "Archiving").
    pub warc: Option<rip_warc::write::WriterConfig>,
    /// The input's name, strictness and stop flag.
    pub pipe: PipeOptions,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            http: HttpConfig::default(),
            render: RenderSettings::default(),
            threads: 2,
            only: None,
            only_marked: false,
            warc: None,
            pipe: PipeOptions::new(STAGE),
        }
    }
}

/// What stops `rip-render`.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The HTTP stack could not be built (bad header, proxy, cache folder).
    #[error(transparent)]
    Build(#[from] rip_http::BuildError),
    /// No browser to render with.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The WARC folder or a WARC file could not be created or closed (`--warc`).
    #[error("--warc: {0}")]
    Warc(#[from] rip_warc::write::Error),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// Reading, writing, or a malformed line under `--strict`.
    #[error(transparent)]
    Pipe(#[from] rip_core::PipeError),
}

/// Runs the stage: reads `input`, writes `output`, returns the closing summary (also
/// written as the last record).
pub fn run<R, W>(config: Config, input: R, output: W) -> Result<Summary, RenderError>
where
    R: std::io::Read + Send + 'static,
    W: std::io::Write,
{
    stage::run(config, input, output)
}
