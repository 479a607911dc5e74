//! Records between shell pipelines and NATS JetStream streams.
//!
//! `rip-queue` keeps the Unix shape of a scrape when it spreads over machines: a stream of the
//! broker stands where a pipe stood, and every record keeps the record contract of
//! `docs/records.md`.
//!
//! - [`push`]: records from a reader into a stream. Each message carries the record's
//!   identity as its `Nats-Msg-Id` ([`identity::message_id`]: kind, URL and attempt), so a
//!   record published twice (a worker that did its work again after it was killed) is stored
//!   once.
//! - [`pull`]: a stream's records to a writer, to its end or following it.
//! - [`work`]: a stage program run on the records of one stream, its output published to
//!   another. An input record is acknowledged only after every record the program wrote for it
//!   is stored, so a worker killed at any moment leaves its records to be delivered again.
//!
//! - [`relay`]: a pipeline's records sent to the workers and what they made of them written
//!   back, as one stage: a run of its own (its records carry the run's name), ending when the
//!   workers have done them all (`ripperoni run` with a `queue` is `source | rip-queue relay |
//!   rip-write`).
//! - [`frontier`], [`members`], [`table`]: the pieces of a crawl shared by several
//!   `rip-discover`s: a frontier stream partitioned by host, each partition owned by one live
//!   member (rendezvous hashing, leases taken create-if-absent), and counters (the crawl's
//!   budgets) that many processes add to without passing a limit.
//!
//! A record over the broker's largest message goes through in chunks and comes out whole
//! ([`chunks`]); a record the queue cannot carry through becomes a `failure` of its URL
//! ([`fit::failure_of`]), which the books count.
#![deny(missing_docs)]

pub mod broker;
pub mod chunks;
pub mod error;
pub mod fit;
pub mod frontier;
pub mod identity;
pub mod login;
pub mod members;
mod pairs;
pub mod partition;
pub mod publish;
pub mod pull;
pub mod push;
mod reader;
pub mod relay;
pub mod table;
pub mod work;

pub use broker::{Broker, BrokerOptions};
pub use error::QueueError;
pub use publish::{Published, Publisher};
