//! Record framing over a whole stream: plain WARC, or `.warc.gz` read gzip member by
//! gzip member (each record's offset and length in the file are those of its member, as
//! CDX indexes need). A damaged record is an [`Item::Damaged`] at its offset, and the
//! reading goes on from the next record: the next `WARC/1.` line of a plain file, the
//! next gzip member of a compressed one.

use std::io::{self, BufRead, Read};

use flate2::Decompress;

use super::gzip::GzMember;
use super::header::{Header, HeaderError, Limits, read_header};
use super::input::Input;
use crate::record::field;

const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 0x08];
const RECORD_START: &[u8] = b"\nWARC/1.";

/// A record as the file holds it: its header and its block, undecoded.
#[derive(Debug, Clone)]
pub struct RawRecord {
    /// Where the record starts in the file (for `.warc.gz`: its gzip member).
    pub offset: u64,
    /// Bytes it takes in the file (for `.warc.gz`: its gzip member).
    pub length: u64,
    /// The header block.
    pub header: Header,
    /// The block: `Content-Length` bytes.
    pub block: Vec<u8>,
}

/// Why a record could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// A bad or unbounded header block.
    #[error("bad record header: {0}")]
    Header(#[from] HeaderError),
    /// A block past [`Limits::max_record`].
    #[error("a record block of {length} bytes, past the limit of {limit} bytes (--max-record)")]
    TooLarge {
        /// Its `Content-Length`.
        length: u64,
        /// The limit.
        limit: u64,
    },
    /// The file ends inside the block.
    #[error("the record is cut short: {got} of its {length} bytes")]
    Truncated {
        /// Bytes there were.
        got: u64,
        /// Its `Content-Length`.
        length: u64,
    },
    /// The block is not followed by the blank lines that end a record.
    #[error("the record's block does not end where its Content-Length ({0}) says")]
    BlockEnd(u64),
    /// A gzip member that does not decompress (bad header, bad data, bad checksum).
    #[error("damaged gzip member: {0}")]
    Gzip(io::Error),
    /// Bytes that are not a gzip member where one should start.
    #[error("not a gzip member where one should start")]
    NotGzip,
}

/// A record that could not be read: where, why, and its URL when its header told.
#[derive(Debug)]
pub struct Damage {
    /// Where the damaged record (or gzip member) starts in the file.
    pub offset: u64,
    /// What is wrong.
    pub error: ReadError,
    /// `WARC-Target-URI`, when the header was read.
    pub target_uri: Option<String>,
}

/// What the reader found next.
#[derive(Debug)]
pub enum Item {
    /// A record.
    Record(RawRecord),
    /// A damaged record; the reading goes on after it.
    Damaged(Damage),
}

/// Reads every record of `r` (plain or gzip, told by its first bytes), handing each to
/// `on` until the stream ends or `on` returns false. An error reading the stream itself
/// (not a damaged record) ends it.
pub fn read_archive<R: Read>(
    r: R,
    limits: &Limits,
    on: &mut dyn FnMut(Item) -> bool,
) -> io::Result<()> {
    let mut input = Input::new(r);
    if input.peek(2)? == &GZIP_MAGIC[..2] {
        read_gzip(&mut input, limits, on)
    } else {
        read_plain(&mut input, limits, on)
    }
}

fn read_plain<R: Read>(
    input: &mut Input<R>,
    limits: &Limits,
    on: &mut dyn FnMut(Item) -> bool,
) -> io::Result<()> {
    loop {
        let go_on = match read_one(input, limits) {
            Ok(None) => return Ok(()),
            Ok(Some(record)) => on(Item::Record(record)),
            Err(damage) => {
                let resync = !matches!(
                    damage.error,
                    ReadError::BlockEnd(_) | ReadError::Truncated { .. }
                );
                let go_on = on(Item::Damaged(damage));
                if resync {
                    resync_plain(input, limits)?;
                }
                go_on
            }
        };
        if !go_on {
            return Ok(());
        }
    }
}

