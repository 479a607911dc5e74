//! Records larger than the broker's largest message, stored in chunks.
//!
//! A record whose line does not fit in one message (the Rust docs' `core/all.html` doc is
//! several MB; the broker's `max_payload` is 1 MB by default) is stored as chunk messages
//! in its stream, on a subject of their own (`subject`: workers of a partition never get
//! them), then a *head* message, on the record's subject, that stands in its place:
//!
//! - each chunk carries a piece of the line and the header `Rip-Chunk: <digest> <index>`, under
//!   the message id `<record id>~<digest>~<index>` (a chunk published again is stored once);
//! - the head, published once every chunk is stored, carries the header
//!   `Rip-Chunks: <digest> <length> <sequences>` (the chunks' stream sequences in order, as
//!   ranges `a-b,c`) and, as its payload, a stand-in line holding the record's `_type`, `url`
//!   and `attempt`; its message id is the record's identity, so a record published twice is
//!   stored once, as any record is.
//!
//! Readers (`pull`, `relay`, `work`) pass over chunks and, at a head, read its chunks by
//! sequence and check the whole line against the digest and length: a record comes out
//! whole, byte for byte, or not at all (a producer killed between its chunks and its head
//! never publishes the head; the digest keeps a second producer's different chunks apart).
//! A head whose chunks are gone or do not add up (removed from the stream by its limits or
//! by hand) becomes a `failure` of its URL (`queue.chunkLost`) in its place, so the URL is
//! accounted for.
//!
//! Chunks live and go with the stream's other messages (its limits, its deletion): a
//! record's store is its chunks. No chunk stays that no head names: a producer whose head is
//! a duplicate (the record was stored before, by a producer killed before acknowledging its
//! input) deletes the chunks it has just stored, and one whose head is stored deletes the
//! chunks of the same record with another digest stored within the deduplication window
//! (a producer's killed between its chunks and its head, whose work this one did again).
//! Only chunks of a producer killed mid-record that nobody redoes within the window stay,
//! passed over by readers.

use crate::fit::failure_of;
use crate::{Broker, QueueError};
use async_nats::HeaderMap;
use async_nats::jetstream::stream::RawMessageErrorKind;
use bytes::{Bytes, BytesMut};
use rip_core::{ErrorCategory, Record};
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

/// The header of a chunk: `<digest> <index>`.
pub const CHUNK_HEADER: &str = "Rip-Chunk";
/// The header of a head: `<digest> <length> <sequences>`.
pub const CHUNKS_HEADER: &str = "Rip-Chunks";

/// The subject of the chunks of the record whose message id is `id`, in the stream whose
/// subject is `stream_subject`: one of its own (`<stream subject>.c<hash of the id>`), so
/// that the workers of a partition never get chunks, and a producer finds the chunks a
/// producer of the same record left.
pub(crate) fn subject(stream_subject: &str, id: &str) -> String {
    format!("{stream_subject}.c{:016x}", xxh3_64(id.as_bytes()))
}

/// Whether `subject` (of a stream whose subject is `stream_subject`) is a chunk subject.
pub(crate) fn is_chunk_subject(stream_subject: &str, subject: &str) -> bool {
    subject
        .strip_prefix(stream_subject)
        .and_then(|rest| rest.strip_prefix(".c"))
        .is_some_and(|hash| !hash.is_empty())
}

/// Bytes of a message kept for its headers (message id, run, chunk headers).
const HEADER_ROOM: usize = 2048;

/// The longest payload published in one message under a broker's `max_payload`; a record
/// longer goes in chunks.
pub(crate) fn room(max_payload: usize) -> usize {
    max_payload.saturating_sub(HEADER_ROOM)
}

/// The size of a chunk under `max_payload`: a chunk read by sequence comes back in base64
/// (4 bytes for 3) inside the broker's answer, which must fit too.
pub(crate) fn chunk_size(max_payload: usize) -> usize {
    (max_payload.saturating_sub(2 * HEADER_ROOM) / 4 * 3).max(1024)
}

