//! The wiki's request log, written by `scripts/mediawiki`'s router before MediaWiki runs.

use std::path::Path;

use serde::Deserialize;
use url::form_urlencoded;

use crate::WikiError;

/// One request the wiki received: a line `{"method","uri","body"}` of `requests.log`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoggedRequest {
    /// `GET`, `POST`, …
    pub method: String,
    /// Path and query, as sent (`/api.php?action=query&…`).
    pub uri: String,
    /// The raw body of a POST (form-encoded for the API); empty for GET.
    pub body: String,
}

impl LoggedRequest {
    /// The path without the query (`/api.php`).
    pub fn path(&self) -> &str {
        self.uri.split('?').next().unwrap_or_default()
    }

    /// Every parameter, decoded: the query string's, then a form body's.
    pub fn params(&self) -> Vec<(String, String)> {
        let query = self.uri.split_once('?').map(|(_, q)| q).unwrap_or_default();
        form_urlencoded::parse(query.as_bytes())
            .chain(form_urlencoded::parse(self.body.as_bytes()))
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    /// The first value of parameter `name`, decoded.
    pub fn param(&self, name: &str) -> Option<String> {
        self.params()
            .into_iter()
            .find_map(|(k, v)| (k == name).then_some(v))
    }

    /// The titles of a `titles=A|B|C` request (empty when there is none).
    pub fn titles(&self) -> Vec<String> {
        self.param("titles")
            .map(|t| t.split('|').map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Whether this is an API request (`/api.php`).
    pub fn is_api(&self) -> bool {
        self.path() == "/api.php"
    }
}

pub(crate) fn read(path: &Path) -> Result<Vec<LoggedRequest>, WikiError> {
    let text = std::fs::read_to_string(path).map_err(|source| WikiError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse(&text, path)
}

fn parse(text: &str, path: &Path) -> Result<Vec<LoggedRequest>, WikiError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|source| WikiError::Parse {
                path: path.to_owned(),
                line: i + 1,
                source,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_query_and_body_parameters() {
        let text = concat!(
            r#"{"method":"GET","uri":"/api.php?action=query&titles=Q%26A%20Tavern|%2B1+Dagger&format=json","body":""}"#,
            "\n",
            r#"{"method":"POST","uri":"/api.php","body":"action=query&titles=Caf%C3%A9+of+Lanterns"}"#,
            "\n"
        );
        let reqs = parse(text, Path::new("requests.log")).unwrap();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].titles(), ["Q&A Tavern", "+1 Dagger"]);
        assert_eq!(reqs[0].param("format").as_deref(), Some("json"));
        assert!(reqs[1].is_api());
        assert_eq!(reqs[1].titles(), ["Café of Lanterns"]);
        assert_eq!(reqs[1].param("missing"), None);
    }

    #[test]
    fn a_bad_line_is_named() {
        let err = parse("{\"method\":\"GET\"}\n", Path::new("x.log")).unwrap_err();
        assert!(err.to_string().starts_with("x.log:1:"), "{err}");
    }
}
