//! `--warc DIR`: every exchange on the wire as WARC records (issue 39), through rip-http's
//! [`WireTap`]. Each request sent (each retry and redirect hop too, so the archive is the
//! true network story) becomes a `request` record and, when a response came, a `response`
//! record; then a `metadata` record with our context (`application/warc-fields`): the
//! stage, which request of the fetch it was, and for a failure its category, code and
//! retryability. `request` and `metadata` are tied to the `response` by
//! `WARC-Concurrent-To` (to the `request` when no response came).
//!
//! The body stored is the one the client decoded (chunked and `Content-Encoding`
//! removed); the headers that described the wire are kept as `X-Crawler-*` (see
//! [`rip_warc::write::http`]). A record the writer refuses (a header past its bounds) or
//! cannot write (disk full) is said on stderr and counted; the fetch goes on.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rip_http::{WireAnswer, WireExchange, WireTap};
use rip_warc::write::http::{self, HttpRequest, HttpResponse};
use rip_warc::write::{Error, Record, WarcWriter, WriterConfig};

/// The tap writing WARC files.
#[derive(Debug)]
pub(crate) struct WarcTap {
    writer: Mutex<WarcWriter>,
    failed: AtomicU64,
}

impl WarcTap {
    /// A tap writing into `cfg.dir` (created when missing).
    pub(crate) fn new(cfg: WriterConfig) -> Result<Self, Error> {
        Ok(Self {
            writer: Mutex::new(WarcWriter::new(cfg)?),
            failed: AtomicU64::new(0),
        })
    }

    /// Closes the file being written (renamed without `.open`); the exchanges that could
    /// not be written, counted.
    pub(crate) fn close(&self) -> Result<u64, Error> {
        let mut w = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        w.close()?;
        Ok(self.failed.load(Ordering::Relaxed))
    }

    fn write(&self, records: &[Record]) -> Result<(), Error> {
        let mut w = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        w.write(records)
    }
}

impl WireTap for WarcTap {
    fn exchange(&self, ex: &WireExchange<'_>) {
        let written = records(ex).and_then(|r| self.write(&r));
        if let Err(e) = written
            && self.failed.fetch_add(1, Ordering::Relaxed) < 10
        {
            tracing::warn!("--warc: {} not archived: {e}", ex.url);
        }
    }
}

/// The records of one exchange: request, response (when one came), metadata.
fn records(ex: &WireExchange<'_>) -> Result<Vec<Record>, Error> {
    let request = http::request(&HttpRequest {
        url: ex.url,
        method: ex.method,
        headers: &ex.request_headers,
    })?;
    let number = ex.request_number.to_string();
    let mut fields = vec![("via", crate::STAGE), ("request", number.as_str())];
    let status;
    let retryable;
    if let Some(f) = &ex.failure {
        retryable = f.retryable.to_string();
        fields.push(("failure-category", f.category.as_str()));
        fields.push(("failure-code", &f.code));
        fields.push(("failure-retryable", &retryable));
    }
    match &ex.answer {
        WireAnswer::Response {
            status: code,
            headers,
            body,
            truncated,
            remote,
        } => {
            status = code.to_string();
            fields.push(("status", &status));
            let response = http::response(&HttpResponse {
                url: ex.url,
                status: *code,
                headers,
                body,
                decoded: true,
                truncated: *truncated,
                ip: *remote,
            })?;
            let request = request.concurrent_to(response.id())?;
            let meta = http::metadata(ex.url, response.id(), &fields)?;
            Ok(vec![request, response, meta])
        }
        WireAnswer::Transport { message, .. } => {
            fields.push(("failure-message", message));
            let meta = http::metadata(ex.url, request.id(), &fields)?;
            Ok(vec![request, meta])
        }
    }
}
