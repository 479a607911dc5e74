//! The MediaWiki Action API without the HTTP: the requests the wiki lister (`rip-wikilist`,
//! run by `rip-discover --mediawiki`) and rip-fetch send to a wiki, and what they make of its
//! answers. Sending is rip-http's job (rate limits, retries, cache); this crate builds
//! [`ApiRequest`]s and parses the bodies that come back, so both speak to a wiki the same way.
//!
//! - **Enumeration** ([`list_request`], [`parse_list`]): every page of a namespace
//!   (`list=allpages`) or the members of one category (`list=categorymembers`), a page at a
//!   time; send each answer's `continue` back until there is none.
//! - **Batch fetch** ([`revisions_request`], [`parse_revisions`]): the current wikitext of up
//!   to [`MAX_BATCH`] (50) titles per request, redirects followed, `maxlag` sent. Each
//!   requested title gets a [`TitleOutcome`]: found (with page id, revision id, the redirect
//!   it came through), missing (never created or deleted: a failure with code
//!   [`MISSING_CODE`], category PERMANENT), invalid, or pending (MediaWiki cut the answer at
//!   its size limit; send the same titles again with the answer's `continue`).
//! - **Errors** ([`ApiError`], [`classify`]): `{"error": {"code": …}}` answers classified by
//!   code: `maxlag`/`readonly`/`ratelimited` are THROTTLED, with the `Retry-After` wait.
//! - **Template expansion** ([`expand_request`], [`ExpandBatch::parse`]): many template
//!   calls in one `action=expandtemplates` request, between separators, and the answer
//!   split back into one expansion per call.
//! - **Article URLs** ([`siteinfo_request`], [`SiteInfo::article_url`]): the identity URL of
//!   a wiki page, built as MediaWiki builds it.
//!
//! Tested against the real MediaWiki of `scripts/mediawiki` (crate `rip-testwiki`).

#![deny(missing_docs)]

mod answer;
mod error;
mod expand;
#[cfg(feature = "http")]
pub mod http;
mod request;

pub use answer::{
    BatchAnswer, ListAnswer, Listed, Revision, SiteInfo, TitleOutcome, parse_list, parse_revisions,
    parse_siteinfo, wiki_urlencode,
};
pub use error::{AnswerError, ApiError, DEFAULT_MAXLAG_WAIT, classify};
pub use expand::{ExpandBatch, expand_request};
pub use request::{
    ApiRequest, Continue, Limit, List, MAX_BATCH, MAX_GET_URL, category_title, list_request,
    revisions_request, siteinfo_request,
};

/// The error code of a title that does not exist (or no longer does).
pub const MISSING_CODE: &str = "wiki.missing";

/// The error code of a title MediaWiki calls invalid (or an interwiki or special page).
pub const INVALID_CODE: &str = "wiki.invalid";

/// The content type of a page holding wikitext.
pub const WIKITEXT_CONTENT_TYPE: &str = "text/x-wiki";