/// Reads one record from a decompressed stream (`None` at its end). A block cut short
/// gives back the record that follows it when it finds one inside.
fn read_one<R: Read>(input: &mut Input<R>, limits: &Limits) -> Result<Option<RawRecord>, Damage> {
    let before = input.position();
    let damage = |offset, error: ReadError, header: Option<&Header>| Damage {
        offset,
        error,
        target_uri: header.and_then(page_uri),
    };
    let (skipped, header) = match read_header(input, limits) {
        Ok(Some(h)) => h,
        Ok(None) => return Ok(None),
        Err(e) => return Err(damage(before, e.into(), None)),
    };
    let offset = before + skipped;
    let length = header.content_length;
    if length > limits.max_record {
        let limit = limits.max_record;
        return Err(damage(
            offset,
            ReadError::TooLarge { length, limit },
            Some(&header),
        ));
    }
    let mut block = Vec::with_capacity(length.min(1 << 20) as usize);
    if let Err(e) = input.by_ref().take(length).read_to_end(&mut block) {
        return Err(damage(offset, ReadError::Gzip(e), Some(&header)));
    }
    let got = block.len() as u64;
    let ends_well = got == length
        && input
            .peek(1)
            .is_ok_and(|next| next.is_empty() || next == b"\r" || next == b"\n");
    if !ends_well {
        if let Some(i) = find(&block, RECORD_START) {
            input.unread(&block[i + 1..]);
        }
        let error = if got < length {
            ReadError::Truncated { got, length }
        } else {
            ReadError::BlockEnd(length)
        };
        return Err(damage(offset, error, Some(&header)));
    }
    let length = input.position() - offset;
    Ok(Some(RawRecord {
        offset,
        length,
        header,
        block,
    }))
}

/// The URL of a damaged record that would have been a page (its response, resource or
/// revisit): its failure is that URL's outcome. Other records' damage is the file's.
fn page_uri(header: &Header) -> Option<String> {
    let kind = header.get(field::TYPE)?;
    ["response", "resource", "revisit"]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(kind))
        .then(|| header.get(field::TARGET_URI))
        .flatten()
        .map(|u| u.trim_matches(['<', '>']).to_owned())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Skips to the start of the next line that begins `WARC/1.` (or the end).
fn resync_plain<R: Read>(input: &mut Input<R>, limits: &Limits) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        // Long lines are read in pieces: only a line start can begin a record.
        let n = input
            .by_ref()
            .take(limits.max_line as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.last() == Some(&b'\n') && input.peek(7)? == b"WARC/1." {
            return Ok(());
        }
    }
}

/// What a gzip member's stream is read through: bounded per record, so that a member
/// that inflates past the limits (a gzip bomb) is damage, not memory.
type Member<'a, R> = Input<io::Take<GzMember<'a, R>>>;

fn budget(limits: &Limits) -> u64 {
    limits.max_record + limits.max_header_bytes as u64 + 64 * 1024
}

/// A member's buffer kept for the next member up to this size (larger ones are given back).
const KEEP_BUFFER: usize = 1 << 20;

fn read_gzip<R: Read>(
    input: &mut Input<R>,
    limits: &Limits,
    on: &mut dyn FnMut(Item) -> bool,
) -> io::Result<()> {
    let mut resyncing = false;
    // One buffer for every member's inflated bytes: a fresh one a member was allocated and
    // zeroed for each record (a tenth of the reading's time).
    let mut spare = Vec::new();
    // One inflater too (see [`GzMember`]).
    let mut inflater = Decompress::new(false);
    loop {
        let offset = input.position();
        let head = input.peek(3)?;
        if head.is_empty() {
            return Ok(());
        }
        if head != GZIP_MAGIC {
            if !resyncing {
                let damage = Damage {
                    offset,
                    error: ReadError::NotGzip,
                    target_uri: None,
                };
                if !on(Item::Damaged(damage)) {
                    return Ok(());
                }
            }
            resyncing = true;
            resync_gzip(input, offset)?;
            continue;
        }
        let mut member: Member<'_, R> = Input::with_buffer(
            GzMember::new(&mut *input, &mut inflater).take(budget(limits)),
            std::mem::take(&mut spare),
        );
        let end = read_member(&mut member, offset, limits, resyncing, on);
        spare = member.into_buffer();
        if spare.len() > KEEP_BUFFER {
            spare = Vec::new();
        }
        match end {
            MemberEnd::Done => resyncing = false,
            MemberEnd::Stop => return Ok(()),
            MemberEnd::Damaged => {
                resyncing = true;
                resync_gzip(input, offset)?;
            }
        }
    }
}

