//! Counting records as they flow between two stages, without decoding them: a relay
//! thread copies bytes from one stage's stdout to the next stage's stdin and counts the
//! lines of each kind by their `_type` (the first key of every record the stages write).
//! The counts feed the progress display only; the books are the stages' own `summary`
//! records.

use std::io::{BufRead as _, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rip_core::Kind;

/// Every kind has a slot: the eight rip-core knows, and one for any other.
const SLOTS: usize = 9;
const PREFIX: &[u8] = br#"{"_type":""#;

/// The counting slot of a kind. The match is exhaustive: a kind added to rip-core's
/// [`Kind`] must be given a slot here.
fn slot(kind: &Kind) -> usize {
    match kind {
        Kind::Ref => 0,
        Kind::Page => 1,
        Kind::Failure => 2,
        Kind::Doc => 3,
        Kind::Error => 4,
        Kind::Expected => 5,
        Kind::Ledger => 6,
        Kind::Summary => 7,
        Kind::Other(_) => 8,
    }
}

/// The kind of a line by its first bytes (`{"_type":"…"`, the first key of every record
/// the stages write); a line that does not start so is [`Kind::Other`] with no name.
fn classify(line_start: &[u8]) -> Kind {
    let Some(rest) = line_start.strip_prefix(PREFIX) else {
        return Kind::Other(String::new());
    };
    let end = rest.iter().position(|&b| b == b'"').unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end]).map_or(Kind::Other(String::new()), Kind::from_type)
}

/// The kind of one line (its end of line, if any, included), as [`LineKinds`] would
/// classify it in a stream.
pub fn line_kind(line: &[u8]) -> Kind {
    let end = line.iter().position(|&b| b == b'\n').unwrap_or(line.len());
    classify(&line[..end.min(HEAD)])
}

/// Lines counted by kind; shared between a relay thread and the display.
#[derive(Debug, Default)]
pub struct Counts([AtomicU64; SLOTS]);

impl Counts {
    /// Lines of `kind` so far (every [`Kind::Other`] counts as one kind).
    pub fn get(&self, kind: &Kind) -> u64 {
        self.0[slot(kind)].load(Ordering::Relaxed)
    }

    /// Counts one line of `kind`.
    pub fn add(&self, kind: &Kind) {
        self.0[slot(kind)].fetch_add(1, Ordering::Relaxed);
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
                        seen(classify(&self.head));
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
        kinds.feed(&buf[..n], |k| counts.add(&k));
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.flush();
}

/// Copies `from` to `to` line by line until `from` ends, counting lines into `counts`, and
/// adding to `pages` the pages each `rip-parse` summary in the stream says it read: what
/// `rip-queue relay` writes holds the records workers made elsewhere, whose fetch rounds the
/// wrapper does not relay, so their parse's summaries say how many pages they fetched. A
/// write error stops the copy, as in [`relay`].
pub fn relay_workers(
    from: impl Read,
    mut to: impl Write,
    counts: Arc<Counts>,
    pages: Arc<AtomicU64>,
) {
    let mut reader = std::io::BufReader::with_capacity(256 * 1024, from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let kind = line_kind(&line);
        if kind == Kind::Summary {
            pages.fetch_add(parsed_pages(&line), Ordering::Relaxed);
        }
        counts.add(&kind);
        if to.write_all(&line).is_err() {
            break;
        }
    }
    let _ = to.flush();
}

/// The pages a `rip-parse` summary says it read; 0 for any other line.
fn parsed_pages(line: &[u8]) -> u64 {
    match serde_json::from_slice::<rip_core::Summary>(line) {
        Ok(s) if s.stage == "rip-parse" => s.input.get("page").copied().unwrap_or(0),
        _ => 0,
    }
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
                    lk.feed(piece, |k| counts.add(&k));
                }
            }
            assert_eq!(counts.get(&Kind::Page), 2, "split at {split}");
            assert_eq!(counts.get(&Kind::Doc), 1);
            assert_eq!(counts.get(&Kind::Summary), 1);
            assert_eq!(
                counts.get(&Kind::Other(String::new())),
                1,
                "`not json`; the empty line is not counted"
            );
        }
    }

    #[test]
    fn every_kind_of_rip_core_has_its_own_slot() {
        let names = [
            "ref", "page", "failure", "doc", "error", "expected", "ledger", "summary",
        ];
        let mut slots: Vec<usize> = names
            .iter()
            .map(|name| {
                let kind =
                    line_kind(format!("{{\"_type\":\"{name}\",\"url\":\"x\"}}\n").as_bytes());
                assert_eq!(kind, Kind::from_type(name));
                assert!(!matches!(kind, Kind::Other(_)), "{name} is a known kind");
                slot(&kind)
            })
            .collect();
        slots.push(slot(&line_kind(br#"{"_type":"custom"}"#)));
        slots.push(slot(&line_kind(b"not json")));
        slots.dedup();
        assert_eq!(slots, (0..SLOTS).collect::<Vec<_>>());
    }

    #[test]
    fn a_whole_line_is_classified_as_in_a_stream() {
        let long = format!("{{\"_type\":\"{}\"}}", "summary".repeat(9));
        for line in [
            "{\"_type\":\"doc\"}",
            "{\"_type\":\"ref",
            "{\"_type\":\"ref\n",
            "",
            "\n",
            "not json\n",
            long.as_str(),
        ] {
            let mut streamed = None;
            let mut lk = LineKinds::default();
            lk.feed(line.as_bytes(), |k| streamed = Some(k));
            if !line.ends_with('\n') {
                lk.feed(b"\n", |k| streamed = Some(k));
            }
            let streamed = streamed.unwrap_or(Kind::Other(String::new()));
            assert_eq!(line_kind(line.as_bytes()), streamed, "{line:?}");
        }
    }

    #[test]
    fn the_workers_relay_adds_up_the_pages_their_parse_read() {
        let parse = |pages: u64| {
            format!(
                "{{\"_type\":\"summary\",\"stage\":\"rip-parse\",\"pid\":1,\
                 \"startedAt\":\"2026-01-01T00:00:00Z\",\"endedAt\":\"2026-01-01T00:00:01Z\",\
                 \"input\":{{\"page\":{pages},\"ledger\":1}},\"output\":{{}},\
                 \"status\":\"complete\"}}\n"
            )
        };
        let fetch = parse(100).replace("rip-parse", "rip-fetch");
        let doc = "{\"_type\":\"doc\",\"url\":\"http://h/a\"}\n";
        let input = [doc, &parse(7), doc, &fetch, &parse(5), "not json\n", doc].concat();
        let mut out = Vec::new();
        let counts = Arc::new(Counts::default());
        let pages = Arc::new(AtomicU64::new(0));
        relay_workers(input.as_bytes(), &mut out, counts.clone(), pages.clone());
        assert_eq!(out, input.as_bytes(), "copied unchanged");
        assert_eq!(pages.load(Ordering::Relaxed), 12, "rip-parse's pages alone");
        assert_eq!(counts.get(&Kind::Doc), 3);
        assert_eq!(counts.get(&Kind::Summary), 3);
    }

    #[test]
    fn relay_copies_bytes_unchanged() {
        let input = b"{\"_type\":\"ref\",\"url\":\"x\"}\n".repeat(10_000);
        let mut out = Vec::new();
        let counts = Arc::new(Counts::default());
        relay(&input[..], &mut out, counts.clone());
        assert_eq!(out, input);
        assert_eq!(counts.get(&Kind::Ref), 10_000);
    }
}
