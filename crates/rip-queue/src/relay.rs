//! `rip-queue relay IN OUT`: a pipeline's records sent to workers on other machines, and what
//! they made of them brought back, as one stage.
//!
//! The records of the reader are pushed to `IN` as records of a new run (each message names
//! the run: [`crate::publish::RUN_HEADER`]); the workers of the group (`rip-queue work IN
//! OUT`, any number, anywhere) publish their output under the same run; the relay writes the
//! run's records of `OUT` as they arrive, and ends once its input is all pushed, the group has
//! done every record of `IN`, and everything stored until then is written. So a coordinator
//! runs `source | rip-queue relay refs docs | rip-write …` as it would run the stages
//! themselves, and a run never reads an earlier run's records.

use crate::pull::{Selection, Until, pull_selected};
use crate::push::{Pushed, push_run};
use crate::{Broker, QueueError};
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What a relay did.
#[derive(Debug, Clone)]
pub struct Relayed {
    /// The run's name.
    pub run: String,
    /// What was pushed.
    pub pushed: Pushed,
    /// Records written (the workers' output).
    pub written: u64,
}

/// Where a relay sends records and where it reads what comes back.
#[derive(Debug, Clone)]
pub struct Route {
    /// The stream the workers read.
    pub input: String,
    /// The stream they write.
    pub output: String,
    /// Partitions by host of `input`, when it is created.
    pub partitions: Option<u32>,
    /// The workers' group (their durable consumer of `input`).
    pub group: String,
}

/// Pushes `input`'s records to `route.input` and writes the workers' output to `out`, until
/// the group has done them all.
pub async fn relay<R>(
    broker: &Broker,
    route: &Route,
    input: R,
    input_name: String,
    out: &mut dyn Write,
) -> Result<Relayed, QueueError>
where
    R: BufRead + Send + 'static,
{
    let run = new_run();
    let output = broker.stream(&route.output).await?;
    let doing = format!("read the stream {}", route.output);
    let last = broker
        .patiently(&doing, || {
            let mut output = output.clone();
            async move { output.info().await.map(|i| i.state.last_sequence) }
        })
        .await?;
    let from = last + 1;
    let complete = Arc::new(AtomicBool::new(false));
    let pushing = {
        let (broker, route, run, complete) =
            (broker.clone(), route.clone(), run.clone(), complete.clone());
        tokio::spawn(async move {
            let pushed = push_run(
                &broker,
                &route.input,
                route.partitions,
                input,
                input_name,
                Some(run),
            )
            .await;
            complete.store(true, Ordering::SeqCst);
            pushed
        })
    };
    let until = Until::Done {
        input: route.input.clone(),
        group: route.group.clone(),
    };
    let selection = Selection {
        run: Some(run.clone()),
        from: Some(from),
        input_complete: Some(complete),
    };
    // The push says it is complete when it ends, failed or not: a failed push ends the
    // relay with its error once the pull ends (the group done with what was stored).
    let written = pull_selected(broker, &route.output, until, selection, out).await;
    if written.is_err() {
        pushing.abort();
    }
    let written = written?;
    let pushed = pushing
        .await
        .map_err(|e| QueueError::Io(std::io::Error::other(e)))??;
    Ok(Relayed {
        run,
        pushed,
        written,
    })
}

/// A run's name: the time and a random part, in the characters a header and an id take.
fn new_run() -> String {
    let now = chrono::Utc::now();
    let nonce = xxhash_rust::xxh3::xxh3_64(
        format!("{:?}{}", std::time::Instant::now(), std::process::id()).as_bytes(),
    );
    format!("{}-{:06x}", now.format("%Y%m%dT%H%M%S"), nonce & 0xff_ffff)
}
