//! [`Fault`]: how the server answers one request.
//!
//! A fault is built from a constructor saying *what* to answer ([`Fault::serve`],
//! [`Fault::status`], [`Fault::redirect`], [`Fault::reset`], [`Fault::body`], ...) and
//! modifiers saying *how* to deliver it ([`Fault::delay`], [`Fault::trickle`],
//! [`Fault::stall`], [`Fault::short_body`], [`Fault::gzip`], ...). Modifiers combine:
//! `Fault::serve().gzip().trickle(16, ms(5))` sends the site's page gzip-encoded, 16 bytes at a
//! time.

use std::time::{Duration, SystemTime};

use bytes::Bytes;

use crate::samples::Sample;

/// How the server answers one request.
///
/// A constructor says *what* to answer ([`Fault::serve`], [`Fault::status`],
/// [`Fault::redirect`], [`Fault::reset`], [`Fault::body`], ...); modifiers say *how* to
/// deliver it ([`Fault::delay`], [`Fault::trickle`], [`Fault::stall`],
/// [`Fault::short_body`], [`Fault::gzip`], ...). Modifiers combine:
///
/// ```
/// use std::time::Duration;
/// use rip_testserver::Fault;
///
/// // The site's page, gzip-encoded when asked, 16 bytes every 5 ms.
/// let slow_gzip = Fault::serve().gzip().trickle(16, Duration::from_millis(5));
/// // The site's page with status 500, after 1 s.
/// let late_error = Fault::serve().with_status(500).delay(Duration::from_secs(1));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Fault {
    pub(crate) action: Action,
    pub(crate) status: Option<u16>,
    pub(crate) content: Content,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) retry_after: Option<RetryAfter>,
    pub(crate) encoding: Encoding,
    pub(crate) delay: Duration,
    pub(crate) trickle: Option<Trickle>,
    pub(crate) stall: Option<Duration>,
    pub(crate) short_body: Option<usize>,
    pub(crate) end_with_reset: bool,
    pub(crate) huge_headers: Option<HugeHeaders>,
    pub(crate) etag: Validator<String>,
    pub(crate) last_modified: Validator<SystemTime>,
}

/// What happens on the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Send a response.
    Respond,
    /// Close with a TCP RST before any response byte (SO_LINGER 0, then close).
    Reset,
    /// Close cleanly (FIN) without any response byte.
    Close,
}

/// Where the body comes from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Content {
    /// The site's resource for the path (file, generated page, or 404).
    Site,
    /// A small `text/plain` body naming the status, e.g. `503 Service Unavailable`.
    Canned,
    /// Given bytes.
    Bytes { content_type: String, body: Bytes },
}

/// The value of a `Retry-After` header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// `Retry-After: N` (delta-seconds).
    Seconds(u64),
    /// `Retry-After: <HTTP-date>`, the date being this long after the response is sent.
    /// HTTP-dates have a resolution of one second: the date is rounded up to the next second.
    After(Duration),
    /// A raw header value, sent as is (for malformed values).
    Raw(String),
}

/// Trickling: the body is written `chunk` bytes at a time with a pause of `every` before each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trickle {
    /// Bytes per write (at least 1).
    pub chunk: usize,
    /// Pause after each write.
    pub every: Duration,
}

/// Extra headers `X-Huge-0` .. `X-Huge-{count-1}`, each with a value of `size` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HugeHeaders {
    /// How many headers.
    pub count: usize,
    /// Bytes in each value.
    pub size: usize,
}

/// How the body is encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// As is.
    Identity,
    /// `Content-Encoding: gzip` when the request's `Accept-Encoding` allows gzip.
    Gzip,
    /// `Content-Encoding: gzip` always, the body being gzipped zeros that expand to this many
    /// bytes.
    GzipBomb(u64),
}

/// A validator header (`ETag`, `Last-Modified`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Validator<T> {
    /// Computed from the content (hash of the body; file mtime or a fixed date).
    Auto,
    /// This value.
    Fixed(T),
    /// Not sent, and conditional requests are not answered with 304.
    Off,
}

