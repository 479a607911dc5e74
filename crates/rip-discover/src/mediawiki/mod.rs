//! MediaWiki mode (`--mediawiki API_URL`): the titles of a wiki, as wiki `ref`s.
//!
//! Instead of crawling links, the wiki's Action API is asked for its titles
//! ([`rip_mediawiki`]), a page of titles at a time, each answer's `continue` sent back until
//! there is none:
//!
//! 1. `--category NAME` given (repeatable): the members of those categories
//!    (`list=categorymembers`, articles only: subcategories are not descended), the union,
//!    each title once, in the order first seen;
//! 2. else the `categories` of the configuration file (`--wiki-config`, JSON
//!    `{"apiUrl": …, "categories": […]}`, the reference's state shape), likewise;
//! 3. else every page of the main namespace (`list=allpages`, redirects left out: their
//!    targets are listed themselves).
//!
//! `--max-pages` applies after enumeration (the first N titles of the deduplicated list);
//! `--page-size` sets the titles per answer (default: the wiki's maximum), so that tests can
//! make continuation happen many times.
//!
//! Each title becomes a first-round `ref`: `url` the article URL (built from the wiki's
//! `meta=siteinfo` as MediaWiki builds it, `…/index.php/Ash_Wyrm`), `title`, `wikiApi`, depth
//! 0. `rip-fetch` then fetches them 50 titles per API request.
//!
//! `--retry-failures FILE` ([`retry`]) enumerates nothing: it re-emits the wiki pages listed
//! as failed in a previous run's `failures.json` (or an NDJSON file of `error`/`failure`
//! records), with the same URLs, so that the next run's books are about them alone.
//!
//! Requests go through [`rip_http::Fetcher::call_api`]: per-host politeness, retries,
//! classification; an API error in a 200 body (`maxlag`, `readonly`) is classified by its code
//! and THROTTLED ones retried after their wait. A list that cannot be read after its retries
//! (or the wiki's `meta=siteinfo`, asked first for its article path) is a `failure` record
//! (`phase: discover`) whose `url` is the request, what was listed before it is still
//! written, and the run ends `not-ready` (exit 3). `maxlag=5` is sent with every list
//! request, as Wikimedia asks of bots.

pub mod retry;

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;

use chrono::Utc;
use rip_core::{
    ErrorCategory, ErrorEntry, Failure, NdjsonWriter, Phase, Record, Ref, Status, Summary,
};
use rip_http::{Fetcher, HttpConfig, Outcome};
use rip_mediawiki::{Continue, Limit, List, SiteInfo};
use serde::Deserialize;
use url::Url;

use crate::{DiscoverError, STAGE};

/// The `maxlag` sent with every list request (seconds), as Wikimedia asks of bots.
pub const MAXLAG: u32 = 5;

/// Most list pages read per list (a guard against an API whose `continue` never ends:
/// 100,000 pages of titles).
pub const MAX_LIST_PAGES: usize = 100_000;

/// What the MediaWiki mode does.
#[derive(Debug, Clone, Default)]
pub struct WikiConfig {
    /// The API endpoint (`--mediawiki`); else the configuration's `apiUrl`.
    pub api: Option<Url>,
    /// `--category` (with or without `Category:`).
    pub categories: Vec<String>,
    /// `--wiki-config`: `{"apiUrl": …, "categories": […]}`.
    pub config_file: Option<PathBuf>,
    /// Titles per list answer (`None`: the wiki's maximum).
    pub page_size: Option<u32>,
    /// Refs written at most, applied after enumeration.
    pub max_pages: Option<u64>,
    /// `--retry-failures`: re-emit the wiki pages of this failures file instead.
    pub retry_failures: Option<PathBuf>,
}

/// The configuration file (`--wiki-config`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WikiFile {
    /// The API endpoint.
    #[serde(default)]
    pub api_url: Option<String>,
    /// Categories to enumerate.
    #[serde(default)]
    pub categories: Vec<String>,
}

