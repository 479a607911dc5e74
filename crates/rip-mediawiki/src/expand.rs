//! Template expansion in batches: many template calls (of many pages) in one
//! `action=expandtemplates` request, each on its own lines between separators that no
//! expansion can produce, and the answer split back into one expansion per call.

use url::Url;

use crate::AnswerError;
use crate::answer::json;
use crate::request::{ApiRequest, base_params};

/// One `action=expandtemplates` request for `calls`, and how to split its answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpandBatch {
    /// The request (a POST form when long).
    pub request: ApiRequest,
    separator: String,
    calls: usize,
}

/// The request expanding `calls` (template calls as written, e.g. `{{Coin|gp=12}}`) as on
/// the page `title` (what `{{PAGENAME}}` inside a template says), with `maxlag`. `nonce`
/// makes the separator unique (a random number: a call containing it would make the answer
/// fail to split, never mix two calls up).
pub fn expand_request(
    api: &Url,
    calls: &[&str],
    title: &str,
    maxlag: Option<u32>,
    nonce: u64,
) -> ExpandBatch {
    let separator = format!("\nRIP-EXPAND-SEPARATOR-{nonce:016x}\n");
    let mut params = base_params("expandtemplates");
    params.push(("prop".into(), "wikitext".into()));
    params.push(("title".into(), title.into()));
    if let Some(lag) = maxlag {
        params.push(("maxlag".into(), lag.to_string()));
    }
    params.push(("text".into(), calls.join(&separator)));
    ExpandBatch {
        request: ApiRequest::new(api, &params),
        separator,
        calls: calls.len(),
    }
}

impl ExpandBatch {
    /// The expansions of the calls, in the order asked, each trimmed of the line breaks
    /// around it.
    pub fn parse(&self, body: &[u8]) -> Result<Vec<String>, AnswerError> {
        let value = json(body)?;
        let text = value["expandtemplates"]["wikitext"]
            .as_str()
            .ok_or(AnswerError::Shape {
                what: "expandtemplates.wikitext",
            })?;
        let parts: Vec<String> = text
            .split(self.separator.trim())
            .map(|part| part.trim_matches('\n').to_owned())
            .collect();
        if parts.len() != self.calls {
            return Err(AnswerError::Shape {
                what: "one expansion per call between the separators",
            });
        }
        Ok(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_go_between_separators_and_come_back_in_order() {
        let api = Url::parse("http://127.0.0.1:8080/api.php").unwrap();
        let batch = expand_request(&api, &["{{Coin|gp=1}}", "{{Yes}}"], "Ash Bow", Some(5), 7);
        let query: Vec<(String, String)> = batch.request.url.query_pairs().into_owned().collect();
        let get = |k: &str| {
            query
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("action"), Some("expandtemplates"));
        assert_eq!(get("prop"), Some("wikitext"));
        assert_eq!(get("title"), Some("Ash Bow"));
        assert_eq!(get("maxlag"), Some("5"));
        assert_eq!(
            get("text"),
            Some("{{Coin|gp=1}}\nRIP-EXPAND-SEPARATOR-0000000000000007\n{{Yes}}")
        );
        let answer = r#"{"expandtemplates":{"wikitext":"1 gp\nRIP-EXPAND-SEPARATOR-0000000000000007\n\n* Yes"}}"#;
        assert_eq!(batch.parse(answer.as_bytes()).unwrap(), ["1 gp", "* Yes"]);
        let short = r#"{"expandtemplates":{"wikitext":"1 gp"}}"#;
        assert!(matches!(
            batch.parse(short.as_bytes()),
            Err(AnswerError::Shape { .. })
        ));
        let refused = r#"{"error":{"code":"maxlag","info":"Waiting for db: 7 seconds lagged"}}"#;
        assert!(matches!(
            batch.parse(refused.as_bytes()),
            Err(AnswerError::Api(_))
        ));
    }
}
