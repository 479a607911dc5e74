//! One record: its headers, checked as they are set, and its block; encoded as one gzip member.

use std::cell::RefCell;

use chrono::{DateTime, SecondsFormat, Utc};
use libdeflater::{CompressionLvl, Compressor};

use super::Error;
use crate::record::{RecordType, Sha1Digest, WARC_VERSION, field};

/// Longest header value written, in bytes (a longer URL or value is refused).
pub const MAX_HEADER_VALUE: usize = 16 * 1024;
/// Most headers a record holds besides the ones every record has.
pub const MAX_HEADERS: usize = 64;

/// A record's id: `<urn:uuid:…>`, a random (version 4) UUID.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordId(String);

impl RecordId {
    /// A new random id.
    #[must_use]
    pub fn random() -> Self {
        let mut b: [u8; 16] = fastrand::u128(..).to_be_bytes();
        b[6] = (b[6] & 0x0f) | 0x40; // version 4
        b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
        let h = data_encoding::HEXLOWER.encode(&b);
        Self(format!(
            "<urn:uuid:{}-{}-{}-{}-{}>",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        ))
    }

    /// The id as written in headers, angle brackets included.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for RecordId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A WARC date: UTC, microseconds (WARC/1.1 allows a fraction of a second).
#[must_use]
pub fn warc_date(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// One WARC record, built then encoded.
#[derive(Debug, Clone)]
pub struct Record {
    kind: RecordType,
    id: RecordId,
    date: String,
    headers: Vec<(String, String)>,
    block: Vec<u8>,
}

impl Record {
    /// A record of `kind` holding `block`, with a new id and the current time.
    #[must_use]
    pub fn new(kind: RecordType, block: Vec<u8>) -> Self {
        Self {
            kind,
            id: RecordId::random(),
            date: warc_date(Utc::now()),
            headers: Vec::new(),
            block,
        }
    }

    /// The record's type.
    #[must_use]
    pub fn kind(&self) -> RecordType {
        self.kind
    }

    /// The record's id.
    #[must_use]
    pub fn id(&self) -> &RecordId {
        &self.id
    }

    /// The record's `WARC-Date`.
    #[must_use]
    pub fn date(&self) -> &str {
        &self.date
    }

    /// The block.
    #[must_use]
    pub fn block(&self) -> &[u8] {
        &self.block
    }

    /// The value of header `name` set on the record (not the computed ones), if any.
    #[must_use]
    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Sets the date (`WARC-Date`) to `at`.
    #[must_use]
    pub fn at(mut self, at: DateTime<Utc>) -> Self {
        self.date = warc_date(at);
        self
    }

    /// Adds header `name: value`, refusing a name that is not a token, a value holding CR,
    /// LF or NUL or longer than [`MAX_HEADER_VALUE`], and more than [`MAX_HEADERS`] headers.
    pub fn header(mut self, name: &str, value: &str) -> Result<Self, Error> {
        check_header(name, value)?;
        if self.headers.len() >= MAX_HEADERS {
            return Err(header_error(name, "too many headers on one record"));
        }
        self.headers
            .push((name.to_owned(), value.trim().to_owned()));
        Ok(self)
    }

    /// Sets `WARC-Target-URI`.
    pub fn target_uri(self, uri: &str) -> Result<Self, Error> {
        self.header(field::TARGET_URI, uri)
    }

    /// Sets `Content-Type` (of the block).
    pub fn content_type(self, content_type: &str) -> Result<Self, Error> {
        self.header(field::CONTENT_TYPE, content_type)
    }

    /// Ties this record to `other` (`WARC-Concurrent-To`).
    pub fn concurrent_to(self, other: &RecordId) -> Result<Self, Error> {
        self.header(field::CONCURRENT_TO, other.as_str())
    }

    /// The record as bytes: version line, headers, the computed `Content-Length` and
    /// `WARC-Block-Digest`, `WARC-Warcinfo-ID` when given, a blank line, the block, and the
    /// two CRLFs that end a record.
    #[must_use]
    pub fn encode(&self, warcinfo: Option<&RecordId>) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(warcinfo, &mut out);
        out
    }

    /// [`encode`](Self::encode), appended to `out`.
    pub(crate) fn encode_into(&self, warcinfo: Option<&RecordId>, out: &mut Vec<u8>) {
        out.reserve(WARC_VERSION.len() + 512 + self.block.len());
        out.extend_from_slice(WARC_VERSION.as_bytes());
        out.extend_from_slice(b"\r\n");
        let mut line = |name: &str, value: &str| {
            for part in [name.as_bytes(), b": ", value.as_bytes(), b"\r\n"] {
                out.extend_from_slice(part);
            }
        };
        line(field::TYPE, self.kind.as_str());
        line(field::RECORD_ID, self.id.as_str());
        line(field::DATE, &self.date);
        for (name, value) in &self.headers {
            line(name, value);
        }
        if let Some(info) = warcinfo.filter(|_| self.kind != RecordType::Warcinfo) {
            line(field::WARCINFO_ID, info.as_str());
        }
        line(field::BLOCK_DIGEST, &Sha1Digest::of(&self.block));
        line(field::CONTENT_LENGTH, &self.block.len().to_string());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&self.block);
        out.extend_from_slice(b"\r\n\r\n");
    }

