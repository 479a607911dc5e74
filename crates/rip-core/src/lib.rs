#![deny(missing_docs)]
#![doc = include_str!("../../../docs/records.md")]
//!
//! # This crate
//!
//! - [`Record`] and its kinds: [`Ref`], [`Page`], [`Failure`], [`Doc`], [`ErrorDoc`],
//!   [`Expected`], [`Ledger`], [`Summary`]; the shared [`Context`] and [`ErrorEntry`].
//! - [`ndjson`]: the streaming reader ([`NdjsonReader`], yielding [`Line`]s whose kind is
//!   peeked without decoding) and the buffered writer ([`NdjsonWriter`]).
//! - [`stream`]: [`Pipe`], the read-process-write loop of record-at-a-time stages.
//! - [`books`]: [`Books`], what every stage's loop keeps account of (input, bad lines,
//!   ledger, summary, status), the synchronous stages' through their [`Pipe`].
//! - [`live`]: what a stage has counted so far, for its `--metrics` endpoint.
//! - [`spill`]: [`spill::SpillFile`], queued items past a memory budget, waiting on disk.
//! - [`folder`]: the record files of an output folder, for the stages that read one whole.
//! - [`exit`]: the exit codes and [`Status`].
//! - [`state_folder`]: the `--state DIR` folder of a resumable run (lock, parameters,
//!   append-only journal).
//! - [`CacheMode`]: what the shared response cache may do (`--cache`, a state file's
//!   `cache.mode`).

pub mod accounting;
pub mod books;
pub mod cache_mode;
pub mod category;
pub mod context;
pub mod exit;
pub mod fetch;
pub mod folder;
pub mod live;
pub mod ndjson;
pub mod outcome;
pub mod published_schema;
pub mod record;
pub mod render_reason;
pub mod spill;
pub mod state_folder;
pub mod stderr;
pub mod stream;

pub use accounting::{Ledger, Summary, peak_rss_bytes};
pub use books::Books;
pub use cache_mode::{CacheMode, UnknownCacheMode};
pub use category::{BodyEncoding, CharsetSource, ErrorCategory, ExpectedSource, Phase};
pub use context::{Context, ErrorEntry};
pub use exit::Status;
pub use fetch::{ConsoleError, FailedRequest, Failure, Page, Ref, Rendered, SiteFetch, media_type};
pub use ndjson::{
    DecodeError, Line, LineError, NdjsonReader, NdjsonWriter, ReadError, is_broken_pipe,
};
pub use outcome::{DOC_RESERVED_FIELDS, Doc, ErrorDoc, Expected, Resolution};
pub use record::{Kind, Record};
pub use render_reason::{PageFigures, RenderedBecause};
pub use stream::{Pipe, PipeError, PipeOptions, Polled};
