//! Writing WARC/1.1: what a fetching stage sent and received, as records, one gzip member a
//! record, in files that rotate at a size.
//!
//! - [`Record`]: one record, its headers checked as they are set (a value holding CR, LF or
//!   NUL, or longer than [`MAX_HEADER_VALUE`], is refused: it comes from hostile input, a URL
//!   or a server's header, and would otherwise break the record), its `Content-Length` and
//!   `WARC-Block-Digest` computed from the block when it is encoded.
//! - [`http`]: the records of one HTTP exchange: `request` (as sent), `response` (status line,
//!   headers and body), `metadata` (our fetch context, `application/warc-fields`), `revisit`.
//! - [`resource`]: `resource` records, content got without an exchange of its own: a page's
//!   DOM rendered by rip-render (`urn:dom:` and the page's URL).
//! - [`tap`]: those records for every exchange a [`rip_http::Fetcher`] makes (`--warc`).
//! - [`WarcWriter`]: the files. Each is named
//!   `{prefix}-{YYYYMMDDhhmmss}{millis}-{serial:05}-{pid}~{host}.warc.gz` (`.warc` with
//!   [`Compression::None`]: the records uncompressed, as wget's `--no-warc-compression`) (Heritrix's
//!   convention, which wget and Browsertrix follow in spirit: sorted by time, and unique per
//!   process, so that several processes write into one folder, each its own file), written
//!   as `NAME.warc.gz.open` and renamed when closed, a `warcinfo` record first. A record is
//!   encoded and compressed whole in memory, then written with one `write_all`: a closed file
//!   never holds a torn record; a process killed mid-write leaves only its `.open` file torn.
//!   Processes or threads sharing one writer behind a lock compress outside it: ask
//!   [`WarcWriter::warcinfo`], [`encode`], then [`WarcWriter::write_encoded`].
//!
//! Members are compressed by libdeflate (`libdeflater`, a whole buffer at a time, one
//! compressor and one pair of buffers a thread, at its level 1): with flate2's encoder,
//! `rip-fetch --warc` spent about twice the CPU, and libdeflate's level 6 (zlib's default,
//! as wget and warcio write) 2.3 times the CPU of level 1 on the Rust docs, for 5.6 % fewer
//! bytes (the numbers are in the commits that chose them).
//!
//! Digests are SHA-1 in base32 (`sha1:…`), as wget and warcio write them (computed by
//! aws-lc, see [`Sha1Digest`](crate::record::Sha1Digest)); the payload digest
//! is over the HTTP entity body after transfer decoding, as warcio computes and checks it.

mod file;
pub mod http;
mod member;
pub mod resource;
pub mod tap;

use std::path::PathBuf;

pub use file::{DEFAULT_MAX_FILE_SIZE, WarcWriter, WriterConfig, encode};
pub use member::{Compression, MAX_HEADER_VALUE, MAX_HEADERS, Record, RecordId};

/// What went wrong writing WARC.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A header would break the record or is past the bounds.
    #[error(
        "WARC header {name:?}: {why} (hint: the value came from a URL or a server's header; it is refused, not written)"
    )]
    Header {
        /// The header's name (or the first 64 bytes of it).
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A file could not be created, written or renamed.
    #[error("WARC file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}
