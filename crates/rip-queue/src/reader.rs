//! Reading a stream in order, across broker restarts.
//!
//! A reader of a stream (`pull`, `pull --follow`, `pull --after`, the relay) reads through an
//! ordered consumer: one the broker keeps in memory, gone when the broker restarts. The
//! client recreates it while the broker is there; after a restart it may instead answer with
//! an error (`consumer not found`), and a reader that stopped there lost its place. Here the
//! reader remembers the stream sequence of the last message it gave out, and on any error of
//! the consumer opens a new one just after it, waiting for the broker as long as its patience
//! allows: nothing is read twice, nothing skipped.
//!
//! On a cluster, the ordered consumer lives on one server (one replica, whatever the
//! stream's), not always the one the reader is connected to. When that server dies, the
//! connection stays up and the consumer goes silent: the client notices only after two
//! missed idle heartbeats (30 s each in async-nats 0.51), and its own recreation may fail
//! during the election and wait again (a `pull --follow` got nothing for 60 to over 120 s,
//! issue 41). So a reader that has been quiet asks the stream, every [`STALL_CHECK`],
//! whether it holds a message at or past the place; one held at two checks in a row with
//! nothing delivered between means the consumer is gone, and the reader opens another.

use crate::{Broker, QueueError};
use async_nats::jetstream::Message;
use async_nats::jetstream::consumer::DeliverPolicy;
use async_nats::jetstream::consumer::pull::{Ordered, OrderedConfig};
use async_nats::jetstream::stream::Stream;
use futures::StreamExt;
use std::time::{Duration, Instant};

/// A stream's messages in order, from a sequence on, whatever the broker does meanwhile.
pub(crate) struct Reader {
    broker: Broker,
    handle: Stream,
    name: String,
    /// The sequence of the next message to give out.
    next: u64,
    messages: Option<Ordered>,
    /// The broker's connections when the consumer was opened.
    opened_on: u64,
    /// Since when the consumer has failed without a message or a quiet wait between.
    trouble: Option<Instant>,
    /// When the stream was last asked whether the consumer missed a message.
    checked: Instant,
    /// The place when the last check found a message at or past it, not delivered yet.
    undelivered: Option<u64>,
}

/// How often a quiet reader asks the stream whether its consumer missed a message: a dead
/// consumer is replaced between one and two of these after its message was stored.
pub(crate) const STALL_CHECK: Duration = Duration::from_secs(2);

impl Reader {
    /// A reader of `handle` (the stream `name`), from the sequence `from` (1: the start).
    pub(crate) fn new(broker: &Broker, handle: Stream, name: &str, from: u64) -> Self {
        Self {
            broker: broker.clone(),
            handle,
            name: name.to_owned(),
            next: from.max(1),
            messages: None,
            opened_on: 0,
            trouble: None,
            checked: Instant::now(),
            undelivered: None,
        }
    }

    /// The next message, waiting at most `wait` for it (`None`: none came, or the consumer
    /// failed and is opened again at the next call). An error only when the broker has been
    /// away or refusing longer than its patience.
    pub(crate) async fn next(&mut self, wait: Duration) -> Result<Option<Message>, QueueError> {
        if self.messages.is_none() {
            self.messages = Some(self.open().await?);
        }
        let messages = self.messages.as_mut().expect("opened");
        let failure = match tokio::time::timeout(wait, messages.next()).await {
            Err(_) if self.broker.connections() != self.opened_on => {
                // The connection came back: a broker that restarted lost the consumer, which
                // the client would find out only after missed heartbeats.
                self.messages = None;
                return Ok(None);
            }
            Err(_) => {
                self.trouble = None; // a quiet wait: the connection is fine
                self.check_stalled().await;
                return Ok(None);
            }
            Ok(Some(Ok(message))) => match message.info().map(|i| i.stream_sequence) {
                // A message before the place (a consumer the client recreated itself from an
                // older place) was given out already.
                Ok(sequence) if sequence < self.next => return Ok(None),
                Ok(sequence) => {
                    self.next = sequence + 1;
                    self.trouble = None;
                    self.undelivered = None;
                    return Ok(Some(message));
                }
                Err(e) => e.to_string(),
            },
            Ok(Some(Err(e))) => e.to_string(),
            Ok(None) => "the consumer ended".to_owned(),
        };
        self.failed(&failure)?;
        Ok(None)
    }

