//! `rip-queue push STREAM`: records from a reader into a stream.

use crate::broker::partitions_of;
use crate::{Broker, Published, Publisher, QueueError};
use rip_core::ndjson::report_bad_line;
use rip_core::{NdjsonReader, ReadError};
use std::io::BufRead;

/// What a push did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pushed {
    /// Records read.
    pub read: u64,
    /// What was published.
    pub published: Published,
    /// Malformed input lines (reported on stderr, not published).
    pub bad_lines: u64,
}

/// Publishes every record of `input` (named `input_name` in messages) to `stream`, creating
/// it when needed (with `partitions` by host when given), and returns once the broker has
/// stored them all.
pub async fn push<R>(
    broker: &Broker,
    stream: &str,
    partitions: Option<u32>,
    input: R,
    input_name: String,
) -> Result<Pushed, QueueError>
where
    R: BufRead + Send + 'static,
{
    push_run(broker, stream, partitions, input, input_name, None).await
}

/// [`push`], the records published as records of the run `run` (see
/// [`Publisher::with_run`]).
pub async fn push_run<R>(
    broker: &Broker,
    stream: &str,
    partitions: Option<u32>,
    input: R,
    input_name: String,
    run: Option<String>,
) -> Result<Pushed, QueueError>
where
    R: BufRead + Send + 'static,
{
    let handle = broker.stream_with(stream, partitions).await?;
    let mut publisher = Publisher::new(broker, stream, partitions_of(&handle)).with_run(run);
    let (tx, mut rx) = tokio::sync::mpsc::channel(1024);
    let reader = tokio::task::spawn_blocking(move || {
        for item in NdjsonReader::new(input, input_name) {
            if tx.blocking_send(item).is_err() {
                break;
            }
        }
    });
    let mut pushed = Pushed::default();
    while let Some(item) = rx.recv().await {
        match item {
            Ok(line) => {
                pushed.read += 1;
                publisher.send(line.text()).await?;
            }
            Err(ReadError::Malformed(bad)) => {
                report_bad_line(&bad);
                pushed.bad_lines += 1;
            }
            Err(ReadError::Io { source, .. }) => return Err(source.into()),
        }
    }
    reader.await.ok();
    pushed.published = publisher.flush().await?;
    Ok(pushed)
}
