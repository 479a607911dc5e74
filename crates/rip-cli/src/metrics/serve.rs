//! The `/metrics` endpoint: hyper's HTTP/1 server on a thread of its own (its own
//! single-threaded runtime, so that a synchronous stage needs no runtime and an async
//! one's workers never serve a scrape), and `--metrics-linger`, which keeps a finished
//! program up until a scrape has read its final numbers.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use clap::Args;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode, body::Incoming};
use hyper_util::rt::TokioIo;

/// What a scrape answers: the text format, made at each request.
pub type Render = Arc<dyn Fn() -> String + Send + Sync>;

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The flags of the programs that serve live metrics (in `--help` only: `-h` stays short).
#[derive(Debug, Clone, Args)]
pub struct MetricsArgs {
    /// Serve live counters on `http://ADDR/metrics`, in the Prometheus text format (e.g.
    /// `127.0.0.1:9464`; port 0 picks a free port, said on stderr): records in and out
    /// by kind, failures by category, retries, the stage's state, memory.
    #[arg(
        long,
        value_name = "ADDR",
        help_heading = "Metrics",
        hide_short_help = true
    )]
    pub metrics: Option<SocketAddr>,

    /// After the run, keep serving the final numbers until a scrape has read them, at
    /// most this long (e.g. `30s`); without it the endpoint ends with the program.
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = humantime::parse_duration,
        requires = "metrics",
        help_heading = "Metrics",
        hide_short_help = true
    )]
    pub metrics_linger: Option<Duration>,

    /// Hosts served with a `host` label of their own (the most failures, the longest
    /// backlog); the others are added up as `host="other"`. `ripperoni run`'s stages read
    /// it from the environment.
    #[arg(
        long,
        value_name = "N",
        env = "RIP_METRICS_HOSTS",
        default_value_t = rip_core::live::DEFAULT_TOP_HOSTS,
        help_heading = "Metrics",
        hide_short_help = true
    )]
    pub metrics_hosts: usize,
}

impl MetricsArgs {
    /// Starts serving `program`'s live metrics when `--metrics` asks (`None` otherwise);
    /// the address is said on stderr unless `quiet` (always for port 0).
    pub fn start(&self, program: &str, quiet: bool) -> anyhow::Result<Option<MetricsServer>> {
        let Some(addr) = self.metrics else {
            return Ok(None);
        };
        rip_core::live::enable();
        rip_core::live::set_top_hosts(self.metrics_hosts);
        let name = program.to_owned();
        let render: Render = Arc::new(move || super::render(&name));
        let server = serve(addr, render)?;
        if !quiet || addr.port() == 0 {
            rip_core::stderr::say(format_args!(
                "{program}: metrics on http://{}/metrics",
                server.addr()
            ));
        }
        Ok(Some(server.lingering(self.metrics_linger)))
    }
}

/// A running endpoint; it serves until the process ends.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    scrapes: Arc<Scrapes>,
    linger: Option<Duration>,
}

impl MetricsServer {
    /// The address it listens on (the port chosen, for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The same server, lingering `most` at [`MetricsServer::finish`].
    pub fn lingering(mut self, most: Option<Duration>) -> Self {
        self.linger = most;
        self
    }

    /// At the end of the run: with a linger time, waits until the final numbers have been
    /// read (a scrape answered once every stage had finished, or one that began now), at
    /// most that long.
    pub fn finish(&self) {
        if let Some(most) = self.linger {
            self.scrapes.wait_for_one_after(Instant::now() + most);
        }
    }
}

impl Drop for MetricsServer {
    /// The end of the program's run: lingers as [`MetricsServer::finish`] says.
    fn drop(&mut self) {
        self.finish();
    }
}

/// Scrapes answered, to know when the final numbers have been read.
#[derive(Debug, Default)]
struct Scrapes {
    counts: Mutex<Counts>,
    answered: Condvar,
}

#[derive(Debug, Default)]
struct Counts {
    /// Connections accepted.
    accepted: u64,
    /// 1 + the index of the last connection whose scrape was answered.
    answered: u64,
    /// A scrape made once every stage of the process had finished was answered.
    final_read: bool,
}

/// What a connection did: nothing yet, a scrape, a scrape of the final numbers.
const SCRAPED: u8 = 1;
const SCRAPED_FINAL: u8 = 2;

impl Scrapes {
    fn accepted(&self) -> u64 {
        let mut c = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        c.accepted += 1;
        c.accepted - 1
    }

    fn answered(&self, index: u64, final_read: bool) {
        let mut c = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        c.answered = c.answered.max(index + 1);
        c.final_read |= final_read;
        self.answered.notify_all();
    }

    fn wait_for_one_after(&self, deadline: Instant) {
        let mut c = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let first_after = c.accepted;
        while c.answered <= first_after && !c.final_read {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return;
            };
            c = self
                .answered
                .wait_timeout(c, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// Serves `render` on `http://addr/metrics` from a new thread (see the module docs).
pub fn serve(addr: SocketAddr, render: Render) -> anyhow::Result<MetricsServer> {
    let listener = std::net::TcpListener::bind(addr)
        .with_context(|| format!("cannot serve metrics on {addr}"))?;
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the metrics endpoint's runtime")?;
    let scrapes = Arc::new(Scrapes::default());
    let counted = scrapes.clone();
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || runtime.block_on(accept_loop(listener, render, counted)))
        .context("cannot start the metrics endpoint's thread")?;
    Ok(MetricsServer {
        addr: bound,
        scrapes,
        linger: None,
    })
}

async fn accept_loop(listener: std::net::TcpListener, render: Render, scrapes: Arc<Scrapes>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            // Out of file descriptors and the like: try again shortly.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let index = scrapes.accepted();
        let (render, scrapes) = (render.clone(), scrapes.clone());
        tokio::spawn(async move {
            let scraped = Arc::new(AtomicU8::new(0));
            let seen = scraped.clone();
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let response = respond(&request, &render, &seen);
                async move { Ok::<_, Infallible>(response) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service)
                .await;
            match scraped.load(Ordering::Relaxed) {
                0 => {}
                what => scrapes.answered(index, what == SCRAPED_FINAL),
            }
        });
    }
}

fn respond(
    request: &Request<Incoming>,
    render: &Render,
    scraped: &AtomicU8,
) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match (request.method(), request.uri().path()) {
        (&Method::GET, "/metrics") => {
            let stages = rip_core::live::stages();
            let finished = !stages.is_empty() && stages.iter().all(|s| s.books().finished);
            let text = render();
            let what = if finished { SCRAPED_FINAL } else { SCRAPED };
            scraped.store(what, Ordering::Relaxed);
            (StatusCode::OK, CONTENT_TYPE, text)
        }
        (&Method::GET, path) => (
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            format!("no {path} here: the metrics are at /metrics\n"),
        ),
        _ => (
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            "GET /metrics\n".to_owned(),
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    response
}
