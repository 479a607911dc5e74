//! One archived record to the record of the contract: a `response` (or an HTML
//! `resource`) to the `page` rip-fetch would have written for it, a `failure` for an
//! error status or a block that is not a response, and a [`Made::Skip`] for what is not
//! a page (requests, metadata, redirects, DNS records).

use bytes::Bytes;
use chrono::{DateTime, Utc};
use rip_core::{Context, ErrorCategory, ErrorEntry, Failure, Page, Phase, Record, Ref};
use rip_http::classify::{Classifier, Observation};
use rip_http::records::page_record;
use rip_http::{RequestStats, Response};

use super::archive::{Damage, RawRecord};
use super::header::Limits;
use super::http::parse_response;
use crate::record::{RecordType, field};

/// The stage's name, in summaries, ledgers and error entries.
pub const STAGE: &str = "rip-warc";

/// What one archived record becomes.
#[derive(Debug)]
pub enum Made {
    /// A `page` or `failure`.
    Record(Box<Record>),
    /// Not a page: the counter it is counted under (`redirects`, `requests`, …).
    Skip(&'static str),
    /// A `revisit`: its body is the one of the record it refers to.
    Revisit,
}

/// Where a record was read: the file as named, and the URL a damaged record without one
/// is known by (`file:///…/crawl.warc.gz#offset=1234`).
#[derive(Debug, Clone)]
pub struct Origin {
    /// The file as named on the command line (`-` for stdin).
    pub name: String,
    /// `file://` and the file's absolute path (`file:///dev/stdin` for stdin).
    pub url: String,
}

/// A record's `WARC-Target-URI`, without the angle brackets some writers put around it.
#[must_use]
pub fn target_uri(record: &RawRecord) -> Option<&str> {
    let uri = record.header.get(field::TARGET_URI)?;
    Some(uri.trim_start_matches('<').trim_end_matches('>'))
}

/// The `page`, `failure` or skip that `record` makes.
#[must_use]
pub fn convert(record: &RawRecord, origin: &Origin, limits: &Limits) -> Made {
    let kind = record.header.get(field::TYPE).and_then(RecordType::parse);
    let Some(url) = target_uri(record).filter(|u| u.starts_with("http")) else {
        return Made::Skip(match kind {
            Some(RecordType::Warcinfo) => "warcinfo",
            _ => "notHttp",
        });
    };
    match kind {
        Some(RecordType::Response) => response(record, url, origin, limits),
        Some(RecordType::Resource) => resource(record, url, origin, limits),
        Some(RecordType::Revisit) => Made::Revisit,
        Some(RecordType::Request) => Made::Skip("requests"),
        _ => Made::Skip("otherRecords"),
    }
}

fn fetched_at(record: &RawRecord) -> Option<DateTime<Utc>> {
    let date = record.header.get(field::DATE)?;
    DateTime::parse_from_rfc3339(date)
        .ok()
        .map(|d| d.with_timezone(&Utc))
}

fn response(record: &RawRecord, url: &str, origin: &Origin, limits: &Limits) -> Made {
    let Some(at) = fetched_at(record) else {
        return bad(record, url, origin, "warc.header", "no valid WARC-Date");
    };
    let resp = match parse_response(&record.block, limits.max_body) {
        Ok(resp) => resp,
        Err(e) => return bad(record, url, origin, "warc.http", &e.to_string()),
    };
    let content_type = resp.header("content-type").map(str::to_owned);
    match resp.status {
        200..=299 => {}
        300..=399 => return Made::Skip("redirects"),
        100..=199 => return Made::Skip("informational"),
        status => {
            let host = url::Url::parse(url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
                .unwrap_or_default();
            let obs = Observation::Status {
                status,
                retry_after: resp.header("retry-after"),
            };
            let class = Classifier::default().classify(&host, &obs, std::time::SystemTime::now());
            let mut failure = failure(url, class.category, &class.code, &class.message);
            failure.status = Some(status);
            failure.retryable = class.retryable;
            failure.retry_after_ms = class.retry_after.map(|d| d.as_millis() as u64);
            failure.final_url = Some(url.to_owned());
            failure.content_type = content_type;
            failure.failed_at = Some(at);
            return Made::Record(Box::new(Record::Failure(failure)));
        }
    }
    let truncated = resp.truncated || record.header.get(field::TRUNCATED).is_some();
    let body = Bytes::from(resp.body.into_owned());
    let page = page(url, resp.status, resp.headers, body, truncated, at);
    Made::Record(Box::new(Record::Page(page)))
}

fn resource(record: &RawRecord, url: &str, origin: &Origin, limits: &Limits) -> Made {
    let content_type = record.header.get(field::CONTENT_TYPE).map(str::to_owned);
    let html = content_type.as_deref().is_some_and(|ct| {
        let essence = rip_core::media_type(ct);
        essence == "text/html" || essence == "application/xhtml+xml"
    });
    if !html {
        return Made::Skip("resources");
    }
    let Some(at) = fetched_at(record) else {
        return bad(record, url, origin, "warc.header", "no valid WARC-Date");
    };
    let cut = record.block.len() as u64 > limits.max_body;
    let body = &record.block[..record.block.len().min(limits.max_body as usize)];
    let truncated = cut || record.header.get(field::TRUNCATED).is_some();
    let headers = content_type
        .map(|ct| vec![("content-type".to_owned(), ct)])
        .unwrap_or_default();
    let page = page(
        url,
        200,
        headers,
        Bytes::copy_from_slice(body),
        truncated,
        at,
    );
    Made::Record(Box::new(Record::Page(page)))
}

/// The `page` rip-fetch would write for this response: rip-http's own page builder
/// (body decoding, kept headers), no request made, nothing from a cache.
fn page(
    url: &str,
    status: u16,
    headers: Vec<(String, String)>,
    body: Bytes,
    truncated: bool,
    at: DateTime<Utc>,
) -> Page {
    let response = Response {
        final_url: url.to_owned(),
        status,
        headers,
        body,
        truncated,
        redirects: Vec::new(),
        fetched_at: at,
    };
    page_record(&Ref::new(url), &response, &RequestStats::default())
}

/// A first-round `failure` of `url`, phase `fetch`, not retryable.
pub(super) fn failure(url: &str, category: ErrorCategory, code: &str, message: &str) -> Failure {
    let mut entry = ErrorEntry::new(code, message, STAGE);
    entry.attempt = Some(1);
    Failure {
        url: url.to_owned(),
        status: None,
        category,
        retryable: false,
        attempt: 1,
        http_attempts: 0,
        phase: Phase::Fetch,
        context: Context::default(),
        retry_after_ms: None,
        errors: vec![entry],
        final_url: None,
        content_type: None,
        body: None,
        elapsed_ms: None,
        failed_at: Some(Utc::now()),
        resolving: Vec::new(),
        extra: Default::default(),
    }
}

fn bad(record: &RawRecord, url: &str, origin: &Origin, code: &str, what: &str) -> Made {
    let message = format!(
        "{}: record at offset {}: {what}",
        origin.name, record.offset
    );
    let failure = failure(url, ErrorCategory::Validation, code, &message);
    Made::Record(Box::new(Record::Failure(failure)))
}

/// The `failure` for a damaged record: its URL when its header gave one, else the file's
/// URL with the offset (`file:///…/crawl.warc.gz#offset=1234`).
#[must_use]
pub fn damaged(damage: &Damage, origin: &Origin) -> Failure {
    use super::archive::ReadError;
    let (code, category) = match &damage.error {
        ReadError::TooLarge { .. } => ("warc.tooLarge", ErrorCategory::Resource),
        ReadError::Truncated { .. } | ReadError::BlockEnd(_) => {
            ("warc.truncated", ErrorCategory::Validation)
        }
        ReadError::Gzip(_) | ReadError::NotGzip => ("warc.gzip", ErrorCategory::Validation),
        ReadError::Header(_) => ("warc.header", ErrorCategory::Validation),
    };
    let url = damage
        .target_uri
        .clone()
        .unwrap_or_else(|| format!("{}#offset={}", origin.url, damage.offset));
    let message = format!(
        "{}: record at offset {}: {}",
        origin.name, damage.offset, damage.error
    );
    failure(&url, category, code, &message)
}
