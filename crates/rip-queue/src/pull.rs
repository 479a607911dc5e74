//! `rip-queue pull STREAM`: a stream's records to a writer.

use crate::broker::Absence;
use crate::{Broker, QueueError};
use async_nats::jetstream::consumer::{DeliverPolicy, pull::OrderedConfig};
use async_nats::jetstream::stream::Stream;
use futures::{StreamExt, TryStreamExt};
use std::io::Write;
use std::time::Duration;

/// When a pull ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Until {
    /// At the last record the stream holds when the pull starts.
    End,
    /// Never: records are written as they arrive until the process is stopped.
    Forever,
    /// When the worker group `group` has done every record of the stream `input` (none
    /// waiting, none held unacknowledged) and every record stored until then is written: the
    /// end of a crawl whose workers run anywhere. Workers acknowledge a record only after its
    /// output is stored, so nothing the group wrote is missed.
    Done {
        /// The stream the workers read.
        input: String,
        /// Their group.
        group: String,
    },
}

/// Writes the records of `stream` to `out`, one per line, in the order the stream holds
/// them, until `until`. Returns how many were written.
pub async fn pull(
    broker: &Broker,
    stream: &str,
    until: Until,
    out: &mut dyn Write,
) -> Result<u64, QueueError> {
    // Draining reads what is there: a stream that is not is a mistake to say. Following, or
    // waiting for workers, may start before anything was pushed.
    let mut handle = match until {
        Until::End => broker.existing_stream(stream).await?,
        _ => broker.stream(stream).await?,
    };
    let mut last = last_sequence(&mut handle, stream).await?;
    if last == 0 && until == Until::End {
        return Ok(0);
    }
    let done_after = match &until {
        Until::Done { input, group } => Some((broker.stream(input).await?, group.as_str())),
        _ => None,
    };
    let config = OrderedConfig {
        deliver_policy: DeliverPolicy::All,
        ..Default::default()
    };
    let consumer = handle
        .create_consumer(config)
        .await
        .map_err(|e| refused(stream, e))?;
    let mut messages = consumer.messages().await.map_err(|e| refused(stream, e))?;
    let (mut written, mut read_to) = (0, 0);
    let mut absence = Absence::default();
    let mut finishing = false;
    loop {
        if (until == Until::End || finishing) && read_to >= last {
            break;
        }
        let next = tokio::time::timeout(Duration::from_millis(500), messages.next()).await;
        let Ok(next) = next else {
            out.flush()?;
            absence.check(broker, &format!("read the stream {stream}"))?;
            if let Some((input, group)) = &done_after
                && !finishing
                && group_done(input, group).await?
            {
                finishing = true;
                last = last_sequence(&mut handle, stream).await?;
            }
            continue;
        };
        let Some(message) = next else { break };
        let message = message.map_err(|e| refused(stream, e))?;
        out.write_all(&message.payload)?;
        out.write_all(b"\n")?;
        written += 1;
        let info = message.info().map_err(|e| refused(stream, e))?;
        read_to = info.stream_sequence;
        if info.pending == 0 {
            out.flush()?;
        }
    }
    out.flush()?;
    Ok(written)
}

async fn last_sequence(handle: &mut Stream, stream: &str) -> Result<u64, QueueError> {
    Ok(handle
        .info()
        .await
        .map_err(|e| refused(stream, e))?
        .state
        .last_sequence)
}

/// Whether `group`'s consumers of `input` exist and have no record waiting or held.
async fn group_done(input: &Stream, group: &str) -> Result<bool, QueueError> {
    let partition = format!("{group}-p");
    let infos: Vec<_> = input
        .consumers()
        .try_collect()
        .await
        .map_err(|e| refused("the workers' input", e))?;
    let mine: Vec<_> = infos
        .iter()
        .filter(|i| i.name == group || i.name.starts_with(&partition))
        .collect();
    let outstanding: u64 = mine.iter().map(|i| crate::work::unfinished(i)).sum();
    Ok(!mine.is_empty() && outstanding == 0)
}

fn refused(stream: &str, e: impl std::fmt::Display) -> QueueError {
    QueueError::refused(format!("read the stream {stream}"), e)
}
