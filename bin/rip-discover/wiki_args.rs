//! The MediaWiki mode's flags (see `rip_wikilist`).

use std::path::PathBuf;

use clap::Args;

/// MediaWiki mode: list a wiki's pages instead of crawling links.
#[derive(Debug, Args)]
pub struct WikiArgs {
    /// List the pages of this MediaWiki (its `api.php`) and write a wiki ref (`title`,
    /// `wikiApi`) for each: the members of the `--category`s, else of the configuration's
    /// categories, else every page of the main namespace. `rip-fetch` fetches them 50 titles
    /// per API request.
    #[arg(
        help_heading = "MediaWiki",
        long,
        value_name = "API_URL",
        conflicts_with = "urls"
    )]
    pub mediawiki: Option<url::Url>,
    /// Only the pages of this category (repeatable: the union, each page once).
    #[arg(help_heading = "MediaWiki", long, value_name = "NAME")]
    pub category: Vec<String>,
    /// A JSON configuration, `{"apiUrl": …, "categories": […]}`; `--mediawiki` and
    /// `--category` take precedence over it.
    #[arg(help_heading = "MediaWiki", long, value_name = "FILE")]
    pub wiki_config: Option<PathBuf>,
    /// Titles per API answer (default: the wiki's maximum, 500).
    #[arg(help_heading = "MediaWiki", long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=500))]
    pub page_size: Option<u32>,
    /// Instead of listing, write refs for the wiki pages that failed in a previous run: its
    /// `failures.json` (rip-write), or NDJSON `error`/`failure` records.
    #[arg(help_heading = "MediaWiki", long, value_name = "FILE")]
    pub retry_failures: Option<PathBuf>,
}

impl WikiArgs {
    /// True when the MediaWiki mode is asked for.
    pub fn active(&self) -> bool {
        self.mediawiki.is_some() || self.wiki_config.is_some() || self.retry_failures.is_some()
    }

    /// The library's configuration.
    pub fn config(&self, max_pages: Option<u64>) -> rip_wikilist::WikiConfig {
        rip_wikilist::WikiConfig {
            api: self.mediawiki.clone(),
            categories: self.category.clone(),
            config_file: self.wiki_config.clone(),
            page_size: self.page_size,
            max_pages,
            retry_failures: self.retry_failures.clone(),
            state_dir: None,
        }
    }
}