impl Default for Fault {
    fn default() -> Self {
        Fault {
            action: Action::Respond,
            status: None,
            content: Content::Site,
            headers: Vec::new(),
            retry_after: None,
            encoding: Encoding::Identity,
            delay: Duration::ZERO,
            trickle: None,
            stall: None,
            short_body: None,
            end_with_reset: false,
            huge_headers: None,
            etag: Validator::Auto,
            last_modified: Validator::Auto,
        }
    }
}

/// Constructors: what to answer.
impl Fault {
    /// Serve the site's resource normally (the file, the generated page, or 404). The default
    /// of every rule after its sequence.
    pub fn serve() -> Self {
        Fault::default()
    }

    /// Any status with a small `text/plain` body such as `503 Service Unavailable`.
    /// Codes outside 100..=999 are clamped to 500.
    pub fn status(status: u16) -> Self {
        Fault {
            status: Some(clamp_status(status)),
            content: Content::Canned,
            ..Fault::default()
        }
    }

    /// A status (429 or 503, usually) with a `Retry-After` header.
    pub fn retry_after(status: u16, after: RetryAfter) -> Self {
        Fault::status(status).with_retry_after(after)
    }

    /// A redirect: `status` (301, 302, 303, 307, 308) with `Location: location`.
    ///
    /// `{origin}` in the location is replaced by `http://` and the request's `Host` header,
    /// which makes absolute locations that stay on whichever host name the client used:
    /// `Fault::redirect(301, "{origin}/new")`. Other locations are sent as written
    /// (`/new`, `new`, `../new`, `http://elsewhere/`).
    pub fn redirect(status: u16, location: impl Into<String>) -> Self {
        Fault::status(status).header("Location", location)
    }

    /// Reset the connection before any response byte: SO_LINGER 0, then close, so the peer
    /// gets a TCP RST. A client sees a connection error (`ECONNRESET`).
    pub fn reset() -> Self {
        Fault {
            action: Action::Reset,
            ..Fault::default()
        }
    }

    /// Close the connection cleanly (FIN) without any response byte. A client sees an
    /// incomplete message ("connection closed before message completed").
    pub fn close() -> Self {
        Fault {
            action: Action::Close,
            ..Fault::default()
        }
    }

    /// Status 200 with this content instead of the site's (e.g. bytes that do not match their
    /// declared charset, or a PNG).
    pub fn body(content_type: impl Into<String>, body: impl Into<Bytes>) -> Self {
        Fault::serve().with_body(content_type, body)
    }

    /// Status 200 with one of the built-in [`Sample`] bodies (PNG, PDF, wrong charsets).
    pub fn sample(sample: Sample) -> Self {
        Fault::body(sample.content_type(), Bytes::from_static(sample.bytes()))
    }

    /// A gzip bomb: status 200, `Content-Type: text/html`, `Content-Encoding: gzip` whatever
    /// the request's `Accept-Encoding`, and a small body (about 1/1000 of `expanded`) that
    /// decompresses to `expanded` zero bytes. For testing decompression limits. The compressed
    /// body is computed once per size and cached by the server.
    pub fn gzip_bomb(expanded: u64) -> Self {
        Fault {
            encoding: Encoding::GzipBomb(expanded),
            content: Content::Bytes {
                content_type: "text/html".into(),
                body: Bytes::new(),
            },
            ..Fault::default()
        }
    }
}