enum MemberEnd {
    Done,
    Stop,
    Damaged,
}

/// Reads the records of the gzip member at `offset`.
fn read_member<R: Read>(
    member: &mut Member<'_, R>,
    offset: u64,
    limits: &Limits,
    resyncing: bool,
    on: &mut dyn FnMut(Item) -> bool,
) -> MemberEnd {
    let mut records = 0;
    loop {
        member.inner_mut().set_limit(budget(limits));
        member.clear_eof();
        let record = match read_one(member, limits) {
            Ok(Some(record)) => record,
            Ok(None) => return MemberEnd::Done,
            Err(mut damage) => {
                damage.offset = offset;
                let quiet = resyncing && records == 0 && member.position() < 512;
                damage.error = gzip_cause(damage.error, member);
                if !quiet && !on(Item::Damaged(damage)) {
                    return MemberEnd::Stop;
                }
                return MemberEnd::Damaged;
            }
        };
        records += 1;
        // The member's end is read before its record is handed on: a bad checksum there
        // makes the record damaged, not a record with wrong bytes.
        let end = member_end(member);
        let outer = member.inner_mut().get_mut().input().position();
        let record = RawRecord {
            offset,
            length: outer - offset,
            ..record
        };
        match end {
            Ok(more) => {
                if !on(Item::Record(record)) {
                    return MemberEnd::Stop;
                }
                if !more {
                    return MemberEnd::Done;
                }
            }
            Err(e) => {
                let target_uri = page_uri(&record.header);
                let damage = Damage {
                    offset,
                    error: ReadError::Gzip(e),
                    target_uri,
                };
                if !on(Item::Damaged(damage)) {
                    return MemberEnd::Stop;
                }
                return MemberEnd::Damaged;
            }
        }
    }
}

/// The cause of damage inside a gzip member: a read error there is the member's (its
/// data or checksum), wherever the header parser met it; bytes that do not parse may be a
/// member that does not decompress, which the rest of it (bounded) tells.
fn gzip_cause<R: Read>(error: ReadError, member: &mut Input<R>) -> ReadError {
    match error {
        ReadError::Header(HeaderError::Io(e)) => ReadError::Gzip(e),
        ReadError::Gzip(e) => ReadError::Gzip(e),
        other => match io::copy(member, &mut io::sink()) {
            Err(e) => ReadError::Gzip(e),
            Ok(_) => other,
        },
    }
}

/// Skips the blank lines after a record; true when another record follows in the member.
fn member_end<R: Read>(member: &mut Input<R>) -> io::Result<bool> {
    loop {
        let buf = member.fill_buf()?;
        if buf.is_empty() {
            return Ok(false);
        }
        let n = buf
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        if n < buf.len() {
            member.consume(n);
            return Ok(true);
        }
        member.consume(n);
    }
}

/// Skips to the next gzip member header after the damaged one at `from`.
fn resync_gzip<R: Read>(input: &mut Input<R>, from: u64) -> io::Result<()> {
    if input.position() == from {
        input.consume(1);
    }
    loop {
        let buf = input.peek(64 * 1024)?;
        if buf.len() < GZIP_MAGIC.len() {
            let n = buf.len();
            input.consume(n);
            return Ok(());
        }
        if let Some(i) = find(buf, &GZIP_MAGIC) {
            input.consume(i);
            return Ok(());
        }
        let n = buf.len() - (GZIP_MAGIC.len() - 1);
        input.consume(n);
    }
}
