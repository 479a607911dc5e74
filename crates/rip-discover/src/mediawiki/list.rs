//! Reading the wiki's lists: `meta=siteinfo` first, then each list of titles an answer at a
//! time, its `continue` sent back until there is none.

use std::collections::HashSet;

use rip_core::ErrorCategory;
use rip_http::{Fetcher, Outcome};
use rip_mediawiki::{Continue, Limit, List, ListAnswer, SiteInfo};
use url::Url;

use super::{MAX_LIST_PAGES, MAXLAG};

/// Counters of a MediaWiki run.
#[derive(Debug, Default)]
pub(super) struct Counts {
    pub requests: u64,
    pub listed: u64,
    pub duplicates: u64,
    pub cut: u64,
    pub failed_lists: u64,
}

/// A list that could not be read to its end.
pub(super) struct ListFailure {
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

/// The titles listed so far, each once, in the order first seen.
#[derive(Debug, Default)]
pub(super) struct Titles {
    seen: HashSet<String>,
    pub list: Vec<String>,
}

/// The API's asker: the fetcher, the endpoint, the counters.
pub(super) struct Lister {
    pub fetcher: Fetcher,
    pub api: Url,
    pub counts: Counts,
}

pub(super) async fn site_info(fetcher: &Fetcher, api: &Url) -> Result<SiteInfo, ListFailure> {
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
struct ListPage {
    answer: ListAnswer,
    request: Url,
    status: u16,
}

impl Lister {
    /// Reads one list to its end (or its first failure), adding new titles to `titles`.
    pub(super) async fn enumerate(
        &mut self,
        list: &List,
        limit: Limit,
        titles: &mut Titles,
    ) -> Result<(), ListFailure> {
        let mut cont = Continue::new();
        for _ in 0..MAX_LIST_PAGES {
            let page = self.list_page(list, limit, &cont).await?;
            for item in page.answer.items {
                self.counts.listed += 1;
                if titles.seen.insert(item.title.clone()) {
                    titles.list.push(item.title);
                } else {
                    self.counts.duplicates += 1;
                }
            }
            match page.answer.cont {
                Some(c) if c != cont => cont = c,
                Some(_) => {
                    return Err(ListFailure::new(
                        &page.request,
                        ErrorCategory::Validation,
                        "wiki.badAnswer",
                        "the API sent the same `continue` twice: the list would never end".into(),
                        Some(page.status),
                    ));
                }
                None => return Ok(()),
            }
        }
        Err(ListFailure::new(
            &self.api,
            ErrorCategory::Resource,
            "wiki.listTooLong",
            format!("more than {MAX_LIST_PAGES} answers of titles"),
            None,
        ))
    }

    /// Asks for the answer of `list` after `cont` (with `maxlag` on a GET).
    async fn list_page(
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
