//! Candidate URLs for the resolve route: `crossLocator`, `canonical` and `search`.
//!
//! Pure functions of the failure record: `rip-route` makes no HTTP request. The next
//! `rip-fetch` tries the candidates and the `rip-route` after it picks the outcome (see
//! the crate docs, "Resolve groups").

use regex::Regex;
use rip_core::Failure;
use url::Url;

use crate::error::{FieldError, FieldProblem};
use crate::spec::{ResolveSpec, Strategy};

/// The default number of candidates tried for one failed URL.
pub const DEFAULT_BUDGET: u32 = 2;

/// The default `crossLocator` pattern: `/<category>/<digits>.html` (or `.htm`, or no
/// extension) and `/<Category>.aspx?ID=<digits>`.
pub const DEFAULT_CATEGORY_PATTERN: &str =
    r"/(?P<category>[^/?#.]+)(?:\.aspx\?(?i:id)=|/)(?P<id>\d+)(?:\.html?)?(?:[?#&]|$)";

/// Most bytes of a failed response read when looking for `<link rel=canonical>`.
pub const CANONICAL_SCAN_LIMIT: usize = 512 * 1024;

/// Compiled resolve configuration.
#[derive(Debug, Clone)]
pub struct ResolveConfig {
    /// Strategies in order, when a rule names none.
    pub strategies: Vec<Strategy>,
    /// Categories for `crossLocator`, in order of preference.
    pub category_set: Vec<String>,
    /// Locates the category in a URL (named group `category`).
    pub pattern: Regex,
    /// The `search` template, with `{q}`.
    pub search_url: Option<String>,
    /// Most candidates per failed URL.
    pub budget: usize,
    /// A candidate must mention the failed link's text to count (see the spec).
    pub match_link_text: bool,
}

impl Default for ResolveConfig {
    fn default() -> Self {
        Self::from_spec(ResolveSpec::default()).expect("the defaults are valid")
    }
}

impl ResolveConfig {
    /// Checks and compiles the `[resolve]` table; errors name the field.
    pub fn from_spec(spec: ResolveSpec) -> Result<Self, FieldError> {
        let pattern_text = spec.pattern.as_deref().unwrap_or(DEFAULT_CATEGORY_PATTERN);
        let pattern = Regex::new(pattern_text)
            .map_err(|e| FieldError::new("resolve.pattern", FieldProblem::PatternRegex(e)))?;
        if !pattern.capture_names().any(|n| n == Some("category")) {
            return Err(FieldError::new(
                "resolve.pattern",
                FieldProblem::NoCategoryGroup,
            ));
        }
        if let Some(t) = &spec.search_url {
            let probe = t.replace("{q}", "probe");
            if !t.contains("{q}") || Url::parse(&probe).is_err() {
                return Err(FieldError::new(
                    "resolve.searchUrl",
                    FieldProblem::SearchUrl(t.clone()),
                ));
            }
        }
        if spec.budget == Some(0) {
            return Err(FieldError::new("resolve.budget", FieldProblem::ZeroBudget));
        }
        Ok(Self {
            strategies: spec.strategies.unwrap_or_else(|| {
                vec![
                    Strategy::CrossLocator,
                    Strategy::Canonical,
                    Strategy::Search,
                ]
            }),
            category_set: spec.category_set,
            pattern,
            search_url: spec.search_url,
            budget: spec.budget.unwrap_or(DEFAULT_BUDGET) as usize,
            match_link_text: spec.match_link_text.unwrap_or(false),
        })
    }