/// What the MediaWiki mode cannot start with.
#[derive(Debug, thiserror::Error)]
pub enum WikiSetupError {
    /// No API URL anywhere.
    #[error(
        "no MediaWiki API URL (hint: --mediawiki http://host/api.php, or `apiUrl` in --wiki-config)"
    )]
    NoApi,
    /// A bad API URL.
    #[error("{what}: `{url}` is not an absolute http(s) URL (hint: the wiki's api.php)")]
    BadApi {
        /// Where it was given.
        what: String,
        /// The value.
        url: String,
    },
    /// The configuration or failures file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The configuration file is not the expected JSON.
    #[error("{}: {source} (hint: {{\"apiUrl\": \"http://host/api.php\", \"categories\": [\"Items\"]}})", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// The failures file is neither failures.json nor NDJSON records.
    #[error("{}:{line}: {message} (hint: a failures.json written by rip-write, or NDJSON `error`/`failure` records)", path.display())]
    Failures {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// Where titles come from, in the reference's priority order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--category` flags.
    Flags(Vec<String>),
    /// The configuration's categories.
    Config(Vec<String>),
    /// Every page of the main namespace.
    AllPages,
}

/// Flag, then configuration, then all pages.
pub fn source(flags: &[String], file: &WikiFile) -> Source {
    if !flags.is_empty() {
        Source::Flags(flags.to_vec())
    } else if !file.categories.is_empty() {
        Source::Config(file.categories.clone())
    } else {
        Source::AllPages
    }
}

