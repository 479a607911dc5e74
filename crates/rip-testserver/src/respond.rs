//! Turning a [`Fault`] into bytes on the socket: [`prepare`] builds the response (content,
//! headers, encoding, 304s), [`deliver`] writes it with the fault's timing and endings.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::fault::{Action, Content, Encoding, Fault, RetryAfter, Validator};
use crate::gzip::{MAX_GZIP_BOMB, gzip, make_bomb};
use crate::http::{self, RequestHead, ResponseHead};
use crate::log::lock;
use crate::shared::Shared;
use crate::site::{Resource, fixed_last_modified};

/// The most bytes [`Fault::huge_headers`] adds (count × size is capped to this).
pub(crate) const MAX_HUGE_HEADERS: usize = 64 << 20;

/// A response ready to write.
pub(crate) struct Prepared {
    pub head: ResponseHead,
    /// The bytes of the body that will be written (all of it, or the short part).
    pub body: Bytes,
    /// Whether the connection may serve another request afterwards.
    pub keep_alive: bool,
}

/// Builds the response for a request answered with `fault` (whose action is
/// [`Action::Respond`]).
pub(crate) async fn prepare(shared: &Shared, req: &RequestHead, fault: &Fault) -> Prepared {
    let origin = shared.origin(req.header("host"));
    let resource = resource(shared, req, fault, &origin).await;
    let status = fault.status.unwrap_or(resource.status);
    let mut head = server_head(status, &resource);
    let mut validators = Validators::new(shared, fault, status, &resource);
    let body = encode(
        shared,
        req,
        fault,
        &mut head,
        resource.body,
        &mut validators,
    )
    .await;
    validators.answer(req, &mut head);
    fault_headers(fault, &origin, &mut head);
    finish(req, fault, head, body)
}

/// What the fault's content is: the site's resource, a canned status page, or given bytes.
async fn resource(shared: &Shared, req: &RequestHead, fault: &Fault, origin: &str) -> Resource {
    match &fault.content {
        Content::Site if req.method == "GET" || req.method == "HEAD" => {
            shared
                .site
                .resolve(&req.path, req.query.as_deref(), origin)
                .await
        }
        Content::Site => Resource::error(405),
        Content::Canned => {
            let status = fault.status.unwrap_or(500);
            Resource {
                status,
                content_type: "text/plain; charset=utf-8".into(),
                body: Bytes::from(format!("{status} {}\n", http::reason(status))),
                last_modified: None,
                location: None,
            }
        }
        Content::Bytes { content_type, body } => Resource::ok(content_type.clone(), body.clone()),
    }
}

/// The headers the server itself sends.
fn server_head(status: u16, resource: &Resource) -> ResponseHead {
    let mut head = ResponseHead::new(status);
    head.push("Date", http::fmt_date(SystemTime::now()));
    head.push("Server", "rip-testserver");
    head.push("Content-Type", resource.content_type.clone());
    if resource.status == 405 {
        head.push("Allow", "GET, HEAD");
    }
    if let Some(location) = &resource.location {
        head.push("Location", location.clone());
    }
    head
}

/// A 200's `ETag` and `Last-Modified`: the fault's, else made up when the server gives
/// validators.
struct Validators {
    etag: Option<String>,
    last_modified: Option<SystemTime>,
}

impl Validators {
    fn new(shared: &Shared, fault: &Fault, status: u16, resource: &Resource) -> Self {
        if status != 200 {
            return Self {
                etag: None,
                last_modified: None,
            };
        }
        let etag = match &fault.etag {
            Validator::Auto if shared.validators => {
                Some(format!("\"{:016x}\"", fnv1a(&resource.body)))
            }
            Validator::Fixed(tag) => Some(tag.clone()),
            _ => None,
        };
        let last_modified = match fault.last_modified {
            Validator::Auto if shared.validators => {
                Some(resource.last_modified.unwrap_or_else(fixed_last_modified))
            }
            Validator::Fixed(time) => Some(time),
            _ => None,
        };
        Self {
            etag,
            last_modified,
        }
    }

