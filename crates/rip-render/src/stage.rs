//! The stage loop: lines are read and written on the calling thread (a [`Pipe`]); refs go
//! to `tabs` render workers on an async runtime, whose records come back to be written as
//! they end.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use rip_core::{Kind, Phase, Pipe, Polled, Record, Ref, Summary};
use rip_http::records::record_for;
use rip_http::{FetchOptions, Fetcher, HttpConfig, Outcome, RequestStats, Response};
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::browser::Engine;
use crate::record::{self, RenderFailure};
use crate::tab::{self, Rendering, TabError, TabSettings};
use crate::{Config, RenderError, STAGE};
use rip_core::ErrorCategory;

/// What the workers share.
struct Shared {
    fetcher: Fetcher,
    engine: Engine,
    tab: TabSettings,
    browser_retries: u32,
    js_heap_mib: u32,
    counters: Counters,
}

#[derive(Default)]
struct Counters {
    rendered: AtomicU64,
    from_cache: AtomicU64,
    not_html: AtomicU64,
    timeouts: AtomicU64,
    crashes: AtomicU64,
    browser_lost: AtomicU64,
    subrequests: AtomicU64,
    blocked: AtomicU64,
    console_errors: AtomicU64,
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

pub(crate) fn run<R, W>(config: Config, input: R, output: W) -> Result<Summary, RenderError>
where
    R: std::io::Read + Send + 'static,
    W: std::io::Write,
{
    if !config.browser.executable.is_file() {
        return Err(crate::LaunchError::Missing {
            path: config.browser.executable.clone(),
        }
        .into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.threads.max(1))
        .enable_all()
        .build()
        .map_err(RenderError::Runtime)?;
    let shared = {
        let _guard = runtime.enter();
        Arc::new(shared(&config)?)
    };
    let mut pipe = Pipe::new(config.pipe.clone(), input, output)?;
    let pumped = pump(&config, &runtime, &shared, &mut pipe);
    runtime.block_on(shared.engine.close());
    pumped?;
    counters(&shared, &mut pipe);
    let summary = pipe.finish(None)?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(summary)
}

fn shared(config: &Config) -> Result<Shared, RenderError> {
    let tabs = config.tabs.max(1);
    let mut http = HttpConfig {
        stage: STAGE.into(),
        ..config.http.clone()
    };
    // Each tab's page asks for its subresources at once: room for them beside the tabs.
    http.politeness.total_concurrency = http.politeness.total_concurrency.max(tabs * 8);
    let fetcher = Fetcher::new(http)?;
    Ok(Shared {
        tab: TabSettings {
            fetcher: fetcher.clone(),
            wait: config.wait.clone(),
            timeout: config.page_timeout,
            allow: config.allow,
            max_requests: config.max_requests,
            max_body: config.http.client.max_body,
        },
        fetcher,
        engine: Engine::new(config.browser.clone()),
        browser_retries: config.browser_retries,
        js_heap_mib: config.browser.js_heap_mib,
        counters: Counters::default(),
    })
}

/// Reads every line, hands the refs to the workers, writes their records as they end.
fn pump<W: std::io::Write>(
    config: &Config,
    runtime: &tokio::runtime::Runtime,
    shared: &Arc<Shared>,
    pipe: &mut Pipe<W>,
) -> Result<(), RenderError> {
    let tabs = config.tabs.max(1);
    let window = tabs * 2;
    let (job_tx, job_rx) = tokio::sync::mpsc::channel::<Ref>(window);
    let job_rx = Arc::new(Mutex::new(job_rx));
    let (done_tx, done_rx) = mpsc::channel::<Record>();
    for _ in 0..tabs {
        let (jobs, done, shared) = (job_rx.clone(), done_tx.clone(), shared.clone());
        runtime.spawn(async move {
            loop {
                let Some(r) = jobs.lock().await.recv().await else {
                    break;
                };
                let record = render_ref(&shared, &r).await;
                if done.send(record).is_err() {
                    break;
                }
            }
        });
    }
    drop(done_tx);
    let mut open = 0usize;
    let mut input_open = true;
    loop {
        while let Ok(record) = done_rx.try_recv() {
            write(pipe, &record)?;
            open -= 1;
        }
        if !input_open && open == 0 {
            return Ok(());
        }
        if !input_open || open >= window {
            match done_rx.recv_timeout(Duration::from_millis(100)) {
                Ok(record) => {
                    write(pipe, &record)?;
                    open -= 1;
                }
                Err(_) => pipe.flush()?,
            }
            continue;
        }
        match pipe.poll_line(Duration::from_millis(20))? {
            Polled::Line(line) if line.kind() == &Kind::Ref => match line.decode() {
                // Counted in the summary's passedThrough, as every line passed on.
                Ok(Record::Ref(r)) if !renders(config, &r) => pipe.pass(&line)?,
                Ok(Record::Ref(r)) => {
                    if r.is_entry() {
                        pipe.enter(&r.url)?;
                    }
                    open += 1;
                    if job_tx.blocking_send(r).is_err() {
                        open -= 1;
                    }
                }
                Ok(_) => unreachable!("a line of kind ref decodes to a ref"),
                Err(e) => pipe.bad_record(&line, e)?,
            },
            Polled::Line(line) => pipe.pass(&line)?,
            Polled::Idle => pipe.flush()?,
            Polled::End => input_open = false,
        }
    }
}

/// Whether `r` is for this stage: a ref marked `needsBrowser` always; else every ref, or
/// with [`Config::only`] those whose URL matches it, or with [`Config::only_marked`] none
/// (the others go on untouched, to the rip-fetch after this stage).
fn renders(config: &Config, r: &Ref) -> bool {
    if r.context.needs_browser {
        return true;
    }
    !config.only_marked
        && config
            .only
            .as_ref()
            .is_none_or(|only| only.is_match(&r.url))
}

fn write<W: std::io::Write>(pipe: &mut Pipe<W>, record: &Record) -> Result<(), RenderError> {
    if let Record::Failure(f) = record {
        pipe.mark_partial();
        pipe.count(&format!("failed.{}", f.category), 1);
    }
    pipe.emit(record)?;
    Ok(())
}

fn counters<W: std::io::Write>(shared: &Shared, pipe: &mut Pipe<W>) {
    // The HTTP stack's counters, less its failures: those of subresources are no failure
    // of a ref (they are on their pages); the refs' own are counted from the records.
    for (k, v) in shared.fetcher.stats().counters() {
        if k.starts_with("failed.") {
            continue;
        }
        if v > 0 || matches!(k.as_str(), "cacheHits" | "retries" | "requests") {
            pipe.count(&k, v);
        }
    }
    let c = &shared.counters;
    let ours = [
        ("rendered", &c.rendered),
        ("renderCacheHits", &c.from_cache),
        ("notHtml", &c.not_html),
        ("renderTimeouts", &c.timeouts),
        ("renderCrashes", &c.crashes),
        ("browserLost", &c.browser_lost),
        ("subrequests", &c.subrequests),
        ("blockedRequests", &c.blocked),
        ("consoleErrors", &c.console_errors),
    ];
    for (k, v) in ours {
        let v = v.load(Ordering::Relaxed);
        if v > 0 || k == "rendered" {
            pipe.count(k, v);
        }
    }
    pipe.count("browserStarts", shared.engine.started());
}

/// The one record of a ref.
async fn render_ref(shared: &Shared, r: &Ref) -> Record {
    let start = Instant::now();
    if let Some((resp, site)) = shared.fetcher.cached(&record::cache_key(&r.url)).await
        && let Some(page) = record::cached_page(r, &resp, site)
    {
        add(&shared.counters.from_cache, 1);
        return Record::Page(page);
    }
    let opts = FetchOptions {
        not_before: r.not_before,
        ignore_robots: false,
    };
    let fetched = shared.fetcher.fetch_with(&r.url, &opts).await;
    let doc = match &fetched.outcome {
        Outcome::Page(resp) if record::is_html(resp) => Arc::new(resp.clone()),
        Outcome::Page(_) => {
            add(&shared.counters.not_html, 1);
            return record_for(r, &fetched, Phase::Fetch, STAGE);
        }
        _ => return record_for(r, &fetched, Phase::Fetch, STAGE),
    };
    let mut stats = fetched.stats.clone();
    let mut last = String::new();
    for _ in 0..=shared.browser_retries {
        let chromium = match shared.engine.get().await {
            Ok(c) => c,
            Err(e) => {
                last = e.to_string();
                break;
            }
        };
        let url = doc.final_url.clone();
        match tab::render(&chromium, &shared.tab, &url, doc.clone()).await {
            Ok(rendering) => {
                stats.elapsed = start.elapsed();
                return rendered(shared, r, &doc, &stats, rendering, &chromium.version).await;
            }
            Err(TabError::Lost(why)) => {
                add(&shared.counters.browser_lost, 1);
                tracing::warn!("{}: the browser was lost rendering it: {why}", r.url);
                shared.engine.lost(chromium.generation).await;
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
            shared.browser_retries + 1
        ),
        seen: None,
        info: None,
    };
    record::failure(r, Some(&doc), &stats, f)
}

/// The record of a render that ended in this browser.
async fn rendered(
    shared: &Shared,
    r: &Ref,
    doc: &Response,
    stats: &RequestStats,
    rendering: Rendering,
    version: &str,
) -> Record {
    let c = &shared.counters;
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
            let page = record::rendered_page(r, doc, stats, html, truncated, info_of(info));
            record::remember(&shared.fetcher, r, doc, stats, &page).await;
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
                    shared.js_heap_mib
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

/// The one-line summary on stderr.
pub fn summary_line(s: &Summary) -> String {
    let c = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let o = |k: &str| s.made(k);
    let refs = s.input.get("ref").copied().unwrap_or(0);
    let secs = (s.ended_at - s.started_at).num_milliseconds().max(1) as f64 / 1000.0;
    let mut line = format!(
        "{STAGE}: {refs} refs: {} pages ({} rendered, {} from the render cache, {} not HTML), \
         {} failed ({} timed out, {} crashed), {} expected; {} requests ({} subresources, \
         {} blocked), {} browser start(s); {secs:.1}s, {:.1} refs/s",
        o("page"),
        c("rendered"),
        c("renderCacheHits"),
        c("notHtml"),
        o("failure"),
        c("renderTimeouts"),
        c("renderCrashes"),
        o("expected"),
        c("requests"),
        c("subrequests"),
        c("blockedRequests"),
        c("browserStarts"),
        refs as f64 / secs
    );
    if c("browserLost") > 0 {
        line.push_str(&format!(
            "; the browser was lost {} time(s)",
            c("browserLost")
        ));
    }
    line
}
