//! The HTTP command-line flags every stage that fetches shares, so that `rip-discover` and
//! `rip-fetch` take the same `--proxy`, `--rule`, `--delay`, `--cache-dir`… with the same
//! defaults and the same meaning. A binary flattens [`HttpArgs`] into its own clap parser
//! and turns it into `rip_http`'s [`HttpConfig`].

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use rip_http::{BackoffKind, CacheMode, ClassifyRule, HttpConfig, IpNet, RedirectScope};

/// The headings the HTTP flags are grouped under, in `--help` order. A stage whose own
/// flags come first (rip-discover, rip-render) shows them under `--help` only (see
/// [`crate::help::short_help`]); rip-fetch, whose flags they are, under `-h` too.
pub const HEADINGS: &[&str] = &[POLITENESS, RETRIES, LIMITS, REQUESTS, NETWORK, CACHE];
/// What `-h` says of the HTTP flags where it leaves them out.
pub const SHORT_NOTE: &str = "HTTP (politeness, retries, timeouts, headers, proxy, robots.txt, \
                              cache): the same flags as rip-fetch's, listed by --help.";
/// The heading of the per-host gap, concurrency, circuit breaker and robots.txt flags.
pub const POLITENESS: &str = "Politeness";
/// The heading of the retry and failure-classification flags.
pub const RETRIES: &str = "Retries and failures";
/// The heading of the timeout, body size and redirect flags.
pub const LIMITS: &str = "Timeouts and limits";
/// The heading of the flags shaping a request (headers, proxy, auth, TLS).
pub const REQUESTS: &str = "Requests";
/// The heading of the network policy's flags (which addresses requests may connect to).
pub const NETWORK: &str = "Network policy";
/// The heading of the cache flags.
pub const CACHE: &str = "Cache";

/// HTTP flags: client, retries, politeness, robots.txt and cache.
#[derive(Debug, Clone, Args)]
pub struct HttpArgs {
    /// Requests in flight at most (all hosts).
    #[arg(help_heading = POLITENESS, long, short = 'c', default_value_t = 64, value_name = "N")]
    pub concurrency: usize,
    /// Requests in flight at most per host.
    #[arg(help_heading = POLITENESS, long, default_value_t = 4, value_name = "N")]
    pub per_host: usize,
    /// Minimum gap between two requests to one host.
    #[arg(help_heading = POLITENESS, long, default_value = "250ms", value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub delay: Duration,
    /// Random extra gap, up to this, added to each.
    #[arg(help_heading = POLITENESS, long, default_value = "100ms", value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub jitter: Duration,
    /// Requests per second at most, over all hosts (this process).
    #[arg(help_heading = POLITENESS, long, value_name = "PER_SEC")]
    pub rate: Option<f64>,

    /// Attempts per request at most, the first included (1: no retries).
    #[arg(help_heading = RETRIES, long, default_value_t = 3, value_name = "N")]
    pub attempts: u32,
    /// First retry delay.
    #[arg(help_heading = RETRIES, long, default_value = "500ms", value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub retry_base: Duration,
    /// Largest retry delay.
    #[arg(help_heading = RETRIES, long, default_value = "30s", value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub retry_max: Duration,
    /// The retry delay curve.
    #[arg(help_heading = RETRIES, long, value_enum, default_value_t = Backoff::Decorrelated, value_name = "CURVE")]
    pub backoff: Backoff,
    /// Largest Retry-After honoured.
    #[arg(help_heading = RETRIES, long, default_value = "300s", value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub max_retry_after: Duration,
    /// Do not wait for a Retry-After longer than this: write a THROTTLED failure with the
    /// hint instead, for rip-route to schedule.
    #[arg(help_heading = RETRIES, long, value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub give_up_after: Option<Duration>,
    /// A classification rule, `STATUS[@HOST]=CATEGORY[:retry|:noretry]`, e.g.
    /// `403@example.com=THROTTLED` (repeatable; tried before the built-in rules).
    #[arg(help_heading = RETRIES, long = "rule", value_name = "RULE")]
    pub rules: Vec<ClassifyRule>,
    /// Consecutive failures after which a host rests (0: never).
    #[arg(help_heading = POLITENESS, long, default_value_t = 10, value_name = "N")]
    pub circuit_threshold: u32,
    /// How long a host whose circuit opened rests.
    #[arg(help_heading = POLITENESS, long, default_value = "60s", value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub circuit_recovery: Duration,

