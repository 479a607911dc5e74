//! The API requests: list enumeration and batch revision fetch, with continuation.

use std::collections::BTreeMap;

use url::Url;

/// Most titles one `prop=revisions` request may name (500 needs `apihighlimits`).
pub const MAX_BATCH: usize = 50;

/// Longest URL sent as GET; longer requests go as a POST form (same parameters).
pub const MAX_GET_URL: usize = 2000;

/// The `continue` object of an answer, sent back verbatim with the next request.
pub type Continue = BTreeMap<String, String>;

/// A list of titles to enumerate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum List {
    /// `list=allpages`: every page of a namespace.
    AllPages {
        /// 0 is the main namespace.
        namespace: u32,
        /// Leave out redirects (`apfilterredir=nonredirects`): their targets are listed anyway.
        skip_redirects: bool,
    },
    /// `list=categorymembers`: the pages of one category (not of its subcategories).
    CategoryMembers {
        /// With or without the `Category:` prefix.
        category: String,
        /// Only this namespace (0: articles; subcategories are namespace 14).
        namespace: Option<u32>,
    },
}

/// Titles per answer: a number up to 500, or the wiki's maximum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// `max`.
    Max,
    /// A fixed page size (small ones make continuation happen, for tests).
    Of(u32),
}

impl Limit {
    fn as_param(self) -> String {
        match self {
            Limit::Max => "max".into(),
            Limit::Of(n) => n.to_string(),
        }
    }
}

/// An API request: GET `url`, or POST `form` to `url` when the query would be too long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiRequest {
    /// The URL to send to (with the parameters for GET, without for POST).
    pub url: Url,
    /// The `application/x-www-form-urlencoded` body of a POST.
    pub form: Option<String>,
}

