//! [`ServerBuilder`] and [`TestServer`]: binding, the accept loop, shutdown, and the API
//! tests use to read the request log and change the plan.

use std::net::{SocketAddr, TcpListener as StdListener};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::error::Error;
use crate::log::{RequestLog, RequestRecord, lock};
use crate::plan::{FaultPlan, PlanState, Rule};
use crate::shared::Shared;
use crate::site::{Backing, DirSite, LinkGraph, Resource, Site, content_type_for};

/// Configures and starts a [`TestServer`]. See the crate docs for an example.
#[derive(Debug)]
#[must_use = "a builder does nothing until started"]
pub struct ServerBuilder {
    bind: SocketAddr,
    site: Site,
    dir: Option<PathBuf>,
    plan: FaultPlan,
    log_file: Option<PathBuf>,
    control: bool,
    validators: bool,
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            site: Site::default(),
            dir: None,
            plan: FaultPlan::new(),
            log_file: None,
            control: true,
            validators: true,
        }
    }
}

impl ServerBuilder {
    /// The address to listen on; `127.0.0.1:0` (a free port) by default.
    pub fn bind(mut self, addr: SocketAddr) -> Self {
        self.bind = addr;
        self
    }

    /// Serve this directory (replaces a graph). Checked when the server starts.
    pub fn dir(mut self, root: impl Into<PathBuf>) -> Self {
        self.dir = Some(root.into());
        self.site.backing = Backing::Empty;
        self
    }

    /// Serve a generated link graph (replaces a directory).
    pub fn graph(mut self, graph: LinkGraph) -> Self {
        self.dir = None;
        self.site.backing = Backing::Graph(graph);
        self
    }

    /// Serve `body` at exactly this path (without query), over the directory or graph. The
    /// `Content-Type` is guessed from the extension; a path ending in `/` or without an
    /// extension is `text/html; charset=utf-8`.
    pub fn file(self, path: impl Into<String>, body: impl Into<Bytes>) -> Self {
        let path = path.into();
        let last = path.rsplit('/').next().unwrap_or_default();
        let content_type = if last.contains('.') {
            content_type_for(last)
        } else {
            "text/html; charset=utf-8"
        };
        self.file_with_type(path, content_type, body)
    }

    /// Serve `body` with this `Content-Type` at exactly this path.
    pub fn file_with_type(
        mut self,
        path: impl Into<String>,
        content_type: impl Into<String>,
        body: impl Into<Bytes>,
    ) -> Self {
        self.site
            .files
            .insert(path.into(), Resource::ok(content_type, body));
        self
    }

    /// Append a fault rule.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.plan.push(rule);
        self
    }

    /// Append the rules of a plan (e.g. one read with [`FaultPlan::from_file`]).
    pub fn plan(mut self, plan: FaultPlan) -> Self {
        self.plan.extend(plan);
        self
    }

    /// Also write each request as one NDJSON line to this file (created or truncated),
    /// flushed per line so another process can follow it.
    pub fn log_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.log_file = Some(path.into());
        self
    }

    /// Serve the control endpoints under [`CONTROL_PREFIX`](crate::CONTROL_PREFIX)
    /// (default on).
    pub fn control_endpoints(mut self, on: bool) -> Self {
        self.control = on;
        self
    }

    /// Send computed `ETag` and `Last-Modified` headers on 200 responses and answer
    /// conditional requests with 304 (default on). Faults can still set their own.
    pub fn validators(mut self, on: bool) -> Self {
        self.validators = on;
        self
    }

    fn prepare(mut self) -> Result<(StdListener, Arc<Shared>), Error> {
        if let Some(root) = &self.dir {
            let dir = DirSite::new(root).map_err(|source| Error::Root {
                path: root.clone(),
                source,
            })?;
            self.site.backing = Backing::Dir(dir);
        }
        let file = match &self.log_file {
            Some(path) => Some(
                std::fs::File::create(path).map_err(|source| Error::LogFile {
                    path: path.clone(),
                    source,
                })?,
            ),
            None => None,
        };
        let bind_error = |source| Error::Bind {
            addr: self.bind,
            source,
        };
        let listener = StdListener::bind(self.bind).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        let shared = Arc::new(Shared::new(
            addr,
            self.site,
            PlanState::new(self.plan),
            RequestLog::new(file),
            self.control,
            self.validators,
        ));
        Ok((listener, shared))
    }

    /// Binds and starts serving on the current tokio runtime (as a spawned task).
    ///
    /// With `#[tokio::test]` the server shares the test's runtime and clock: a paused clock
    /// (`tokio::time::pause`) also pauses the server's delays and log times. For tests without
    /// a runtime, or with blocking clients and child processes, use
    /// [`start_background`](Self::start_background).
    pub async fn start(self) -> Result<TestServer, Error> {
        let (listener, shared) = self.prepare()?;
        let listener = TcpListener::from_std(listener).map_err(|source| Error::Bind {
            addr: shared.addr,
            source,
        })?;
        let (shutdown, watch_shutdown) = watch::channel(false);
        let task = tokio::spawn(accept_loop(listener, shared.clone(), watch_shutdown));
        Ok(TestServer {
            shared,
            shutdown,
            runner: Runner::Task(Some(task)),
        })
    }

    /// Binds and starts serving on a thread of its own with its own two-worker runtime.
    /// Works from synchronous code; the server stops when the handle is dropped.
    pub fn start_background(self) -> Result<TestServer, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("rip-testserver")
            .enable_all()
            .build()
            .map_err(Error::Thread)?;
        // The listener and the start instant must belong to the server's runtime.
        let (listener, shared) = {
            let _entered = runtime.enter();
            self.prepare()?
        };
        let (shutdown, watch_shutdown) = watch::channel(false);
        let loop_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("rip-testserver".into())
            .spawn(move || {
                runtime.block_on(async move {
                    if let Ok(listener) = TcpListener::from_std(listener) {
                        accept_loop(listener, loop_shared, watch_shutdown).await;
                    }
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })
            .map_err(Error::Thread)?;
        Ok(TestServer {
            shared,
            shutdown,
            runner: Runner::Thread(Some(thread)),
        })
    }
}

