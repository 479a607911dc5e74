//! The API's answers (`formatversion=2`): list pages, batch revisions, siteinfo.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{AnswerError, ApiError, DEFAULT_MAXLAG_WAIT};
use crate::request::{Continue, List};

/// A title a list returned.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Listed {
    /// The page title, in normal form (`Æther Wisp`).
    pub title: String,
    /// The page id.
    pub pageid: u64,
    /// The namespace (0: articles, 14: categories).
    pub ns: i64,
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListAnswer {
    /// The titles, in the API's order.
    pub items: Vec<Listed>,
    /// What to send for the next page; `None` when the list is complete.
    pub cont: Option<Continue>,
}

/// The current revision of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The page's title, after normalisation and redirects.
    pub title: String,
    /// The page id.
    pub pageid: u64,
    /// The revision id.
    pub revid: u64,
    /// When the revision was saved (ISO 8601).
    pub timestamp: Option<String>,
    /// The main slot's content (wikitext for ordinary pages).
    pub content: String,
    /// `wikitext`, `css`, `json`, …
    pub content_model: Option<String>,
    /// `text/x-wiki` for wikitext.
    pub content_format: Option<String>,
    /// The redirect page the requested title named, when it was one.
    pub redirected_from: Option<String>,
    /// The section a redirect pointed at (`Pyro` → `Pyromancer#Features`).
    pub fragment: Option<String>,
}

/// What became of one requested title.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TitleOutcome {
    /// The page and its current revision.
    Found(Revision),
    /// No such page (never created, or deleted): `title` in normal form.
    Missing {
        /// The title in normal form.
        title: String,
    },
    /// Not a valid title, an interwiki or special page, or a title the answer does not name.
    Invalid {
        /// Why, in MediaWiki's words when it gave some.
        reason: String,
    },
    /// Named in the answer but without content yet: the answer was cut at the API's size
    /// limit; send the request again with the answer's `continue`.
    Pending,
}

/// The answer to a batch of titles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchAnswer {
    /// One outcome per requested title, in request order.
    pub outcomes: Vec<(String, TitleOutcome)>,
    /// Set when some titles are [`TitleOutcome::Pending`].
    pub cont: Option<Continue>,
}

/// What article URLs are built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteInfo {
    /// The wiki's name.
    pub sitename: String,
    /// `http://host` (or protocol-relative `//host`).
    pub server: String,
    /// `/index.php/$1`, `/wiki/$1`, …
    pub articlepath: String,
    /// `MediaWiki 1.39.17`.
    pub generator: String,
}

impl SiteInfo {
    /// The URL of a page: `server` + `articlepath` with the title in MediaWiki's URL form
    /// (spaces as `_`, percent-encoded except `;@$!*(),/~:`). A protocol-relative server
    /// takes the API's scheme.
    pub fn article_url(&self, api: &url::Url, title: &str) -> String {
        let server = if self.server.starts_with("//") {
            format!("{}:{}", api.scheme(), self.server)
        } else {
            self.server.clone()
        };
        let path = self.articlepath.replace("$1", &wiki_urlencode(title));
        format!("{server}{path}")
    }
}

/// MediaWiki's `wfUrlencode` of a title with spaces turned to underscores.
pub fn wiki_urlencode(title: &str) -> String {
    let underscored = title.trim().replace(' ', "_");
    let encoded: String = url::form_urlencoded::byte_serialize(underscored.as_bytes()).collect();
    let mut out = encoded;
    for (escaped, plain) in [
        ("%3B", ";"),
        ("%40", "@"),
        ("%24", "$"),
        ("%21", "!"),
        ("%2A", "*"),
        ("%28", "("),
        ("%29", ")"),
        ("%2C", ","),
        ("%2F", "/"),
        ("%7E", "~"),
        ("%3A", ":"),
    ] {
        out = out.replace(escaped, plain);
    }
    out
}