    /// The record as one gzip member ([`encode`](Self::encode) compressed).
    #[must_use]
    pub fn gzip_member(&self, warcinfo: Option<&RecordId>) -> Vec<u8> {
        let mut out = Vec::new();
        gzip_record(self, warcinfo, &mut out);
        out
    }
}

/// A thread's buffer kept longer than this is given back after use (a record this large
/// is rare; the memory is not held for the rest of the run).
const KEEP_BUFFER: usize = 4 << 20;

thread_local! {
    /// One compressor a thread: making one allocates a few hundred KB, which cost more
    /// than compressing a small page.
    static COMPRESSOR: RefCell<Compressor> = RefCell::new(Compressor::new(level()));
    /// A thread's buffers: the record encoded, then compressed. Reused, they are not
    /// allocated, zeroed and faulted in again for every record.
    static BUFFERS: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// libdeflate's level 1: against its level 6 (as wget and warcio write with zlib), less
/// than half the CPU for about 6 % more bytes on HTML (the numbers are in the commit that
/// chose it).
fn level() -> CompressionLvl {
    CompressionLvl::new(1).unwrap_or_default()
}

/// Appends `record` ([`Record::encode`]d for `warcinfo`) to `out` as one gzip member.
pub(crate) fn gzip_record(record: &Record, warcinfo: Option<&RecordId>, out: &mut Vec<u8>) {
    BUFFERS.with_borrow_mut(|(plain, packed)| {
        plain.clear();
        record.encode_into(warcinfo, plain);
        compress(plain, packed, out);
        release(plain);
    });
}

/// Appends `record` ([`Record::encode`]d for `warcinfo`) to `out` as `compression` says.
pub(crate) fn append_record(
    record: &Record,
    warcinfo: Option<&RecordId>,
    compression: Compression,
    out: &mut Vec<u8>,
) {
    match compression {
        Compression::Gzip => gzip_record(record, warcinfo, out),
        Compression::None => record.encode_into(warcinfo, out),
    }
}

/// How the records of a file are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// One gzip member a record (`.warc.gz`), at libdeflate's level 1.
    #[default]
    Gzip,
    /// Uncompressed (`.warc`), as wget's `--no-warc-compression`: no CPU spent on
    /// compression, some 4 to 5 times the bytes on HTML.
    None,
}

impl Compression {
    /// The file name's extension: `warc.gz` or `warc`.
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            Self::Gzip => "warc.gz",
            Self::None => "warc",
        }
    }

    /// `gzip` or `none`, as `--warc-compression` takes it.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "gzip" => Some(Self::Gzip),
            "none" => Some(Self::None),
            _ => None,
        }
    }
}

/// Appends `plain` to `out` as one gzip member, at [`level`].
#[cfg(test)]
fn gzip(plain: &[u8], out: &mut Vec<u8>) {
    BUFFERS.with_borrow_mut(|(_, packed)| compress(plain, packed, out));
}

/// Compresses `plain` into `packed` (grown when short, never zeroed again), then appends
/// the member to `out`.
fn compress(plain: &[u8], packed: &mut Vec<u8>, out: &mut Vec<u8>) {
    COMPRESSOR.with_borrow_mut(|c| {
        let bound = c.gzip_compress_bound(plain.len());
        if packed.len() < bound {
            packed.resize(bound, 0);
        }
        // The bound is libdeflate's own: a whole buffer of it never runs short.
        let n = c.gzip_compress(plain, packed).unwrap_or(0);
        out.extend_from_slice(&packed[..n]);
    });
    release(packed);
}

