//! `resource` records: content got without a protocol exchange of its own. rip-render
//! writes the DOM of each page it rendered as one ([`rendered_dom`]).
//!
//! Why a `resource` and not a `conversion`: WARC 1.1 keeps `conversion` for "an alternative
//! version of another record's content" (a format migration of one record), while a
//! rendered DOM is made from the document, its scripts and their data together, by running
//! them; and replay tools index `resource` records (pywb's `cdxj-indexer` and
//! `rip-warc index` list `response`, `revisit`, `resource` and `metadata`, not
//! `conversion`), so the DOM can be found and replayed. Browser-based archivers write what
//! the browser made as `resource` records under a URN of their own (Browsertrix's
//! `urn:text:` and `urn:view:`, brozzler's `screenshot:`); the DOM's is `urn:dom:` and the
//! page's URL, so it never stands in for the page's own response in replay.
//!
//! The record is tied to the page's `response` by `WARC-Concurrent-To` (the standard keeps
//! `WARC-Refers-To` off `resource` records).

use url::Url;

use super::{Error, Record, RecordId};
use crate::record::{RecordType, field};

/// How a rendered DOM's `WARC-Target-URI` starts: `urn:dom:` and the page's URL.
pub const DOM_URI_PREFIX: &str = "urn:dom:";

/// The `WARC-Target-URI` of the DOM rendered from `page`.
#[must_use]
pub fn dom_uri(page: &Url) -> String {
    format!("{DOM_URI_PREFIX}{page}")
}

/// A rendered page's DOM.
#[derive(Debug, Clone, Copy)]
pub struct RenderedDom<'a> {
    /// The page's URL (the document's final URL).
    pub page: &'a Url,
    /// The DOM, serialized as HTML.
    pub html: &'a str,
    /// The page's `response` record (or `revisit`), when one was written.
    pub response: Option<&'a RecordId>,
    /// The DOM was cut at the body limit (`WARC-Truncated: length`).
    pub truncated: bool,
}

/// The `resource` record of a rendered DOM: `WARC-Target-URI` [`dom_uri`], `Content-Type`
/// `text/html; charset=utf-8`, `WARC-Concurrent-To` the page's response when known.
pub fn rendered_dom(dom: &RenderedDom<'_>) -> Result<Record, Error> {
    let mut r = Record::new(RecordType::Resource, dom.html.as_bytes().to_vec())
        .target_uri(&dom_uri(dom.page))?
        .content_type("text/html; charset=utf-8")?;
    if let Some(id) = dom.response {
        r = r.concurrent_to(id)?;
    }
    if dom.truncated {
        r = r.header(field::TRUNCATED, "length")?;
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dom_record_names_its_page_and_response() {
        let page = Url::parse("http://example.com/app/?view=a").expect("url");
        let response = RecordId::random();
        let dom = RenderedDom {
            page: &page,
            html: "<html><body><li>Ann</li></body></html>",
            response: Some(&response),
            truncated: true,
        };
        let text =
            String::from_utf8(rendered_dom(&dom).expect("record").encode(None)).expect("utf-8");
        assert!(text.contains("WARC-Type: resource\r\n"), "{text}");
        let uri = "WARC-Target-URI: urn:dom:http://example.com/app/?view=a\r\n";
        assert!(text.contains(uri), "{text}");
        let tie = format!("WARC-Concurrent-To: {response}\r\n");
        assert!(text.contains(&tie), "{text}");
        assert!(text.contains("WARC-Truncated: length\r\n"), "{text}");
        assert!(text.contains("Content-Type: text/html; charset=utf-8\r\n"));
        assert!(
            text.ends_with("<li>Ann</li></body></html>\r\n\r\n"),
            "{text}"
        );
    }
}