    /// Connect timeout.
    #[arg(help_heading = LIMITS, long, default_value = "10s", value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub connect_timeout: Duration,
    /// Longest silence while waiting for or reading a response.
    #[arg(help_heading = LIMITS, long, default_value = "30s", value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub read_timeout: Duration,
    /// Longest time for one request.
    #[arg(help_heading = LIMITS, long, default_value = "120s", value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub timeout: Duration,
    /// Largest body kept, after decompression (a size: 16MiB, 500k; a bare number is
    /// bytes); longer ones are cut and marked `truncated`.
    #[arg(help_heading = LIMITS, long, default_value = "16MiB", value_parser = crate::parse_size, value_name = "SIZE")]
    pub max_body: usize,
    /// Redirect hops followed at most.
    #[arg(help_heading = LIMITS, long, default_value_t = 10, value_name = "N")]
    pub max_redirects: u32,
    /// Where redirects may lead: `any`, `same-host`, or a domain (its subdomains included).
    #[arg(help_heading = LIMITS, long, default_value = "any", value_name = "SCOPE")]
    pub redirect_scope: String,

    /// The User-Agent header.
    #[arg(help_heading = REQUESTS, long, env = "RIP_USER_AGENT")]
    pub user_agent: Option<String>,
    /// An extra request header, `Name: value` (repeatable).
    #[arg(help_heading = REQUESTS, long = "header", short = 'H', value_name = "HEADER", value_parser = parse_header)]
    pub headers: Vec<(String, String)>,
    /// A proxy for every request.
    #[arg(help_heading = REQUESTS, long, env = "RIP_PROXY", hide_env_values = true)]
    pub proxy: Option<String>,
    /// HTTP basic auth, `user:password`.
    #[arg(help_heading = REQUESTS, long, value_name = "USER:PASS")]
    pub basic_auth: Option<String>,
    /// Keep cookies between requests.
    #[arg(help_heading = REQUESTS, long)]
    pub cookies: bool,
    /// Accept invalid TLS certificates.
    #[arg(help_heading = REQUESTS, long)]
    pub insecure: bool,
    /// Do not obey robots.txt.
    #[arg(help_heading = POLITENESS, long)]
    pub ignore_robots: bool,
    /// A network requests may connect to, e.g. `10.0.0.0/8` or `192.168.1.5` (repeatable).
    /// Loopback, private, link-local and other special-use addresses are refused but for
    /// the networks of the start URLs (a `ref` without a `parent`) and these.
    #[arg(help_heading = NETWORK, long, value_name = "CIDR", value_parser = parse_network)]
    pub allow_network: Vec<IpNet>,
    /// A network requests may never connect to, whatever else allows it (repeatable).
    #[arg(help_heading = NETWORK, long, value_name = "CIDR", value_parser = parse_network)]
    pub deny_network: Vec<IpNet>,
    /// Resolve HOST to ADDR without DNS, `HOST=ADDR[,ADDR…]` (repeatable); the addresses
    /// are held to the network policy as any other.
    #[arg(help_heading = NETWORK, long, value_name = "HOST=ADDR", value_parser = parse_resolve)]
    pub resolve: Vec<(String, Vec<std::net::IpAddr>)>,

    /// The cache folder, shared by every stage of a pipeline (also holds each host's
    /// politeness schedule).
    #[arg(help_heading = CACHE, long, env = "RIP_CACHE_DIR", default_value = ".rip-cache")]
    pub cache_dir: PathBuf,
    /// What the cache may do: read-write, read-only, write-only, off.
    #[arg(help_heading = CACHE, long, env = "RIP_CACHE_MODE", default_value = "read-write", value_name = "MODE")]
    pub cache: CacheMode,
    /// How long a cache entry is fresh (default: forever).
    #[arg(help_heading = CACHE, long, value_parser = humantime::parse_duration, value_name = "DURATION")]
    pub ttl: Option<Duration>,
    /// Keep politeness schedules to this process (do not share them through the cache folder).
    #[arg(help_heading = POLITENESS, long)]
    pub no_shared_politeness: bool,
}

/// The retry delay curve, as a flag value.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Backoff {
    /// Decorrelated jitter (the default).
    Decorrelated,
    /// Exponential, without jitter.
    Exponential,
    /// Exponential with full jitter.
    Full,
}

