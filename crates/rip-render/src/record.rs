//! From a render to the records of the contract, and the rendered variant in the cache.
//!
//! A rendered page is cached under its own key, [`cache_key`] (`rip-render:` before the
//! ref's URL), beside the raw response of the same URL: the DOM as the body, the raw
//! response's status, headers and redirects, and the `render` object in a pseudo-header
//! ([`RENDER_HEADER`], never sent nor received). A rerun finds it and writes the page
//! without opening the browser; `--cache off`, `--ttl` or `write-only` render again.

use bytes::Bytes;
use chrono::Utc;
use rip_core::{BodyEncoding, ErrorCategory, Failure, Page, Phase, Record, Ref, Rendered};
use rip_http::records::{failure_record, page_record};
use rip_http::{Classification, FetchFailure, Fetcher, RequestStats, Response};

use crate::STAGE;

/// The pseudo-header of a cached render holding its `render` object (JSON).
pub const RENDER_HEADER: &str = "x-rip-render";

/// Bytes of a timed-out page's DOM kept on its failure, at most.
const SEEN_BODY: usize = 64 << 10;

/// The cache key of a URL's rendered variant.
pub fn cache_key(url: &str) -> String {
    format!("rip-render:{url}")
}

/// True when a response is a document the browser should render (HTML or XHTML, or no
/// type and a body that looks like markup).
pub fn is_html(resp: &Response) -> bool {
    match resp.content_type() {
        Some(ct) => {
            let ct = ct.to_ascii_lowercase();
            ct.contains("text/html") || ct.contains("application/xhtml")
        }
        None => resp.body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'<'),
    }
}

/// The page record of a rendered document: the raw response's record with the DOM as
/// its body and the `render` object.
pub fn rendered_page(
    r: &Ref,
    doc: &Response,
    stats: &RequestStats,
    html: String,
    truncated: bool,
    info: Rendered,
) -> Page {
    let mut page = page_record(r, doc, stats);
    page.body = html;
    page.body_encoding = BodyEncoding::Text;
    page.truncated = doc.truncated || truncated;
    page.render = Some(info);
    page
}

/// Stores a render in the cache (when the cache mode writes).
pub async fn remember(
    fetcher: &Fetcher,
    r: &Ref,
    doc: &Response,
    stats: &RequestStats,
    page: &Page,
) {
    let Some(info) = &page.render else { return };
    let mut headers = doc.headers.clone();
    headers.retain(|(k, _)| k != RENDER_HEADER);
    headers.push((
        RENDER_HEADER.into(),
        serde_json::to_string(info).unwrap_or_default(),
    ));
    let stored = Response {
        final_url: doc.final_url.clone(),
        status: doc.status,
        headers,
        body: Bytes::from(page.body.clone()),
        truncated: page.truncated,
        redirects: doc.redirects.clone(),
        fetched_at: doc.fetched_at,
    };
    fetcher
        .remember(&cache_key(&r.url), &stored, stats.site.as_ref())
        .await;
}

/// The page record of a render read back from the cache, or `None` when the entry is not
/// one (no `render` pseudo-header).
pub fn cached_page(r: &Ref, resp: &Response, site: Option<rip_core::SiteFetch>) -> Option<Page> {
    let info: Rendered = serde_json::from_str(resp.header(RENDER_HEADER)?).ok()?;
    let stats = RequestStats {
        from_cache: true,
        site,
        ..RequestStats::default()
    };
    let mut page = page_record(r, resp, &stats);
    page.body = dom_text(&resp.body, resp.truncated);
    page.body_encoding = BodyEncoding::Text;
    page.render = Some(info);
    Some(page)
}

/// A rendered DOM read back from the cache: UTF-8, as it was written. A body the fetcher
/// cut at a smaller body limit than it was stored under loses the part of a character cut
/// in two, as the tab's own cut does (it cuts at a character boundary).
fn dom_text(body: &[u8], cut: bool) -> String {
    let whole = match std::str::from_utf8(body) {
        Err(e) if cut && e.error_len().is_none() => &body[..e.valid_up_to()],
        _ => body,
    };
    String::from_utf8_lossy(whole).into_owned()
}

/// A failure of the render itself (the document was fetched; the browser could not make
/// a page of it).
pub struct RenderFailure {
    /// Its category.
    pub category: ErrorCategory,
    /// Whether another round may help.
    pub retryable: bool,
    /// Its stable code (`render.timeout`, `render.crashed`, …).
    pub code: &'static str,
    /// What happened, in words.
    pub message: String,
    /// The DOM as far as it was seen (a timed-out page).
    pub seen: Option<String>,
    /// The render as far as it went (its script errors and failed requests show why).
    pub info: Option<Rendered>,
}

