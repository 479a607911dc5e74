#![deny(missing_docs)]
//! `rip-wikilist`: the MediaWiki lister, `rip-discover --mediawiki API_URL`: the titles of a
//! wiki, as wiki `ref`s.
//!
//! The program `rip-discover` has two modes: the link crawl (crate `rip-discover`) and, with
//! `--mediawiki`, `--wiki-config` or `--retry-failures`, this listing, which shares nothing
//! with the crawl but the stage's name, its HTTP stack ([`rip_http`]) and its `--state`
//! folder ([`rip_core::state_folder`]). The wiki's Action API itself (requests, answers,
//! error classification) is [`rip_mediawiki`]'s.
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
//! Each answer's new titles are written (and flushed) before the next request; `--max-pages`
//! counts them (the first N titles of the deduplicated list) and the listing stops there;
//! `--page-size` sets the titles per answer (default: the wiki's maximum), so that tests can
//! make continuation happen many times. With `--state DIR` the listing is journaled and a
//! rerun of the same command resumes it ([`resume`]).
//!
//! Each title becomes a first-round `ref`: `url` the article URL (built from the wiki's
//! `meta=siteinfo` as MediaWiki builds it, `…/index.php/Ash_Wyrm`), `title`, `wikiApi`, depth
//! 0. `rip-fetch` then fetches them 50 titles per API request.
//!
//! `--retry-failures FILE` ([`retry`]) enumerates nothing: it re-emits the wiki pages listed
//! as failed in a previous run's `failures.json` (or an NDJSON file of `error`/`failure`
//! records), with the same URLs, so that the next run's books are about them alone; without
//! `--mediawiki`, the wiki is the one the failures name.
//!
//! Requests go through [`rip_http::Fetcher::call_api`]: per-host politeness, retries,
//! classification; an API error in a 200 body (`maxlag`, `readonly`) is classified by its code
//! and THROTTLED ones retried after their wait. A list that cannot be read after its retries
//! (or the wiki's `meta=siteinfo`, asked first for its article path) is a `failure` record
//! (`phase: discover`) whose `url` is the request, what was listed before it is still
//! written, and the run ends `not-ready` (exit 3). `maxlag=5` is sent with every list
//! request, as Wikimedia asks of bots.

mod api;
mod listing;
pub mod resume;
pub mod retry;

pub use resume::{Resumed, WikiJournal};

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use rip_core::{ErrorEntry, Failure, NdjsonWriter, Phase, Record, Ref, Status, Summary};
use rip_http::{Fetcher, HttpConfig};
use rip_mediawiki::{List, SiteInfo};
use serde::Deserialize;
use url::Url;

use api::{Counts, ListFailure, Lister, site_info};
use rip_core::state_folder::StateError;

/// The stage name in records: the program is `rip-discover`.
pub const STAGE: &str = "rip-discover";

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
    /// `--state`: persist the listing in this folder, to resume it ([`resume`]).
    pub state_dir: Option<PathBuf>,
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
        "no MediaWiki API URL (hint: --mediawiki http://host/api.php, or `apiUrl` in \
         --wiki-config; with --retry-failures, failures that carry `wikiApi`)"
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

