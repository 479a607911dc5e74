//! One connection: read requests (keep-alive, pipelining), choose each one's fault, log it,
//! answer it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::fault::{Action, Fault};
use crate::http::{self, ReadHead, RequestHead, ResponseHead};
use crate::log::{RequestRecord, lock};
use crate::respond;
use crate::shared::Shared;

pub(crate) async fn serve(
    mut stream: TcpStream,
    peer: SocketAddr,
    connection: u64,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut buf = Vec::new();
    loop {
        if *shutdown.borrow() {
            return;
        }
        let read = tokio::select! {
            read = http::read_head(&mut stream, &mut buf) => read,
            _ = shutdown.changed() => return,
        };
        let head = match read {
            Ok(ReadHead::Head(head)) => head,
            Ok(ReadHead::Eof) | Err(_) => return,
            Ok(ReadHead::Refused(error)) => return refuse(&mut stream, error.status()).await,
        };
        let arrived = Instant::now();
        let time = truncate_to_micros(SystemTime::now());
        let discarded = match head.body_length() {
            Ok(length) => tokio::select! {
                ok = discard_body(&mut stream, &mut buf, length) => ok,
                _ = shutdown.changed() => false,
            },
            Err(status) => return refuse(&mut stream, status).await,
        };
        if !discarded {
            return;
        }
        if shared.control && head.path.starts_with(crate::CONTROL_PREFIX) {
            let (response, body) = crate::control::answer(&shared, &head);
            if !write_simple(&mut stream, response, &body, head.keep_alive()).await {
                return;
            }
            continue;
        }

        let chosen = lock(&shared.plan).choose(head.header("host"), &head.path, &head.target);
        let (rule, fault) = match chosen {
            Some((rule, fault)) => (Some(rule), fault),
            None => (None, Fault::serve()),
        };
        let prepared = match fault.action {
            Action::Respond => Some(respond::prepare(&shared, &head, &fault).await),
            Action::Reset | Action::Close => None,
        };
        shared.log.push(record(
            &head,
            RecordContext {
                connection,
                peer,
                elapsed: truncate_duration(arrived.duration_since(shared.started)),
                time,
                status: prepared.as_ref().map(|p| p.head.status),
                fault: fault.kind(),
                rule,
            },
        ));
        if !respond::deliver(&mut stream, prepared, &fault, &mut shutdown).await {
            return;
        }
    }
}

/// Log times have the resolution of their JSON form (microseconds), so that a record read
/// back from `/__rip/log` or the log file equals the one in memory.
fn truncate_duration(d: Duration) -> Duration {
    Duration::new(d.as_secs(), d.subsec_micros() * 1_000)
}

fn truncate_to_micros(t: SystemTime) -> SystemTime {
    match t.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(since) => SystemTime::UNIX_EPOCH + truncate_duration(since),
        Err(_) => t,
    }
}

struct RecordContext {
    connection: u64,
    peer: SocketAddr,
    elapsed: Duration,
    time: SystemTime,
    status: Option<u16>,
    fault: &'static str,
    rule: Option<usize>,
}

fn record(head: &RequestHead, cx: RecordContext) -> RequestRecord {
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in &head.headers {
        headers
            .entry(name.clone())
            .and_modify(|joined| {
                joined.push_str(", ");
                joined.push_str(value);
            })
            .or_insert_with(|| value.clone());
    }
    RequestRecord {
        seq: 0,
        connection: cx.connection,
        elapsed: cx.elapsed,
        time: cx.time,
        method: head.method.clone(),
        target: head.target.clone(),
        path: head.path.clone(),
        query: head.query.clone(),
        host: head.header("host").map(str::to_owned),
        headers,
        peer: cx.peer,
        status: cx.status,
        fault: cx.fault.to_owned(),
        rule: cx.rule,
    }
}

/// Reads and drops a request body of `length` bytes (part of which may be in `buf`).
async fn discard_body(stream: &mut TcpStream, buf: &mut Vec<u8>, length: u64) -> bool {
    let in_buf = usize::try_from(length).unwrap_or(usize::MAX).min(buf.len());
    buf.drain(..in_buf);
    let mut left = length - in_buf as u64;
    let mut scratch = [0u8; 8192];
    while left > 0 {
        let want = usize::try_from(left)
            .unwrap_or(usize::MAX)
            .min(scratch.len());
        match stream.read(&mut scratch[..want]).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => left -= n as u64,
        }
    }
    true
}

/// Answers a request that cannot be served (400, 413, 431, 501) and closes.
async fn refuse(stream: &mut TcpStream, status: u16) {
    let body = format!("{status} {}\n", http::reason(status));
    let mut head = ResponseHead::new(status);
    head.push("Content-Type", "text/plain; charset=utf-8");
    write_simple(stream, head, body.as_bytes(), false).await;
}

/// Writes a complete response with `Content-Length`, then closes unless `keep_alive`.
pub(crate) async fn write_simple(
    stream: &mut TcpStream,
    mut head: ResponseHead,
    body: &[u8],
    keep_alive: bool,
) -> bool {
    head.push("Date", http::fmt_date(SystemTime::now()));
    head.push("Content-Length", body.len().to_string());
    if !keep_alive {
        head.push("Connection", "close");
    }
    let mut bytes = head.encode();
    bytes.extend_from_slice(body);
    let written = stream.write_all(&bytes).await.is_ok() && stream.flush().await.is_ok();
    if !keep_alive {
        let _ = stream.shutdown().await;
    }
    written && keep_alive
}