    /// Sends the validators, and answers a conditional request they match with a 304.
    fn answer(&self, req: &RequestHead, head: &mut ResponseHead) {
        if let Some(tag) = &self.etag {
            head.push("ETag", tag.clone());
        }
        if let Some(time) = self.last_modified {
            head.push("Last-Modified", http::fmt_date(time));
        }
        let not_modified = head.status == 200
            && (req.method == "GET" || req.method == "HEAD")
            && is_not_modified(req, self.etag.as_deref(), self.last_modified);
        if not_modified {
            head.status = 304;
            head.remove("Content-Type");
            head.remove("Content-Encoding");
        }
    }
}

/// The body as the fault encodes it: gzip when the client accepts it, or a gzip bomb.
async fn encode(
    shared: &Shared,
    req: &RequestHead,
    fault: &Fault,
    head: &mut ResponseHead,
    body: Bytes,
    validators: &mut Validators,
) -> Bytes {
    match fault.encoding {
        Encoding::Identity => body,
        Encoding::Gzip => {
            head.push("Vary", "Accept-Encoding");
            if http::status_has_no_body(head.status)
                || !http::accepts_gzip(req.header("accept-encoding"))
            {
                return body;
            }
            head.push("Content-Encoding", "gzip");
            // A strong tag names one representation: the gzipped one gets its own.
            if let (Validator::Auto, Some(tag)) = (&fault.etag, &mut validators.etag) {
                tag.insert_str(tag.len() - 1, "-gz");
            }
            gzip(&body)
        }
        Encoding::GzipBomb(expanded) => {
            head.push("Content-Encoding", "gzip");
            bomb(shared, expanded).await
        }
    }
}

/// The fault's own headers: `Retry-After`, huge headers, and the headers it names, which
/// replace the server's of the same names.
fn fault_headers(fault: &Fault, origin: &str, head: &mut ResponseHead) {
    match &fault.retry_after {
        Some(RetryAfter::Seconds(s)) => head.push("Retry-After", s.to_string()),
        Some(RetryAfter::After(d)) => head.push("Retry-After", http_date_after(*d)),
        Some(RetryAfter::Raw(raw)) => head.push("Retry-After", raw.clone()),
        None => {}
    }
    if let Some(huge) = fault.huge_headers {
        let size = huge.size.min(MAX_HUGE_HEADERS);
        let count = huge.count.min(MAX_HUGE_HEADERS / size.max(1));
        let value = "x".repeat(size);
        for k in 0..count {
            head.push(format!("X-Huge-{k}"), value.clone());
        }
    }
    for (name, _) in &fault.headers {
        head.remove(name);
    }
    for (name, value) in &fault.headers {
        head.push(name.clone(), value.replace("{origin}", origin));
    }
}

/// The body's length (declared, and sent when the body is cut short), whether the
/// connection stays open, and the bytes to write.
fn finish(req: &RequestHead, fault: &Fault, mut head: ResponseHead, body: Bytes) -> Prepared {
    let has_body = !http::status_has_no_body(head.status);
    let full_len = if has_body { body.len() } else { 0 };
    let (declared, sent) = match fault.short_body {
        Some(sent) if has_body => {
            let sent = sent.min(full_len);
            (full_len.max(sent + 1), sent)
        }
        _ => (full_len, full_len),
    };
    if has_body
        && !fault
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
    {
        head.push("Content-Length", declared.to_string());
    }
    let ends_connection =
        fault.stall.is_some() || fault.short_body.is_some() || fault.end_with_reset;
    let keep_alive = req.keep_alive() && !ends_connection;
    if !keep_alive {
        head.push("Connection", "close");
    }
    let body = if req.method == "HEAD" || !has_body {
        Bytes::new()
    } else {
        body.slice(..sent)
    };
    Prepared {
        head,
        body,
        keep_alive,
    }
}

fn is_not_modified(
    req: &RequestHead,
    etag: Option<&str>,
    last_modified: Option<SystemTime>,
) -> bool {
    if let Some(if_none_match) = req.header("if-none-match") {
        // When present, If-None-Match decides alone (RFC 9110 §13.2.2).
        return etag.is_some_and(|tag| http::etag_matches(if_none_match, tag));
    }
    let (Some(since), Some(modified)) = (req.header("if-modified-since"), last_modified) else {
        return false;
    };
    let Ok(since) = httpdate::parse_http_date(since) else {
        return false;
    };
    // HTTP-dates have whole seconds: compare at that resolution.
    let secs = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    };
    secs(modified) <= secs(since)
}

