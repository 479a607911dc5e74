//! Counting records as they flow between two stages, without decoding them: a relay
//! thread copies bytes from one stage's stdout to the next stage's stdin and counts the
//! lines of each kind by their `_type` (the first key of every record the stages write).
//! The counts feed the progress display only; the books are the stages' own `summary`
//! records.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The record kinds the progress display counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `ref`
    Ref,
    /// `page`
    Page,
    /// `failure`
    Failure,
    /// `doc`
    Doc,
    /// `error`
    Error,
    /// `expected`
    Expected,
    /// `ledger`
    Ledger,
    /// `summary`
    Summary,
    /// anything else
    Other,
}

const KINDS: usize = 9;
const PREFIX: &[u8] = br#"{"_type":""#;

impl Kind {
    fn of(line_start: &[u8]) -> Self {
        let Some(rest) = line_start.strip_prefix(PREFIX) else {
            return Self::Other;
        };
        let end = rest.iter().position(|&b| b == b'"').unwrap_or(rest.len());
        match &rest[..end] {
            b"ref" => Self::Ref,
            b"page" => Self::Page,
            b"failure" => Self::Failure,
            b"doc" => Self::Doc,
            b"error" => Self::Error,
            b"expected" => Self::Expected,
            b"ledger" => Self::Ledger,
            b"summary" => Self::Summary,
            _ => Self::Other,
        }
    }
}

/// Lines counted by kind; shared between a relay thread and the display.
#[derive(Debug, Default)]
pub struct Counts([AtomicU64; KINDS]);

impl Counts {
    /// Lines of `kind` so far.
    pub fn get(&self, kind: Kind) -> u64 {
        self.0[kind as usize].load(Ordering::Relaxed)
    }

    /// Counts one line of `kind`.
    pub fn add(&self, kind: Kind) {
        self.0[kind as usize].fetch_add(1, Ordering::Relaxed);
    }
}

/// Splits a byte stream into lines and classifies each by its first bytes, across reads.
#[derive(Debug, Default)]
pub struct LineKinds {
    head: Vec<u8>,
    in_line: bool,
    classified: bool,
}

/// How many bytes of a line decide its kind.
const HEAD: usize = 32;

impl LineKinds {
    /// Feeds a chunk; calls `seen` with the kind of every line whose head is complete.
    pub fn feed(&mut self, mut chunk: &[u8], mut seen: impl FnMut(Kind)) {
        while !chunk.is_empty() {
            if !self.in_line {
                self.in_line = true;
                self.classified = false;
                self.head.clear();
            }
            let nl = chunk.iter().position(|&b| b == b'\n');
            let part = &chunk[..nl.unwrap_or(chunk.len())];
            if !self.classified {
                let want = HEAD - self.head.len();
                self.head.extend_from_slice(&part[..part.len().min(want)]);
                if self.head.len() >= HEAD || nl.is_some() {
                    self.classified = true;
                    if !self.head.is_empty() {
                        seen(Kind::of(&self.head));
                    }
                }
            }
            match nl {
                Some(i) => {
                    self.in_line = false;
                    chunk = &chunk[i + 1..];
                }
                None => chunk = &[],
            }
        }
    }
}

/// Copies `from` to `to` until `from` ends, counting lines into `counts`. A write error
/// (the next stage went away) stops the copy; the stage before then sees a broken pipe,
/// as it would in a shell pipeline.
pub fn relay(mut from: impl Read, mut to: impl Write, counts: Arc<Counts>) {
    let mut buf = vec![0u8; 256 * 1024];
    let mut kinds = LineKinds::default();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        kinds.feed(&buf[..n], |k| counts.add(k));
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified_across_chunk_boundaries() {
        let text = "{\"_type\":\"page\",\"url\":\"a\"}\n{\"_type\":\"doc\"}\n{\"_type\":\"summary\"}\nnot json\n\n{\"_type\":\"page\",\"url\":\"http://x/a-long-one\"}";
        for split in 1..text.len() {
            let counts = Counts::default();
            let mut lk = LineKinds::default();
            let (a, b) = text.as_bytes().split_at(split);
            for chunk in [a, b] {
                for piece in chunk.chunks(3) {
                    lk.feed(piece, |k| counts.add(k));
                }
            }
            assert_eq!(counts.get(Kind::Page), 2, "split at {split}");
            assert_eq!(counts.get(Kind::Doc), 1);
            assert_eq!(counts.get(Kind::Summary), 1);
            assert_eq!(
                counts.get(Kind::Other),
                1,
                "`not json`; the empty line is not counted"
            );
        }
    }

    #[test]
    fn relay_copies_bytes_unchanged() {
        let input = b"{\"_type\":\"ref\",\"url\":\"x\"}\n".repeat(10_000);
        let mut out = Vec::new();
        let counts = Arc::new(Counts::default());
        relay(&input[..], &mut out, counts.clone());
        assert_eq!(out, input);
        assert_eq!(counts.get(Kind::Ref), 10_000);
    }
}
