//! Every exchange on the wire as WARC records, through rip-http's [`WireTap`]: what a
//! fetching stage's `--warc DIR` sets on its fetcher (`rip-fetch`; `rip-discover` and
//! `rip-render` fetch through the same [`rip_http::Fetcher`]). Each request sent (each retry and redirect hop too, so the archive is the
//! true network story) becomes a `request` record and, when a response came, a `response`
//! record; then a `metadata` record with our context (`application/warc-fields`): the
//! stage, which request of the fetch it was, and for a failure its category, code and
//! retryability. `request` and `metadata` are tied to the `response` by
//! `WARC-Concurrent-To` (to the `request` when no response came).
//!
//! A `2xx` whose body (its SHA-1) was already stored in this run is written as a `revisit`
//! (`identical-payload-digest`, referring to the first record), and a `304` to a
//! revalidation as a `revisit` (`server-not-modified`): no body is stored twice by one
//! process. The payloads remembered are at most [`MAX_REMEMBERED`] (the first ones; later
//! ones are stored whole), about 150 bytes each.
//!
//! The body stored is the one the client decoded (chunked and `Content-Encoding`
//! removed); the headers that described the wire are kept as `X-Crawler-*` (see
//! [`http`]). A record the writer refuses (a header past its bounds) or
//! cannot write (disk full) is said on stderr and counted; the fetch goes on.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::http::{self, HttpRequest, HttpResponse, RefersTo};
use super::{Compression, Error, Record, RecordId, WarcWriter, WriterConfig};
use crate::record::field;
use rip_http::{WireAnswer, WireExchange, WireTap};

/// Payload digests remembered for revisits, at most (about 15 MB).
pub const MAX_REMEMBERED: usize = 100_000;

/// The first record that stored a payload: id, target URI, date.
type Stored = (RecordId, String, String);

/// Response records' ids remembered by URL at most, when asked
/// ([`WarcTap::remembering_responses`]); past it the memory starts again empty.
pub const MAX_RESPONSE_IDS: usize = 10_000;

/// The tap writing WARC files: set it on a fetcher with
/// [`Fetcher::set_tap`](rip_http::Fetcher::set_tap), [`close`](Self::close) it at the end.
#[derive(Debug)]
pub struct WarcTap {
    via: String,
    compression: Compression,
    writer: Mutex<WarcWriter>,
    failed: AtomicU64,
    /// Payload digest → the record that stored it.
    stored: Mutex<HashMap<String, Stored>>,
    /// URL → the id of its last `response` or `revisit` record, when asked.
    responses: Option<Mutex<HashMap<String, RecordId>>>,
}

impl WarcTap {
    /// A tap writing into `cfg.dir` (created when missing), its metadata records naming
    /// `via` (the stage).
    pub fn new(cfg: WriterConfig, via: &str) -> Result<Self, Error> {
        Ok(Self {
            via: via.to_owned(),
            compression: cfg.compression,
            writer: Mutex::new(WarcWriter::new(cfg)?),
            failed: AtomicU64::new(0),
            stored: Mutex::new(HashMap::new()),
            responses: None,
        })
    }

    /// This tap, remembering the id of the last `response` (or `revisit`) record of each
    /// URL (at most [`MAX_RESPONSE_IDS`]), for [`response_id`](Self::response_id): a stage
    /// writing records of its own about a response (rip-render's rendered DOM) ties them
    /// to it.
    #[must_use]
    pub fn remembering_responses(mut self) -> Self {
        self.responses = Some(Mutex::new(HashMap::new()));
        self
    }

    /// The id of the last `response` or `revisit` record written for `url`, when this tap
    /// remembers them and one was (none for a cache hit: nothing went over the wire).
    pub fn response_id(&self, url: &url::Url) -> Option<RecordId> {
        let responses = self.responses.as_ref()?;
        let map = responses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.get(url.as_str()).cloned()
    }

    /// Writes `records` of the stage's own (a `resource`) into the file being written,
    /// beside the exchanges' records.
    pub fn write_records(&self, records: &[Record]) -> Result<(), Error> {
        self.write(records)
    }

    fn remember_response(&self, url: &url::Url, id: &RecordId) {
        let Some(responses) = &self.responses else {
            return;
        };
        let mut map = responses
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if map.len() >= MAX_RESPONSE_IDS {
            map.clear();
        }
        map.insert(url.as_str().to_owned(), id.clone());
    }