/// The digest of a record's line, in headers and chunk ids.
pub(crate) fn digest(line: &[u8]) -> String {
    format!("{:032x}", xxh3_128(line))
}

/// The stand-in line a head carries: the record's `_type`, `url` and `attempt`, so that a
/// record whose chunks are lost becomes a failure of its URL.
pub(crate) fn stand_in(line: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    let mut head = serde_json::Map::new();
    for field in ["_type", "url", "attempt"] {
        if let Some(v) = value.get(field) {
            head.insert(field.to_owned(), v.clone());
        }
    }
    serde_json::Value::Object(head).to_string()
}

/// `sequences` as ranges: `4-9,12`.
pub(crate) fn ranges(sequences: &[u64]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sequences.len() {
        let start = sequences[i];
        let mut end = start;
        while i + 1 < sequences.len() && sequences[i + 1] == end + 1 {
            end += 1;
            i += 1;
        }
        out.push(if end == start {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

fn parse_ranges(text: &str) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    for part in text.split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u64, u64) = (a.parse().ok()?, b.parse().ok()?);
        if b < a || b - a > 10_000_000 {
            return None;
        }
        out.extend(a..=b);
    }
    Some(out)
}

/// What a head says: the digest, the length and the chunks' sequences.
struct Chunks {
    digest: String,
    length: usize,
    sequences: Vec<u64>,
}

impl Chunks {
    fn of(headers: &HeaderMap) -> Option<Self> {
        let value = headers.get(CHUNKS_HEADER)?.as_str();
        let mut parts = value.split(' ');
        let digest = parts.next()?.to_owned();
        let length = parts.next()?.parse().ok()?;
        let sequences = parse_ranges(parts.next()?)?;
        Some(Self {
            digest,
            length,
            sequences,
        })
    }
}

/// Whether `message` is a chunk, which readers pass over (its head brings it back).
pub(crate) fn is_chunk(message: &async_nats::Message) -> bool {
    message
        .headers
        .as_ref()
        .is_some_and(|h| h.get(CHUNK_HEADER).is_some())
}

/// Gives a head `message` of the stream `stream` its record's whole line as payload (or, its
/// chunks lost, a `failure` of its URL); leaves any other message as it is.
pub(crate) async fn make_whole(
    broker: &Broker,
    stream: &str,
    message: &mut async_nats::Message,
) -> Result<(), QueueError> {
    let Some(chunks) = message.headers.as_ref().and_then(Chunks::of) else {
        if message
            .headers
            .as_ref()
            .is_some_and(|h| h.get(CHUNKS_HEADER).is_some())
        {
            message.payload = lost(&message.payload, "its head names no chunks it can read");
        }
        return Ok(());
    };
    message.payload = match read(broker, stream, &chunks).await? {
        Ok(whole) => whole,
        Err(why) => lost(&message.payload, &why),
    };
    Ok(())
}

/// A worker's records among `messages`: chunks acknowledged and left out (each comes with
/// its head), heads made whole.
pub(crate) async fn for_work(
    broker: &Broker,
    messages: Vec<async_nats::jetstream::Message>,
) -> Result<Vec<async_nats::jetstream::Message>, QueueError> {
    let mut records = Vec::with_capacity(messages.len());
    for mut message in messages {
        if is_chunk(&message.message) {
            message.ack().await.ok(); // not acknowledged: it comes again, and again goes
            continue;
        }
        if let Ok(stream) = message.info().map(|i| i.stream.to_owned()) {
            make_whole(broker, &stream, &mut message.message).await?;
        }
        records.push(message);
    }
    Ok(records)
}

/// The line of a record stored in `chunks`, or why it cannot be had.
async fn read(
    broker: &Broker,
    stream: &str,
    chunks: &Chunks,
) -> Result<Result<Bytes, String>, QueueError> {
    let handle = broker
        .jetstream()
        .get_stream_no_info(stream)
        .await
        .map_err(|e| QueueError::refused(format!("read the stream {stream}"), e))?;
    let mut whole = BytesMut::with_capacity(chunks.length);
    for (index, &sequence) in chunks.sequences.iter().enumerate() {
        let got = broker
            .patiently("read a record's chunks", || async {
                match handle.get_raw_message(sequence).await {
                    Ok(m) => Ok(Some(m)),
                    Err(e) if e.kind() == RawMessageErrorKind::NoMessageFound => Ok(None),
                    Err(e) => Err(e),
                }
            })
            .await?;
        let Some(chunk) = got else {
            return Ok(Err(format!(
                "its chunk {index} (sequence {sequence}) is gone"
            )));
        };
        let expected = format!("{} {index}", chunks.digest);
        if chunk.headers.get(CHUNK_HEADER).map(|v| v.as_str()) != Some(expected.as_str()) {
            return Ok(Err(format!(
                "the message at sequence {sequence} is not its chunk {index}"
            )));
        }
        whole.extend_from_slice(&chunk.payload);
    }
    if whole.len() != chunks.length || digest(&whole) != chunks.digest {
        return Ok(Err(format!(
            "its chunks add up to {} bytes that do not match the record's {} bytes and digest",
            whole.len(),
            chunks.length
        )));
    }
    Ok(Ok(whole.freeze()))
}

/// The `failure` standing for the record whose head carries `stand_in`, its chunks lost
/// because of `why`; the stand-in itself when it has no URL (said on stderr).
fn lost(stand_in: &[u8], why: &str) -> Bytes {
    let stand_in = String::from_utf8_lossy(stand_in);
    let message = format!(
        "the record was stored in chunks that cannot be read back: {why} (removed from the \
         stream by its limits or by hand); it is to be done again"
    );
    let failure = failure_of(
        &stand_in,
        ErrorCategory::Unknown,
        "queue.chunkLost",
        &message,
    )
    .and_then(|f| serde_json::to_string(&Record::Failure(f)).ok());
    match failure {
        Some(line) => Bytes::from(line),
        None => {
            eprintln!("rip-queue: a record without a URL is lost: {message}");
            Bytes::from(stand_in.into_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_go_as_ranges_and_come_back() {
        let seqs = [4, 5, 6, 9, 11, 12];
        assert_eq!(ranges(&seqs), "4-6,9,11-12");
        assert_eq!(parse_ranges("4-6,9,11-12").unwrap(), seqs);
        assert!(parse_ranges("9-4").is_none());
        assert!(parse_ranges("x").is_none());
    }

    #[test]
    fn a_chunk_and_its_answer_fit_the_brokers_message() {
        for max in [64 << 10, 1 << 20, 8 << 20] {
            let chunk = chunk_size(max);
            assert!(chunk.div_ceil(3) * 4 + 2 * HEADER_ROOM <= max, "{max}");
            assert!(room(max) < max);
        }
    }

    #[test]
    fn a_records_chunks_have_a_subject_no_partition_has() {
        let chunks = subject("rip.docs", "run:doc:0:abc");
        assert!(chunks.starts_with("rip.docs.c"), "{chunks}");
        assert_eq!(chunks, subject("rip.docs", "run:doc:0:abc"));
        assert!(is_chunk_subject("rip.docs", &chunks));
        assert!(!is_chunk_subject("rip.docs", "rip.docs.3"));
        assert!(!is_chunk_subject("rip.docs", "rip.docs"));
    }

    #[test]
    fn a_stand_in_keeps_what_names_the_record() {
        let line = r#"{"_type":"doc","url":"http://h/a","attempt":1,"body":"big"}"#;
        let head: serde_json::Value = serde_json::from_str(&stand_in(line)).unwrap();
        assert_eq!(
            head,
            serde_json::json!({"_type": "doc", "url": "http://h/a", "attempt": 1})
        );
        let failure = lost(stand_in(line).as_bytes(), "gone");
        let v: serde_json::Value = serde_json::from_slice(&failure).unwrap();
        assert_eq!(v["_type"], "failure");
        assert_eq!(v["url"], "http://h/a");
        assert_eq!(v["errors"][0]["code"], "queue.chunkLost");
    }
}