pub(crate) fn json(body: &[u8]) -> Result<Value, AnswerError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|source| AnswerError::NotJson { source })?;
    if let Some(error) = value.get("error") {
        let code = error["code"].as_str().unwrap_or("unknown").to_owned();
        let retry_after = (code == "maxlag").then_some(DEFAULT_MAXLAG_WAIT);
        return Err(AnswerError::Api(ApiError {
            info: error["info"].as_str().unwrap_or_default().to_owned(),
            code,
            retry_after,
        }));
    }
    Ok(value)
}

fn continuation(value: &Value) -> Option<Continue> {
    let cont = value.get("continue")?.as_object()?;
    Some(
        cont.iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect(),
    )
}

/// Parses one page of a list answer.
pub fn parse_list(list: &List, body: &[u8]) -> Result<ListAnswer, AnswerError> {
    let value = json(body)?;
    let key = match list {
        List::AllPages { .. } => "allpages",
        List::CategoryMembers { .. } => "categorymembers",
    };
    let items = match value.get("query").and_then(|q| q.get(key)) {
        Some(items) => Vec::<Listed>::deserialize(items).map_err(|_| AnswerError::Shape {
            what: "list of titles",
        })?,
        // An empty list has no `query` at all.
        None if value.get("batchcomplete").is_some() => Vec::new(),
        None => return Err(AnswerError::Shape { what: "query" }),
    };
    Ok(ListAnswer {
        items,
        cont: continuation(&value),
    })
}