    /// After a quiet wait, every [`STALL_CHECK`]: drops the consumer (to open another at the
    /// place) when the stream held a message at or past the place at this check and the one
    /// before, nothing delivered between. A check the broker does not answer (an election)
    /// decides nothing.
    async fn check_stalled(&mut self) {
        if self.checked.elapsed() < STALL_CHECK {
            return;
        }
        self.checked = Instant::now();
        let held = tokio::time::timeout(STALL_CHECK, self.first_from(self.next)).await;
        match held {
            Ok(Ok(Some(_))) if self.undelivered == Some(self.next) => {
                self.broker.say(&format!(
                    "read the stream {}: its reader on the broker stopped delivering (the \
                     server holding it is gone?); reading on from sequence {} with a new one",
                    self.name, self.next
                ));
                self.messages = None;
                self.undelivered = None;
            }
            Ok(Ok(Some(_))) => self.undelivered = Some(self.next),
            Ok(Ok(None)) => self.undelivered = None,
            Ok(Err(_)) | Err(_) => {}
        }
    }

    /// Drops the consumer after `failure`, to open a new one at the place; an error once
    /// it has been failing longer than the broker's patience.
    fn failed(&mut self, failure: &str) -> Result<(), QueueError> {
        self.messages = None;
        let doing = format!("read the stream {}", self.name);
        let since = *self.trouble.get_or_insert_with(|| {
            self.broker
                .say_waiting(&doing, &failure, self.broker.connected());
            Instant::now()
        });
        if since.elapsed() >= self.broker.patience() {
            return Err(if self.broker.connected() {
                self.broker.refused(&doing, failure)
            } else {
                self.broker.gone(&doing, failure)
            });
        }
        Ok(())
    }

    /// A new ordered consumer from the place, waiting for the broker.
    async fn open(&mut self) -> Result<Ordered, QueueError> {
        let deliver_policy = match self.next {
            1 => DeliverPolicy::All,
            start_sequence => DeliverPolicy::ByStartSequence { start_sequence },
        };
        let config = OrderedConfig {
            deliver_policy,
            ..Default::default()
        };
        let doing = format!("read the stream {}", self.name);
        self.opened_on = self.broker.connections();
        let handle = &self.handle;
        self.broker
            .patiently(&doing, || {
                let config = config.clone();
                async move {
                    let consumer = handle
                        .create_consumer(config)
                        .await
                        .map_err(|e| e.to_string())?;
                    consumer.messages().await.map_err(|e| e.to_string())
                }
            })
            .await
    }

    /// Whether the stream holds a message from the sequence `from` to `to`: the last
    /// sequence may be of a message since deleted (chunks no head names), which no reader
    /// will ever get.
    pub(crate) async fn holds_between(&self, from: u64, to: u64) -> Result<bool, QueueError> {
        let doing = format!("read the stream {}", self.name);
        let first = (self.broker)
            .patiently(&doing, || self.first_from(from))
            .await?;
        Ok(first.is_some_and(|sequence| sequence <= to))
    }

    /// The sequence of the stream's first message at or past `from`, asked once.
    async fn first_from(
        &self,
        from: u64,
    ) -> Result<Option<u64>, async_nats::jetstream::stream::RawMessageError> {
        use async_nats::jetstream::stream::RawMessageErrorKind;
        match (self.handle)
            .get_first_raw_message_by_subject(">", from)
            .await
        {
            Ok(m) => Ok(Some(m.sequence)),
            Err(e) if e.kind() == RawMessageErrorKind::NoMessageFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The sequence of the stream's last message, waiting for the broker.
    pub(crate) async fn last_sequence(&self) -> Result<u64, QueueError> {
        let doing = format!("read the stream {}", self.name);
        self.broker
            .patiently(&doing, || {
                let mut handle = self.handle.clone();
                async move { handle.info().await.map(|i| i.state.last_sequence) }
            })
            .await
    }
}
