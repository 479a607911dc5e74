//! The NDJSON reader and its record peek (`rip_core::ndjson`).

use std::io::{BufReader, Read};

use rip_core::ndjson::{NdjsonReader, ReadError};
use rip_core::{Kind, Line};
use serde::Deserialize;

use crate::input::choice;

/// The reference for a line's kind: what `serde_json` reads as its `_type`.
#[derive(Deserialize)]
struct Peek {
    #[serde(rename = "_type")]
    kind: Option<String>,
}

fn kind_by_serde(text: &str) -> Option<Kind> {
    let peek: Peek = serde_json::from_str(text).ok()?;
    peek.kind
        .filter(|k| !k.is_empty())
        .map(|k| Kind::from_type(&k))
}

/// Reads the input (the first byte sets the longest line and the read buffer's size,
/// so lines cross buffer ends): every line comes out once, in order, with its number;
/// a JSON line keeps its text and has the kind `serde_json` finds (the fast peek never
/// accepts a line `serde_json` refuses, nor finds another kind); decoding a line's
/// record never panics.
pub(crate) fn reader(data: &[u8]) {
    let (c, body) = choice(data);
    let max_line = 16 + usize::from(c & 0x3f) * 8;
    let capacity = 1 + usize::from(c >> 6) * 7;
    let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    let reader = NdjsonReader::new(BufReader::with_capacity(capacity, Slow(body)), "fuzz")
        .with_max_line(max_line);
    let mut last = 0;
    for item in reader {
        let number = match &item {
            Ok(line) => line.number(),
            Err(ReadError::Malformed(m)) => m.line,
            Err(e) => panic!("an I/O error from a slice: {e}"),
        };
        assert!(number > last, "line {number} after line {last}");
        last = number;
        let source = lines[usize::try_from(number).expect("small") - 1];
        if let Ok(line) = item {
            check_line(&line, source);
        }
    }
    assert!(last as usize <= lines.len());
}

fn check_line(line: &Line, source: &[u8]) {
    let _ = line.decode();
    let mut end = source.len();
    while end > 0 && source[end - 1] == b'\r' {
        end -= 1;
    }
    if line.text().as_bytes() != &source[..end] {
        // A bare URL, read as a `ref` line of the reader's own making.
        assert_ne!(source.first(), Some(&b'{'), "{:?} changed", line.text());
        assert_eq!(line.kind(), &Kind::Ref);
        return;
    }
    assert_eq!(
        Some(line.kind()),
        kind_by_serde(line.text()).as_ref(),
        "the kind of {:?}",
        line.text()
    );
    let again = Line::from_text(line.text()).expect("the same line reads alike");
    assert_eq!(again.kind(), line.kind());
}

/// A reader that hands out at most 3 bytes a call, as a pipe may.
struct Slow<'a>(&'a [u8]);

impl Read for Slow<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(3).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}