/// Parses a batch-revisions answer, mapping each requested title through MediaWiki's
/// `normalized` and `redirects` lists to its page.
pub fn parse_revisions(requested: &[String], body: &[u8]) -> Result<BatchAnswer, AnswerError> {
    let value = json(body)?;
    let query = value
        .get("query")
        .ok_or(AnswerError::Shape { what: "query" })?;
    let pairs = |key: &str| -> HashMap<String, (String, Option<String>)> {
        query
            .get(key)
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(|p| {
                        Some((
                            p["from"].as_str()?.to_owned(),
                            (
                                p["to"].as_str()?.to_owned(),
                                p["tofragment"].as_str().map(str::to_owned),
                            ),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let normalized = pairs("normalized");
    let converted = pairs("converted");
    let redirects = pairs("redirects");
    let interwiki: Vec<&str> = query
        .get("interwiki")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(|p| p["title"].as_str()).collect())
        .unwrap_or_default();
    let pages: HashMap<&str, &Value> = query
        .get("pages")
        .and_then(Value::as_array)
        .ok_or(AnswerError::Shape {
            what: "query.pages",
        })?
        .iter()
        .filter_map(|p| Some((p["title"].as_str()?, p)))
        .collect();

    let outcomes = requested
        .iter()
        .map(|asked| {
            let mut title = asked.clone();
            if let Some((to, _)) = normalized.get(&title) {
                title = to.clone();
            }
            if let Some((to, _)) = converted.get(&title) {
                title = to.clone();
            }
            let mut redirected_from = None;
            let mut fragment = None;
            if let Some((to, frag)) = redirects.get(&title) {
                redirected_from = Some(std::mem::replace(&mut title, to.clone()));
                fragment = frag.clone();
            }
            let outcome = if interwiki.contains(&title.as_str()) {
                TitleOutcome::Invalid {
                    reason: "an interwiki title".into(),
                }
            } else {
                match pages.get(title.as_str()) {
                    None => TitleOutcome::Invalid {
                        reason: "the answer does not name this title".into(),
                    },
                    Some(page) => page_outcome(page, title, redirected_from, fragment),
                }
            };
            (asked.clone(), outcome)
        })
        .collect();
    Ok(BatchAnswer {
        outcomes,
        cont: continuation(&value),
    })
}

fn page_outcome(
    page: &Value,
    title: String,
    redirected_from: Option<String>,
    fragment: Option<String>,
) -> TitleOutcome {
    if page.get("invalid").is_some() {
        let reason = page["invalidreason"].as_str().unwrap_or("invalid title");
        return TitleOutcome::Invalid {
            reason: reason.to_owned(),
        };
    }
    if page.get("special").is_some() {
        return TitleOutcome::Invalid {
            reason: "a special page".into(),
        };
    }
    if page.get("missing").is_some() {
        return TitleOutcome::Missing { title };
    }
    let Some(rev) = page.get("revisions").and_then(|r| r.get(0)) else {
        return TitleOutcome::Pending;
    };
    let main = &rev["slots"]["main"];
    let Some(content) = main["content"].as_str() else {
        // Hidden content (revision deleted) or a cut answer: nothing to store.
        return if main.get("texthidden").is_some() {
            TitleOutcome::Invalid {
                reason: "the revision's content is hidden".into(),
            }
        } else {
            TitleOutcome::Pending
        };
    };
    TitleOutcome::Found(Revision {
        title,
        pageid: page["pageid"].as_u64().unwrap_or_default(),
        revid: rev["revid"].as_u64().unwrap_or_default(),
        timestamp: rev["timestamp"].as_str().map(str::to_owned),
        content: content.to_owned(),
        content_model: main["contentmodel"].as_str().map(str::to_owned),
        content_format: main["contentformat"].as_str().map(str::to_owned),
        redirected_from,
        fragment,
    })
}

/// Parses a `meta=siteinfo` answer.
pub fn parse_siteinfo(body: &[u8]) -> Result<SiteInfo, AnswerError> {
    let value = json(body)?;
    let general = value
        .get("query")
        .and_then(|q| q.get("general"))
        .ok_or(AnswerError::Shape {
            what: "query.general",
        })?;
    let field = |k: &str| general[k].as_str().unwrap_or_default().to_owned();
    let info = SiteInfo {
        sitename: field("sitename"),
        server: field("server"),
        articlepath: field("articlepath"),
        generator: field("generator"),
    };
    if info.server.is_empty() || !info.articlepath.contains("$1") {
        return Err(AnswerError::Shape {
            what: "server and articlepath in query.general",
        });
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_map_through_normalisation_and_redirects() {
        let body = br#"{"batchcomplete":true,"query":{
            "normalized":[{"fromencoded":false,"from":"aether_Wisp","to":"Aether Wisp"}],
            "redirects":[{"from":"Aether Wisp","to":"\u00c6ther Wisp"},{"from":"Pyro","to":"Pyromancer","tofragment":"Features"}],
            "pages":[
              {"ns":0,"title":"Gone","missing":true},
              {"title":"<bad>","invalidreason":"The requested page title contains invalid characters: \"<\".","invalid":true},
              {"pageid":147,"ns":0,"title":"\u00c6ther Wisp","revisions":[{"revid":159,"parentid":0,"timestamp":"2026-01-01T00:00:00Z","slots":{"main":{"contentmodel":"wikitext","contentformat":"text/x-wiki","content":"{{Infobox creature}}"}}}]},
              {"pageid":9,"ns":0,"title":"Pyromancer","revisions":[{"revid":12,"slots":{"main":{"contentmodel":"wikitext","content":"x"}}}]},
              {"pageid":10,"ns":0,"title":"Later"}
            ]}}"#;
        let asked: Vec<String> = [
            "aether_Wisp",
            "Gone",
            "<bad>",
            "Pyro",
            "Later",
            "Unmentioned",
            "Æther Wisp",
        ]
        .map(String::from)
        .to_vec();
        let answer = parse_revisions(&asked, body).unwrap();
        assert_eq!(answer.cont, None);
        let outcomes: HashMap<_, _> = answer.outcomes.into_iter().collect();
        let TitleOutcome::Found(wisp) = &outcomes["aether_Wisp"] else {
            panic!("{outcomes:?}")
        };
        assert_eq!(wisp.title, "Æther Wisp");
        assert_eq!(wisp.redirected_from.as_deref(), Some("Aether Wisp"));
        assert_eq!((wisp.pageid, wisp.revid), (147, 159));
        assert_eq!(wisp.content_format.as_deref(), Some("text/x-wiki"));
        assert_eq!(
            outcomes["Æther Wisp"],
            TitleOutcome::Found(Revision {
                redirected_from: None,
                ..wisp.clone()
            })
        );
        assert_eq!(
            outcomes["Gone"],
            TitleOutcome::Missing {
                title: "Gone".into()
            }
        );
        assert!(
            matches!(&outcomes["<bad>"], TitleOutcome::Invalid { reason } if reason.contains("invalid characters"))
        );
        let TitleOutcome::Found(pyro) = &outcomes["Pyro"] else {
            panic!()
        };
        assert_eq!(pyro.fragment.as_deref(), Some("Features"));
        assert_eq!(outcomes["Later"], TitleOutcome::Pending);
        assert!(matches!(
            outcomes["Unmentioned"],
            TitleOutcome::Invalid { .. }
        ));
    }

    #[test]
    fn api_errors_and_bad_bodies() {
        let err = parse_revisions(
            &[],
            br#"{"error":{"code":"maxlag","info":"Waiting for db: 7 seconds lagged.","lag":7}}"#,
        )
        .unwrap_err();
        let AnswerError::Api(api) = &err else {
            panic!("{err}")
        };
        assert_eq!(api.code, "maxlag");
        assert_eq!(api.retry_after, Some(DEFAULT_MAXLAG_WAIT));
        assert_eq!(err.error_code(), "wiki.api.maxlag");
        let err = parse_revisions(&[], b"<html>Bad gateway</html>").unwrap_err();
        assert_eq!(err.error_code(), "wiki.badAnswer");
        assert!(err.to_string().contains("hint"));
        assert!(matches!(
            parse_revisions(&[], b"{}"),
            Err(AnswerError::Shape { .. })
        ));
    }

    #[test]
    fn list_pages_and_continuation() {
        let list = List::AllPages {
            namespace: 0,
            skip_redirects: false,
        };
        let a = parse_list(&list, br#"{"batchcomplete":true,"continue":{"apcontinue":"B","continue":"-||"},"query":{"allpages":[{"pageid":1,"ns":0,"title":"A"}]}}"#).unwrap();
        assert_eq!(
            a.items,
            [Listed {
                title: "A".into(),
                pageid: 1,
                ns: 0
            }]
        );
        assert_eq!(a.cont.unwrap()["apcontinue"], "B");
        let empty = parse_list(&list, br#"{"batchcomplete":true}"#).unwrap();
        assert!(empty.items.is_empty() && empty.cont.is_none());
    }

    #[test]
    fn article_urls() {
        let info = SiteInfo {
            sitename: "W".into(),
            server: "//127.0.0.1:8080".into(),
            articlepath: "/index.php/$1".into(),
            generator: "MediaWiki 1.39".into(),
        };
        let api = url::Url::parse("http://127.0.0.1:8080/api.php").unwrap();
        assert_eq!(
            info.article_url(&api, "Q&A Tavern"),
            "http://127.0.0.1:8080/index.php/Q%26A_Tavern"
        );
        assert_eq!(
            info.article_url(&api, "Sword of Ash/Reforged"),
            "http://127.0.0.1:8080/index.php/Sword_of_Ash/Reforged"
        );
        assert_eq!(
            info.article_url(&api, "Ka'Rath (boss): 100%"),
            "http://127.0.0.1:8080/index.php/Ka%27Rath_(boss):_100%25"
        );
        assert_eq!(
            info.article_url(&api, "Æther Wisp"),
            "http://127.0.0.1:8080/index.php/%C3%86ther_Wisp"
        );
    }
}
