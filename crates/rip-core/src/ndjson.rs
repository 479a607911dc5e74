//! Reading and writing NDJSON: one compact JSON object per line.
//!
//! [`NdjsonReader`] yields [`Line`]s: the raw text plus its peeked `_type`, so a stage
//! decodes only the records it consumes and writes every other line back byte for
//! byte. Bad lines come out as [`ReadError::Malformed`], which is not fatal: the
//! caller reports it, counts it and goes on (or stops, under `--strict`).
//! [`NdjsonWriter`] is the one buffered writer of a process.

use serde::Deserialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, BufRead, BufWriter, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::record::{Kind, Record};

mod bare_url;
mod peek;

pub use bare_url::url_argument;
pub use peek::next_escape;

/// Lines longer than this are malformed (256 MiB: a page record with a body at the
/// default body limit, base64-encoded, fits many times over).
pub const DEFAULT_MAX_LINE: usize = 256 << 20;

/// One non-blank input line that is a JSON object with a string `_type`.
#[derive(Debug, Clone)]
pub struct Line {
    number: u64,
    text: String,
    kind: Kind,
}

impl Line {
    /// Builds a line from text, checking it as the reader would (line number 0).
    pub fn from_text(text: impl Into<String>) -> Result<Self, LineError> {
        let text = text.into();
        let kind = peek_kind(&text)?;
        Ok(Self {
            number: 0,
            text,
            kind,
        })
    }

    /// A line this process has just made, taken without the check [`Line::from_text`]
    /// makes: the caller guarantees that `text` is one JSON object, on one line, whose
    /// `_type` is `kind` (a record it has serialised itself). Debug builds check it.
    pub fn from_trusted(kind: Kind, text: String) -> Self {
        debug_assert_eq!(peek_kind(&text).as_ref(), Ok(&kind), "{text}");
        debug_assert!(!text.contains('\n'), "{text}");
        Self {
            number: 0,
            text,
            kind,
        }
    }

    /// The 1-based line number in its input.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The line, without its newline.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The record kind named by `_type`.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// Decodes the whole record. Fails when a known kind lacks a field or has one of
    /// the wrong type; the error names the field and its value, e.g.
    /// ``bad `ref` record: field `notBefore` = "soon": input contains invalid characters``.
    pub fn decode(&self) -> Result<Record, DecodeError> {
        serde_json::from_str(&self.text).map_err(|e| {
            let message = e.to_string();
            let reason = without_position(&message).to_owned();
            let kind = self.kind.clone();
            match self.blame() {
                Some((field, value)) => DecodeError::Field {
                    kind,
                    field,
                    value,
                    reason,
                },
                None => DecodeError::Record { kind, reason },
            }
        })
    }

    /// The top-level field that makes [`Line::decode`] fail, and its value (shortened):
    /// the first field without which the record decodes, else the only one without
    /// which the error changes (a required field of the wrong type). Only on the error
    /// path: a few decodes of one line.
    fn blame(&self) -> Option<(String, String)> {
        let Ok(serde_json::Value::Object(map)) = serde_json::from_str(&self.text) else {
            return None;
        };
        let decode = |m: serde_json::Map<String, serde_json::Value>| {
            serde_json::from_value::<Record>(serde_json::Value::Object(m))
                .map_err(|e| e.to_string())
        };
        let error = decode(map.clone()).err()?;
        if error.starts_with("missing field") {
            // It names the field already, and no value is to blame.
            return None;
        }
        let mut changed = Vec::new();
        for key in map.keys().filter(|k| *k != "_type") {
            let mut without = map.clone();
            without.remove(key);
            match decode(without) {
                Ok(_) => return Some(shown(key, &map[key])),
                Err(e) if e != error => changed.push(key),
                Err(_) => {}
            }
        }
        match changed.as_slice() {
            [key] => Some(shown(key, &map[*key])),
            _ => None,
        }
    }
}

