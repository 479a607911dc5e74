//! `--retry-failures FILE`: the wiki pages a previous run failed on, to run again.
//!
//! Without `--mediawiki` (or a configuration's `apiUrl`), the wiki is the one the failures
//! name (`wikiApi`, which every wiki failure and error document carries; [`api_of`]).
//!
//! `FILE` is either the `failures.json` that `rip-write` writes at the end of a run (its
//! `captured` error documents and `unrouted` failures; each names a `url`), or NDJSON
//! `error` / `failure` records (a run's `stream.ndjson`, `errors.jsonl`; other records are
//! skipped). Each URL keeps its identity byte for byte, so the new run's documents replace
//! the old error documents. Its title is the record's `title` when it has one, else it is
//! read back from the URL through the wiki's article path (`…/index.php/Ash_Wyrm` →
//! `Ash Wyrm`). URLs that are not articles of this wiki (another site's failures, an API
//! request that failed during enumeration) are left out, and counted in a note.

use std::collections::HashSet;
use std::path::Path;

use rip_mediawiki::SiteInfo;
use serde_json::Value;
use url::Url;

use crate::WikiSetupError;

/// What a failures file gave: (title, URL) pairs in file order, each URL once, and notes.
#[derive(Debug, Default)]
pub struct Found {
    /// The pages to fetch again.
    pub titles: Vec<(String, String)>,
    /// What was left out, and why.
    pub notes: Vec<String>,
}

/// Reads `path` for the pages of the wiki at `api`.
pub fn read(path: &Path, api: &Url, site: &SiteInfo) -> Result<Found, WikiSetupError> {
    let text = std::fs::read_to_string(path).map_err(|source| WikiSetupError::Read {
        path: path.to_owned(),
        source,
    })?;
    let entries = entries(path, &text)?;
    let (prefix, suffix) = article_affixes(site, api);
    let mut found = Found::default();
    let mut seen = HashSet::new();
    let mut foreign = 0usize;
    for (url, title, wiki_api) in entries {
        if wiki_api.as_deref().is_some_and(|a| a != api.as_str()) {
            foreign += 1;
            continue;
        }
        let title = match title {
            Some(t) => t,
            None => match title_from_url(&url, &prefix, &suffix) {
                Some(t) => t,
                None => {
                    foreign += 1;
                    continue;
                }
            },
        };
        if seen.insert(url.clone()) {
            found.titles.push((title, url));
        }
    }
    if foreign > 0 {
        found.notes.push(format!(
            "{}: {foreign} failures are not pages of {api}; left out",
            path.display()
        ));
    }
    Ok(found)
}

/// The wiki API a failures file is about, read from its entries' `wikiApi` (for
/// `--retry-failures` without `--mediawiki`): `Ok(None)` when no entry names one, an error
/// when entries name several (the run must be told which).
pub fn api_of(path: &Path) -> Result<Option<String>, WikiSetupError> {
    let text = std::fs::read_to_string(path).map_err(|source| WikiSetupError::Read {
        path: path.to_owned(),
        source,
    })?;
    let mut apis: Vec<String> = Vec::new();
    for (_, _, api) in entries(path, &text)? {
        if let Some(api) = api
            && !apis.contains(&api)
        {
            apis.push(api);
        }
    }
    match apis.len() {
        0 | 1 => Ok(apis.pop()),
        _ => Err(bad(
            path,
            1,
            format!(
                "the failures are of several wikis ({}): pass --mediawiki to choose one",
                apis.join(", ")
            ),
        )),
    }
}

/// (url, title, wikiApi) of each failed entry.
type Entry = (String, Option<String>, Option<String>);

fn entries(path: &Path, text: &str) -> Result<Vec<Entry>, WikiSetupError> {
    // failures.json: one JSON object with `captured` / `unrouted` arrays.
    if let Ok(Value::Object(report)) = serde_json::from_str::<Value>(text)
        && (report.contains_key("captured") || report.contains_key("unrouted"))
    {
        let mut out = Vec::new();
        for key in ["captured", "unrouted"] {
            let Some(list) = report.get(key) else {
                continue;
            };
            let Some(list) = list.as_array() else {
                return Err(bad(path, 1, format!("`{key}` is not an array")));
            };
            for (i, e) in list.iter().enumerate() {
                let Some(url) = e.get("url").and_then(Value::as_str) else {
                    return Err(bad(path, 1, format!("`{key}[{i}]` has no `url`")));
                };
                out.push((url.to_owned(), string(e, "title"), string(e, "wikiApi")));
            }
        }
        return Ok(out);
    }
    // NDJSON records.
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| bad(path, i + 1, format!("not JSON: {e}")))?;
        if !matches!(
            v.get("_type").and_then(Value::as_str),
            Some("error" | "failure")
        ) {
            continue;
        }
        let Some(url) = v.get("url").and_then(Value::as_str) else {
            return Err(bad(path, i + 1, "an error record without `url`".into()));
        };
        out.push((url.to_owned(), string(&v, "title"), string(&v, "wikiApi")));
    }
    Ok(out)
}