impl HttpArgs {
    /// The configuration these flags describe.
    pub fn config(&self) -> HttpConfig {
        let mut h = HttpConfig::default();
        let c = &mut h.client;
        if let Some(ua) = &self.user_agent {
            c.user_agent = ua.clone();
        }
        c.headers.extend(self.headers.iter().cloned());
        c.proxy = self.proxy.clone();
        c.basic_auth = self.basic_auth.as_ref().map(|s| match s.split_once(':') {
            Some((u, p)) => (u.to_owned(), Some(p.to_owned())),
            None => (s.clone(), None),
        });
        c.cookies = self.cookies;
        c.insecure = self.insecure;
        c.connect_timeout = self.connect_timeout;
        c.read_timeout = self.read_timeout;
        c.total_timeout = self.timeout;
        c.max_body = self.max_body;
        c.max_redirects = self.max_redirects;
        c.redirect_scope = match self.redirect_scope.as_str() {
            "any" => RedirectScope::Any,
            "same-host" => RedirectScope::SameHost,
            d => RedirectScope::Domain(d.to_owned()),
        };
        c.pool_idle_per_host = self.per_host.max(1) * 2;

        let r = &mut h.retry;
        r.max_attempts = self.attempts.max(1);
        r.base_delay = self.retry_base;
        r.max_delay = self.retry_max;
        r.backoff = match self.backoff {
            Backoff::Decorrelated => BackoffKind::DecorrelatedJitter,
            Backoff::Exponential => BackoffKind::Exponential,
            Backoff::Full => BackoffKind::FullJitter,
        };
        r.max_retry_after = self.max_retry_after;
        r.give_up_after = self.give_up_after;

        let p = &mut h.politeness;
        p.min_gap = self.delay;
        p.jitter = self.jitter;
        p.per_host_concurrency = self.per_host.max(1);
        p.total_concurrency = self.concurrency.max(1);
        p.global_rate = self.rate;
        p.circuit_threshold = self.circuit_threshold;
        p.circuit_recovery = self.circuit_recovery;
        p.shared = !self.no_shared_politeness;

        h.cache.dir = Some(self.cache_dir.clone());
        h.cache.dir_from = Some(crate::cache_dir::named_by());
        h.cache.mode = self.cache;
        h.cache.ttl = self.ttl;
        h.robots = !self.ignore_robots;
        h.rules = self.rules.clone();
        h.client.network = rip_http::NetworkConfig {
            guard: true,
            allow: self.allow_network.clone(),
            deny: self.deny_network.clone(),
            hosts: self.resolve.clone(),
        };
        h
    }
}

/// A network, `10.0.0.0/8`, or one address, `10.0.0.5` (as `/32` or `/128`).
fn parse_network(s: &str) -> Result<IpNet, NetworkError> {
    let s = s.trim();
    s.parse::<IpNet>()
        .or_else(|_| s.parse::<std::net::IpAddr>().map(IpNet::from))
        .map_err(|_| NetworkError::Network(s.to_owned()))
}

/// `HOST=ADDR[,ADDR…]`.
fn parse_resolve(s: &str) -> Result<(String, Vec<std::net::IpAddr>), NetworkError> {
    let bad = || NetworkError::Resolve(s.to_owned());
    let (host, addrs) = s.split_once('=').ok_or_else(bad)?;
    let host = host.trim().to_ascii_lowercase();
    let addrs = (addrs.split(','))
        .map(|a| a.trim().trim_matches(['[', ']']).parse())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|_| bad())?;
    if host.is_empty() || addrs.is_empty() {
        return Err(bad());
    }
    Ok((host, addrs))
}

/// Why a `--allow-network`, `--deny-network` or `--resolve` value does not parse; each
/// variant holds the value as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    /// Not a network nor an address.
    #[error("bad network `{0}` (hint: a CIDR such as 10.0.0.0/8 or fd00::/8, or one address)")]
    Network(String),
    /// Not `HOST=ADDR[,ADDR…]`.
    #[error("bad --resolve `{0}` (hint: HOST=ADDR[,ADDR…], e.g. wiki.local=192.168.1.5)")]
    Resolve(String),
}

/// `Name: value`, trimmed.
fn parse_header(s: &str) -> Result<(String, String), HeaderError> {
    let (k, v) = s
        .split_once(':')
        .ok_or_else(|| HeaderError::NoColon(s.to_owned()))?;
    let k = k.trim();
    if k.is_empty() || k.contains(char::is_whitespace) {
        return Err(HeaderError::BadName(s.to_owned()));
    }
    Ok((k.to_owned(), v.trim().to_owned()))
}

