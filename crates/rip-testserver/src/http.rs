//! HTTP/1.1 on the wire: reading a request head with `httparse`, writing a response head,
//! and the small header grammars the server needs (Accept-Encoding, If-None-Match).

use std::io;
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncRead, AsyncReadExt};

/// The largest request head accepted (request line and headers); larger ones get 431.
pub const MAX_REQUEST_HEAD: usize = 64 * 1024;
/// The most request headers accepted; more get 431.
pub const MAX_REQUEST_HEADERS: usize = 256;
/// The largest request body read and discarded; larger ones get 413.
pub const MAX_REQUEST_BODY: u64 = 16 << 20;

/// A parsed request head.
#[derive(Debug, Clone)]
pub(crate) struct RequestHead {
    pub method: String,
    /// Origin-form: the path and the query, as sent (absolute-form is reduced to this).
    pub target: String,
    pub path: String,
    pub query: Option<String>,
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    pub minor_version: u8,
    /// Names in lower case, values decoded as UTF-8 (lossily), in arrival order.
    pub headers: Vec<(String, String)>,
}

/// Why a request head was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// Over [`MAX_REQUEST_HEAD`] bytes: 431.
    TooLarge,
    /// Over [`MAX_REQUEST_HEADERS`] headers: 431.
    TooManyHeaders,
    /// Not HTTP/1.x, or a target that is not a path: 400.
    Malformed,
}

impl HeadError {
    pub fn status(self) -> u16 {
        match self {
            HeadError::TooLarge | HeadError::TooManyHeaders => 431,
            HeadError::Malformed => 400,
        }
    }
}

/// What reading the next request gave.
#[derive(Debug)]
pub(crate) enum ReadHead {
    Head(RequestHead),
    /// The peer closed the connection (cleanly between requests, or mid-head).
    Eof,
    Refused(HeadError),
}

/// Reads one request head from `io`, keeping bytes past it in `buf` for the next request
/// (pipelining).
pub(crate) async fn read_head<R: AsyncRead + Unpin>(
    io: &mut R,
    buf: &mut Vec<u8>,
) -> io::Result<ReadHead> {
    loop {
        if !buf.is_empty() {
            match parse_head(buf) {
                Ok(Some((head, used))) => {
                    buf.drain(..used);
                    return Ok(ReadHead::Head(head));
                }
                Ok(None) if buf.len() >= MAX_REQUEST_HEAD => {
                    return Ok(ReadHead::Refused(HeadError::TooLarge));
                }
                Ok(None) => {}
                Err(e) => return Ok(ReadHead::Refused(e)),
            }
        }
        buf.reserve(8192);
        if io.read_buf(buf).await? == 0 {
            return Ok(ReadHead::Eof);
        }
    }
}

/// Parses a complete head at the start of `buf`: `Ok(None)` when more bytes are needed.
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<(RequestHead, usize)>, HeadError> {
    let mut headers = vec![httparse::EMPTY_HEADER; MAX_REQUEST_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let used = match request.parse(buf) {
        Ok(httparse::Status::Complete(used)) => used,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooManyHeaders),
        Err(_) => return Err(HeadError::Malformed),
    };
    if used > MAX_REQUEST_HEAD {
        return Err(HeadError::TooLarge);
    }
    let (Some(method), Some(raw_target), Some(minor_version)) =
        (request.method, request.path, request.version)
    else {
        return Err(HeadError::Malformed);
    };
    let target = origin_form(raw_target).ok_or(HeadError::Malformed)?;
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
        None => (target.clone(), None),
    };
    let headers = request
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_ascii_lowercase(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect();
    Ok(Some((
        RequestHead {
            method: method.to_owned(),
            target,
            path,
            query,
            minor_version,
            headers,
        },
        used,
    )))
}

/// `/p?q` stays; `http://host/p?q` becomes `/p?q`; anything else (`*`, `p`) is refused.
fn origin_form(target: &str) -> Option<String> {
    if target.starts_with('/') {
        return Some(target.to_owned());
    }
    let lower = target.get(..8).unwrap_or(target).to_ascii_lowercase();
    let rest = if lower.starts_with("http://") {
        &target[7..]
    } else if lower.starts_with("https://") {
        &target[8..]
    } else {
        return None;
    };
    match rest.find(['/', '?']) {
        Some(at) if rest[at..].starts_with('/') => Some(rest[at..].to_owned()),
        Some(at) => Some(format!("/{}", &rest[at..])),
        None => Some("/".to_owned()),
    }
}

