//! [`HttpConfig`]: every knob of the HTTP stack, with the defaults the issue asks for.
//!
//! Library code never parses command lines: binaries turn their arguments into these structs.

use std::path::PathBuf;
use std::time::Duration;

use crate::classify::ClassifyRule;

/// Everything a [`Fetcher`](crate::Fetcher) needs to know.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// The client: user agent, headers, timeouts, limits, redirects.
    pub client: ClientConfig,
    /// How failed requests are retried.
    pub retry: RetryConfig,
    /// Per-host politeness and rate limits.
    pub politeness: PolitenessConfig,
    /// The on-disk cache.
    pub cache: CacheConfig,
    /// Obey robots.txt (default true; `--ignore-robots` turns it off).
    pub robots: bool,
    /// User classification rules, tried before the built-in ones, in order.
    pub rules: Vec<ClassifyRule>,
    /// The stage making the requests (`rip-fetch`, `rip-discover`), recorded as the
    /// `fetchedBy` of its site fetches (with each cache entry it writes, and on pages).
    pub stage: String,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            client: ClientConfig::default(),
            retry: RetryConfig::default(),
            politeness: PolitenessConfig::default(),
            cache: CacheConfig::default(),
            robots: true,
            rules: Vec::new(),
            stage: "rip-http".to_owned(),
        }
    }
}

/// The default `User-Agent`: `ripperoni/<version> (+…)`.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "ripperoni/",
    env!("CARGO_PKG_VERSION"),
    " (+https://example.invalid/ripperoni)"
);

/// The product token robots.txt groups are matched against.
pub const ROBOTS_AGENT: &str = "ripperoni";

/// Client construction and per-request bounds.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The token matched against robots.txt `User-agent` lines (default `ripperoni`).
    pub robots_agent: String,
    /// Extra request headers, sent on every request.
    pub headers: Vec<(String, String)>,
    /// A proxy URL for all requests (`http://`, `https://` or `socks5://`... as reqwest supports).
    pub proxy: Option<String>,
    /// HTTP basic auth: user and optional password, sent to every host.
    pub basic_auth: Option<(String, Option<String>)>,
    /// Keep cookies across requests (off by default).
    pub cookies: bool,
    /// Accept invalid TLS certificates (off: verification is on by default).
    pub insecure: bool,
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// Longest silence while reading a response (between two reads).
    pub read_timeout: Duration,
    /// Longest time for one request, from sending to the last body byte.
    pub total_timeout: Duration,
    /// Largest body kept, counted after decompression; longer bodies are cut and marked
    /// `truncated`.
    pub max_body: usize,
    /// Largest URL (request target or `Location`) accepted, in bytes.
    pub max_url_len: usize,
    /// Redirect hops followed at most; one more is a `VALIDATION` failure.
    pub max_redirects: u32,
    /// Where redirects may lead.
    pub redirect_scope: RedirectScope,
    /// Idle connections kept per host in the pool.
    pub pool_idle_per_host: usize,
    /// Which addresses requests may connect to ([`crate::network`]; open by default,
    /// programs guard it).
    pub network: crate::network::NetworkConfig,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            robots_agent: ROBOTS_AGENT.to_owned(),
            headers: Vec::new(),
            proxy: None,
            basic_auth: None,
            cookies: false,
            insecure: false,
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(30),
            total_timeout: Duration::from_secs(120),
            max_body: 16 << 20,
            max_url_len: 8 << 10,
            max_redirects: 10,
            redirect_scope: RedirectScope::Any,
            pool_idle_per_host: 32,
            network: crate::network::NetworkConfig::default(),
        }
    }
}

/// Where a redirect may lead. A redirect out of scope is not followed: the fetch ends as
/// a [`Skip`](crate::Skip) (an `expected` record) naming the `Location`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedirectScope {
    /// Any http(s) URL.
    Any,
    /// Only the host of the requested URL.
    SameHost,
    /// The host of the requested URL or any of its subdomains, or of this domain.
    Domain(String),
}

