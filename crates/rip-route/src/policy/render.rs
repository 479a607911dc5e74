//! Render rules: which fetched pages need a browser.
//!
//! A page a rule matches comes out of `rip-route` as a `ref` marked `needsBrowser`, for the
//! `rip-render` after it. Only HTML pages served as text are judged, and never one that
//! was rendered already (its `render` object is set) or was meant for the browser.
//!
//! An `auto` rule (`--render auto`) asks `rip-adaptive` about the pages its other
//! matchers match: those whose HTML shows that their content needs script go on, with
//! the signal and figures that said so (or the URL pattern whose decision was learnt) as
//! the ref's `renderedBecause`; the others go on to the next rule.

use regex::Regex;
use rip_adaptive::Adaptive;
use rip_core::{BodyEncoding, Page, RenderedBecause};

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
    /// Adaptive: of the pages the regexes match, those that need script.
    pub auto: bool,
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

    /// The rule of `--render auto`: every page whose content needs script.
    pub fn auto() -> Self {
        Self {
            name: "--render auto".into(),
            url: None,
            body: None,
            body_lacks: None,
            auto: true,
        }
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
            auto: spec.auto,
        };
        let regexes = [
            rule.url.is_some(),
            rule.body.is_some(),
            rule.body_lacks.is_some(),
        ];
        if !rule.auto && regexes.iter().all(|r| !r) {
            return Err(FieldError::new(
                format!("render[{i}]"),
                FieldProblem::NoRenderMatcher,
            ));
        }
        Ok(rule)
    }

    /// Whether this rule's regexes match `page` (for an `auto` rule, the pages it asks
    /// `rip-adaptive` about).
    pub fn matches(&self, page: &Page) -> bool {
        self.url.as_ref().is_none_or(|re| re.is_match(&page.url))
            && self.body.as_ref().is_none_or(|re| re.is_match(&page.body))
            && self
                .body_lacks
                .as_ref()
                .is_none_or(|re| !re.is_match(&page.body))
    }
}

/// Why the first rule that sends `page` to the browser does (see
/// [`crate::Policy::render_decision`]).
pub(crate) fn decide(
    rules: &[RenderRule],
    page: &Page,
    adaptive: &Adaptive,
) -> Option<RenderedBecause> {
    let mut judged = None;
    for rule in rules.iter().filter(|r| r.matches(page)) {
        if !rule.auto {
            return Some(RenderedBecause {
                rule: Some(rule.name.clone()),
                ..RenderedBecause::default()
            });
        }
        // Judged once, whatever the number of auto rules: learning counts pages.
        let decision = judged.get_or_insert_with(|| adaptive.decide(&page.url, &page.body));
        if let Some(because) = &decision.because {
            return Some(because.clone());
        }
    }
    None
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
    fn an_auto_rule_sends_the_pages_that_need_script_and_says_why() {
        let p = policy(
            "[[render]]\nname = \"market\"\nurl = '/market/'\n\
             [[render]]\nauto = true\nurl = '/shop/'\n",
        )
        .unwrap();
        let a = Adaptive::default();
        let html = "text/html";
        let shell = "<div id=app></div><script src=/app.js></script>";
        let why = |url: &str, body: &str| {
            p.render_decision(&page(url, html, body), &a)
                .map(|b| serde_json::to_value(b).unwrap())
        };
        assert_eq!(
            why("http://h/market/", "<p>whatever</p>"),
            Some(serde_json::json!({"rule": "market"}))
        );
        assert_eq!(
            why("http://h/shop/1", shell),
            Some(serde_json::json!({"signal": "emptyAppRoot", "scripts": 1, "appRootChars": 0}))
        );
        let full = "<h1>Lantern</h1><p>A brass lantern, 12 gp, burns for a night.</p>\
                    <script src=/app.js></script>";
        assert_eq!(why("http://h/shop/2", full), None, "its content is there");
        assert_eq!(why("http://h/blog/1", shell), None, "the auto rule's url");
        assert_eq!(a.counts().checked, 2, "the other pages were not judged");
        assert!(
            p.render_rule(&page("http://h/shop/1", html, shell))
                .is_none()
        );
    }

    #[test]
    fn bad_render_rules_name_the_field() {
        let err = policy("[[render]]\nname = \"nothing\"\n").unwrap_err();
        assert!(
            err.contains("render[0]: a render rule needs `url`, `body`, `bodyLacks` or `auto`"),
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
