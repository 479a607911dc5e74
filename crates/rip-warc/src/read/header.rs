//! One record's header block: the version line, then `Name: value` lines up to an empty
//! line, each bounded ([`Limits`]), read from a decompressed stream.

use std::io::{self, BufRead, Read};

use crate::record::field;

/// How much of a record the reader accepts before calling it damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest header line, in bytes.
    pub max_line: usize,
    /// The most header fields a record may have.
    pub max_headers: usize,
    /// The most bytes a header block may have in all.
    pub max_header_bytes: usize,
    /// The largest record block (`Content-Length`) read; a larger one is a failure, never
    /// an allocation.
    pub max_record: u64,
    /// The largest page body kept after `Content-Encoding` is undone: a longer one is cut
    /// and marked `truncated`, as rip-fetch's `--max-body` (a gzip bomb stops here).
    pub max_body: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_line: 64 * 1024,
            max_headers: 256,
            max_header_bytes: 1024 * 1024,
            max_record: 256 * 1024 * 1024,
            max_body: 16 * 1024 * 1024,
        }
    }
}

/// Why a header block could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    /// The stream ended inside the header block.
    #[error("the record ends inside its header (truncated)")]
    Truncated,
    /// The first line is not `WARC/1.x`.
    #[error("not a WARC record: the first line is `{0}`, not `WARC/1.0` or `WARC/1.1`")]
    Version(String),
    /// A line past [`Limits::max_line`], or one with no end.
    #[error("a header line longer than {0} bytes (or one without end)")]
    LineTooLong(usize),
    /// More fields than [`Limits::max_headers`].
    #[error("more than {0} header fields")]
    TooManyHeaders(usize),
    /// A header block past [`Limits::max_header_bytes`].
    #[error("a header block larger than {0} bytes")]
    TooLarge(usize),
    /// A line that is not `Name: value`.
    #[error("a header line without a colon: `{0}`")]
    NoColon(String),
    /// `Content-Length` missing or not a number.
    #[error("no valid Content-Length (`{0}`)")]
    ContentLength(String),
    /// The stream could not be read.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A record's header block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The version line, e.g. `WARC/1.1`.
    pub version: String,
    /// The fields, in order, names as written.
    pub fields: Vec<(String, String)>,
    /// `Content-Length`: the bytes of the block that follows.
    pub content_length: u64,
    /// Bytes the header block took, its empty line included.
    pub len: u64,
}

impl Header {
    /// The first field named `name` (case-insensitive).
    #[must_use]
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Reads one line of at most `max` bytes (its `\n` included) into `buf`; false at the end.
fn read_line(r: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> Result<bool, HeaderError> {
    buf.clear();
    let n = Read::take(&mut *r, max as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(false);
    }
    if buf.last() != Some(&b'\n') {
        return Err(if n > max {
            HeaderError::LineTooLong(max)
        } else {
            HeaderError::Truncated
        });
    }
    Ok(true)
}

fn trim_eol(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\n")
        .map_or(line, |l| l.strip_suffix(b"\r").unwrap_or(l))
}

/// Skips empty lines before a record (the two CRLFs after the last one, stray padding).
/// Returns the bytes skipped, or `None` at the end of the stream.
fn skip_blank(r: &mut impl BufRead) -> io::Result<Option<u64>> {
    let mut skipped = 0;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(None);
        }
        let n = buf
            .iter()
            .take_while(|&&b| b == b'\r' || b == b'\n')
            .count();
        if n < buf.len() {
            r.consume(n);
            return Ok(Some(skipped + n as u64));
        }
        let all = buf.len();
        r.consume(all);
        skipped += all as u64;
    }
}

/// Reads the next record's header block, or `None` at the end of the stream. The first
/// number is the blank bytes skipped before it.
pub fn read_header(
    r: &mut impl BufRead,
    limits: &Limits,
) -> Result<Option<(u64, Header)>, HeaderError> {
    let Some(skipped) = skip_blank(r)? else {
        return Ok(None);
    };
    let mut line = Vec::with_capacity(128);
    read_line(r, &mut line, limits.max_line)?;
    let mut len = line.len();
    let version = String::from_utf8_lossy(trim_eol(&line)).into_owned();
    if !version.starts_with("WARC/1.") {
        return Err(HeaderError::Version(version.chars().take(80).collect()));
    }
    let mut fields: Vec<(String, String)> = Vec::new();
    loop {
        if !read_line(r, &mut line, limits.max_line)? {
            return Err(HeaderError::Truncated);
        }
        len += line.len();
        if len > limits.max_header_bytes {
            return Err(HeaderError::TooLarge(limits.max_header_bytes));
        }
        let text = trim_eol(&line);
        if text.is_empty() {
            break;
        }
        let text = String::from_utf8_lossy(text);
        if text.starts_with([' ', '\t']) {
            // A continuation line (obsolete folding) belongs to the field before it.
            if let Some((_, v)) = fields.last_mut() {
                v.push(' ');
                v.push_str(text.trim());
                continue;
            }
        }
        let (k, v) = text
            .split_once(':')
            .ok_or_else(|| HeaderError::NoColon(text.chars().take(80).collect()))?;
        if fields.len() == limits.max_headers {
            return Err(HeaderError::TooManyHeaders(limits.max_headers));
        }
        fields.push((k.trim().to_owned(), v.trim().to_owned()));
    }
    let mut header = Header {
        version,
        fields,
        content_length: 0,
        len: len as u64,
    };
    let cl = header.get(field::CONTENT_LENGTH).unwrap_or("");
    header.content_length = cl
        .parse()
        .map_err(|_| HeaderError::ContentLength(cl.chars().take(40).collect()))?;
    Ok(Some((skipped, header)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(bytes: &[u8]) -> Result<Option<(u64, Header)>, HeaderError> {
        read_header(&mut &bytes[..], &Limits::default())
    }

    #[test]
    fn reads_fields_and_length() {
        let (skipped, h) =
            read(b"\r\nWARC/1.0\r\nWARC-Type: response\r\nContent-Length: 5\r\n\r\nhello")
                .unwrap()
                .unwrap();
        assert_eq!(skipped, 2);
        assert_eq!(h.version, "WARC/1.0");
        assert_eq!(h.get("warc-type"), Some("response"));
        assert_eq!(h.content_length, 5);
        assert_eq!(h.len, 52);
    }

    #[test]
    fn bounds_and_damage_are_errors() {
        assert!(matches!(
            read(b"HTTP/1.1 200\r\n"),
            Err(HeaderError::Version(_))
        ));
        assert!(matches!(
            read(b"WARC/1.1\r\nA: b\r\n"),
            Err(HeaderError::Truncated)
        ));
        assert!(matches!(
            read(b"WARC/1.1\r\nContent-Length: x\r\n\r\n"),
            Err(HeaderError::ContentLength(_))
        ));
        let long = [b"WARC/1.1\r\nA: ".as_slice(), &vec![b'x'; 70_000]].concat();
        assert!(matches!(read(&long), Err(HeaderError::LineTooLong(_))));
        assert!(read(b"\r\n\r\n").unwrap().is_none());
    }
}
