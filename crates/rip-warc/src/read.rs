//! Reading WARC files: WARC/1.0 and 1.1, plain or `.warc.gz` (gzip member by member), or
//! the WARCs of a WACZ (with the `zip` crate), record by record, bounded ([`Limits`]), a
//! damaged record reported with its offset ([`Damage`]) and the reading going on past it;
//! and [`run`], the `rip-warc read` stage that turns them into the contract's records.
//!
//! The framing is our own (a header block, `Content-Length`, two CRLFs) over gzip members
//! read one at a time (a gzip header and trailer read here, the deflate data inflated by
//! [`flate2`], one inflater for every member), rather than the `warc` crate's: that one
//! reads a `.warc.gz` as one stream (`MultiGzDecoder`), so it knows no record's offset in
//! the file and cannot go past a damaged member to the next one.

mod archive;
mod gzip;
mod header;
mod input;
mod line;
pub use line::escape_into;

pub use archive::{Damage, Item, RawRecord, ReadError, read_archive};
pub use header::{Header, HeaderError, Limits};
mod http;
pub use http::{HttpError, HttpHead, HttpResponse, parse_head, parse_response};
mod pages;
pub use pages::{Made, Origin, STAGE, convert, damaged, target_uri};
mod revisit;
mod stage;
mod wacz;
pub use stage::{Config, StageError, run, summary_line};

#[cfg(test)]
mod tests;