/// A field and its value as JSON, cut to a readable length.
fn shown(key: &str, value: &serde_json::Value) -> (String, String) {
    const MAX: usize = 60;
    let mut text = value.to_string();
    if text.len() > MAX {
        let mut end = MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    (key.to_owned(), text)
}

/// A serde_json message without its ` at line 1 column 42` suffix (the line is the
/// input's, which the caller names).
fn without_position(message: &str) -> &str {
    message.split(" at line ").next().unwrap_or(message)
}

#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(rename = "_type", borrow)]
    kind: Option<Cow<'a, str>>,
}

/// The line's kind, or why it has none: by [`peek::kind`] when the line is a record in
/// the usual shape, else by `serde_json` (whose messages [`LineError`] carries).
fn peek_kind(text: &str) -> Result<Kind, LineError> {
    match peek::kind(text) {
        Some(kind) => Ok(Kind::from_type(kind)),
        None => peek_kind_by_serde(text),
    }
}

fn peek_kind_by_serde(text: &str) -> Result<Kind, LineError> {
    let peek: Peek<'_> = serde_json::from_str(text).map_err(|e| {
        let column = e.column();
        match e.classify() {
            serde_json::error::Category::Data => {
                let message = e.to_string();
                if message.starts_with("invalid type") {
                    LineError::NotObject { column }
                } else {
                    LineError::Unreadable {
                        reason: without_position(&message).to_owned(),
                        column,
                    }
                }
            }
            _ => LineError::NotJson {
                reason: without_position(&e.to_string()).to_owned(),
                column,
            },
        }
    })?;
    match peek.kind {
        Some(kind) if !kind.is_empty() => Ok(Kind::from_type(&kind)),
        Some(_) => Err(LineError::EmptyType),
        None => Err(LineError::NoType),
    }
}

/// Why a line of text is not a record: what [`Line::from_text`] and the reader find
/// wrong before the record's fields are looked at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// Not JSON at all.
    #[error("not JSON: {reason} (column {column})")]
    NotJson {
        /// The JSON parser's message, without its position.
        reason: String,
        /// The 1-based column where parsing stopped.
        column: usize,
    },
    /// JSON, but not an object (an array, a string, a number…).
    #[error("not a JSON object (column {column})")]
    NotObject {
        /// The 1-based column where parsing stopped.
        column: usize,
    },
    /// A JSON object that cannot be read for its `_type` (e.g. `_type` given twice).
    #[error("{reason} (column {column})")]
    Unreadable {
        /// The JSON parser's message, without its position.
        reason: String,
        /// The 1-based column where parsing stopped.
        column: usize,
    },
    /// `_type` is the empty string.
    #[error("`_type` is empty")]
    EmptyType,
    /// The object has no `_type`.
    #[error("no `_type` field (every record names its kind in `_type`)")]
    NoType,
    /// A line starting with `http://` or `https://` (read as the `ref` of that URL) that
    /// is not an absolute URL with a host.
    #[error("not a URL: {url}: {reason}")]
    BadUrl {
        /// The line, cut to a readable length.
        url: String,
        /// What the URL parser found wrong.
        reason: String,
    },
    /// A line that is a URL of a scheme other than http and https (`ftp://h/f`): a URL the
    /// stages cannot fetch, said as such rather than as JSON that does not parse.
    #[error("`{url}` is a `{scheme}` URL, but only http and https are fetched")]
    NotHttpUrl {
        /// The line, cut to a readable length.
        url: String,
        /// Its scheme, e.g. `ftp`.
        scheme: String,
    },
}

/// Why a line of a known kind does not decode as that record ([`Line::decode`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// One field is to blame: missing fields aside, the record decodes without it, or it
    /// is the only field whose absence changes the error.
    #[error("bad `{kind}` record: field `{field}` = {value}: {reason}")]
    Field {
        /// The record's kind.
        kind: Kind,
        /// The field's name.
        field: String,
        /// The field's value as JSON, cut to a readable length.
        value: String,
        /// The decoder's message, without its position.
        reason: String,
    },
    /// No single field is to blame (a missing field names itself in `reason`).
    #[error("bad `{kind}` record: {reason}")]
    Record {
        /// The record's kind.
        kind: Kind,
        /// The decoder's message, without its position.
        reason: String,
    },
}

/// A line that is not a record: where it is and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedLine {
    /// The input's name (`-` for stdin).
    pub input: Arc<str>,
    /// The 1-based line number.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for MalformedLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.input, self.line, self.message)
    }
}