/// Shape of the delays between attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackoffKind {
    /// `sleep = min(max, rand(base, prev × 3))` (the default; AWS's "decorrelated jitter").
    #[default]
    DecorrelatedJitter,
    /// `sleep = min(max, base × 2^n)`, no jitter.
    Exponential,
    /// `sleep = rand(0, min(max, base × 2^n))`.
    FullJitter,
}

/// How failed requests are retried within one fetch.
#[derive(Debug, Clone)]
pub struct RetryConfig {
    /// Attempts at most, the first one included (1 disables retries).
    pub max_attempts: u32,
    /// First delay.
    pub base_delay: Duration,
    /// Largest computed delay.
    pub max_delay: Duration,
    /// The delay curve.
    pub backoff: BackoffKind,
    /// Largest Retry-After honoured; a longer one is cut to this.
    pub max_retry_after: Duration,
    /// When a Retry-After is longer than this, do not wait inside the fetch: end it as a
    /// retryable `THROTTLED` failure carrying the hint (rip-route schedules it with
    /// `notBefore`). `None` waits up to `max_retry_after`.
    pub give_up_after: Option<Duration>,
}

impl Default for RetryConfig {
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            backoff: BackoffKind::DecorrelatedJitter,
            max_retry_after: Duration::from_secs(300),
            give_up_after: None,
        }
    }
}

/// Per-host politeness.
#[derive(Debug, Clone)]
pub struct PolitenessConfig {
    /// Minimum gap between two request starts to one host.
    pub min_gap: Duration,
    /// Uniform random extra gap, `0..=jitter`, added to each.
    pub jitter: Duration,
    /// Requests in flight to one host at most (in this process).
    pub per_host_concurrency: usize,
    /// Requests in flight at most (in this process).
    pub total_concurrency: usize,
    /// A global rate: requests per second across all hosts (in this process); `None`: no cap.
    pub global_rate: Option<f64>,
    /// Obey robots.txt `Crawl-delay` (as a larger min gap for that host).
    pub crawl_delay: bool,
    /// Largest Crawl-delay honoured.
    pub max_crawl_delay: Duration,
    /// Consecutive failed fetches after which a host's circuit opens (0: never).
    pub circuit_threshold: u32,
    /// How long an open circuit rests the host.
    pub circuit_recovery: Duration,
    /// Share each host's schedule with other processes through `<cache dir>/hosts/`
    /// (default on when the cache dir is set).
    pub shared: bool,
}

impl Default for PolitenessConfig {
    fn default() -> Self {
        Self {
            min_gap: Duration::from_millis(250),
            jitter: Duration::from_millis(100),
            per_host_concurrency: 4,
            total_concurrency: 64,
            global_rate: None,
            crawl_delay: true,
            max_crawl_delay: Duration::from_secs(30),
            circuit_threshold: 10,
            circuit_recovery: Duration::from_secs(60),
            shared: true,
        }
    }
}

/// What the cache may do: rip-core's, shared with ripperoni's state file.
pub use rip_core::{CacheMode, UnknownCacheMode};

/// The on-disk cache.
#[derive(Debug, Clone)]
pub struct CacheConfig {
    /// The cache folder (`RIP_CACHE_DIR`; binaries default to `./.rip-cache`). `None`: no
    /// cache and no cross-process politeness.
    pub dir: Option<PathBuf>,
    /// Where `dir` was named, for messages about it: `given by --cache-dir`, `from
    /// RIP_CACHE_DIR`, `the default` (binaries set it; `None` says `as configured`).
    pub dir_from: Option<String>,
    /// What the cache may do.
    pub mode: CacheMode,
    /// How long an entry is fresh; `None`: forever.
    pub ttl: Option<Duration>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            dir: None,
            dir_from: None,
            mode: CacheMode::ReadWrite,
            ttl: None,
        }
    }
}
