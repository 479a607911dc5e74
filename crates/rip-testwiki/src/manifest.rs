//! `testdata/wiki/manifest.json`: what a correct client finds in the Emberfall Wiki.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::WikiError;

/// The expected contents of the Emberfall Wiki, written by `testdata/wiki/generate.py`.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    /// Counts of the main namespace.
    pub main_namespace: MainNamespace,
    /// Titles of the `Template:` pages.
    pub templates: Vec<String>,
    /// Titles of the `Category:` pages.
    pub category_pages: Vec<String>,
    /// Titles of the articles (main namespace, not redirects), sorted.
    pub articles: Vec<String>,
    /// Redirect title → target title (main namespace).
    pub redirects: BTreeMap<String, String>,
    /// Category name (without `Category:`) → the main-namespace pages whose wikitext puts them
    /// in it, sorted. Categories added by templates only are not listed.
    pub categories: BTreeMap<String, Vec<String>>,
    /// Category name → its subcategories (`Category:…`).
    pub category_subcategories: BTreeMap<String, Vec<String>>,
    /// Pages with an old revision before the current one.
    pub pages_with_old_revisions: Vec<String>,
    /// Main-namespace pages whose wikitext starts with an `{{Infobox …}}`.
    pub pages_with_infobox: Vec<String>,
    /// The page tests delete between enumeration and fetch.
    pub doomed: String,
}

/// Counts of the main namespace.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct MainNamespace {
    /// Pages that are not redirects.
    pub articles: usize,
    /// Redirects.
    pub redirects: usize,
    /// Both.
    pub total: usize,
}

impl Manifest {
    /// The path of the committed manifest.
    pub fn path() -> PathBuf {
        crate::repo_root().join("testdata/wiki/manifest.json")
    }

    /// Reads the committed manifest.
    pub fn load() -> Result<Manifest, WikiError> {
        Manifest::load_from(&Manifest::path())
    }

    /// Reads a manifest file.
    pub fn load_from(path: &Path) -> Result<Manifest, WikiError> {
        let text = std::fs::read_to_string(path).map_err(|source| WikiError::Read {
            path: path.to_owned(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| WikiError::Parse {
            path: path.to_owned(),
            line: source.line(),
            source,
        })
    }

    /// Every title of the main namespace (articles and redirects), sorted.
    pub fn main_titles(&self) -> Vec<String> {
        let mut all: Vec<String> = self
            .articles
            .iter()
            .chain(self.redirects.keys())
            .cloned()
            .collect();
        all.sort();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_committed_manifest_is_consistent() {
        let m = Manifest::load().unwrap();
        assert_eq!(m.articles.len(), m.main_namespace.articles);
        assert_eq!(m.redirects.len(), m.main_namespace.redirects);
        assert_eq!(m.main_titles().len(), m.main_namespace.total);
        assert!(m.articles.contains(&m.doomed));
        for target in m.redirects.values() {
            assert!(m.articles.contains(target), "redirect to unknown {target}");
        }
    }
}