/// How many bad input lines a process reports one by one on stderr. Past them, bad
/// lines (binary input has one per newline byte) are counted, in the summary's
/// `badLines`, and said in one line at the end ([`report_unshown_bad_lines`]).
pub const REPORTED_BAD_LINES: u64 = 10;

static BAD_LINES: AtomicU64 = AtomicU64::new(0);
static TOLD_UNSHOWN: AtomicBool = AtomicBool::new(false);

/// Reports a bad input line on stderr (`<input>:<line>: <what is wrong>`), unless the
/// process has already reported [`REPORTED_BAD_LINES`] of them.
pub fn report_bad_line(message: &dyn fmt::Display) {
    if BAD_LINES.fetch_add(1, Ordering::Relaxed) < REPORTED_BAD_LINES {
        crate::stderr::say(message);
    }
}

/// Bad lines given to [`report_bad_line`] and not printed.
pub fn unshown_bad_lines() -> u64 {
    BAD_LINES
        .load(Ordering::Relaxed)
        .saturating_sub(REPORTED_BAD_LINES)
}

/// Says once, on stderr, how many bad lines were not printed:
/// `<program>: … and 490 more bad lines (not shown)`. Nothing when none were left out.
pub fn report_unshown_bad_lines(program: &str) {
    let n = unshown_bad_lines();
    if n > 0 && !TOLD_UNSHOWN.swap(true, Ordering::Relaxed) {
        crate::stderr::say(format_args!(
            "{program}: … and {n} more bad lines (not shown)"
        ));
    }
}

/// What reading a line can go wrong with.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The line is not a valid record; the stream goes on after it.
    #[error("{0}")]
    Malformed(MalformedLine),
    /// The input could not be read; nothing more will come from it.
    #[error("{input}: cannot read input: {source}")]
    Io {
        /// The input's name.
        input: Arc<str>,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl ReadError {
    /// A malformed-line error for a line of `input`.
    pub fn malformed(input: &Arc<str>, line: u64, message: impl fmt::Display) -> Self {
        Self::Malformed(MalformedLine {
            input: input.clone(),
            line,
            message: message.to_string(),
        })
    }
}

/// Streams [`Line`]s from a reader, in constant memory.
pub struct NdjsonReader<R> {
    input: R,
    name: Arc<str>,
    line: u64,
    buf: Vec<u8>,
    max_line: usize,
    done: bool,
}

impl<R: BufRead> NdjsonReader<R> {
    /// A reader of `input`, named `name` in messages (`-` for stdin).
    pub fn new(input: R, name: impl Into<Arc<str>>) -> Self {
        Self {
            input,
            name: name.into(),
            line: 0,
            buf: Vec::with_capacity(8 * 1024),
            max_line: DEFAULT_MAX_LINE,
            done: false,
        }
    }

    /// Sets the longest line accepted, in bytes.
    pub fn with_max_line(mut self, max_line: usize) -> Self {
        self.max_line = max_line;
        self
    }

    /// The input's name.
    pub fn name(&self) -> &Arc<str> {
        &self.name
    }

    /// Reads one line into `buf`, keeping at most `max_line + 1` bytes of it.
    /// Returns the bytes consumed (0 at end of input) and whether the line overflowed.
    fn read_bounded(&mut self) -> io::Result<(usize, bool)> {
        let mut consumed = 0;
        let mut overflow = false;
        loop {
            let available = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok((consumed, overflow));
            }
            let (chunk, found) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..=i], true),
                None => (available, false),
            };
            let room = (self.max_line + 1).saturating_sub(self.buf.len());
            if chunk.len() > room {
                overflow = true;
            }
            if !overflow {
                self.buf.extend_from_slice(chunk);
            }
            let n = chunk.len();
            self.input.consume(n);
            consumed += n;
            if found {
                return Ok((consumed, overflow));
            }
        }
    }
}

