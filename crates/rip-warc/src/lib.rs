//! `rip-warc`: web archives (WARC/1.1, ISO 28500) as a boundary of the pipeline, both ways.
//!
//! - [`write`](mod@write): what a fetching stage sent and received, as WARC records, one gzip member
//!   a record, in files that rotate at a size, are written as `.open` and renamed when
//!   closed.
//! - [`read`]: WARC, WARC.gz and WACZ files read record by record, bounded, a damaged
//!   record reported with its file and offset and the reading going on past it.
//! - [`index`](mod@index): a CDXJ index of WARC files, as pywb reads it.
//!
//! Issue 39 builds this crate; a module says what of it is there.

pub mod index;
pub mod read;
pub mod record;
pub mod write;