/// Modifiers: how to deliver it.
impl Fault {
    /// Replace the status (keeps the content: `Fault::serve().with_status(500)` sends the
    /// site's page with status 500).
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(clamp_status(status));
        self
    }

    /// Replace the body and its `Content-Type`.
    pub fn with_body(mut self, content_type: impl Into<String>, body: impl Into<Bytes>) -> Self {
        self.content = Content::Bytes {
            content_type: content_type.into(),
            body: body.into(),
        };
        self
    }

    /// Add a response header (sent after the server's own; a `Content-Type` given here
    /// replaces the computed one). Names and values containing CR or LF are dropped when sent.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Add a `Retry-After` header.
    pub fn with_retry_after(mut self, after: RetryAfter) -> Self {
        self.retry_after = Some(after);
        self
    }

    /// Encode the body with gzip (`Content-Encoding: gzip`, `Vary: Accept-Encoding`) when the
    /// request's `Accept-Encoding` accepts gzip; otherwise send it as is.
    pub fn gzip(mut self) -> Self {
        if self.encoding == Encoding::Identity {
            self.encoding = Encoding::Gzip;
        }
        self
    }

    /// Wait this long before sending anything (applies to resets and closes too).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Send the headers at once, then the body `chunk` bytes at a time, pausing `every`
    /// before each chunk (so the body takes `every × chunks`). A chunk of 0 counts as 1.
    pub fn trickle(mut self, chunk: usize, every: Duration) -> Self {
        self.trickle = Some(Trickle {
            chunk: chunk.max(1),
            every,
        });
        self
    }

    /// Send the headers (with the full `Content-Length`), then no body: the connection is
    /// held open for `hold`, then closed. A client with a read timeout shorter than `hold`
    /// times out.
    pub fn stall(mut self, hold: Duration) -> Self {
        self.stall = Some(hold);
        self
    }

    /// Send only the first `sent` bytes of the body, then close the connection. The
    /// `Content-Length` header always announces more than is sent: the body's full length,
    /// or one byte more than the whole body when it is not longer than `sent`.
    pub fn short_body(mut self, sent: usize) -> Self {
        self.short_body = Some(sent);
        self
    }

    /// End the exchange with a TCP RST instead of a FIN, after whatever was sent (combine
    /// with [`short_body`](Self::short_body) or [`stall`](Self::stall) for a reset
    /// mid-body). The connection is not reused.
    pub fn end_with_reset(mut self) -> Self {
        self.end_with_reset = true;
        self
    }

    /// Add `count` headers `X-Huge-k` of `size` bytes each (64 MiB in all at most).
    pub fn huge_headers(mut self, count: usize, size: usize) -> Self {
        self.huge_headers = Some(HugeHeaders { count, size });
        self
    }

    /// Send this `ETag` (with its quotes, e.g. `"\"v2\""` or `"W/\"v2\""`) instead of the
    /// computed one; `If-None-Match` is compared with it.
    pub fn etag(mut self, etag: impl Into<String>) -> Self {
        self.etag = Validator::Fixed(etag.into());
        self
    }

    /// Send this `Last-Modified` instead of the computed one; `If-Modified-Since` is compared
    /// with it.
    pub fn last_modified(mut self, time: SystemTime) -> Self {
        self.last_modified = Validator::Fixed(time);
        self
    }

    /// Send neither `ETag` nor `Last-Modified`, and never answer 304.
    pub fn no_validators(mut self) -> Self {
        self.etag = Validator::Off;
        self.last_modified = Validator::Off;
        self
    }

    /// A short description for logs, e.g. `reset`, `status 503`, `serve`.
    pub(crate) fn kind(&self) -> &'static str {
        match self.action {
            Action::Reset => "reset",
            Action::Close => "close",
            Action::Respond if self.stall.is_some() => "stall",
            Action::Respond if self.short_body.is_some() => "short_body",
            Action::Respond => "respond",
        }
    }
}

fn clamp_status(status: u16) -> u16 {
    if (100..=999).contains(&status) {
        status
    } else {
        500
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_compose_with_modifiers() {
        let fault = Fault::redirect(301, "/new").delay(Duration::from_millis(5));
        assert_eq!(fault.status, Some(301));
        assert_eq!(fault.headers, vec![("Location".into(), "/new".into())]);
        assert_eq!(fault.delay, Duration::from_millis(5));
        assert_eq!(fault.content, Content::Canned);

        let fault = Fault::serve().gzip().trickle(0, Duration::ZERO);
        assert_eq!(fault.encoding, Encoding::Gzip);
        assert_eq!(fault.trickle.map(|t| t.chunk), Some(1));
    }

    #[test]
    fn bad_status_is_clamped_not_panicking() {
        assert_eq!(Fault::status(0).status, Some(500));
        assert_eq!(Fault::status(1000).status, Some(500));
        assert_eq!(Fault::status(999).status, Some(999));
    }

    #[test]
    fn gzip_does_not_undo_a_bomb() {
        let fault = Fault::gzip_bomb(1 << 20).gzip();
        assert_eq!(fault.encoding, Encoding::GzipBomb(1 << 20));
    }
}