impl<R: BufRead> Iterator for NdjsonReader<R> {
    type Item = Result<Line, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.buf.clear();
            let (consumed, overflow) = match self.read_bounded() {
                Ok(r) => r,
                Err(source) => {
                    self.done = true;
                    return Some(Err(ReadError::Io {
                        input: self.name.clone(),
                        source,
                    }));
                }
            };
            if consumed == 0 {
                self.done = true;
                return None;
            }
            self.line += 1;
            if overflow {
                let message = format!("line longer than {} bytes, skipped", self.max_line);
                return Some(Err(ReadError::malformed(&self.name, self.line, message)));
            }
            while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
                self.buf.pop();
            }
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let text = match String::from_utf8(std::mem::take(&mut self.buf)) {
                Ok(text) => text,
                Err(e) => {
                    let at = e.utf8_error().valid_up_to();
                    self.buf = e.into_bytes();
                    let message = format!("invalid UTF-8 at byte {}", at + 1);
                    return Some(Err(ReadError::malformed(&self.name, self.line, message)));
                }
            };
            if text.as_bytes().first() != Some(&b'{')
                && let Some(read) = bare_url::as_ref_line(&text)
            {
                return Some(match read {
                    Ok(line) => Ok(Line {
                        number: self.line,
                        ..line
                    }),
                    Err(message) => Err(ReadError::malformed(&self.name, self.line, message)),
                });
            }
            return Some(match peek_kind(&text) {
                Ok(kind) => Ok(Line {
                    number: self.line,
                    text,
                    kind,
                }),
                Err(message) => Err(ReadError::malformed(&self.name, self.line, message)),
            });
        }
        None
    }
}

/// How often a writer flushes at the latest while records keep coming.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_millis(100);

/// The buffered NDJSON writer of a process: compact records, one per line, counted by
/// kind, and apart, by kind, the lines passed through unchanged.
pub struct NdjsonWriter<W: Write> {
    out: BufWriter<W>,
    last_flush: Instant,
    interval: Duration,
    counts: BTreeMap<String, u64>,
    passed: BTreeMap<String, u64>,
}

impl<W: Write> NdjsonWriter<W> {
    /// A writer with a 64 KiB buffer that flushes at least every [`DEFAULT_FLUSH_INTERVAL`].
    pub fn new(out: W) -> Self {
        Self {
            out: BufWriter::with_capacity(64 * 1024, out),
            last_flush: Instant::now(),
            interval: DEFAULT_FLUSH_INTERVAL,
            counts: BTreeMap::new(),
            passed: BTreeMap::new(),
        }
    }

    /// Sets the longest time a written record may sit in the buffer while writes go on.
    pub fn with_flush_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }

    /// Writes a record as one line.
    pub fn write(&mut self, record: &Record) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, record)?;
        self.out.write_all(b"\n")?;
        count(&mut self.counts, record.kind().as_str());
        self.maybe_flush()
    }

    /// Writes a record of this stage already serialised as a line (e.g. on a worker
    /// thread): counted as written, not as passed through.
    pub fn write_line(&mut self, line: &Line) -> io::Result<()> {
        self.out.write_all(line.text.as_bytes())?;
        self.out.write_all(b"\n")?;
        count(&mut self.counts, line.kind.as_str());
        self.maybe_flush()
    }

    /// Writes an input line back unchanged (pass-through).
    pub fn pass(&mut self, line: &Line) -> io::Result<()> {
        self.out.write_all(line.text.as_bytes())?;
        self.out.write_all(b"\n")?;
        count(&mut self.counts, line.kind.as_str());
        count(&mut self.passed, line.kind.as_str());
        self.maybe_flush()
    }

    fn maybe_flush(&mut self) -> io::Result<()> {
        if self.last_flush.elapsed() >= self.interval {
            self.flush()?;
        }
        Ok(())
    }

    /// Flushes everything written so far to the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.last_flush = Instant::now();
        self.out.flush()
    }

    /// Records written so far, by `_type` (lines passed through included).
    pub fn counts(&self) -> &BTreeMap<String, u64> {
        &self.counts
    }

    /// Lines passed through so far ([`NdjsonWriter::pass`]), by `_type`.
    pub fn passed(&self) -> &BTreeMap<String, u64> {
        &self.passed
    }

    /// Flushes and returns the underlying writer.
    pub fn into_inner(self) -> io::Result<W> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

