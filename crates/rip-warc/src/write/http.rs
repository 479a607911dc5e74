//! The records of one HTTP exchange: `request`, `response`, `metadata`, `revisit`, and the
//! `warcinfo` that opens a file.
//!
//! A response block is the status line, the headers as received and the body. When the body
//! given is not the bytes on the wire (the client removed the chunked transfer coding, or
//! decompressed a `Content-Encoding`), the headers that described the wire are kept renamed
//! `X-Crawler-Transfer-Encoding`, `X-Crawler-Content-Encoding` and
//! `X-Crawler-Content-Length`, and a `Content-Length` of the body stored is written, as
//! Common Crawl does: a reader (warcio, pywb) then reads the body as stored, and
//! `WARC-Payload-Digest` is the SHA-1 of that body.

use url::Url;

use super::{Error, Record, RecordId};
use crate::record::{
    PROFILE_IDENTICAL_PAYLOAD, PROFILE_SERVER_NOT_MODIFIED, RecordType, Sha1Digest, field,
};

/// A request as sent.
#[derive(Debug, Clone, Copy)]
pub struct HttpRequest<'a> {
    /// The URL requested.
    pub url: &'a Url,
    /// `GET`, `HEAD`, …
    pub method: &'a str,
    /// The headers sent (a `Host` is added from the URL when absent).
    pub headers: &'a [(String, String)],
    /// The body sent (a POST's form), empty for a GET.
    pub body: &'a [u8],
}

/// A response as received.
#[derive(Debug, Clone, Copy)]
pub struct HttpResponse<'a> {
    /// The URL answered.
    pub url: &'a Url,
    /// The status code.
    pub status: u16,
    /// The headers as received, in order.
    pub headers: &'a [(String, String)],
    /// The body stored.
    pub body: &'a [u8],
    /// The body was decoded by the client (transfer and content codings removed), so the
    /// headers describing the wire are renamed (see the module's docs).
    pub decoded: bool,
    /// The body was cut at a limit (`WARC-Truncated: length`).
    pub truncated: bool,
    /// The server's address, when known (`WARC-IP-Address`).
    pub ip: Option<std::net::IpAddr>,
}

/// The `request` record of `req`.
pub fn request(req: &HttpRequest<'_>) -> Result<Record, Error> {
    let mut block = Vec::with_capacity(256);
    let target = &req.url[url::Position::BeforePath..url::Position::AfterQuery];
    let target = if target.is_empty() { "/" } else { target };
    push_line(&mut block, &format!("{} {target} HTTP/1.1", req.method));
    if !req
        .headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("host"))
    {
        let host = &req.url[url::Position::BeforeHost..url::Position::AfterPort];
        push_header(&mut block, "Host", host);
    }
    for (name, value) in req.headers {
        push_header(&mut block, name, value);
    }
    block.extend_from_slice(b"\r\n");
    block.extend_from_slice(req.body);
    Record::new(RecordType::Request, block)
        .target_uri(req.url.as_str())?
        .content_type("application/http;msgtype=request")
}

/// The `response` record of `res`.
pub fn response(res: &HttpResponse<'_>) -> Result<Record, Error> {
    let mut block = http_head(res);
    block.extend_from_slice(res.body);
    let mut r = Record::new(RecordType::Response, block)
        .target_uri(res.url.as_str())?
        .content_type("application/http;msgtype=response")?
        .header(field::PAYLOAD_DIGEST, &Sha1Digest::of(res.body))?;
    if let Some(ip) = res.ip {
        r = r.header(field::IP_ADDRESS, &ip.to_string())?;
    }
    if res.truncated {
        r = r.header(field::TRUNCATED, "length")?;
    }
    Ok(r)
}

/// What a revisit refers to: the earlier record holding the payload.
#[derive(Debug, Clone, Copy)]
pub struct RefersTo<'a> {
    /// The earlier record's id, when known.
    pub id: Option<&'a RecordId>,
    /// The earlier record's target URI.
    pub uri: &'a str,
    /// The earlier record's `WARC-Date`, when known (a 304 answers a request whose
    /// validators came from a cache that may not know it).
    pub date: Option<&'a str>,
}

