//! Records that take their worker down: found by running them alone, given up as failures.
//!
//! A record the program fails on ends as a failure after `max_deliver` deliveries (see
//! [`super::batch`]). A record that kills the *worker* (the program kills its parent, a
//! container's memory limit takes the whole group down, a bug of the worker itself) leaves
//! no failure to count: it comes back after the acknowledgement wait, again and again. The
//! broker's delivery count cannot tell it from the records that were merely held by the same
//! dying workers, as they come back together.
//!
//! So a record delivered past `max_deliver` is a suspect: its worker runs it with no other
//! run beside it ([`RUNS`]), and first leaves a mark in a stream of the broker ([`MARKS`])
//! that the run's end clears. A suspect that finds its own mark at its next delivery killed
//! a worker that was running it alone: it is given up (`queue.workerLost`) without running.

use crate::{Broker, QueueError};
use async_nats::jetstream::Message;
use async_nats::jetstream::stream::{LastRawMessageErrorKind, Stream};
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// This worker's runs of its program: ordinary runs share it, a suspect's run takes it alone.
/// Fair, so a suspect waiting for it is not overtaken by runs started after it.
static RUNS: RwLock<()> = RwLock::const_new(());

/// A run's turn: shared, or alone.
pub(super) enum Turn {
    /// An ordinary run, beside others.
    Shared(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
    /// A suspect's run, with no other.
    Alone(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
}

/// Waits for a run's turn: alone for a suspect's run (see [`suspect`]).
pub(super) async fn turn(suspect: bool) -> Turn {
    if suspect {
        Turn::Alone(RUNS.write().await)
    } else {
        Turn::Shared(RUNS.read().await)
    }
}

/// The delivery number of a run's one record when it is delivered past `max_deliver` (runs
/// of several records hold only records delivered at most `max_deliver` times): its delivery
/// numbered `max_deliver` or later did not end as a program's failure ends (that gives it
/// up), so the worker that had it died.
pub(super) fn suspect(messages: &[Message], max_deliver: i64) -> Option<i64> {
    let [message] = messages else { return None };
    let delivered = message.info().ok()?.delivered;
    (delivered > max_deliver).then_some(delivered)
}

/// The stream of the marks, beside the user's streams (a name no stage uses).
const MARKS: &str = "work-alone-marks";

/// The mark of a suspect's run: the last message on its subject in the stream
/// [`MARKS`] says `running` while a run alone has begun and not ended.
pub(super) struct Mark {
    stream: Stream,
    subject: String,
}

impl Mark {
    /// The mark of `message` (a record of the stream `input`), its stream created when new.
    pub(super) async fn of(
        broker: &Broker,
        input: &str,
        message: &Message,
    ) -> Result<Self, QueueError> {
        let stream = broker.stream(MARKS).await?;
        let sequence = message.info().map(|i| i.stream_sequence).unwrap_or(0);
        Ok(Self {
            stream,
            subject: format!("{}.{input}-{sequence}", broker.subject(MARKS)),
        })
    }

    /// Whether a run of this record alone began and never ended.
    pub(super) async fn left(&self, broker: &Broker) -> Result<bool, QueueError> {
        let last = broker
            .patiently("read a suspect's mark", || async {
                match self
                    .stream
                    .get_last_raw_message_by_subject(&self.subject)
                    .await
                {
                    Ok(m) => Ok(Some(m.payload)),
                    Err(e) if e.kind() == LastRawMessageErrorKind::NoMessageFound => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .await?;
        Ok(last.is_some_and(|p| p.as_ref() == RUNNING))
    }

    /// Marks a run of this record alone as begun.
    pub(super) async fn set(&self, broker: &Broker) -> Result<(), QueueError> {
        self.say(broker, RUNNING, "mark a suspect's run").await
    }

    /// The run ended (whatever its outcome): the mark goes. Not removed (the broker away for
    /// longer than the patience), it gives the record up at a later delivery, as a failure
    /// beside whatever this run published for it; said in the log.
    pub(super) async fn clear(&self, broker: &Broker) {
        if let Err(e) = self.say(broker, b"ended", "clear a suspect's mark").await {
            tracing::warn!("{e}");
        }
    }

    async fn say(&self, broker: &Broker, what: &[u8], doing: &str) -> Result<(), QueueError> {
        let js = broker.jetstream();
        let payload = bytes::Bytes::copy_from_slice(what);
        broker
            .patiently(doing, || async {
                js.publish(self.subject.clone(), payload.clone())
                    .await?
                    .await
            })
            .await?;
        Ok(())
    }
}

const RUNNING: &[u8] = b"running";
