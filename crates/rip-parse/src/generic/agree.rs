//! The streaming pass checked against the tree: the one statement of what
//! [`extract_streaming`](super::extract_streaming) promises, which the differential tests,
//! the html5lib suite and the `stream_vs_tree` fuzz target all hold it to.

use serde_json::Value;
use url::Url;

use super::{extract, extract_streaming};
use crate::dom::{ParseLimits, parse};

/// How the streaming pass did on a page, against the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agreement {
    /// It read the page and gave the tree's fields.
    Streamed,
    /// It gave the page up (or the tree refused it, and so did the pass): the tree reads it.
    GaveUp,
    /// It read the page and gave other fields than the tree's: what differs. A bug.
    Differs(String),
}

/// Extracts `html` at `page_url` both ways (Markdown on) and compares: the streaming pass
/// either gives the page up or gives exactly the tree's title and fields, and it never
/// reads a page the tree refuses.
pub fn streaming_agrees(html: &str, page_url: &Url, limits: ParseLimits) -> Agreement {
    let Ok(tree) = parse(html, limits) else {
        return match extract_streaming(html, page_url, true, limits) {
            Err(_) => Agreement::GaveUp,
            Ok(_) => Agreement::Differs("the tree refused it, the stream read it".into()),
        };
    };
    let mut want = extract(&tree, page_url, true);
    let Ok(mut got) = extract_streaming(html, page_url, true, limits) else {
        return Agreement::GaveUp;
    };
    let (got_title, want_title) = (got.title.take(), want.title.take());
    if got_title != want_title {
        return Agreement::Differs(format!("title: {got_title:?}, not {want_title:?}"));
    }
    let (got, want) = (
        Value::Object(got.into_fields()),
        Value::Object(want.into_fields()),
    );
    if got != want {
        return Agreement::Differs(format!("fields: {got}\n   the tree's: {want}"));
    }
    Agreement::Streamed
}
