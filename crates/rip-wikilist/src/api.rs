//! Reading the wiki's lists: `meta=siteinfo` first, then each list of titles an answer at a
//! time, its `continue` sent back until there is none.

use std::collections::HashSet;

use rip_core::ErrorCategory;
use rip_http::{Fetcher, Outcome};
use rip_mediawiki::{Continue, Limit, List, ListAnswer, Listed, SiteInfo};
use url::Url;

use crate::{MAX_LIST_PAGES, MAXLAG};

/// Counters of a MediaWiki run.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    pub requests: u64,
    pub listed: u64,
    pub duplicates: u64,
    pub cut: u64,
    pub failed_lists: u64,
}

/// A list that could not be read to its end.
pub(crate) struct ListFailure {
    pub request: String,
    pub category: ErrorCategory,
    pub code: String,
    pub message: String,
    pub status: Option<u16>,
}

impl ListFailure {
    fn new(
        request: &Url,
        category: ErrorCategory,
        code: &str,
        message: String,
        status: Option<u16>,
    ) -> Self {
        Self {
            request: request.to_string(),
            category,
            code: code.to_owned(),
            message,
            status,
        }
    }
}

/// The titles listed so far (each is written once).
#[derive(Debug, Default)]
pub(crate) struct Titles {
    seen: HashSet<String>,
}

impl Titles {
    /// Titles written before (a resumed listing).
    pub fn of(written: Vec<String>) -> Self {
        Self {
            seen: written.into_iter().collect(),
        }
    }

    /// The titles of `items` not listed before, in order; counts each listed and duplicate.
    pub fn add(&mut self, items: Vec<Listed>, counts: &mut Counts) -> Vec<String> {
        let mut new = Vec::new();
        for item in items {
            counts.listed += 1;
            if self.seen.insert(item.title.clone()) {
                new.push(item.title);
            } else {
                counts.duplicates += 1;
            }
        }
        new
    }
}

/// The API's asker: the fetcher, the endpoint, the counters.
pub(crate) struct Lister {
    pub fetcher: Fetcher,
    pub api: Url,
    pub counts: Counts,
}

pub(crate) async fn site_info(fetcher: &Fetcher, api: &Url) -> Result<SiteInfo, ListFailure> {
    let req = rip_mediawiki::siteinfo_request(api);
    let fetched = fetcher
        .call_api(req.url.as_str(), None, &rip_mediawiki::http::check)
        .await;
    let fail = |category, code: &str, message: String, status| {
        let message = format!("cannot read the wiki's site information: {message}");
        ListFailure::new(&req.url, category, code, message, status)
    };
    match fetched.outcome {
        Outcome::Page(resp) => rip_mediawiki::parse_siteinfo(&resp.body).map_err(|e| {
            fail(
                e.category(),
                &e.error_code(),
                e.to_string(),
                Some(resp.status),
            )
        }),
        Outcome::Failure(f) => Err(fail(
            f.class.category,
            &f.class.code,
            f.class.message,
            f.status,
        )),
        Outcome::Skipped(s) => Err(fail(
            ErrorCategory::Validation,
            "wiki.skipped",
            s.reason.to_string(),
            None,
        )),
    }
}

/// One answer of a list, with the request and status a failure after it names.
pub(crate) struct ListPage {
    pub answer: ListAnswer,
    request: Url,
    status: u16,
}

impl Lister {
    /// The `continue` of the answer after `page` (`None`: the list is done), or a failure
    /// when the API would never end it (the same `continue` twice, or more than
    /// [`MAX_LIST_PAGES`] answers: `answers` is how many were read).
    pub(crate) fn next(
        &self,
        page: &ListPage,
        cont: &Continue,
        answers: usize,
    ) -> Result<Option<Continue>, ListFailure> {
        match &page.answer.cont {
            Some(c) if c == cont => Err(ListFailure::new(
                &page.request,
                ErrorCategory::Validation,
                "wiki.badAnswer",
                "the API sent the same `continue` twice: the list would never end".into(),
                Some(page.status),
            )),
            Some(_) if answers >= MAX_LIST_PAGES => Err(ListFailure::new(
                &self.api,
                ErrorCategory::Resource,
                "wiki.listTooLong",
                format!("more than {MAX_LIST_PAGES} answers of titles"),
                None,
            )),
            next => Ok(next.clone()),
        }
    }

    /// Asks for the answer of `list` after `cont` (with `maxlag` on a GET).
    pub(crate) async fn list_page(
        &mut self,
        list: &List,
        limit: Limit,
        cont: &Continue,
    ) -> Result<ListPage, ListFailure> {
        let mut req = rip_mediawiki::list_request(&self.api, list, limit, cont);
        if req.form.is_none() {
            req.url
                .query_pairs_mut()
                .append_pair("maxlag", &MAXLAG.to_string());
        }
        self.counts.requests += 1;
        let fetched = self
            .fetcher
            .call_api(
                req.url.as_str(),
                req.form.as_deref(),
                &rip_mediawiki::http::check,
            )
            .await;
        let fail = |category, code: &str, message: String, status| {
            ListFailure::new(&req.url, category, code, message, status)
        };
        let resp = match fetched.outcome {
            Outcome::Page(resp) => resp,
            Outcome::Failure(f) => {
                return Err(fail(
                    f.class.category,
                    &f.class.code,
                    f.class.message,
                    f.status,
                ));
            }
            Outcome::Skipped(s) => {
                return Err(fail(
                    ErrorCategory::Validation,
                    "wiki.skipped",
                    format!("the API request was not sent: {}", s.reason),
                    None,
                ));
            }
        };
        let answer = rip_mediawiki::parse_list(list, &resp.body).map_err(|e| {
            fail(
                e.category(),
                &e.error_code(),
                e.to_string(),
                Some(resp.status),
            )
        })?;
        Ok(ListPage {
            answer,
            request: req.url,
            status: resp.status,
        })
    }
}
