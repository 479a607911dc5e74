//! A `response` record's block as an HTTP response: status line and headers parsed with
//! `httparse`, the body de-chunked and its `Content-Encoding` (gzip, deflate) undone,
//! cut at [`Limits::max_body`](super::Limits) (and marked truncated, as rip-fetch cuts a
//! body), so that a gzip bomb is a cut body, not memory.

use std::borrow::Cow;
use std::io::Read;

use flate2::read::{DeflateDecoder, GzDecoder, ZlibDecoder};

/// An archived HTTP response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse<'a> {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case, in order.
    pub headers: Vec<(String, String)>,
    /// The payload: de-chunked and decoded, at most `max_body` bytes.
    pub body: Cow<'a, [u8]>,
    /// The payload was longer than `max_body` and was cut.
    pub truncated: bool,
}

impl HttpResponse<'_> {
    /// The first header named `name` (lower case).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a block is not a readable HTTP response.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The status line or headers do not parse.
    #[error("the HTTP response does not parse: {0}")]
    Parse(String),
    /// A chunked body that is malformed.
    #[error("the chunked body is malformed")]
    Chunked,
    /// A body that does not decompress.
    #[error("the {0} body does not decompress: {1}")]
    Decode(String, std::io::Error),
    /// A `Content-Encoding` this reader does not undo.
    #[error("Content-Encoding `{0}` is not supported (gzip, deflate)")]
    Encoding(String),
}

/// The status line and headers of an archived response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpHead {
    /// Where the payload starts in the block.
    pub payload_start: usize,
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case, in order.
    pub headers: Vec<(String, String)>,
}

/// The status line and headers of `block`.
pub fn parse_head(block: &[u8]) -> Result<HttpHead, HttpError> {
    let mut raw = [httparse::EMPTY_HEADER; 128];
    let mut resp = httparse::Response::new(&mut raw);
    let head = match resp.parse(block) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err(HttpError::Parse("the head is cut short".into()));
        }
        Err(e) => return Err(HttpError::Parse(e.to_string())),
    };
    let headers = resp
        .headers
        .iter()
        .map(|h| {
            let value = String::from_utf8_lossy(h.value).trim().to_owned();
            (h.name.to_ascii_lowercase(), value)
        })
        .collect();
    Ok(HttpHead {
        payload_start: head,
        status: resp.code.unwrap_or(0),
        headers,
    })
}

/// Parses `block` (a `response` record's block, `application/http; msgtype=response`).
pub fn parse_response(block: &[u8], max_body: u64) -> Result<HttpResponse<'_>, HttpError> {
    let HttpHead {
        payload_start: head,
        status,
        headers,
    } = parse_head(block)?;
    let mut response = HttpResponse {
        status,
        headers,
        body: Cow::Borrowed(&[]),
        truncated: false,
    };
    let payload = &block[head..];
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    let payload = if chunked {
        Cow::Owned(dechunk(payload)?)
    } else {
        Cow::Borrowed(payload)
    };
    let encoding = response
        .header("content-encoding")
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    (response.body, response.truncated) = decode(&encoding, payload, max_body)?;
    Ok(response)
}

/// Undoes chunked transfer coding (a last chunk missing is tolerated: the data is kept).
fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, HttpError> {
    let mut out = Vec::with_capacity(data.len());
    loop {
        let Some(eol) = data.windows(2).position(|w| w == b"\r\n") else {
            return if data.is_empty() {
                Ok(out)
            } else {
                Err(HttpError::Chunked)
            };
        };
        let size_text = std::str::from_utf8(&data[..eol]).map_err(|_| HttpError::Chunked)?;
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| HttpError::Chunked)?;
        data = &data[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = data.get(..size).ok_or(HttpError::Chunked)?;
        out.extend_from_slice(chunk);
        data = data.get(size..).unwrap_or_default();
        data = data.strip_prefix(b"\r\n").unwrap_or(data);
    }
}

fn decode<'a>(
    encoding: &str,
    payload: Cow<'a, [u8]>,
    max_body: u64,
) -> Result<(Cow<'a, [u8]>, bool), HttpError> {
    let reader: Box<dyn Read + '_> = match encoding {
        "" | "identity" => {
            let cut = payload.len() as u64 > max_body;
            let payload = match payload {
                Cow::Borrowed(b) => Cow::Borrowed(&b[..b.len().min(max_body as usize)]),
                Cow::Owned(mut v) => {
                    v.truncate(max_body as usize);
                    Cow::Owned(v)
                }
            };
            return Ok((payload, cut));
        }
        "gzip" | "x-gzip" => Box::new(GzDecoder::new(&payload[..])),
        "deflate" if payload.first().is_some_and(|b| b & 0x0f == 8) => {
            Box::new(ZlibDecoder::new(&payload[..]))
        }
        "deflate" => Box::new(DeflateDecoder::new(&payload[..])),
        other => return Err(HttpError::Encoding(other.to_owned())),
    };
    let mut out = Vec::new();
    reader
        .take(max_body + 1)
        .read_to_end(&mut out)
        .map_err(|e| HttpError::Decode(encoding.to_owned(), e))?;
    let cut = out.len() as u64 > max_body;
    out.truncate(max_body as usize);
    Ok((Cow::Owned(out), cut))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn chunked_and_gzip_are_undone() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"<p>hello</p>").unwrap();
        let gz = gz.finish().unwrap();
        let mut block =
            b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
                .to_vec();
        block.extend(format!("{:x}\r\n", gz.len()).bytes());
        block.extend(&gz);
        block.extend(b"\r\n0\r\n\r\n");
        let r = parse_response(&block, 1000).unwrap();
        assert_eq!((r.status, &r.body[..]), (200, &b"<p>hello</p>"[..]));
        let cut = parse_response(&block, 5).unwrap();
        assert_eq!((&cut.body[..], cut.truncated), (&b"<p>he"[..], true));
    }

    #[test]
    fn a_bad_head_is_an_error() {
        assert!(matches!(
            parse_response(b"HTTP/1.1 20", 10),
            Err(HttpError::Parse(_))
        ));
        assert!(matches!(
            parse_response(b"garbage\r\n\r\n", 10),
            Err(HttpError::Parse(_))
        ));
    }
}