impl ApiRequest {
    pub(crate) fn new(api: &Url, params: &[(String, String)]) -> ApiRequest {
        let mut url = api.clone();
        url.query_pairs_mut()
            .extend_pairs(params.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        if url.as_str().len() <= MAX_GET_URL {
            return ApiRequest { url, form: None };
        }
        let form = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .finish();
        ApiRequest {
            url: api.clone(),
            form: Some(form),
        }
    }
}

fn base() -> Vec<(String, String)> {
    base_params("query")
}

/// `action`, JSON, format version 2.
pub(crate) fn base_params(action: &str) -> Vec<(String, String)> {
    vec![
        ("action".into(), action.into()),
        ("format".into(), "json".into()),
        ("formatversion".into(), "2".into()),
    ]
}

/// The request for one page of a list; `cont` is the previous answer's `continue` (empty for
/// the first page).
pub fn list_request(api: &Url, list: &List, limit: Limit, cont: &Continue) -> ApiRequest {
    let mut p = base();
    let mut add = |k: &str, v: String| p.push((k.to_owned(), v));
    match list {
        List::AllPages {
            namespace,
            skip_redirects,
        } => {
            add("list", "allpages".into());
            add("apnamespace", namespace.to_string());
            if *skip_redirects {
                add("apfilterredir", "nonredirects".into());
            }
            add("aplimit", limit.as_param());
        }
        List::CategoryMembers {
            category,
            namespace,
        } => {
            add("list", "categorymembers".into());
            add("cmtitle", category_title(category));
            if let Some(ns) = namespace {
                add("cmnamespace", ns.to_string());
            }
            add("cmlimit", limit.as_param());
        }
    }
    p.extend(cont.iter().map(|(k, v)| (k.clone(), v.clone())));
    ApiRequest::new(api, &p)
}

/// `Category:Name` for a name given with or without the prefix.
pub fn category_title(category: &str) -> String {
    let c = category.trim();
    match c.split_once(':') {
        Some((prefix, _)) if prefix.trim().eq_ignore_ascii_case("category") => c.to_owned(),
        _ => format!("Category:{c}"),
    }
}

/// The request for the current wikitext of up to [`MAX_BATCH`] titles, following redirects,
/// with `maxlag` when given (seconds; MediaWiki answers a `maxlag` error while its replicas
/// lag more). `cont` is the previous answer's `continue` for the same titles (MediaWiki
/// splits a batch whose content passes its result size limit).
///
/// # Panics
/// When `titles` is empty or longer than [`MAX_BATCH`] (a caller's bug).
pub fn revisions_request(
    api: &Url,
    titles: &[String],
    maxlag: Option<u32>,
    cont: &Continue,
) -> ApiRequest {
    assert!(
        !titles.is_empty() && titles.len() <= MAX_BATCH,
        "1 to {MAX_BATCH} titles per request, not {}",
        titles.len()
    );
    let mut p = base();
    for (k, v) in [
        ("prop", "revisions"),
        ("rvprop", "ids|timestamp|content"),
        ("rvslots", "main"),
        ("redirects", "1"),
    ] {
        p.push((k.into(), v.into()));
    }
    if let Some(lag) = maxlag {
        p.push(("maxlag".into(), lag.to_string()));
    }
    p.push(("titles".into(), titles.join("|")));
    p.extend(cont.iter().map(|(k, v)| (k.clone(), v.clone())));
    ApiRequest::new(api, &p)
}

/// The request for the facts needed to build article URLs (`meta=siteinfo`).
pub fn siteinfo_request(api: &Url) -> ApiRequest {
    let mut p = base();
    p.push(("meta".into(), "siteinfo".into()));
    ApiRequest::new(api, &p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api() -> Url {
        Url::parse("http://127.0.0.1:8080/api.php").unwrap()
    }

    #[test]
    fn list_requests() {
        let r = list_request(
            &api(),
            &List::AllPages {
                namespace: 0,
                skip_redirects: true,
            },
            Limit::Of(37),
            &Continue::from([
                ("apcontinue".into(), "Ash_Wyrm".into()),
                ("continue".into(), "-||".into()),
            ]),
        );
        assert_eq!(
            r.url.as_str(),
            "http://127.0.0.1:8080/api.php?action=query&format=json&formatversion=2&list=allpages\
             &apnamespace=0&apfilterredir=nonredirects&aplimit=37&apcontinue=Ash_Wyrm&continue=-%7C%7C"
        );
        let r = list_request(
            &api(),
            &List::CategoryMembers {
                category: "Creatures".into(),
                namespace: Some(0),
            },
            Limit::Max,
            &Continue::new(),
        );
        assert!(
            r.url
                .as_str()
                .ends_with("&cmtitle=Category%3ACreatures&cmnamespace=0&cmlimit=max")
        );
        assert_eq!(category_title(" category:Dragons"), "category:Dragons");
    }

    #[test]
    fn long_batches_go_as_post() {
        let short: Vec<String> = vec!["Q&A Tavern".into(), "+1 Dagger".into()];
        let r = revisions_request(&api(), &short, Some(5), &Continue::new());
        assert!(r.form.is_none());
        assert!(
            r.url
                .as_str()
                .contains("&maxlag=5&titles=Q%26A+Tavern%7C%2B1+Dagger")
        );
        let long: Vec<String> = (0..50)
            .map(|i| format!("A rather long page title about creature number {i}"))
            .collect();
        let r = revisions_request(&api(), &long, None, &Continue::new());
        assert_eq!(r.url, api());
        let form = r.form.unwrap();
        assert!(form.starts_with("action=query&format=json&formatversion=2&prop=revisions"));
        assert!(
            form.contains("titles=A+rather+long+page+title+about+creature+number+0%7CA+rather")
        );
    }

    #[test]
    #[should_panic(expected = "1 to 50 titles")]
    fn more_than_fifty_titles_is_a_bug() {
        let titles: Vec<String> = (0..51).map(|i| i.to_string()).collect();
        revisions_request(&api(), &titles, None, &Continue::new());
    }
}