async fn accept_loop(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    let id = shared.next_connection_id();
                    connections.spawn(crate::conn::serve(
                        stream,
                        peer,
                        id,
                        shared.clone(),
                        shutdown.clone(),
                    ));
                }
                // Out of file descriptors and the like: breathe, then go on.
                Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            _ = shutdown.changed() => break,
        }
    }
    drop(listener);
    connections.shutdown().await;
}

enum Runner {
    Task(Option<tokio::task::JoinHandle<()>>),
    Thread(Option<std::thread::JoinHandle<()>>),
}

/// A running server. Dropping it stops it (connections are closed, stalls end).
///
/// The log methods take a *pattern*: with `?` it is compared with the whole target
/// (`/search?q=a`), without with the path alone (`/search` counts `/search?q=a` too).
pub struct TestServer {
    shared: Arc<Shared>,
    shutdown: watch::Sender<bool>,
    runner: Runner,
}

impl std::fmt::Debug for TestServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestServer")
            .field("addr", &self.shared.addr)
            .finish_non_exhaustive()
    }
}

impl TestServer {
    /// A builder with the defaults: `127.0.0.1:0`, nothing served (404), no faults.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.shared.addr
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.shared.addr.port()
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn origin(&self) -> String {
        format!("http://{}", self.shared.addr)
    }

    /// `http://127.0.0.1:PORT` + `path` (a `/` is added in front if missing).
    pub fn url(&self, path: &str) -> String {
        self.url_for_host(&self.shared.addr.ip().to_string(), path)
    }

    /// The same URL under another host name on the same port, e.g. `localhost`: a second
    /// host for politeness tests. The host name must resolve to the bound address (as
    /// `localhost` does), or the client must map it (`reqwest::ClientBuilder::resolve`).
    pub fn url_for_host(&self, host: &str, path: &str) -> String {
        let slash = if path.starts_with('/') { "" } else { "/" };
        format!("http://{host}:{}{slash}{path}", self.shared.addr.port())
    }

    /// Every logged request, in arrival order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log.snapshot()
    }

    /// The logged requests matching a pattern.
    pub fn requests_for(&self, pattern: &str) -> Vec<RequestRecord> {
        self.shared.log.filtered(|r| r.matches(pattern))
    }

    /// The logged requests whose `Host` names this host (port ignored).
    pub fn requests_for_host(&self, host: &str) -> Vec<RequestRecord> {
        let host = crate::log::host_without_port(host);
        self.shared
            .log
            .filtered(|r| r.host_name().as_deref() == Some(host.as_str()))
    }

    /// How many logged requests match a pattern.
    pub fn count(&self, pattern: &str) -> usize {
        self.shared.log.count(|r| r.matches(pattern))
    }

    /// How many requests are logged.
    pub fn total(&self) -> usize {
        self.shared.log.count(|_| true)
    }

    /// The smallest gap between two successive logged requests (see [`crate::min_gap`]).
    pub fn min_gap(&self) -> Option<Duration> {
        crate::log::min_gap(&self.requests())
    }

    /// The smallest gap between two successive requests to one host name.
    pub fn min_gap_for_host(&self, host: &str) -> Option<Duration> {
        crate::log::min_gap(&self.requests_for_host(host))
    }

    /// When the server started, on tokio's clock; a record arrived at
    /// `started_at() + record.elapsed`.
    pub fn started_at(&self) -> Instant {
        self.shared.started
    }

    /// Forget the logged requests (the NDJSON file keeps them; `seq` keeps counting).
    pub fn clear_log(&self) {
        self.shared.log.clear();
    }

    /// Append a rule to the running plan (after the existing ones).
    pub fn add_rule(&self, rule: Rule) {
        lock(&self.shared.plan).extend(FaultPlan::new().rule(rule));
    }

    /// Replace the running plan (sequence positions start over).
    pub fn set_plan(&self, plan: FaultPlan) {
        let mut state = lock(&self.shared.plan);
        state.clear();
        state.extend(plan);
    }

    /// Wait until at least `n` logged requests match `pattern`, or `timeout` passes.
    /// Returns whether the count was reached.
    pub async fn wait_for_count(&self, pattern: &str, n: usize, timeout: Duration) -> bool {
        let mut pushed = self.shared.log.subscribe();
        let reached = async {
            loop {
                if self.count(pattern) >= n {
                    return;
                }
                if pushed.changed().await.is_err() {
                    // The server is gone: wait for the timeout.
                    std::future::pending::<()>().await;
                }
            }
        };
        tokio::time::timeout(timeout, reached).await.is_ok()
    }

    /// [`wait_for_count`](Self::wait_for_count) for synchronous tests (polls every 2 ms).
    pub fn wait_for_count_blocking(&self, pattern: &str, n: usize, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self.count(pattern) >= n {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Stop accepting, close every connection, and wait for the server to finish.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        match &mut self.runner {
            Runner::Task(task) => {
                if let Some(task) = task.take() {
                    let _ = task.await;
                }
            }
            Runner::Thread(thread) => {
                if let Some(thread) = thread.take() {
                    let _ = tokio::task::spawn_blocking(move || thread.join()).await;
                }
            }
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.shutdown.send(true);
        if let Runner::Thread(thread) = &mut self.runner
            && let Some(thread) = thread.take()
        {
            let _ = thread.join();
        }
    }
}
