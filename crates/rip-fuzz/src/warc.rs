//! WARC files and the HTTP responses archived in them (`rip_warc::read`): record
//! framing, gzip members, chunked bodies and `Content-Encoding`.

use rip_warc::read::{Item, Limits, parse_response, read_archive};

use crate::input::choice;

/// The first byte says what the rest is: an HTTP response block (even) or a WARC file,
/// plain or gzip (odd). Every record found lies within the file and holds at most
/// `max_record` bytes; a response's body is at most `max_body` bytes, and cut exactly
/// when it says so; nothing reads past the limits.
pub(crate) fn warc(data: &[u8]) {
    let (c, body) = choice(data);
    let limits = Limits {
        max_line: 256,
        max_headers: 32,
        max_header_bytes: 4096,
        max_record: 1 << 20,
        max_body: 1 + u64::from(c >> 1) * 64,
    };
    if c & 1 == 0 {
        response(body, limits.max_body);
        return;
    }
    let mut records = 0;
    let mut end = 0;
    let result = read_archive(body, &limits, &mut |item| {
        records += 1;
        if let Item::Record(r) = item {
            assert!(r.offset >= end, "record at {} before {end}", r.offset);
            end = r.offset + r.length;
            assert!(end <= body.len() as u64, "record past the file's end");
            assert!(r.block.len() as u64 <= limits.max_record);
            response(&r.block, limits.max_body);
        }
        records < 10_000
    });
    let _ = result;
}

fn response(block: &[u8], max_body: u64) {
    if let Ok(r) = parse_response(block, max_body) {
        assert!(r.body.len() as u64 <= max_body, "{} bytes", r.body.len());
        let _ = r.header("content-type");
    }
}