fn read_config(cfg: &WikiConfig) -> Result<WikiFile, WikiSetupError> {
    let Some(path) = &cfg.config_file else {
        return Ok(WikiFile::default());
    };
    let text = std::fs::read_to_string(path).map_err(|source| WikiSetupError::Read {
        path: path.clone(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| WikiSetupError::Config {
        path: path.clone(),
        source,
    })
}

fn api_url(cfg: &WikiConfig, file: &WikiFile) -> Result<Url, WikiSetupError> {
    let (what, raw) = match (&cfg.api, &file.api_url) {
        (Some(u), _) => return check_api("--mediawiki", u.as_str()),
        (None, Some(u)) => ("apiUrl", u.as_str()),
        (None, None) => return Err(WikiSetupError::NoApi),
    };
    check_api(what, raw)
}

fn check_api(what: &str, raw: &str) -> Result<Url, WikiSetupError> {
    match Url::parse(raw) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(u),
        _ => Err(WikiSetupError::BadApi {
            what: what.into(),
            url: raw.into(),
        }),
    }
}

/// Counters of a MediaWiki run.
#[derive(Debug, Default)]
struct Counts {
    requests: u64,
    listed: u64,
    duplicates: u64,
    cut: u64,
    failed_lists: u64,
}

/// A list that could not be read to its end.
struct ListFailure {
    request: String,
    category: ErrorCategory,
    code: String,
    message: String,
    status: Option<u16>,
}

async fn site_info(fetcher: &Fetcher, api: &Url) -> Result<SiteInfo, ListFailure> {
    let req = rip_mediawiki::siteinfo_request(api);
    let fetched = fetcher
        .call_api(req.url.as_str(), None, &rip_mediawiki::http::check)
        .await;
    let fail = |category, code: &str, message: String, status| ListFailure {
        request: req.url.to_string(),
        category,
        code: code.to_owned(),
        message: format!("cannot read the wiki's site information: {message}"),
        status,
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

/// Reads one list to its end (or its first failure), adding new titles to `titles`.
async fn enumerate(
    fetcher: &Fetcher,
    api: &Url,
    list: &List,
    limit: Limit,
    seen: &mut HashSet<String>,
    titles: &mut Vec<String>,
    n: &mut Counts,
) -> Result<(), ListFailure> {
    let mut cont = Continue::new();
    for _ in 0..MAX_LIST_PAGES {
        let mut req = rip_mediawiki::list_request(api, list, limit, &cont);
        if req.form.is_none() {
            req.url
                .query_pairs_mut()
                .append_pair("maxlag", &MAXLAG.to_string());
        }
        n.requests += 1;
        let fetched = fetcher
            .call_api(
                req.url.as_str(),
                req.form.as_deref(),
                &rip_mediawiki::http::check,
            )
            .await;
        let fail = |category, code: &str, message: String, status| ListFailure {
            request: req.url.to_string(),
            category,
            code: code.to_owned(),
            message,
            status,
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
        for item in answer.items {
            n.listed += 1;
            if seen.insert(item.title.clone()) {
                titles.push(item.title);
            } else {
                n.duplicates += 1;
            }
        }
        match answer.cont {
            Some(c) if c != cont => cont = c,
            Some(_) => {
                return Err(fail(
                    ErrorCategory::Validation,
                    "wiki.badAnswer",
                    "the API sent the same `continue` twice: the list would never end".into(),
                    Some(resp.status),
                ));
            }
            None => return Ok(()),
        }
    }
    Err(ListFailure {
        request: api.to_string(),
        category: ErrorCategory::Resource,
        code: "wiki.listTooLong".into(),
        message: format!("more than {MAX_LIST_PAGES} answers of titles"),
        status: None,
    })
}

/// The categories, each once: `Category:Dragons`, `dragons` and `Dragons` name one
/// category (MediaWiki upper-cases the first letter and treats `_` as a space).
fn distinct_categories(names: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    names
        .into_iter()
        .filter(|name| {
            let title = rip_mediawiki::category_title(name).replace('_', " ");
            let rest = title
                .split_once(':')
                .map_or(title.as_str(), |(_, r)| r)
                .trim();
            let mut chars = rest.chars();
            let key: String = chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect())
                .unwrap_or_default();
            seen.insert(key.split_whitespace().collect::<Vec<_>>().join(" "))
        })
        .collect()
}

/// A wiki ref for `title`.
pub fn wiki_ref(url: String, title: &str, api: &Url) -> Ref {
    let mut r = Ref::new(url);
    r.context.title = Some(title.to_owned());
    r.context.wiki_api = Some(api.to_string());
    r
}

/// Runs the MediaWiki mode, writing refs (and failures) to `output`, then the summary.
pub async fn run<W: Write>(
    cfg: WikiConfig,
    http: HttpConfig,
    output: W,
) -> Result<Summary, DiscoverError> {
    let started_at = Utc::now();
    let file = read_config(&cfg)?;
    let api = api_url(&cfg, &file)?;
    let fetcher = Fetcher::new(http)?;
    let mut out = NdjsonWriter::new(output);
    let mut n = Counts::default();
    let mut notes = Vec::new();
    let mut failures: Vec<ListFailure> = Vec::new();
    n.requests += 1;
    let site = match site_info(&fetcher, &api).await {
        Ok(site) => Some(site),
        Err(f) => {
            n.failed_lists += 1;
            failures.push(f);
            None
        }
    };
    // (title, its URL when known)
    let mut titles: Vec<(String, Option<String>)> = if let Some(site) = &site
        && let Some(path) = &cfg.retry_failures
    {
        let found = retry::read(path, &api, site)?;
        notes.extend(found.notes);
        found
            .titles
            .into_iter()
            .map(|(t, u)| (t, Some(u)))
            .collect()
    } else if site.is_none() {
        Vec::new()
    } else {
        let limit = cfg.page_size.map_or(Limit::Max, Limit::Of);
        let lists: Vec<List> = match source(&cfg.categories, &file) {
            Source::Flags(c) | Source::Config(c) => distinct_categories(c)
                .into_iter()
                .map(|category| List::CategoryMembers {
                    category,
                    namespace: Some(0),
                })
                .collect(),
            Source::AllPages => vec![List::AllPages {
                namespace: 0,
                skip_redirects: true,
            }],
        };
        let mut seen = HashSet::new();
        let mut found = Vec::new();
        for list in &lists {
            if let Err(f) =
                enumerate(&fetcher, &api, list, limit, &mut seen, &mut found, &mut n).await
            {
                n.failed_lists += 1;
                failures.push(f);
            }
        }
        found.into_iter().map(|t| (t, None)).collect()
    };
    if let Some(max) = cfg.max_pages
        && titles.len() as u64 > max
    {
        n.cut = titles.len() as u64 - max;
        titles.truncate(max as usize);
        notes.push(format!(
            "budget exhausted: maxPages {max}; {} titles not written",
            n.cut
        ));
    }
    for (title, url) in &titles {
        let url = match (url, &site) {
            (Some(u), _) => u.clone(),
            (None, Some(site)) => site.article_url(&api, title),
            (None, None) => unreachable!("titles are only listed once the site is known"),
        };
        out.write(&Record::Ref(wiki_ref(url, title, &api)))?;
    }
    for f in &failures {
        let mut e = ErrorEntry::new(&f.code, f.message.clone(), STAGE);
        e.attempt = Some(1);
        let mut rec = Failure::new(f.request.clone(), f.category, Phase::Discover, e);
        rec.status = f.status;
        rec.attempt = 1;
        rec.failed_at = Some(Utc::now());
        rec.context.wiki_api = Some(api.to_string());
        out.write(&Record::Failure(rec))?;
    }
    let status = if failures.is_empty() {
        Status::Complete
    } else {
        Status::NotReady
    };
    let mut counters = std::collections::BTreeMap::new();
    for (k, v) in [
        ("targets", titles.len() as u64),
        ("listed", n.listed),
        ("duplicates", n.duplicates),
        ("notWritten", n.cut),
        ("apiRequests", n.requests),
        ("failedLists", n.failed_lists),
    ] {
        counters.insert(k.to_owned(), v);
    }
    for (k, v) in fetcher.stats().counters() {
        counters.entry(k).or_insert(v);
    }
    counters.retain(|k, v| *v > 0 || matches!(k.as_str(), "targets" | "apiRequests"));
    let summary = Summary {
        stage: STAGE.into(),
        pid: std::process::id(),
        started_at,
        ended_at: Utc::now(),
        input: Default::default(),
        output: out.counts().clone(),
        passed_through: out.passed().clone(),
        bad_lines: 0,
        status,
        counters,
        notes,
        extra: Default::default(),
    };
    out.write(&Record::Summary(summary.clone()))?;
    out.flush()?;
    Ok(summary)
}

/// The one-line account for stderr.
pub fn summary_line(s: &rip_core::Summary) -> String {
    let c = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let secs = (s.ended_at - s.started_at).num_milliseconds().max(1) as f64 / 1000.0;
    let mut line = format!(
        "{}: {} wiki pages from {} titles listed ({} duplicates, {} not written), {} API \
         requests, {} failed lists; {secs:.1}s",
        s.stage,
        c("targets"),
        c("listed"),
        c("duplicates"),
        c("notWritten"),
        c("apiRequests"),
        c("failedLists"),
    );
    for note in &s.notes {
        line.push_str(&format!("\n{}: {note}", s.stage));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_come_before_configuration_before_all_pages() {
        let file = WikiFile {
            api_url: None,
            categories: vec!["Items".into()],
        };
        assert_eq!(
            source(&["Places".into()], &file),
            Source::Flags(vec!["Places".into()])
        );
        assert_eq!(source(&[], &file), Source::Config(vec!["Items".into()]));
        assert_eq!(source(&[], &WikiFile::default()), Source::AllPages);
    }

    #[test]
    fn a_category_named_twice_is_listed_once() {
        let got = distinct_categories(
            [
                "Dragons",
                "dragons",
                "Category:Dragons",
                "category: Dragons",
                "Fire_beasts",
                "Fire beasts",
                "Undead",
            ]
            .map(String::from)
            .to_vec(),
        );
        assert_eq!(got, ["Dragons", "Fire_beasts", "Undead"]);
    }

    #[test]
    fn the_api_url_comes_from_the_flag_then_the_file() {
        let flag = WikiConfig {
            api: Some(Url::parse("http://a/api.php").unwrap()),
            ..Default::default()
        };
        let file = WikiFile {
            api_url: Some("http://b/api.php".into()),
            categories: vec![],
        };
        assert_eq!(api_url(&flag, &file).unwrap().as_str(), "http://a/api.php");
        let none = WikiConfig::default();
        assert_eq!(api_url(&none, &file).unwrap().as_str(), "http://b/api.php");
        assert!(matches!(
            api_url(&none, &WikiFile::default()),
            Err(WikiSetupError::NoApi)
        ));
        let bad = WikiFile {
            api_url: Some("ftp://x".into()),
            categories: vec![],
        };
        assert!(
            api_url(&none, &bad)
                .unwrap_err()
                .to_string()
                .contains("apiUrl: `ftp://x`")
        );
    }
}