/// An HTTP-date `d` from now, rounded up to the next whole second (year 9999 at most).
fn http_date_after(d: Duration) -> String {
    let since_epoch = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .saturating_add(d);
    let rounded = if since_epoch.subsec_nanos() > 0 {
        since_epoch.as_secs().saturating_add(1)
    } else {
        since_epoch.as_secs()
    };
    let rounded = Duration::from_secs(rounded.min(253_402_300_799));
    http::fmt_date(SystemTime::UNIX_EPOCH + rounded)
}

/// Writes a prepared response according to the fault. Returns whether the connection can
/// serve another request.
pub(crate) async fn deliver(
    stream: &mut TcpStream,
    prepared: Option<Prepared>,
    fault: &Fault,
    shutdown: &mut watch::Receiver<bool>,
) -> bool {
    if !fault.delay.is_zero() && !pause(fault.delay, shutdown).await {
        return false;
    }
    let prepared = match (fault.action, prepared) {
        (Action::Respond, Some(prepared)) => prepared,
        (Action::Reset, _) => {
            reset(stream);
            return false;
        }
        (Action::Close | Action::Respond, _) => {
            let _ = stream.shutdown().await;
            return false;
        }
    };
    let head = prepared.head.encode();
    let written = if let Some(hold) = fault.stall {
        write_flush(stream, &head).await && pause(hold, shutdown).await
    } else if let Some(trickle) = fault.trickle {
        let mut ok = write_flush(stream, &head).await;
        for chunk in prepared.body.chunks(trickle.chunk) {
            ok = ok && pause(trickle.every, shutdown).await && write_flush(stream, chunk).await;
            if !ok {
                break;
            }
        }
        ok
    } else if prepared.body.len() <= 64 * 1024 {
        let mut all = head;
        all.extend_from_slice(&prepared.body);
        write_flush(stream, &all).await
    } else {
        write_flush(stream, &head).await && write_flush(stream, &prepared.body).await
    };
    if !written {
        return false;
    }
    if fault.end_with_reset {
        reset(stream);
        return false;
    }
    if !prepared.keep_alive {
        let _ = stream.shutdown().await;
    }
    prepared.keep_alive
}

async fn write_flush(stream: &mut TcpStream, bytes: &[u8]) -> bool {
    stream.write_all(bytes).await.is_ok() && stream.flush().await.is_ok()
}

/// Sleeps, unless the server shuts down first: returns whether the full pause elapsed.
async fn pause(d: Duration, shutdown: &mut watch::Receiver<bool>) -> bool {
    if *shutdown.borrow() {
        return false;
    }
    tokio::select! {
        () = tokio::time::sleep(d) => true,
        _ = shutdown.changed() => false,
    }
}

/// Arms the socket so that closing it sends a RST (SO_LINGER 0). The caller drops it.
pub(crate) fn reset(stream: &TcpStream) {
    let _ = socket2::SockRef::from(stream).set_linger(Some(Duration::ZERO));
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The gzip bomb expanding to `expanded` zeros, made once per size.
async fn bomb(shared: &Shared, expanded: u64) -> Bytes {
    let expanded = expanded.min(MAX_GZIP_BOMB);
    if let Some(made) = lock(&shared.bombs).get(&expanded) {
        return made.clone();
    }
    let made = tokio::task::spawn_blocking(move || make_bomb(expanded))
        .await
        .unwrap_or_default();
    lock(&shared.bombs).insert(expanded, made.clone());
    made
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn far_retry_dates_do_not_panic() {
        assert_eq!(
            http_date_after(Duration::MAX),
            "Fri, 31 Dec 9999 23:59:59 GMT"
        );
    }

    #[test]
    fn http_date_is_rounded_up() {
        let date = http_date_after(Duration::from_secs(5));
        let at = httpdate::parse_http_date(&date).unwrap();
        let ahead = at.duration_since(SystemTime::now()).unwrap();
        assert!(
            ahead > Duration::from_secs(4) && ahead <= Duration::from_secs(6),
            "{ahead:?}"
        );
    }
}