fn release(buf: &mut Vec<u8>) {
    if buf.capacity() > KEEP_BUFFER {
        *buf = Vec::new();
    }
}

fn header_error(name: &str, why: &'static str) -> Error {
    Error::Header {
        name: name.chars().take(64).collect(),
        why,
    }
}

/// A header name is a token (RFC 9110); a value holds no CR, LF or NUL and is bounded.
pub(crate) fn check_header(name: &str, value: &str) -> Result<(), Error> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || name.len() > 256 || !name.bytes().all(token) {
        return Err(header_error(name, "the name is not a token"));
    }
    if value.len() > MAX_HEADER_VALUE {
        return Err(header_error(name, "the value is longer than 16 KiB"));
    }
    if value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0)) {
        return Err(header_error(name, "the value holds CR, LF or NUL"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_inflate_alone_and_one_after_another() {
        use std::io::Read as _;
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut file = Vec::new();
        for plain in [&b"hello"[..], &big, b""] {
            let mut out = Vec::new();
            gzip(plain, &mut out);
            let mut back = Vec::new();
            flate2::read::GzDecoder::new(&out[..])
                .read_to_end(&mut back)
                .expect("inflates");
            assert_eq!(back, plain);
            file.extend_from_slice(&out);
        }
        let mut all = Vec::new();
        flate2::read::MultiGzDecoder::new(&file[..])
            .read_to_end(&mut all)
            .expect("inflates");
        assert_eq!(all.len(), 5 + big.len());
    }

    #[test]
    fn a_thread_keeps_small_buffers_and_gives_big_ones_back() {
        use std::io::Read as _;
        let capacity =
            || BUFFERS.with_borrow(|(plain, packed)| (plain.capacity(), packed.capacity()));
        for size in [1_000, 100_000, KEEP_BUFFER + 1, 10] {
            let body: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            let record = Record::new(RecordType::Resource, body.clone());
            let mut out = vec![1, 2, 3];
            gzip_record(&record, None, &mut out);
            assert_eq!(&out[..3], [1, 2, 3], "appended");
            let mut back = Vec::new();
            flate2::read::GzDecoder::new(&out[3..])
                .read_to_end(&mut back)
                .expect("inflates");
            assert_eq!(back, record.encode(None), "size {size}");
            let (plain, packed) = capacity();
            assert!(
                plain <= KEEP_BUFFER && packed <= KEEP_BUFFER,
                "size {size}: {plain}, {packed}"
            );
            if size < KEEP_BUFFER {
                assert!(
                    plain > size,
                    "size {size}: the encoded record's buffer is kept"
                );
            }
        }
    }

    #[test]
    fn record_ids_are_v4_uuids() {
        let id = RecordId::random();
        let s = id.as_str();
        assert_eq!(s.len(), "<urn:uuid:>".len() + 36, "{s}");
        assert!(s.starts_with("<urn:uuid:") && s.ends_with('>'));
        assert_eq!(&s[24..25], "4", "{s}");
        assert_ne!(RecordId::random(), id);
    }

    #[test]
    fn encoded_record_has_length_and_digest() {
        let r = Record::new(RecordType::Resource, b"hello".to_vec())
            .target_uri("http://example.com/")
            .and_then(|r| r.content_type("text/plain"))
            .expect("headers");
        let text = String::from_utf8(r.encode(None)).expect("utf-8");
        assert!(
            text.starts_with("WARC/1.1\r\nWARC-Type: resource\r\n"),
            "{text}"
        );
        assert!(text.contains("\r\nContent-Length: 5\r\n"), "{text}");
        let digest = Sha1Digest::of(b"hello");
        assert!(
            text.contains(&format!("WARC-Block-Digest: {digest}\r\n")),
            "{text}"
        );
        assert!(text.ends_with("\r\n\r\nhello\r\n\r\n"), "{text}");
    }

    #[test]
    fn hostile_header_values_are_refused() {
        let r = || Record::new(RecordType::Resource, Vec::new());
        let crlf = r().target_uri("http://a/\r\nWARC-Type: response");
        assert!(matches!(crlf, Err(Error::Header { .. })), "{crlf:?}");
        assert!(r().header("Bad Name", "x").is_err());
        assert!(r().header("X", &"a".repeat(MAX_HEADER_VALUE + 1)).is_err());
        let mut many = r();
        for i in 0..MAX_HEADERS {
            many = many
                .header("X-N", &i.to_string())
                .expect("within the bound");
        }
        assert!(many.header("X-N", "one more").is_err());
    }
}