/// The `failure` record of a render that failed.
pub fn failure(r: &Ref, doc: Option<&Response>, stats: &RequestStats, f: RenderFailure) -> Record {
    let seen = f.seen.map(|mut s| {
        if s.len() > SEEN_BODY {
            let mut at = SEEN_BODY;
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            s.truncate(at);
        }
        Bytes::from(s)
    });
    let fetch_failure = FetchFailure {
        class: Classification {
            category: f.category,
            retryable: f.retryable,
            code: f.code.to_owned(),
            message: f.message,
            retry_after: None,
        },
        status: None,
        final_url: doc.map(|d| d.final_url.clone()),
        content_type: seen.as_ref().map(|_| "text/html; charset=utf-8".to_owned()),
        body: seen,
    };
    let mut failure: Failure = failure_record(r, &fetch_failure, stats, Phase::Fetch, STAGE);
    failure.failed_at = Some(Utc::now());
    if let Some(info) = f.info
        && let Ok(v) = serde_json::to_value(info)
    {
        failure.extra.insert("render".into(), v);
    }
    Record::Failure(failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(ct: Option<&str>, body: &str) -> Response {
        Response {
            final_url: "http://h/a".into(),
            status: 200,
            headers: ct
                .map(|c| vec![("content-type".to_owned(), c.to_owned())])
                .unwrap_or_default(),
            body: Bytes::from(body.to_owned()),
            truncated: false,
            redirects: Vec::new(),
            fetched_at: Utc::now(),
        }
    }

    #[test]
    fn only_markup_is_rendered() {
        assert!(is_html(&response(Some("text/html; charset=utf-8"), "")));
        assert!(is_html(&response(Some("application/xhtml+xml"), "")));
        assert!(!is_html(&response(Some("application/json"), "{}")));
        assert!(!is_html(&response(Some("image/png"), "<")));
        assert!(is_html(&response(None, "  <!doctype html>")));
        assert!(!is_html(&response(None, "plain")));
    }

    #[test]
    fn a_cached_render_reads_back_as_the_page_it_was() {
        let r = Ref::new("http://h/a");
        let doc = response(Some("text/html; charset=windows-1252"), "<p>raw");
        let info = Rendered {
            browser: "Chromium/1".into(),
            wait: "load".into(),
            render_ms: 12,
            ..Rendered::default()
        };
        let page = rendered_page(
            &r,
            &doc,
            &RequestStats::default(),
            "<html><body><p>café</p></body></html>".into(),
            false,
            info.clone(),
        );
        let mut headers = doc.headers.clone();
        headers.push((RENDER_HEADER.into(), serde_json::to_string(&info).unwrap()));
        let stored = Response {
            headers,
            body: Bytes::from(page.body.clone()),
            ..doc.clone()
        };
        let back = cached_page(&r, &stored, None).unwrap();
        assert_eq!(back.body, page.body, "UTF-8 whatever the header said");
        assert_eq!(back.render, Some(info));
        assert!(back.from_cache);
        assert!(
            !back.headers.contains_key(RENDER_HEADER),
            "the pseudo-header is not a page header"
        );
        assert!(
            cached_page(&r, &doc, None).is_none(),
            "a raw entry is no render"
        );
    }

    #[test]
    fn a_cached_render_cut_in_a_character_ends_before_it() {
        // A reader with a smaller --max-body than the writer's gets the DOM cut by the
        // fetcher at a byte; the page ends where the tab's cut would have (no U+FFFD).
        let r = Ref::new("http://h/a");
        let info = serde_json::to_string(&Rendered::default()).unwrap();
        let mut stored = response(Some("text/html"), "<p>caf\u{e9}</p>");
        stored.headers.push((RENDER_HEADER.into(), info));
        stored.body = stored.body.slice(..7);
        stored.truncated = true;
        let back = cached_page(&r, &stored, None).unwrap();
        assert_eq!(back.body, "<p>caf");
        assert!(back.truncated);
        stored.truncated = false;
        let whole = cached_page(&r, &stored, None).unwrap();
        assert_eq!(
            whole.body, "<p>caf\u{fffd}",
            "a body not cut is read as it is"
        );
    }
}