/// What stops a listing (a list that cannot be read is not one: it is a `failure` record).
#[derive(Debug, thiserror::Error)]
pub enum WikiError {
    /// The listing could not start (no API, a bad configuration or failures file).
    #[error(transparent)]
    Setup(#[from] WikiSetupError),
    /// The HTTP stack could not be built.
    #[error(transparent)]
    Build(#[from] rip_http::BuildError),
    /// The state folder could not be used.
    #[error(transparent)]
    State(#[from] StateError),
    /// The output could not be written (a broken pipe among others).
    #[error("cannot write output: {0}")]
    Write(#[from] std::io::Error),
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
    let (what, raw) = match (&cfg.api, &file.api_url, &cfg.retry_failures) {
        (Some(u), _, _) => return check_api("--mediawiki", u.as_str()),
        (None, Some(u), _) => ("apiUrl".to_owned(), u.clone()),
        (None, None, Some(path)) => match retry::api_of(path)? {
            Some(api) => (format!("wikiApi in {}", path.display()), api),
            None => return Err(WikiSetupError::NoApi),
        },
        (None, None, None) => return Err(WikiSetupError::NoApi),
    };
    check_api(&what, &raw)
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
) -> Result<Summary, WikiError> {
    let started_at = Utc::now();
    let file = read_config(&cfg)?;
    let api = api_url(&cfg, &file)?;
    let lists = lists(source(&cfg.categories, &file));
    let state = listing::open_state(&cfg, &api, &lists)?;
    let fetcher = Fetcher::new(http)?;
    // The API is the start URL a person named: its network is the crawl's (the network
    // policy lets the wiki's pages and API on a LAN or loopback through, nothing else).
    fetcher.admit_start(&api);
    let mut wiki = Wiki::new(fetcher, api);
    let mut out = NdjsonWriter::new(output);
    let site = wiki.site_info().await;
    let written = match &site {
        Some(site) if cfg.retry_failures.is_some() => wiki.write_failed(&cfg, site, &mut out)?,
        Some(site) => wiki.list(&cfg, &lists, site, &mut out, state).await?,
        None => 0,
    };
    wiki.write_failures(&mut out)?;
    let summary = wiki.summary(started_at, written, &out);
    out.write(&Record::Summary(summary.clone()))?;
    out.flush()?;
    Ok(summary)
}

/// A title to write, with its URL when it is known already (`--retry-failures`).
type Title = (String, Option<String>);

/// A MediaWiki run: the API it asks, what it counted, noted and could not list.
struct Wiki {
    lister: Lister,
    notes: Vec<String>,
    failures: Vec<ListFailure>,
}

impl Wiki {
    fn new(fetcher: Fetcher, api: Url) -> Self {
        Self {
            lister: Lister {
                fetcher,
                api,
                counts: Counts::default(),
            },
            notes: Vec::new(),
            failures: Vec::new(),
        }
    }

    fn failed(&mut self, f: ListFailure) {
        self.lister.counts.failed_lists += 1;
        self.failures.push(f);
    }

    /// The wiki's `meta=siteinfo` (its article path), asked first; `None` when it failed.
    async fn site_info(&mut self) -> Option<SiteInfo> {
        self.lister.counts.requests += 1;
        match site_info(&self.lister.fetcher, &self.lister.api).await {
            Ok(site) => Some(site),
            Err(f) => {
                self.failed(f);
                None
            }
        }
    }

    /// `--retry-failures`: a ref for each page of the failures file; returns how many.
    fn write_failed<W: Write>(
        &mut self,
        cfg: &WikiConfig,
        site: &SiteInfo,
        out: &mut NdjsonWriter<W>,
    ) -> Result<u64, WikiError> {
        let path = cfg.retry_failures.as_deref().expect("asked for");
        let found = retry::read(path, &self.lister.api, site)?;
        self.notes.extend(found.notes);
        let mut titles: Vec<Title> = found
            .titles
            .into_iter()
            .map(|(t, u)| (t, Some(u)))
            .collect();
        self.apply_budget(cfg.max_pages, &mut titles);
        self.write_refs(out, &titles, site)?;
        Ok(titles.len() as u64)
    }

    /// `--max-pages`: the first titles only, the rest counted and noted.
    fn apply_budget(&mut self, max_pages: Option<u64>, titles: &mut Vec<Title>) {
        let Some(max) = max_pages else {
            return;
        };
        if titles.len() as u64 > max {
            self.lister.counts.cut = titles.len() as u64 - max;
            titles.truncate(max as usize);
            self.notes.push(format!(
                "budget exhausted: maxPages {max}; {} titles not written",
                self.lister.counts.cut
            ));
        }
    }

    fn write_refs<W: Write>(
        &self,
        out: &mut NdjsonWriter<W>,
        titles: &[Title],
        site: &SiteInfo,
    ) -> Result<(), WikiError> {
        let api = &self.lister.api;
        for (title, url) in titles {
            let url = url.clone().unwrap_or_else(|| site.article_url(api, title));
            out.write(&Record::Ref(wiki_ref(url, title, api)))?;
        }
        Ok(())
    }

    /// One `failure` record (`phase: discover`) per list that could not be read.
    fn write_failures<W: Write>(&self, out: &mut NdjsonWriter<W>) -> Result<(), WikiError> {
        for f in &self.failures {
            let mut e = ErrorEntry::new(&f.code, f.message.clone(), STAGE);
            e.attempt = Some(1);
            let mut rec = Failure::new(f.request.clone(), f.category, Phase::Discover, e);
            rec.status = f.status;
            rec.attempt = 1;
            rec.failed_at = Some(Utc::now());
            rec.context.wiki_api = Some(self.lister.api.to_string());
            out.write(&Record::Failure(rec))?;
        }
        Ok(())
    }

    fn summary<W: Write>(
        &self,
        started_at: DateTime<Utc>,
        targets: u64,
        out: &NdjsonWriter<W>,
    ) -> Summary {
        let status = if self.failures.is_empty() {
            Status::Complete
        } else {
            Status::NotReady
        };
        let n = &self.lister.counts;
        let mut counters = std::collections::BTreeMap::new();
        for (k, v) in [
            ("targets", targets),
            ("listed", n.listed),
            ("duplicates", n.duplicates),
            ("notWritten", n.cut),
            ("apiRequests", n.requests),
            ("failedLists", n.failed_lists),
        ] {
            counters.insert(k.to_owned(), v);
        }
        for (k, v) in self.lister.fetcher.stats().counters() {
            counters.entry(k).or_insert(v);
        }
        counters.retain(|k, v| *v > 0 || matches!(k.as_str(), "targets" | "apiRequests"));
        Summary {
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
            notes: self.notes.clone(),
            peak_rss_bytes: rip_core::peak_rss_bytes(),
            extra: Default::default(),
        }
    }
}

/// The lists that hold the titles of `source`.
fn lists(source: Source) -> Vec<List> {
    match source {
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
    }
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
