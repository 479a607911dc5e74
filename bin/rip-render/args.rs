//! `rip-render`'s command line.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// Render every `ref` record on the input in headless Chromium: write one `page` (its DOM
/// after the page's scripts ran), `failure` or `expected` per ref, pass every other record
/// through, end with a `summary`.
///
/// The document and every request the page makes go through the same HTTP stack as
/// rip-fetch (cache, robots.txt, per-host gap and Retry-After shared through the cache
/// folder, retries, the same classifier: a 503 is a retryable failure). Each page gets a
/// fresh browser context. Exit code 2 when any ref failed.
#[derive(Debug, Parser)]
#[command(
    name = "rip-render",
    version,
    about = "The render stage: one page (the DOM after scripts ran), failure or expected \
             record per ref, through headless Chromium.",
    mut_arg("concurrency", |a| a
        .default_value("4")
        .help_heading(RENDERING)
        .help("Pages rendered at once: browser tabs (the page's own requests are not limited by it)"))
)]
pub struct Cli {
    #[command(flatten)]
    pub common: rip_cli::StageArgs,

    #[command(flatten)]
    pub urls: rip_cli::UrlArgs,

    #[command(flatten)]
    pub http: rip_cli::http::HttpArgs,

    /// When a page is done: `settled` (loaded, no request in flight, and the page says
    /// it has no fetch, XHR, inserted script or timer within 1 s pending, for 100 ms; else
    /// as `network-idle`), `load` (its load event), `network-idle` (loaded, and no
    /// request in flight for 500 ms) or `selector:CSS` (an element matches).
    #[arg(help_heading = RENDERING, long, default_value = "settled", value_name = "RULE")]
    pub wait: rip_render::Wait,
    /// The longest a page may take to settle (then a TIMEOUT failure, `render.timeout`).
    #[arg(help_heading = RENDERING, long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub page_timeout: Duration,
    /// Resource types to let through, refused by default (repeatable or comma-separated).
    #[arg(help_heading = RENDERING, long, value_enum, value_delimiter = ',', value_name = "TYPE")]
    pub allow: Vec<Allowed>,
    /// Requests one page may make at most; later ones are refused and noted on the page.
    #[arg(help_heading = RENDERING, long, default_value_t = 500, value_name = "N")]
    pub max_page_requests: u32,
    /// The old spelling of --max-page-requests (--max-requests is rip-discover's budget of
    /// fetches for a whole crawl).
    #[arg(
        long = "max-requests",
        value_name = "N",
        hide = true,
        conflicts_with = "max_page_requests"
    )]
    pub old_max_requests: Option<u32>,
    /// The Chromium executable.
    #[arg(help_heading = RENDERING, long, env = "RIP_CHROMIUM", default_value = rip_render::DEFAULT_CHROMIUM, value_name = "PATH")]
    pub chromium: PathBuf,
    /// A page's JavaScript heap at most, in MiB: a script allocating without end crashes
    /// its own page (a `render.crashed` failure) at this size.
    #[arg(help_heading = RENDERING, long, default_value_t = 256, value_name = "MIB")]
    pub js_heap: u32,
    /// Times a page is rendered again in a new browser after its browser died.
    #[arg(help_heading = RENDERING, long, default_value_t = 2, value_name = "N")]
    pub browser_retries: u32,
    /// Pages share one browser session: cookies and storage left by a page (its scripts,
    /// its responses' Set-Cookie) are seen by the pages after it, until the browser is
    /// restarted. Without it each page has a fresh context. Either way a tab shows one page.
    #[arg(help_heading = RENDERING, long)]
    pub session: bool,
    #[command(flatten, next_help_heading = ARCHIVING)]
    pub warc: rip_cli::WarcArgs,
    /// Worker threads of the async runtime.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub threads: usize,
    /// Render only the refs whose URL matches this regular expression and pass the others
    /// through untouched, for a `rip-fetch` after this stage: `rip-render --only RE |
    /// rip-fetch` renders some pages and fetches the rest.
    /// Refs marked needsBrowser (sent by a rip-route render rule) are rendered whatever
    /// it says.
    #[arg(help_heading = WHICH, long, value_name = "REGEX")]
    pub only: Option<regex::Regex>,
    /// Render only the refs a rip-route render rule marked needsBrowser and pass the
    /// others (retries for rip-fetch) through untouched: `rip-fetch | rip-route
    /// --render-url RE | rip-render --only-marked | rip-fetch | rip-route --final`.
    #[arg(help_heading = WHICH, long, conflicts_with = "only")]
    pub only_marked: bool,
    #[command(flatten)]
    pub metrics: rip_cli::metrics::MetricsArgs,
}

const RENDERING: &str = "Rendering";
const WHICH: &str = "Which refs";
const ARCHIVING: &str = "Archiving";

/// The command line parsed, `-h` short (the first sentence of each flag's help; the HTTP
/// flags, rip-fetch's, only under `--help`) and `--help` whole.
pub fn parse() -> Cli {
    rip_cli::usage::parse_with::<Cli>(|cmd| {
        rip_cli::help::short_help(cmd, rip_cli::http::HEADINGS, rip_cli::http::SHORT_NOTE)
    })
}

/// A resource type `--allow` lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Allowed {
    /// Images.
    Images,
    /// Web fonts.
    Fonts,
    /// Audio and video.
    Media,
    /// All three.
    All,
}

impl Cli {
    pub fn allow(&self) -> rip_render::Allow {
        let has = |t: Allowed| self.allow.contains(&t) || self.allow.contains(&Allowed::All);
        rip_render::Allow {
            images: has(Allowed::Images),
            fonts: has(Allowed::Fonts),
            media: has(Allowed::Media),
        }
    }
}