/// A `revisit` record for `res` (whose body is not stored): `identical-payload-digest`, or
/// `server-not-modified` for a 304. The block is the response's status line and headers.
pub fn revisit(
    res: &HttpResponse<'_>,
    refers: &RefersTo<'_>,
    payload_digest: &str,
) -> Result<Record, Error> {
    let profile = if res.status == 304 {
        PROFILE_SERVER_NOT_MODIFIED
    } else {
        PROFILE_IDENTICAL_PAYLOAD
    };
    let mut r = Record::new(RecordType::Revisit, http_head(res))
        .target_uri(res.url.as_str())?
        .content_type("application/http;msgtype=response")?
        .header(field::PROFILE, profile)?
        .header(field::REFERS_TO_TARGET_URI, refers.uri)?;
    if let Some(date) = refers.date {
        r = r.header(field::REFERS_TO_DATE, date)?;
    }
    if profile == PROFILE_IDENTICAL_PAYLOAD {
        r = r.header(field::PAYLOAD_DIGEST, payload_digest)?;
    }
    if let Some(id) = refers.id {
        r = r.header(field::REFERS_TO, id.as_str())?;
    }
    if let Some(ip) = res.ip {
        r = r.header(field::IP_ADDRESS, &ip.to_string())?;
    }
    Ok(r)
}

/// A `metadata` record about the record `about` (`WARC-Concurrent-To`), its block
/// `application/warc-fields`: one `name: value` line a field, values with CR, LF or other
/// control characters turned to spaces and cut at 4 KiB.
pub fn metadata(url: &Url, about: &RecordId, fields: &[(&str, &str)]) -> Result<Record, Error> {
    Record::new(RecordType::Metadata, warc_fields(fields))
        .target_uri(url.as_str())?
        .content_type("application/warc-fields")?
        .concurrent_to(about)
}

/// The `warcinfo` record opening file `filename`, with `fields` (`software`, `format`, …).
pub fn warcinfo(filename: &str, fields: &[(&str, &str)]) -> Result<Record, Error> {
    Record::new(RecordType::Warcinfo, warc_fields(fields))
        .header(field::FILENAME, filename)?
        .content_type("application/warc-fields")
}

/// `name: value` lines, values made safe.
fn warc_fields(fields: &[(&str, &str)]) -> Vec<u8> {
    let mut block = Vec::new();
    for (name, value) in fields {
        let name: String = name
            .chars()
            .filter(|c| c.is_ascii_graphic() && *c != ':')
            .collect();
        push_line(&mut block, &format!("{name}: {}", safe_value(value, 4096)));
    }
    block
}

/// `value` with control characters as spaces, at most `max` bytes (cut on a char boundary).
fn safe_value(value: &str, max: usize) -> String {
    let mut out = String::with_capacity(value.len().min(max));
    for c in value.chars() {
        if out.len() + c.len_utf8() > max {
            break;
        }
        out.push(if c.is_control() { ' ' } else { c });
    }
    out
}

/// The status line and headers of `res`, ending in the blank line.
fn http_head(res: &HttpResponse<'_>) -> Vec<u8> {
    let mut head = Vec::with_capacity(512 + res.body.len());
    let reason = http_reason(res.status);
    push_line(&mut head, &format!("HTTP/1.1 {} {reason}", res.status));
    for (name, value) in res.headers {
        let wire = ["transfer-encoding", "content-encoding", "content-length"];
        if res.decoded && wire.iter().any(|w| name.eq_ignore_ascii_case(w)) {
            push_header(&mut head, &format!("X-Crawler-{name}"), value);
        } else {
            push_header(&mut head, name, value);
        }
    }
    if res.decoded
        || !res
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    {
        push_header(&mut head, "Content-Length", &res.body.len().to_string());
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// The standard reason phrase of `status` (the client does not keep the one received).
fn http_reason(status: u16) -> &'static str {
    ::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Unknown")
}

fn push_line(block: &mut Vec<u8>, line: &str) {
    block.extend_from_slice(line.as_bytes());
    block.extend_from_slice(b"\r\n");
}

/// One HTTP header line; a name or value that would break the line is made safe (the HTTP
/// client already refuses such headers; this is the writer's own guard).
fn push_header(block: &mut Vec<u8>, name: &str, value: &str) {
    let name: String = name
        .chars()
        .filter(|c| c.is_ascii_graphic() && *c != ':')
        .collect();
    push_line(block, &format!("{name}: {}", safe_value(value, 64 * 1024)));
}
