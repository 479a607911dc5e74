//! `rip-queue pull STREAM`: a stream's records to a writer.

use crate::broker::Absence;
use crate::chunks;
use crate::reader::Reader;
use crate::{Broker, QueueError};
use async_nats::jetstream::stream::Stream;
use futures::TryStreamExt;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Which records of a stream a pull writes, beyond [`Until`].
#[derive(Debug, Default, Clone)]
pub struct Selection {
    /// Only the records of this run ([`crate::publish::RUN_HEADER`]).
    pub run: Option<String>,
    /// From this stream sequence on (records stored before are not read).
    pub from: Option<u64>,
    /// With [`Until::Done`]: the group's being done counts only once this is set (the input
    /// is still being pushed until then).
    pub input_complete: Option<Arc<AtomicBool>>,
}

/// Writes the records of `stream` to `out`, one per line, in the order the stream holds
/// them, until `until`. Returns how many were written.
pub async fn pull(
    broker: &Broker,
    stream: &str,
    until: Until,
    out: &mut dyn Write,
) -> Result<u64, QueueError> {
    pull_selected(broker, stream, until, Selection::default(), out).await
}

/// [`pull`], of the records `selection` keeps.
pub async fn pull_selected(
    broker: &Broker,
    stream: &str,
    until: Until,
    selection: Selection,
    out: &mut dyn Write,
) -> Result<u64, QueueError> {
    // Draining reads what is there: a stream that is not is a mistake to say. Following, or
    // waiting for workers, may start before anything was pushed.
    let handle = match until {
        Until::End => broker.existing_stream(stream).await?,
        _ => broker.stream(stream).await?,
    };
    let mut reader = Reader::new(broker, handle, stream, selection.from.unwrap_or(1));
    let mut last = reader.last_sequence().await?;
    if last == 0 && until == Until::End {
        return Ok(0);
    }
    let done_after = match &until {
        Until::Done { input, group } => Some((broker.stream(input).await?, group.as_str())),
        _ => None,
    };
    let input_complete = || {
        selection
            .input_complete
            .as_ref()
            .is_none_or(|done| done.load(Ordering::SeqCst))
    };
    let (mut written, mut read_to) = (0, selection.from.unwrap_or(1).saturating_sub(1));
    let mut absence = Absence::default();
    let mut finishing = false;
    loop {
        if (until == Until::End || finishing) && read_to >= last {
            break;
        }
        let Some(message) = reader.next(Duration::from_millis(500)).await? else {
            out.flush()?;
            absence.check(broker, &format!("read the stream {stream}"))?;
            if (until == Until::End || finishing)
                && !reader.holds_between(read_to + 1, last).await?
            {
                break; // the rest was deleted
            }
            if let Some((input, group)) = &done_after
                && !finishing
                && input_complete()
                && group_done(broker, input, group).await?
            {
                finishing = true;
                last = reader.last_sequence().await?;
            }
            continue;
        };
        let info = message.info().map_err(|e| refused(stream, e))?;
        let (pending, full_name) = (info.pending, info.stream.to_owned());
        read_to = info.stream_sequence;
        let ours = selection.run.is_none() || crate::publish::run_of(&message) == selection.run;
        // A chunk comes out with its record, at its head.
        if ours && !chunks::is_chunk(&message) {
            let mut message = message.message;
            chunks::make_whole(broker, &full_name, &mut message).await?;
            out.write_all(&message.payload)?;
            out.write_all(b"\n")?;
            written += records_in(&message.payload);
        }
        if pending == 0 {
            out.flush()?;
        }
    }
    out.flush()?;
    Ok(written)
}

/// The records a message holds: one line each (a ledger entry with its URL's outcome: two,
/// [`crate::pairs`]).
fn records_in(payload: &[u8]) -> u64 {
    1 + memchr::memchr_iter(b'\n', payload).count() as u64
}

/// Whether `group`'s consumers of `input` exist and have no record waiting or held. On a
/// stream partitioned by host, a partition holding records must have its consumer: workers
/// create a partition's consumer when they first look at it, so records of a partition
/// nobody looked at yet are not done.
async fn group_done(broker: &Broker, input: &Stream, group: &str) -> Result<bool, QueueError> {
    broker
        .patiently("read the workers' progress", || {
            group_done_now(input, group)
        })
        .await
}

/// [`group_done`], asked once.
async fn group_done_now(
    input: &Stream,
    group: &str,
) -> Result<bool, async_nats::jetstream::context::RequestError> {
    let partition = format!("{group}-p");
    let infos: Vec<_> = input.consumers().try_collect().await?;
    let mine: Vec<_> = infos
        .iter()
        .filter(|i| i.name == group || i.name.starts_with(&partition))
        .collect();
    let outstanding: u64 = mine.iter().map(|i| crate::work::unfinished(i)).sum();
    if mine.is_empty() || outstanding > 0 {
        return Ok(false);
    }
    let partitions = crate::broker::partitions_of(input);
    if partitions == 0 {
        return Ok(true);
    }
    let subject = input.cached_info().config.subjects[0].clone();
    let held: Vec<(String, usize)> = input
        .info_with_subjects(format!("{subject}.*"))
        .await?
        .try_collect()
        .await?;
    // Chunk subjects are no partition's: their chunks come with their heads.
    let unlooked = held.iter().any(|(s, n)| {
        let p = s.rsplit('.').next().unwrap_or_default();
        *n > 0
            && !crate::chunks::is_chunk_subject(&subject, s)
            && !mine.iter().any(|i| i.name == format!("{partition}{p}"))
    });
    Ok(!unlooked)
}

fn refused(stream: &str, e: impl std::fmt::Display) -> QueueError {
    QueueError::refused(format!("read the stream {stream}"), e)
}
