//! `rip-fetch`: see the library docs. This file is glue: arguments → config → run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, ValueEnum};
use rip_http::{BackoffKind, CacheMode, ClassifyRule, HttpConfig, RedirectScope};

/// Fetch every `ref` record on the input: write one `page`, `failure` or `expected` per ref,
/// pass every other record through, end with a `summary`.
///
/// Politeness (a per-host gap, robots.txt, Retry-After) holds across every process that
/// shares the cache folder. Exit code 2 when any ref failed.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    common: rip_cli::StageArgs,

    /// Fetches in flight at most (all hosts).
    #[arg(long, short = 'c', default_value_t = 64, value_name = "N")]
    concurrency: usize,
    /// Fetches in flight at most per host.
    #[arg(long, default_value_t = 4, value_name = "N")]
    per_host: usize,
    /// Minimum gap between two requests to one host.
    #[arg(long, default_value = "250ms", value_parser = humantime::parse_duration)]
    delay: Duration,
    /// Random extra gap, up to this, added to each.
    #[arg(long, default_value = "100ms", value_parser = humantime::parse_duration)]
    jitter: Duration,
    /// Requests per second at most, over all hosts (this process).
    #[arg(long, value_name = "PER_SEC")]
    rate: Option<f64>,
    /// Write records in input order (default: as fetches end).
    #[arg(long)]
    ordered: bool,
    /// Worker threads of the async runtime (default: one per core).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,

    /// Attempts per ref at most, the first included (1: no retries).
    #[arg(long, default_value_t = 3, value_name = "N")]
    attempts: u32,
    /// First retry delay.
    #[arg(long, default_value = "500ms", value_parser = humantime::parse_duration)]
    retry_base: Duration,
    /// Largest retry delay.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    retry_max: Duration,
    /// The retry delay curve.
    #[arg(long, value_enum, default_value_t = Backoff::Decorrelated)]
    backoff: Backoff,
    /// Largest Retry-After honoured.
    #[arg(long, default_value = "300s", value_parser = humantime::parse_duration)]
    max_retry_after: Duration,
    /// Do not wait for a Retry-After longer than this: write a THROTTLED failure with the
    /// hint instead, for rip-route to schedule.
    #[arg(long, value_parser = humantime::parse_duration)]
    give_up_after: Option<Duration>,
    /// A classification rule, `STATUS[@HOST]=CATEGORY[:retry|:noretry]`, e.g.
    /// `403@example.com=THROTTLED` (repeatable; tried before the built-in rules).
    #[arg(long = "rule", value_name = "RULE")]
    rules: Vec<ClassifyRule>,
    /// Consecutive failures after which a host rests (0: never).
    #[arg(long, default_value_t = 10, value_name = "N")]
    circuit_threshold: u32,
    /// How long a host whose circuit opened rests.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    circuit_recovery: Duration,

    /// Connect timeout.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    connect_timeout: Duration,
    /// Longest silence while waiting for or reading a response.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    read_timeout: Duration,
    /// Longest time for one request.
    #[arg(long, default_value = "120s", value_parser = humantime::parse_duration)]
    timeout: Duration,
    /// Largest body kept, after decompression (e.g. 16MiB, 500k); longer ones are cut and
    /// marked `truncated`.
    #[arg(long, default_value = "16MiB", value_parser = parse_size)]
    max_body: usize,
    /// Redirect hops followed at most.
    #[arg(long, default_value_t = 10)]
    max_redirects: u32,
    /// Where redirects may lead: `any`, `same-host`, or a domain (its subdomains included).
    #[arg(long, default_value = "any")]
    redirect_scope: String,

    /// The User-Agent header.
    #[arg(long, env = "RIP_USER_AGENT")]
    user_agent: Option<String>,
    /// An extra request header, `Name: value` (repeatable).
    #[arg(long = "header", short = 'H', value_name = "HEADER")]
    headers: Vec<String>,
    /// A proxy for every request.
    #[arg(long, env = "RIP_PROXY")]
    proxy: Option<String>,
    /// HTTP basic auth, `user:password`.
    #[arg(long, value_name = "USER:PASS")]
    basic_auth: Option<String>,
    /// Keep cookies between requests.
    #[arg(long)]
    cookies: bool,
    /// Accept invalid TLS certificates.
    #[arg(long)]
    insecure: bool,
    /// Do not obey robots.txt.
    #[arg(long)]
    ignore_robots: bool,

    /// The cache folder, shared by every stage of a pipeline (also holds each host's
    /// politeness schedule).
    #[arg(long, env = "RIP_CACHE_DIR", default_value = ".rip-cache")]
    cache_dir: PathBuf,
    /// What the cache may do: read-write, read-only, write-only, off.
    #[arg(long, env = "RIP_CACHE_MODE", default_value = "read-write")]
    cache: CacheMode,
    /// How long a cache entry is fresh (default: forever).
    #[arg(long, value_parser = humantime::parse_duration)]
    ttl: Option<Duration>,
    /// Keep politeness schedules to this process (do not share them through the cache folder).
    #[arg(long)]
    no_shared_politeness: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Backoff {
    Decorrelated,
    Exponential,
    Full,
}

fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: usize = n
        .parse()
        .map_err(|_| format!("bad size `{s}` (e.g. 16MiB, 500k)"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(format!("bad size unit in `{s}` (use k, M or G)")),
    };
    Ok(n * mult)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli.common.init_logging();
    rip_cli::exit_with("rip-fetch", run(cli))
}

fn http_config(cli: &Cli) -> anyhow::Result<HttpConfig> {
    let mut h = HttpConfig::default();
    let c = &mut h.client;
    if let Some(ua) = &cli.user_agent {
        c.user_agent = ua.clone();
    }
    for header in &cli.headers {
        let (k, v) = header
            .split_once(':')
            .with_context(|| format!("bad --header `{header}` (hint: `Name: value`)"))?;
        c.headers.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    c.proxy = cli.proxy.clone();
    c.basic_auth = cli.basic_auth.as_ref().map(|s| match s.split_once(':') {
        Some((u, p)) => (u.to_owned(), Some(p.to_owned())),
        None => (s.clone(), None),
    });
    c.cookies = cli.cookies;
    c.insecure = cli.insecure;
    c.connect_timeout = cli.connect_timeout;
    c.read_timeout = cli.read_timeout;
    c.total_timeout = cli.timeout;
    c.max_body = cli.max_body;
    c.max_redirects = cli.max_redirects;
    c.redirect_scope = match cli.redirect_scope.as_str() {
        "any" => RedirectScope::Any,
        "same-host" => RedirectScope::SameHost,
        d => RedirectScope::Domain(d.to_owned()),
    };
    c.pool_idle_per_host = cli.per_host.max(1) * 2;

    let r = &mut h.retry;
    r.max_attempts = cli.attempts.max(1);
    r.base_delay = cli.retry_base;
    r.max_delay = cli.retry_max;
    r.backoff = match cli.backoff {
        Backoff::Decorrelated => BackoffKind::DecorrelatedJitter,
        Backoff::Exponential => BackoffKind::Exponential,
        Backoff::Full => BackoffKind::FullJitter,
    };
    r.max_retry_after = cli.max_retry_after;
    r.give_up_after = cli.give_up_after;

    let p = &mut h.politeness;
    p.min_gap = cli.delay;
    p.jitter = cli.jitter;
    p.per_host_concurrency = cli.per_host.max(1);
    p.total_concurrency = cli.concurrency.max(1);
    p.global_rate = cli.rate;
    p.circuit_threshold = cli.circuit_threshold;
    p.circuit_recovery = cli.circuit_recovery;
    p.shared = !cli.no_shared_politeness;

    h.cache.dir = Some(cli.cache_dir.clone());
    h.cache.mode = cli.cache;
    h.cache.ttl = cli.ttl;
    h.robots = !cli.ignore_robots;
    h.rules = cli.rules.clone();
    Ok(h)
}

fn run(cli: Cli) -> anyhow::Result<rip_core::Status> {
    let stop = rip_cli::install_interrupt()?;
    let (input, input_name) = cli.common.open_input()?;
    let progress = rip_cli::progress::Progress::new("rip-fetch", cli.common.quiet);
    let bar = progress.clone();
    let on_progress: rip_fetch::ProgressFn = Arc::new(move |p: &rip_fetch::Progress| {
        let rate = p.done as f64 / p.elapsed.as_secs_f64().max(0.001);
        bar.set(format!(
            "{}/{} done, {rate:.0}/s, {} failed, {} from cache, {} retries",
            p.done,
            p.refs,
            p.http.failed(),
            p.http.cache_hits,
            p.http.retries
        ));
    });
    let config = rip_fetch::Config {
        http: http_config(&cli)?,
        window: cli.concurrency.max(1) * 4,
        ordered: cli.ordered,
        input_name,
        strict: cli.common.strict,
        stop: Some(stop),
        on_progress: progress.is_visible().then_some(on_progress),
    };
    let mut builder = match cli.threads {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        Some(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n.max(1));
            b
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = builder
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let summary = runtime.block_on(rip_fetch::run(config, input, std::io::stdout()));
    progress.finish();
    let summary = summary?;
    if !cli.common.quiet {
        eprintln!("{}", rip_fetch::summary_line(&summary));
    }
    Ok(summary.status)
}