    /// Closes the file being written (renamed without `.open`); the exchanges that could
    /// not be written, counted.
    pub fn close(&self) -> Result<u64, Error> {
        let mut w = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        w.close()?;
        Ok(self.failed.load(Ordering::Relaxed))
    }

    /// Writes `records`, compressed outside the lock (the file they are for is asked
    /// first; when it was closed meanwhile, they are written again for the next one).
    fn write(&self, records: &[Record]) -> Result<(), Error> {
        let lock = || {
            self.writer
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        let warcinfo = lock().warcinfo()?;
        let members = super::encode(records, &warcinfo, self.compression);
        let mut w = lock();
        if !w.write_encoded(&warcinfo, &members)? {
            w.write(records)?;
        }
        Ok(())
    }
}

impl WireTap for WarcTap {
    fn exchange(&self, ex: &WireExchange<'_>) {
        let written = self.records(ex).and_then(|r| self.write(&r));
        if let Err(e) = written
            && self.failed.fetch_add(1, Ordering::Relaxed) < 10
        {
            tracing::warn!("--warc: {} not archived: {e}", ex.url);
        }
    }
}

impl WarcTap {
    /// The records of one exchange: request, response or revisit (when an answer came),
    /// metadata.
    fn records(&self, ex: &WireExchange<'_>) -> Result<Vec<Record>, Error> {
        let request = http::request(&HttpRequest {
            url: ex.url,
            method: ex.method,
            headers: &ex.request_headers,
            body: ex.request_body,
        })?;
        let mut fields = Fields::of(ex, &self.via);
        let WireAnswer::Response {
            status,
            headers,
            body,
            truncated,
            remote,
        } = &ex.answer
        else {
            let meta = http::metadata(ex.url, request.id(), &fields.list())?;
            return Ok(vec![request, meta]);
        };
        fields.status = Some(status.to_string());
        let res = HttpResponse {
            url: ex.url,
            status: *status,
            headers,
            body,
            decoded: true,
            truncated: *truncated,
            ip: *remote,
        };
        let response = self.response_or_revisit(&res)?;
        self.remember_response(ex.url, response.id());
        let request = request.concurrent_to(response.id())?;
        let meta = http::metadata(ex.url, response.id(), &fields.list())?;
        Ok(vec![request, response, meta])
    }

    /// The response record, or a revisit when the payload was stored before in this run
    /// or the answer is a 304.
    fn response_or_revisit(&self, res: &HttpResponse<'_>) -> Result<Record, Error> {
        if res.status == 304 {
            let refers = RefersTo {
                id: None,
                uri: res.url.as_str(),
                date: None,
            };
            return http::revisit(res, &refers, "");
        }
        let response = http::response(res)?;
        if !(200..300).contains(&res.status) || res.truncated || res.body.is_empty() {
            return Ok(response);
        }
        let Some(digest) = response.header_value(field::PAYLOAD_DIGEST) else {
            return Ok(response);
        };
        let mut stored = self
            .stored
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((id, uri, date)) = stored.get(digest) {
            let refers = RefersTo {
                id: Some(id),
                uri,
                date: Some(date),
            };
            return http::revisit(res, &refers, digest);
        }
        if stored.len() < MAX_REMEMBERED {
            let first = (
                response.id().clone(),
                res.url.to_string(),
                response.date().to_owned(),
            );
            stored.insert(digest.to_owned(), first);
        }
        Ok(response)
    }
}

/// The `metadata` record's fields.
struct Fields {
    via: String,
    request: String,
    status: Option<String>,
    failure: Option<(&'static str, String, String)>,
    message: Option<String>,
}

impl Fields {
    fn of(ex: &WireExchange<'_>, via: &str) -> Self {
        Self {
            via: via.to_owned(),
            request: ex.request_number.to_string(),
            status: None,
            failure: ex
                .failure
                .as_ref()
                .map(|f| (f.category.as_str(), f.code.clone(), f.retryable.to_string())),
            message: match &ex.answer {
                WireAnswer::Transport { message, .. } => Some((*message).to_owned()),
                WireAnswer::Response { .. } => None,
            },
        }
    }

    fn list(&self) -> Vec<(&str, &str)> {
        let mut v = vec![
            ("via", self.via.as_str()),
            ("request", self.request.as_str()),
        ];
        if let Some(s) = &self.status {
            v.push(("status", s));
        }
        if let Some((category, code, retryable)) = &self.failure {
            v.push(("failure-category", category));
            v.push(("failure-code", code));
            v.push(("failure-retryable", retryable));
        }
        if let Some(m) = &self.message {
            v.push(("failure-message", m));
        }
        v
    }
}
