//! `rip-queue pull STREAM`: a stream's records to a writer.

use crate::{Broker, QueueError};
use async_nats::jetstream::consumer::{DeliverPolicy, pull::OrderedConfig};
use futures::StreamExt;
use std::io::Write;

/// Writes the records of `stream` to `out`, one per line, in the order the stream holds
/// them: those it holds when the pull starts, or (with `follow`) those and every later one
/// until the process is stopped. Returns how many were written.
pub async fn pull(
    broker: &Broker,
    stream: &str,
    follow: bool,
    out: &mut dyn Write,
) -> Result<u64, QueueError> {
    let mut handle = broker.stream(stream).await?;
    let last = handle
        .info()
        .await
        .map_err(|e| refused(stream, e))?
        .state
        .last_sequence;
    if last == 0 && !follow {
        return Ok(0);
    }
    let config = OrderedConfig {
        deliver_policy: DeliverPolicy::All,
        ..Default::default()
    };
    let consumer = handle
        .create_consumer(config)
        .await
        .map_err(|e| refused(stream, e))?;
    let mut messages = consumer.messages().await.map_err(|e| refused(stream, e))?;
    let mut written = 0;
    while let Some(message) = messages.next().await {
        let message = message.map_err(|e| refused(stream, e))?;
        out.write_all(&message.payload)?;
        out.write_all(b"\n")?;
        written += 1;
        let info = message.info().map_err(|e| refused(stream, e))?;
        if info.pending == 0 {
            out.flush()?;
        }
        if !follow && info.stream_sequence >= last {
            break;
        }
    }
    out.flush()?;
    Ok(written)
}

fn refused(stream: &str, e: impl std::fmt::Display) -> QueueError {
    QueueError::Refused {
        doing: format!("read the stream {stream}"),
        reason: e.to_string(),
    }
}