impl RequestHead {
    /// The first value of a header (name in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the connection stays open after the response.
    pub fn keep_alive(&self) -> bool {
        let tokens = self
            .headers
            .iter()
            .filter(|(n, _)| n == "connection")
            .flat_map(|(_, v)| v.split(','))
            .map(|t| t.trim().to_ascii_lowercase());
        let mut close = false;
        let mut keep = false;
        for token in tokens {
            close |= token == "close";
            keep |= token == "keep-alive";
        }
        !close && (self.minor_version >= 1 || keep)
    }

    /// The length of the request body to discard, or the status to refuse it with.
    pub fn body_length(&self) -> Result<u64, u16> {
        if self.header("transfer-encoding").is_some() {
            // Chunked request bodies are not supported: we could not find the next request.
            return Err(501);
        }
        let mut lengths = self
            .headers
            .iter()
            .filter(|(n, _)| n == "content-length")
            .map(|(_, v)| v.trim().parse::<u64>());
        let Some(first) = lengths.next() else {
            return Ok(0);
        };
        let Ok(length) = first else { return Err(400) };
        if lengths.any(|other| other != Ok(length)) {
            return Err(400);
        }
        if length > MAX_REQUEST_BODY {
            return Err(413);
        }
        Ok(length)
    }
}

/// A response head being built.
#[derive(Debug, Clone)]
pub(crate) struct ResponseHead {
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl ResponseHead {
    pub fn new(status: u16) -> Self {
        ResponseHead {
            status,
            headers: Vec::with_capacity(12),
        }
    }

    pub fn push(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.headers.push((name.into(), value.into()));
    }

    pub fn remove(&mut self, name: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    }

    /// The status line and headers, ending with the blank line. Headers whose name or value
    /// would break the framing (CR, LF, or a bad name) are dropped.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(self.status.to_string().as_bytes());
        out.push(b' ');
        out.extend_from_slice(reason(self.status).as_bytes());
        out.extend_from_slice(b"\r\n");
        for (name, value) in &self.headers {
            if !valid_header(name, value) {
                continue;
            }
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out
    }
}

/// Whether a header can be written without breaking the message framing.
pub(crate) fn valid_header(name: &str, value: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        && !value.contains(['\r', '\n', '\0'])
}

/// The reason phrase of a status.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        410 => "Gone",
        411 => "Length Required",
        413 => "Content Too Large",
        414 => "URI Too Long",
        418 => "I'm a teapot",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        451 => "Unavailable For Legal Reasons",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// Whether a status forbids a body (1xx, 204, 304).
pub(crate) fn status_has_no_body(status: u16) -> bool {
    status < 200 || status == 204 || status == 304
}

/// The last second an HTTP-date can name: 9999-12-31T23:59:59Z.
const LAST_HTTP_DATE_SECS: u64 = 253_402_300_799;

/// Formats an HTTP-date, clamping times before 1970 or after 9999 (which `httpdate`
/// refuses with a panic) to those bounds.
pub(crate) fn fmt_date(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .min(LAST_HTTP_DATE_SECS);
    httpdate::fmt_http_date(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// Decodes `%XX` escapes; `None` for a `%` not followed by two hex digits.
pub(crate) fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Whether an `Accept-Encoding` value accepts gzip (explicitly, as `x-gzip`, or by `*`).
pub(crate) fn accepts_gzip(accept_encoding: Option<&str>) -> bool {
    let Some(value) = accept_encoding else {
        return false;
    };
    let mut star = false;
    for item in value.split(',') {
        let mut parts = item.split(';');
        let coding = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let q = parts
            .filter_map(|p| p.trim().strip_prefix("q="))
            .filter_map(|q| q.trim().parse::<f32>().ok())
            .next()
            .unwrap_or(1.0);
        match coding.as_str() {
            "gzip" | "x-gzip" => return q > 0.0,
            "*" => star = q > 0.0,
            _ => {}
        }
    }
    star
}

/// Whether an `If-None-Match` value matches an entity tag (weak comparison, `*` matches).
pub(crate) fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    let opaque = |tag: &str| tag.trim().trim_start_matches("W/").to_owned();
    let ours = opaque(etag);
    if_none_match
        .split(',')
        .any(|candidate| candidate.trim() == "*" || opaque(candidate) == ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<Option<(RequestHead, usize)>, HeadError> {
        parse_head(raw.as_bytes())
    }

    #[test]
    fn parses_a_request() {
        let raw =
            "GET /a/b?x=1&y HTTP/1.1\r\nHost: h:1\r\nUser-Agent: t\r\nACCEPT: */*\r\n\r\nrest";
        let (head, used) = parse(raw).unwrap().unwrap();
        assert_eq!(used, raw.len() - 4);
        assert_eq!(head.method, "GET");
        assert_eq!(head.path, "/a/b");
        assert_eq!(head.query.as_deref(), Some("x=1&y"));
        assert_eq!(head.header("accept"), Some("*/*"));
        assert!(head.keep_alive());
        assert_eq!(head.body_length(), Ok(0));
    }

    #[test]
    fn partial_and_garbage() {
        assert!(parse("GET / HTTP/1.1\r\nHost: x\r\n").unwrap().is_none());
        assert_eq!(
            parse("\x16\x03\x01garbage\r\n\r\n").unwrap_err(),
            HeadError::Malformed
        );
        assert_eq!(
            parse("GET * HTTP/1.1\r\n\r\n").unwrap_err(),
            HeadError::Malformed
        );
        assert_eq!(
            parse("GET / HTTP/2.0\r\n\r\n").unwrap_err(),
            HeadError::Malformed
        );
        let many: String = (0..300).map(|i| format!("X-{i}: v\r\n")).collect();
        assert_eq!(
            parse(&format!("GET / HTTP/1.1\r\n{many}\r\n")).unwrap_err(),
            HeadError::TooManyHeaders
        );
    }

    #[test]
    fn absolute_form_is_reduced() {
        assert_eq!(origin_form("http://h:1/p?q").as_deref(), Some("/p?q"));
        assert_eq!(origin_form("HTTP://h").as_deref(), Some("/"));
        assert_eq!(origin_form("http://h?q").as_deref(), Some("/?q"));
        assert_eq!(origin_form("ftp://h/"), None);
        assert_eq!(origin_form("é"), None);
    }

    #[test]
    fn keep_alive_rules() {
        let head = |raw: &str| parse(raw).unwrap().unwrap().0;
        assert!(!head("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive());
        assert!(!head("GET / HTTP/1.0\r\n\r\n").keep_alive());
        assert!(head("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive());
    }

    #[test]
    fn body_lengths() {
        let head = |raw: &str| parse(raw).unwrap().unwrap().0;
        assert_eq!(
            head("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n").body_length(),
            Ok(5)
        );
        assert_eq!(
            head("POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n").body_length(),
            Err(400)
        );
        assert_eq!(
            head("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").body_length(),
            Err(400)
        );
        assert_eq!(
            head("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").body_length(),
            Err(501)
        );
        assert_eq!(
            head("POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n").body_length(),
            Err(413)
        );
    }

    #[test]
    fn response_head_drops_unsafe_headers() {
        let mut head = ResponseHead::new(503);
        head.push("Retry-After", "2");
        head.push("X-Evil", "a\r\nSet-Cookie: x");
        head.push("Bad Name", "v");
        assert_eq!(
            String::from_utf8(head.encode()).unwrap(),
            "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\n\r\n"
        );
    }

    #[test]
    fn dates_out_of_range_do_not_panic() {
        let before = SystemTime::UNIX_EPOCH - Duration::from_secs(10);
        assert_eq!(fmt_date(before), "Thu, 01 Jan 1970 00:00:00 GMT");
        let after = SystemTime::UNIX_EPOCH + Duration::from_secs(LAST_HTTP_DATE_SECS * 2);
        assert_eq!(fmt_date(after), "Fri, 31 Dec 9999 23:59:59 GMT");
    }

    #[test]
    fn small_grammars() {
        assert_eq!(percent_decode("/a%2Fb%20c").unwrap(), b"/a/b c");
        assert_eq!(percent_decode("%4"), None);
        assert!(accepts_gzip(Some("gzip, deflate, br")));
        assert!(accepts_gzip(Some("br;q=1.0, GZIP;q=0.5")));
        assert!(!accepts_gzip(Some("gzip;q=0")));
        assert!(accepts_gzip(Some("*")));
        assert!(!accepts_gzip(Some("gzip;q=0, *")));
        assert!(!accepts_gzip(Some("identity")));
        assert!(!accepts_gzip(None));
        assert!(etag_matches("\"a\", \"b\"", "\"b\""));
        assert!(etag_matches("W/\"b\"", "\"b\""));
        assert!(etag_matches("*", "\"b\""));
        assert!(!etag_matches("\"a\"", "\"b\""));
    }
}
