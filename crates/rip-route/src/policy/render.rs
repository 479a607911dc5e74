//! Render rules: which fetched pages need a browser.
//!
//! A page a rule matches comes out of `rip-route` as a `ref` marked `needsBrowser`, for the
//! `rip-render` after it. Only HTML pages served as text are judged, and never one that
//! was rendered already (its `render` object is set) or was meant for the browser.

use regex::Regex;
use rip_core::{BodyEncoding, Page};

use crate::error::{FieldError, FieldProblem};
use crate::spec::RenderRuleSpec;

/// One compiled render rule.
#[derive(Debug, Clone)]
pub struct RenderRule {
    /// Its name (`render[N]` when the file gave none).
    pub name: String,
    url: Option<Regex>,
    body: Option<Regex>,
    body_lacks: Option<Regex>,
}

impl RenderRule {
    /// A rule sending every page whose URL matches `url` to the browser (`--render-url`).
    pub fn for_url(url: &str) -> Result<Self, FieldError> {
        let spec = RenderRuleSpec {
            name: Some(format!("--render-url {url}")),
            url: Some(url.to_owned()),
            ..RenderRuleSpec::default()
        };
        Self::compile(0, spec).map_err(|mut e| {
            e.field = "--render-url".into();
            e
        })
    }

    /// Checks and compiles `render[i]`.
    pub fn compile(i: usize, spec: RenderRuleSpec) -> Result<Self, FieldError> {
        let regex = |field: &str, text: Option<String>, bad: fn(regex::Error) -> FieldProblem| {
            text.map(|t| Regex::new(&t))
                .transpose()
                .map_err(|e| FieldError::new(format!("render[{i}].{field}"), bad(e)))
        };
        let rule = Self {
            name: spec.name.unwrap_or_else(|| format!("render[{i}]")),
            url: regex("url", spec.url, FieldProblem::UrlRegex)?,
            body: regex("body", spec.body, FieldProblem::BodyRegex)?,
            body_lacks: regex("bodyLacks", spec.body_lacks, FieldProblem::BodyRegex)?,
        };
        if rule.url.is_none() && rule.body.is_none() && rule.body_lacks.is_none() {
            return Err(FieldError::new(
                format!("render[{i}]"),
                FieldProblem::NoRenderMatcher,
            ));
        }
        Ok(rule)
    }

    /// Whether this rule sends `page` to the browser.
    pub fn matches(&self, page: &Page) -> bool {
        self.url.as_ref().is_none_or(|re| re.is_match(&page.url))
            && self.body.as_ref().is_none_or(|re| re.is_match(&page.body))
            && self
                .body_lacks
                .as_ref()
                .is_none_or(|re| !re.is_match(&page.body))
    }
}

/// Whether render rules may judge `page` at all: an HTML text page, not rendered yet and
/// not already meant for the browser.
pub fn judged(page: &Page) -> bool {
    let html = page.content_type.as_deref().is_none_or(|ct| {
        let ct = ct.to_ascii_lowercase();
        ct.contains("html")
    });
    html && page.body_encoding == BodyEncoding::Text
        && page.render.is_none()
        && !page.context.needs_browser
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Policy, PolicySpec};
    use std::path::Path;

    fn page(url: &str, content_type: &str, body: &str) -> Page {
        serde_json::from_value(serde_json::json!({
            "url": url, "finalUrl": url, "status": 200, "contentType": content_type,
            "fetchedAt": "2026-12-03T00:00:00Z", "body": body, "depth": 1
        }))
        .unwrap()
    }

    fn policy(toml_text: &str) -> Result<Policy, String> {
        let spec: PolicySpec = toml::from_str(toml_text).map_err(|e| e.to_string())?;
        Policy::from_spec(spec, Path::new("p.toml")).map_err(|e| e.to_string())
    }

    fn rule_for(p: &Policy, page: &Page) -> Option<String> {
        p.render_rule(page).map(|r| r.name.clone())
    }

    #[test]
    fn every_matcher_of_a_rule_must_match_and_the_first_rule_names_itself() {
        let p = policy(
            "[[render]]\nurl = '/shop/'\nbodyLacks = 'class=\"product\"'\n\
             [[render]]\nname = \"loading\"\nbody = 'Loading'\n",
        )
        .unwrap();
        let html = "text/html; charset=utf-8";
        let empty = page("http://h/shop/1", html, "<ul></ul>");
        assert_eq!(rule_for(&p, &empty).as_deref(), Some("render[0]"));
        let full = page("http://h/shop/1", html, "<li class=\"product\">A</li>");
        assert_eq!(rule_for(&p, &full), None, "the content is there");
        let elsewhere = page("http://h/blog/1", html, "<ul></ul>");
        assert_eq!(rule_for(&p, &elsewhere), None, "the URL does not match");
        let loading = page("http://h/app", html, "<p>Loading…</p>");
        assert_eq!(rule_for(&p, &loading).as_deref(), Some("loading"));
    }

    #[test]
    fn only_unrendered_html_text_pages_are_judged() {
        let p = policy("[[render]]\nurl = '.'\n").unwrap();
        assert!(
            p.render_rule(&page("http://h/a", "text/html", "x"))
                .is_some()
        );
        assert!(
            p.render_rule(&page("http://h/a", "application/xhtml+xml", "x"))
                .is_some()
        );
        assert!(
            p.render_rule(&page("http://h/a.json", "application/json", "{}"))
                .is_none()
        );
        let mut rendered = page("http://h/a", "text/html", "x");
        rendered.render = Some(rip_core::Rendered::default());
        assert!(p.render_rule(&rendered).is_none(), "rendered already");
        let mut meant = page("http://h/a", "text/html", "x");
        meant.context.needs_browser = true;
        assert!(p.render_rule(&meant).is_none());
        let mut binary = page("http://h/a", "text/html", "eA==");
        binary.body_encoding = BodyEncoding::Base64;
        assert!(p.render_rule(&binary).is_none());
    }

    #[test]
    fn bad_render_rules_name_the_field() {
        let err = policy("[[render]]\nname = \"nothing\"\n").unwrap_err();
        assert!(
            err.contains("render[0]: a render rule needs `url`"),
            "{err}"
        );
        let err = policy("[[render]]\nurl = 'a'\n[[render]]\nbodyLacks = '(['\n").unwrap_err();
        assert!(
            err.contains("p.toml: render[1].bodyLacks: not a valid regex"),
            "{err}"
        );
        let err = policy("[[render]]\nurls = 'a'\n").unwrap_err();
        assert!(err.contains("unknown field `urls`"), "{err}");
        let err = RenderRule::for_url("(").unwrap_err().to_string();
        assert!(err.starts_with("--render-url: not a valid regex"), "{err}");
    }
}