/// Why a `--header` value is not `Name: value`; each variant holds the value as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// No `:` between a name and a value.
    #[error("bad header `{0}` (hint: `Name: value`)")]
    NoColon(String),
    /// The name is empty or holds white space.
    #[error("bad header name in `{0}` (hint: `Name: value`)")]
    BadName(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        http: HttpArgs,
    }

    fn parse(args: &[&str]) -> Result<HttpConfig, clap::Error> {
        let mut all = vec!["t"];
        all.extend_from_slice(args);
        T::try_parse_from(all).map(|t| t.http.config())
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let h = parse(&[]).unwrap();
        assert_eq!(h.retry.max_attempts, 3);
        assert_eq!(h.retry.base_delay, Duration::from_millis(500));
        assert_eq!(h.retry.max_delay, Duration::from_secs(30));
        assert_eq!(h.retry.max_retry_after, Duration::from_secs(300));
        assert_eq!(h.politeness.min_gap, Duration::from_millis(250));
        assert_eq!(h.politeness.total_concurrency, 64);
        assert_eq!(h.politeness.per_host_concurrency, 4);
        assert_eq!(h.client.max_body, 16 << 20);
        assert!(h.robots);
        assert!(h.politeness.shared);
        assert_eq!(h.cache.dir, Some(PathBuf::from(".rip-cache")));
    }

    #[test]
    fn every_flag_reaches_the_config() {
        let h = parse(&[
            "-c3",
            "--per-host=2",
            "--delay=1s",
            "--attempts=5",
            "--backoff=full",
            "--rule=403@example.com=THROTTLED",
            "--max-body=500k",
            "--redirect-scope=same-host",
            "-H",
            "Accept-Language: en",
            "--proxy=http://127.0.0.1:3128",
            "--basic-auth=ann:secret",
            "--cookies",
            "--ignore-robots",
            "--cache=off",
            "--ttl=1h",
            "--allow-network=10.0.0.0/8",
            "--allow-network=192.168.1.5",
            "--deny-network=fd00::/8",
            "--resolve=wiki.local=192.168.1.5,::1",
        ])
        .unwrap();
        let n = &h.client.network;
        assert!(n.guard);
        assert_eq!(
            n.allow,
            [
                "10.0.0.0/8".parse().unwrap(),
                "192.168.1.5/32".parse().unwrap()
            ]
        );
        assert_eq!(n.deny, ["fd00::/8".parse::<IpNet>().unwrap()]);
        assert_eq!(
            n.hosts,
            [(
                "wiki.local".to_owned(),
                vec!["192.168.1.5".parse().unwrap(), "::1".parse().unwrap()]
            )]
        );
        assert_eq!(h.politeness.total_concurrency, 3);
        assert_eq!(h.politeness.per_host_concurrency, 2);
        assert_eq!(h.politeness.min_gap, Duration::from_secs(1));
        assert_eq!(h.retry.max_attempts, 5);
        assert!(matches!(h.retry.backoff, BackoffKind::FullJitter));
        assert_eq!(h.rules.len(), 1);
        assert_eq!(h.client.max_body, 500 << 10);
        assert!(matches!(h.client.redirect_scope, RedirectScope::SameHost));
        assert_eq!(
            h.client.headers.last(),
            Some(&("Accept-Language".to_owned(), "en".to_owned()))
        );
        assert_eq!(h.client.proxy.as_deref(), Some("http://127.0.0.1:3128"));
        assert_eq!(
            h.client.basic_auth,
            Some(("ann".to_owned(), Some("secret".to_owned())))
        );
        assert!(h.client.cookies);
        assert!(!h.robots);
        assert!(matches!(h.cache.mode, CacheMode::Off));
        assert_eq!(h.cache.ttl, Some(Duration::from_secs(3600)));
    }

    #[test]
    fn bad_values_name_the_flag_and_the_value() {
        for (args, want) in [
            (&["-H", "no colon"][..], "no colon"),
            (&["--max-body=12parsecs"], "12parsecs"),
            (
                &["--max-body=99999999999999999999G"],
                "99999999999999999999G",
            ),
            (&["--delay=soon"], "soon"),
            (&["--rule=banana"], "banana"),
            (&["--allow-network=10.0.0.0/33"], "10.0.0.0/33"),
            (&["--deny-network=lan"], "lan"),
            (&["--resolve=wiki.local"], "wiki.local"),
            (&["--resolve=wiki.local=nowhere"], "nowhere"),
        ] {
            let err = parse(args).expect_err("refused").to_string();
            assert!(err.contains(want), "{args:?}: {err}");
        }
    }
}