fn count(counts: &mut BTreeMap<String, u64>, kind: &str) {
    match counts.get_mut(kind) {
        Some(n) => *n += 1,
        None => {
            counts.insert(kind.to_owned(), 1);
        }
    }
}

/// True when an I/O error, or anything in an error's `source()` chain, is a broken pipe:
/// the reader downstream has gone away (`… | head`), which is a clean end, not a failure.
pub fn is_broken_pipe(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<io::Error>()
            && io.kind() == io::ErrorKind::BrokenPipe
        {
            return true;
        }
        cur = e.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(input: &str, max_line: usize) -> Vec<Result<Line, ReadError>> {
        NdjsonReader::new(input.as_bytes(), "t")
            .with_max_line(max_line)
            .collect()
    }

    #[test]
    fn reads_kinds_and_skips_blank_lines() {
        let items = read_all(
            "{\"_type\":\"ref\",\"url\":\"a\"}\n\n  \r\n{\"_type\":\"x-new\"}\r\n",
            1000,
        );
        let lines: Vec<_> = items.into_iter().map(Result::unwrap).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].kind(), &Kind::Ref);
        assert_eq!(lines[0].number(), 1);
        assert_eq!(lines[1].kind(), &Kind::Other("x-new".into()));
        assert_eq!(lines[1].number(), 4);
        assert_eq!(lines[1].text(), "{\"_type\":\"x-new\"}");
    }

    #[test]
    fn malformed_lines_name_line_and_problem() {
        let input = "{\"_type\":\"ref\",\"url\":\"a\"}\n{oops\n[1,2]\n{\"url\":\"b\"}\n\
                     {\"_type\":\"\"}\n{\"_type\":\"ref\",\"url\":\"c\"}\n";
        let items = read_all(input, 1000);
        let msgs: Vec<String> = items
            .iter()
            .filter_map(|r| r.as_ref().err().map(ToString::to_string))
            .collect();
        assert_eq!(msgs.len(), 4, "{msgs:?}");
        assert!(msgs[0].starts_with("t:2: not JSON"), "{}", msgs[0]);
        assert!(msgs[1].starts_with("t:3: not a JSON object"), "{}", msgs[1]);
        assert!(msgs[2].starts_with("t:4: no `_type`"), "{}", msgs[2]);
        assert!(msgs[3].starts_with("t:5: `_type` is empty"), "{}", msgs[3]);
        let good: Vec<u64> = items
            .iter()
            .filter_map(|r| r.as_ref().ok().map(Line::number))
            .collect();
        assert_eq!(good, vec![1, 6]);
    }

    #[test]
    fn a_bare_url_line_is_a_ref_and_a_bad_one_a_bad_line() {
        let input = "https://example.com/a\n{\"_type\":\"x\"}\nhttp://exa mple.com/\n\
                     not a url\nhttp://127.0.0.1:8080/\r\n";
        let items = read_all(input, 1000);
        let shown: Vec<String> = items
            .iter()
            .map(|r| match r {
                Ok(l) => format!("{} {} {}", l.number(), l.kind(), l.text()),
                Err(e) => e.to_string(),
            })
            .collect();
        assert_eq!(
            shown[0],
            r#"1 ref {"_type":"ref","url":"https://example.com/a","depth":0,"attempt":0}"#
        );
        assert_eq!(shown[1], r#"2 x {"_type":"x"}"#);
        assert!(
            shown[2].starts_with("t:3: not a URL: http://exa mple.com/: it contains white space"),
            "{}",
            shown[2]
        );
        assert!(shown[3].starts_with("t:4: not JSON"), "{}", shown[3]);
        assert_eq!(
            shown[4],
            r#"5 ref {"_type":"ref","url":"http://127.0.0.1:8080/","depth":0,"attempt":0}"#
        );
        let decoded = items[0].as_ref().unwrap().decode().unwrap();
        assert_eq!(decoded.url(), Some("https://example.com/a"));
    }

    #[test]
    fn overlong_and_non_utf8_lines_are_skipped_not_fatal() {
        let long = format!("{{\"_type\":\"ref\",\"url\":\"{}\"}}", "x".repeat(100));
        let mut input = format!("{long}\n").into_bytes();
        input.extend_from_slice(b"{\"_type\":\"r\xffef\"}\n");
        input.extend_from_slice(b"{\"_type\":\"ref\",\"url\":\"ok\"}");
        let items: Vec<_> = NdjsonReader::new(&input[..], "in")
            .with_max_line(50)
            .collect();
        assert_eq!(items.len(), 3);
        assert!(
            items[0]
                .as_ref()
                .unwrap_err()
                .to_string()
                .contains("in:1: line longer")
        );
        assert!(
            items[1]
                .as_ref()
                .unwrap_err()
                .to_string()
                .contains("in:2: invalid UTF-8")
        );
        let last = items[2].as_ref().unwrap();
        assert_eq!((last.number(), last.kind()), (3, &Kind::Ref));
    }

    /// What a reader gives, as text: `number kind text` or the error's message.
    fn outcomes(input: &[u8], capacity: usize, max_line: usize) -> Vec<String> {
        let buffered = io::BufReader::with_capacity(capacity, input);
        NdjsonReader::new(buffered, "in")
            .with_max_line(max_line)
            .map(|r| match r {
                Ok(l) => format!("{} {} {}", l.number(), l.kind(), l.text()),
                Err(e) => e.to_string(),
            })
            .collect()
    }

    #[test]
    fn lines_read_the_same_whatever_the_buffer_cuts() {
        let mut input = Vec::new();
        for line in [
            &b"{\"_type\":\"ref\",\"url\":\"a\"}"[..],
            b"",
            b" \t\r",
            b"{\"_type\":\"x\"}\r",
            b"{\"_type\":\"ref\",\"url\":\"sixteen-bytes-16\"}",
            b"{\"_type\":\"ref\",\"url\":\"seventeen-bytes17\"}",
            b"{\"_type\":\"ref\",\"url\":\"a-line-that-is-much-longer-than-forty-bytes\"}",
            b"{\"_type\":\"r\xc3\",\"u\":1}",
            b"{oops",
            b"{\"_type\":\"page\",\"body\":\"\\n\"}",
        ] {
            input.extend_from_slice(line);
            input.push(b'\n');
        }
        input.extend_from_slice(b"{\"_type\":\"end\"}");
        let want = outcomes(&input, 64 * 1024, 40);
        assert_eq!(want.len(), 9, "{want:#?}");
        assert_eq!(want[0], "1 ref {\"_type\":\"ref\",\"url\":\"a\"}");
        assert_eq!(want[1], "4 x {\"_type\":\"x\"}");
        assert!(want[2].starts_with("5 ref "), "{}", want[2]);
        assert_eq!(want[3], "in:6: line longer than 40 bytes, skipped");
        assert_eq!(want[4], "in:7: line longer than 40 bytes, skipped");
        assert_eq!(want[5], "in:8: invalid UTF-8 at byte 12");
        assert!(want[6].starts_with("in:9: not JSON"), "{}", want[6]);
        assert_eq!(want[7], "10 page {\"_type\":\"page\",\"body\":\"\\n\"}");
        assert_eq!(want[8], "11 end {\"_type\":\"end\"}");
        for capacity in 1..=100 {
            assert_eq!(outcomes(&input, capacity, 40), want, "capacity {capacity}");
        }
    }

    #[test]
    fn a_line_is_too_long_past_its_limit_wherever_the_buffer_ends() {
        // `max_line` bytes and a newline fit; one byte more does not, nor does `\r\n`
        // after `max_line` bytes. At the end of input, without a newline, one more fits.
        let line = |n: usize| format!("{{\"_type\":\"{}\"}}", "t".repeat(n - 12));
        for max_line in [20, 33, 64] {
            let fits = line(max_line);
            let over = line(max_line + 1);
            let input = format!("{over}\n{fits}\n{fits}\r\n{over}\n{fits}\n{over}");
            let kind = "t".repeat(max_line - 12);
            let at = |n: u64| format!("in:{n}: line longer than {max_line} bytes, skipped");
            let want = vec![
                at(1),
                format!("2 {kind} {fits}"),
                at(3),
                at(4),
                format!("5 {kind} {fits}"),
                format!("6 {}t {over}", kind),
            ];
            for capacity in (1..=2 * max_line + 3).chain([8192]) {
                let got = outcomes(input.as_bytes(), capacity, max_line);
                assert_eq!(got, want, "max {max_line}, capacity {capacity}");
            }
        }
    }

    #[test]
    fn a_line_that_is_no_record_says_why_in_todays_words() {
        for (text, want, message) in [
            (
                r#"{"_type":"ref""#,
                LineError::NotJson {
                    reason: "EOF while parsing an object".into(),
                    column: 14,
                },
                "not JSON: EOF while parsing an object (column 14)",
            ),
            (
                "[1]",
                LineError::NotObject { column: 2 },
                "not a JSON object (column 2)",
            ),
            (
                r#"{"_type":"a","_type":"b"}"#,
                LineError::Unreadable {
                    reason: "duplicate field `_type`".into(),
                    column: 20,
                },
                "duplicate field `_type` (column 20)",
            ),
            (r#"{"_type":""}"#, LineError::EmptyType, "`_type` is empty"),
            (
                r#"{"a":1}"#,
                LineError::NoType,
                "no `_type` field (every record names its kind in `_type`)",
            ),
        ] {
            let err = Line::from_text(text).unwrap_err();
            assert_eq!(err, want, "{text}");
            assert_eq!(err.to_string(), message, "{text}");
        }
    }

    #[test]
    fn a_bad_field_is_named_with_its_value() {
        for (text, field, value) in [
            (
                r#"{"_type":"ref","url":"http://x/","notBefore":"soon"}"#,
                "notBefore",
                "\"soon\"",
            ),
            (r#"{"_type":"ref","url":5,"depth":1}"#, "url", "5"),
            (
                r#"{"_type":"ref","url":"http://x/","depth":"deep"}"#,
                "depth",
                "\"deep\"",
            ),
            (
                r#"{"_type":"page","url":"http://x/","finalUrl":"http://x/","status":"ok","body":""}"#,
                "status",
                "\"ok\"",
            ),
        ] {
            let err = Line::from_text(text)
                .unwrap()
                .decode()
                .unwrap_err()
                .to_string();
            let want = format!("field `{field}` = {value}: ");
            assert!(err.contains(&want), "{text}: {err}");
            assert!(!err.contains(" at line "), "{text}: {err}");
        }
        let err = Line::from_text(r#"{"_type":"ref"}"#)
            .unwrap()
            .decode()
            .unwrap_err();
        assert_eq!(err.to_string(), "bad `ref` record: missing field `url`");
        let err = Line::from_text(r#"{"_type":"error","url":"http://h/x"}"#)
            .unwrap()
            .decode()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad `error` record: missing field `errors`"
        );
    }

    #[test]
    fn writer_counts_and_passes_lines_verbatim() {
        let line = Line::from_text("{\"_type\":\"zzz\", \"a\" : [1, 2.50]}").unwrap();
        let mut w = NdjsonWriter::new(Vec::new());
        w.pass(&line).unwrap();
        w.write(&Record::Ref(crate::Ref::new("http://x/"))).unwrap();
        assert_eq!(w.counts().get("zzz"), Some(&1));
        assert_eq!(w.counts().get("ref"), Some(&1));
        assert_eq!(w.passed().get("zzz"), Some(&1));
        assert_eq!(w.passed().get("ref"), None);
        let out = String::from_utf8(w.into_inner().unwrap()).unwrap();
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("{\"_type\":\"zzz\", \"a\" : [1, 2.50]}"));
        assert_eq!(
            lines.next(),
            Some("{\"_type\":\"ref\",\"url\":\"http://x/\",\"depth\":0,\"attempt\":0}")
        );
    }

    #[test]
    fn broken_pipe_is_found_in_a_chain() {
        #[derive(Debug, thiserror::Error)]
        #[error("outer")]
        struct Outer(#[source] io::Error);
        let e = Outer(io::Error::from(io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&e));
        let e = Outer(io::Error::from(io::ErrorKind::NotFound));
        assert!(!is_broken_pipe(&e));
    }
}