fn string(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn bad(path: &Path, line: usize, message: String) -> WikiSetupError {
    WikiSetupError::Failures {
        path: path.to_owned(),
        line,
        message,
    }
}

/// What comes before and after the title in an article URL of this wiki.
fn article_affixes(site: &SiteInfo, api: &Url) -> (String, String) {
    const MARK: &str = "RIPTITLEMARK";
    let sample = site.article_url(api, MARK);
    match sample.split_once(MARK) {
        Some((a, b)) => (a.to_owned(), b.to_owned()),
        None => (sample, String::new()),
    }
}

/// The title an article URL names, when it is one of this wiki's.
pub fn title_from_url(url: &str, prefix: &str, suffix: &str) -> Option<String> {
    let encoded = url.strip_prefix(prefix)?.strip_suffix(suffix)?;
    if encoded.is_empty() || encoded.contains(['?', '#']) {
        return None;
    }
    let decoded = percent_decode(encoded)?;
    Some(decoded.replace('_', " ").trim().to_owned()).filter(|t| !t.is_empty())
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> SiteInfo {
        SiteInfo {
            sitename: "W".into(),
            server: "http://127.0.0.1:8080".into(),
            articlepath: "/index.php/$1".into(),
            generator: "MediaWiki".into(),
        }
    }

    #[test]
    fn titles_come_back_from_article_urls() {
        let api = Url::parse("http://127.0.0.1:8080/api.php").unwrap();
        let (p, s) = article_affixes(&site(), &api);
        for title in [
            "Ash Wyrm",
            "Æther Wisp",
            "100% Pure Ember",
            "Sword of Ash/Reforged",
            "Q&A Tavern",
            "Ka'Rath the Undying",
        ] {
            let url = site().article_url(&api, title);
            assert_eq!(
                title_from_url(&url, &p, &s).as_deref(),
                Some(title),
                "{url}"
            );
        }
        assert_eq!(title_from_url("http://other/index.php/X", &p, &s), None);
        assert_eq!(
            title_from_url("http://127.0.0.1:8080/index.php/X?action=raw", &p, &s),
            None
        );
    }

    #[test]
    fn failures_json_and_ndjson_records_are_read() {
        let api = Url::parse("http://127.0.0.1:8080/api.php").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("failures.json");
        std::fs::write(
            &report,
            r#"{"generatedAt":null,"captured":[
                {"url":"http://127.0.0.1:8080/index.php/Vanishing_Wisp","attempt":1,"errors":[]},
                {"url":"http://elsewhere/x.html","attempt":1,"errors":[]},
                {"url":"http://127.0.0.1:8080/index.php/Vanishing_Wisp","attempt":2,"errors":[]}],
              "unrouted":[{"url":"http://127.0.0.1:8080/index.php/%C3%86ther_Wisp","category":"TRANSIENT","phase":"fetch","attempt":1}],
              "notPersisted":[]}"#,
        )
        .unwrap();
        let found = read(&report, &api, &site()).unwrap();
        let titles: Vec<&str> = found.titles.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(titles, ["Vanishing Wisp", "Æther Wisp"]);
        assert_eq!(found.notes.len(), 1, "{:?}", found.notes);

        let nd = dir.path().join("errors.ndjson");
        std::fs::write(
            &nd,
            "{\"_type\":\"doc\",\"url\":\"http://127.0.0.1:8080/index.php/A\"}\n\
             {\"_type\":\"error\",\"url\":\"http://127.0.0.1:8080/index.php/B_c\",\"title\":\"B c\",\"wikiApi\":\"http://127.0.0.1:8080/api.php\",\"errors\":[]}\n\
             {\"_type\":\"error\",\"url\":\"http://x/index.php/D\",\"title\":\"D\",\"wikiApi\":\"http://x/api.php\",\"errors\":[]}\n",
        )
        .unwrap();
        let found = read(&nd, &api, &site()).unwrap();
        assert_eq!(
            found.titles,
            [(
                "B c".to_owned(),
                "http://127.0.0.1:8080/index.php/B_c".to_owned()
            )]
        );

        std::fs::write(&nd, "{\"_type\":\"error\"}\n").unwrap();
        let e = read(&nd, &api, &site()).unwrap_err().to_string();
        assert!(
            e.contains("errors.ndjson:1: an error record without `url`"),
            "{e}"
        );
    }
}