    /// The candidate URLs for a failure, best first: each strategy in order, duplicates and
    /// the failed URL itself left out, at most `budget`. Only `http`/`https` URLs.
    pub fn candidates(&self, strategies: &[Strategy], failure: &Failure) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for strategy in strategies {
            let found = match strategy {
                Strategy::CrossLocator => self.cross_locator(&failure.url),
                Strategy::Canonical => canonical(failure).into_iter().collect(),
                Strategy::Search => self.search(failure).into_iter().collect(),
            };
            for c in found {
                if out.len() >= self.budget {
                    return out;
                }
                if c != failure.url && !out.contains(&c) && is_http(&c) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// The failed URL with its category replaced by each other category of the set.
    fn cross_locator(&self, url: &str) -> Vec<String> {
        let Some(caps) = self.pattern.captures(url) else {
            return Vec::new();
        };
        let Some(cat) = caps.name("category") else {
            return Vec::new();
        };
        let own = cat.as_str();
        let known = self.category_set.iter().any(|c| c == own)
            || self
                .category_set
                .iter()
                .any(|c| c.eq_ignore_ascii_case(own));
        if !known {
            return Vec::new();
        }
        self.category_set
            .iter()
            .filter(|c| !c.eq_ignore_ascii_case(own))
            .map(|c| format!("{}{}{}", &url[..cat.start()], c, &url[cat.end()..]))
            .collect()
    }

    fn search(&self, failure: &Failure) -> Option<String> {
        let template = self.search_url.as_ref()?;
        let text = failure
            .context
            .link_text
            .as_deref()
            .or(failure.context.title.as_deref())?
            .trim();
        if text.is_empty() {
            return None;
        }
        let q: String = url::form_urlencoded::byte_serialize(text.as_bytes()).collect();
        Some(template.replace("{q}", &q))
    }
}

fn is_http(url: &str) -> bool {
    Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
}

/// The `<link rel="canonical" href>` of the failed response's body, resolved against the
/// URL it came from, when the body looks like HTML.
fn canonical(failure: &Failure) -> Option<String> {
    let body = failure.body.as_deref()?;
    if let Some(ct) = &failure.content_type
        && !ct.to_ascii_lowercase().contains("html")
    {
        return None;
    }
    let mut end = body.len().min(CANONICAL_SCAN_LIMIT);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    let head = &body[..end];
    let head = match head.to_ascii_lowercase().find("</head") {
        Some(i) => &head[..i],
        None => head,
    };
    let doc = scraper::Html::parse_document(head);
    let links = scraper::Selector::parse("link[href]").expect("a valid selector");
    let href = doc.select(&links).find_map(|el| {
        let rel = el.value().attr("rel")?;
        rel.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case("canonical"))
            .then(|| el.value().attr("href"))
            .flatten()
    })?;
    let base = Url::parse(failure.final_url.as_deref().unwrap_or(&failure.url)).ok()?;
    let resolved = base.join(href.trim()).ok()?;
    Some(resolved.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rip_core::{ErrorCategory, ErrorEntry, Phase};

    fn failure(url: &str) -> Failure {
        let mut f = Failure::new(
            url,
            ErrorCategory::Permanent,
            Phase::Fetch,
            ErrorEntry::new("httpError.permanent", "HTTP 404", "rip-fetch"),
        );
        f.status = Some(404);
        f
    }

    fn config(categories: &[&str]) -> ResolveConfig {
        ResolveConfig::from_spec(ResolveSpec {
            category_set: categories.iter().map(|s| s.to_string()).collect(),
            search_url: Some("http://h/search?q={q}".into()),
            budget: Some(5),
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn cross_locator_swaps_the_category_of_both_url_shapes() {
        let cfg = config(&["ancestries", "spells", "classes"]);
        let all = [Strategy::CrossLocator];
        assert_eq!(
            cfg.candidates(&all, &failure("http://h:1/classes/77.html")),
            vec!["http://h:1/ancestries/77.html", "http://h:1/spells/77.html"]
        );
        let cfg = config(&["Ancestries", "Classes"]);
        assert_eq!(
            cfg.candidates(&all, &failure("https://2e.aonprd.com/Classes.aspx?ID=77")),
            vec!["https://2e.aonprd.com/Ancestries.aspx?ID=77"]
        );
    }

    #[test]
    fn cross_locator_needs_a_known_category_and_an_id() {
        let cfg = config(&["ancestries", "spells"]);
        let all = [Strategy::CrossLocator];
        assert!(
            cfg.candidates(&all, &failure("http://h/items/item-99.html"))
                .is_empty()
        );
        assert!(
            cfg.candidates(&all, &failure("http://h/blog/77.html"))
                .is_empty()
        );
        assert!(
            cfg.candidates(&all, &failure("http://h/spells/"))
                .is_empty()
        );
    }

    #[test]
    fn the_budget_cuts_candidates_in_strategy_order() {
        let mut cfg = config(&["a", "b", "c", "d"]);
        cfg.budget = 2;
        let got = cfg.candidates(
            &[Strategy::Search, Strategy::CrossLocator],
            &Failure {
                context: rip_core::Context {
                    link_text: Some("Cat folk".into()),
                    ..Default::default()
                },
                ..failure("http://h/d/1.html")
            },
        );
        assert_eq!(got, vec!["http://h/search?q=Cat+folk", "http://h/a/1.html"]);
    }

    #[test]
    fn canonical_reads_the_failed_body_and_resolves_relative_hrefs() {
        let cfg = config(&[]);
        let mut f = failure("http://h/old/7.html");
        f.final_url = Some("http://h/moved/7.html".into());
        f.content_type = Some("text/html".into());
        f.body = Some(
            r#"<html><head><LINK REL="Canonical" href=" ../items/7.html "></head><body>gone</body>"#
                .into(),
        );
        assert_eq!(
            cfg.candidates(&[Strategy::Canonical], &f),
            vec!["http://h/items/7.html"]
        );
        f.body = Some(r#"<link rel="canonical" href="http://h/old/7.html">"#.into());
        assert!(
            cfg.candidates(&[Strategy::Canonical], &f).is_empty(),
            "a canonical naming the failed URL itself is no candidate"
        );
        f.body = Some(r#"<link rel="canonical" href="javascript:alert(1)">"#.into());
        assert!(cfg.candidates(&[Strategy::Canonical], &f).is_empty());
        f.content_type = Some("application/json".into());
        f.body = Some(r#"<link rel="canonical" href="/x">"#.into());
        assert!(cfg.candidates(&[Strategy::Canonical], &f).is_empty());
    }

    #[test]
    fn search_needs_link_text_or_a_title() {
        let cfg = config(&[]);
        assert!(
            cfg.candidates(&[Strategy::Search], &failure("http://h/x"))
                .is_empty()
        );
        let mut f = failure("http://h/x");
        f.context.title = Some("Dragonbone Lute & co".into());
        assert_eq!(
            cfg.candidates(&[Strategy::Search], &f),
            vec!["http://h/search?q=Dragonbone+Lute+%26+co"]
        );
    }

    #[test]
    fn bad_resolve_settings_name_the_field() {
        let err = ResolveConfig::from_spec(ResolveSpec {
            pattern: Some("/(\\d+)".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(err.field, "resolve.pattern");
        let err = ResolveConfig::from_spec(ResolveSpec {
            search_url: Some("/search?q=x".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(err.field, "resolve.searchUrl");
        let err = ResolveConfig::from_spec(ResolveSpec {
            budget: Some(0),
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(err.field, "resolve.budget");
    }
}
