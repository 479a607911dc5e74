//! The stage loop: lines are read and written on the calling thread (a [`Pipe`]); refs go
//! to `tabs` render workers on an async runtime, whose records come back to be written as
//! they end.

use std::sync::{Arc, mpsc};
use std::time::Duration;

use rip_core::{Kind, Pipe, Polled, Record, Ref, Summary};
use rip_http::{Fetcher, HttpConfig};
use rip_warc::write::tap::WarcTap;
use tokio::sync::Mutex;

use crate::{Config, RenderError, Renderer, STAGE};

pub(crate) fn run<R, W>(config: Config, input: R, output: W) -> Result<Summary, RenderError>
where
    R: std::io::Read + Send + 'static,
    W: std::io::Write,
{
    if !config.render.browser.executable.is_file() {
        return Err(crate::LaunchError::Missing {
            path: config.render.browser.executable.clone(),
        }
        .into());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.threads.max(1))
        .enable_all()
        .build()
        .map_err(RenderError::Runtime)?;
    let (renderer, tap) = {
        let _guard = runtime.enter();
        archiving(&config, renderer(&config)?)?
    };
    let shared = Arc::new(renderer);
    // `--metrics`: the counters the summary gathers at the end (HTTP requests, retries, …),
    // read live from the same atomics.
    let live = shared.clone();
    let _live_reader = rip_core::live::stage(&config.pipe.stage).add_reader("render", move |r| {
        for (k, v) in live.counters() {
            r.counter(k, v);
        }
    });
    let mut pipe = Pipe::new(config.pipe.clone(), input, output)?;
    let pumped = pump(&config, &runtime, &shared, &mut pipe);
    runtime.block_on(shared.close());
    if let Some(tap) = tap {
        let failed = tap.close()?;
        if failed > 0 {
            tracing::warn!("--warc: {failed} exchanges could not be archived");
        }
    }
    pumped?;
    for (k, v) in shared.counters() {
        pipe.count(&k, v);
    }
    let summary = pipe.finish(None)?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(summary)
}

/// The stage's renderer, its fetcher with room for the tabs' subresources.
fn renderer(config: &Config) -> Result<Renderer, RenderError> {
    let mut http = HttpConfig {
        stage: STAGE.into(),
        ..config.http.clone()
    };
    config.render.make_room(&mut http);
    let fetcher = Fetcher::new(http)?;
    Ok(Renderer::new(
        &config.render,
        fetcher,
        config.http.client.max_body,
    ))
}

/// `renderer` archiving into `config.warc`, when set, and the tap it writes through.
fn archiving(
    config: &Config,
    renderer: Renderer,
) -> Result<(Renderer, Option<Arc<WarcTap>>), RenderError> {
    let Some(cfg) = &config.warc else {
        return Ok((renderer, None));
    };
    let tap = Arc::new(WarcTap::new(cfg.clone(), STAGE)?.remembering_responses());
    Ok((renderer.with_warc(tap.clone()), Some(tap)))
}

/// Reads every line, hands the refs to the workers, writes their records as they end.
fn pump<W: std::io::Write>(
    config: &Config,
    runtime: &tokio::runtime::Runtime,
    shared: &Arc<Renderer>,
    pipe: &mut Pipe<W>,
) -> Result<(), RenderError> {
    let tabs = config.render.tabs.max(1);
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
                let record = shared.page(&r).await;
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
