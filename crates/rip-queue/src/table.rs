//! Small tables on the broker: a stream keeping one message per subject is a key-value
//! bucket by another name. (Not async-nats's key-value store: its bucket creation fails
//! against Debian's nats-server 2.9.)
//!
//! A [`Table`] holds keys with a payload and a revision (the stream sequence of the key's last
//! write); `put` at an expected revision is create-if-absent (revision 0) or
//! update-if-unchanged, which settles two writers. A [`Counter`] is one key of a table that
//! processes on many machines add to without ever passing a limit (the crawl's budgets).

use crate::{Broker, QueueError};
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::{self, DiscardPolicy, StorageType};
use bytes::Bytes;
use futures::TryStreamExt;
use std::time::Duration;

/// Keys on a stream, each its last message (for `lifetime` after it was written, when given).
pub struct Table {
    stream: stream::Stream,
    js: async_nats::jetstream::Context,
    subject: String,
}

impl Table {
    /// The table `name` under the broker's prefix, created when it does not exist; keys not
    /// written again within `lifetime` disappear.
    pub async fn open(
        broker: &Broker,
        name: &str,
        lifetime: Option<Duration>,
    ) -> Result<Self, QueueError> {
        let subject = format!("{}.{name}", broker.prefix());
        let config = stream::Config {
            name: format!("{}_{name}", broker.prefix()),
            subjects: vec![format!("{subject}.*")],
            max_messages_per_subject: 1,
            max_age: lifetime.unwrap_or_default(),
            discard: DiscardPolicy::Old,
            storage: StorageType::File,
            num_replicas: broker.replicas(),
            ..Default::default()
        };
        let js = broker.jetstream().clone();
        let stream = broker
            .patiently(&format!("open the table {name}"), || {
                crate::broker::open_or_create(&js, &config)
            })
            .await?;
        Ok(Self {
            stream,
            js,
            subject,
        })
    }

    /// Writes `key`; with `expect`, only if its revision is that (0: absent). Returns the new
    /// revision.
    pub async fn put(
        &self,
        key: &str,
        payload: Bytes,
        expect: Option<u64>,
    ) -> Result<u64, QueueError> {
        match self.update(key, payload, expect).await? {
            Some(revision) => Ok(revision),
            None => Err(QueueError::refused(
                "write a table",
                format!("{key} is not at revision {}", expect.unwrap_or_default()),
            )),
        }
    }

    /// [`put`](Self::put), telling a revision that was not `expect` (`Ok(None)`: another
    /// writer wrote or removed the key since) from a write that got no answer or another
    /// refusal (`Err`: nothing is known of the key).
    pub async fn update(
        &self,
        key: &str,
        payload: Bytes,
        expect: Option<u64>,
    ) -> Result<Option<u64>, QueueError> {
        use async_nats::jetstream::context::PublishErrorKind;
        let mut publish = PublishMessage::build().payload(payload);
        if let Some(revision) = expect {
            publish = publish.expected_last_subject_sequence(revision);
        }
        let subject = format!("{}.{key}", self.subject);
        let sent = self
            .js
            .send_publish(subject, publish)
            .await
            .map_err(|e| QueueError::refused("write a table", e))?;
        match sent.await {
            Ok(ack) => Ok(Some(ack.sequence)),
            Err(e) if e.kind() == PublishErrorKind::WrongLastSequence => Ok(None),
            Err(e) => Err(QueueError::refused("write a table", e)),
        }
    }

    /// The revision and payload of `key`, `None` when absent.
    pub async fn get(&self, key: &str) -> Result<Option<(u64, Bytes)>, QueueError> {
        use async_nats::jetstream::stream::LastRawMessageErrorKind;
        let subject = format!("{}.{key}", self.subject);
        match self.stream.get_last_raw_message_by_subject(&subject).await {
            Ok(m) => Ok(Some((m.sequence, m.payload))),
            Err(e) if e.kind() == LastRawMessageErrorKind::NoMessageFound => Ok(None),
            Err(e) => Err(QueueError::refused("read a table", e)),
        }
    }

    /// Removes `key`.
    pub async fn delete(&self, key: &str) -> Result<(), QueueError> {
        let subject = format!("{}.{key}", self.subject);
        self.stream
            .purge()
            .filter(subject)
            .await
            .map_err(|e| QueueError::refused("write a table", e))?;
        Ok(())
    }

    /// The keys present, sorted.
    pub async fn keys(&self) -> Result<Vec<String>, QueueError> {
        let info = self
            .stream
            .info_with_subjects(format!("{}.*", self.subject))
            .await
            .map_err(|e| QueueError::refused("read a table", e))?;
        let subjects: Vec<(String, usize)> = info
            .try_collect()
            .await
            .map_err(|e| QueueError::refused("read a table", e))?;
        let prefix = format!("{}.", self.subject);
        let mut keys: Vec<String> = subjects
            .into_iter()
            .filter_map(|(s, _)| s.strip_prefix(&prefix).map(str::to_owned))
            .collect();
        keys.sort();
        Ok(keys)
    }
}

/// A number on the broker that many processes add to, never past a limit.
pub struct Counter<'a> {
    table: &'a Table,
    key: String,
}

impl<'a> Counter<'a> {
    /// The counter `key` of `table` (0 until added to).
    pub fn new(table: &'a Table, key: &str) -> Self {
        Self {
            table,
            key: key.to_owned(),
        }
    }

    /// Its value now.
    pub async fn value(&self) -> Result<u64, QueueError> {
        Ok(self.read().await?.1)
    }

    /// Adds up to `wanted` without passing `limit`; returns what was added (0 once the limit
    /// is reached). Two processes adding at once: one write wins, the other reads again.
    pub async fn claim(&self, wanted: u64, limit: u64) -> Result<u64, QueueError> {
        loop {
            let (revision, value) = self.read().await?;
            let granted = wanted.min(limit.saturating_sub(value));
            if granted == 0 {
                return Ok(0);
            }
            let next = Bytes::from((value + granted).to_string());
            if self
                .table
                .put(&self.key, next, Some(revision))
                .await
                .is_ok()
            {
                return Ok(granted);
            }
        }
    }

    async fn read(&self) -> Result<(u64, u64), QueueError> {
        let Some((revision, payload)) = self.table.get(&self.key).await? else {
            return Ok((0, 0));
        };
        let value = std::str::from_utf8(&payload)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Ok((revision, value))
    }
}
