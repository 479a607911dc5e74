//! The failure policy: ordered rules over a failure's category, status, error code, phase and
//! URL, and the default (retry while retryable and within budget, else capture).

use regex::Regex;
use rip_core::{ErrorCategory, Failure, Phase};
use std::path::Path;
use std::time::Duration;

mod render;

pub use crate::error::{FieldError, FieldProblem, PolicyError};
pub use render::RenderRule;

use crate::resolve::ResolveConfig;
use crate::spec::{OneOrMany, PolicySpec, RouteName, RuleSpec, StatusSpec, Strategy};

/// The default retry budget: a failure is retried while its round is at most this.
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// The default cap on a Retry-After hint honoured between rounds.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// Where a failure goes, as decided by the policy.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// Emit the `ref` again (next round).
    Retry,
    /// Emit candidate `ref`s found by these strategies.
    Resolve(Vec<Strategy>),
    /// Write an `error` document.
    Capture,
    /// Write an `expected` record with this reason.
    Expected(String),
    /// Not routed: passed through unchanged (`phase: write` annotations).
    PassThrough,
}

/// A route and the rule that chose it (`None`: the default policy).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The route.
    pub route: Route,
    /// The name of the rule that matched, if one did.
    pub rule: Option<String>,
}

/// A compiled failure policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Retry or resolve only while the failure's round is at most this.
    pub max_retries: u32,
    /// The longest Retry-After honoured.
    pub max_retry_after: Duration,
    /// Ordered rules.
    pub rules: Vec<Rule>,
    /// Candidate generation for the resolve route.
    pub resolve: ResolveConfig,
    /// Rules sending fetched pages to the browser.
    pub render: Vec<RenderRule>,
}

impl Default for Policy {
    fn default() -> Self {
        Self {
            max_retries: DEFAULT_MAX_RETRIES,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
            rules: Vec::new(),
            resolve: ResolveConfig::default(),
            render: Vec::new(),
        }
    }
}

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its name (`rules[N]` when the file gave none).
    pub name: String,
    categories: Option<Vec<ErrorCategory>>,
    statuses: Option<Vec<(u16, u16)>>,
    codes: Option<Vec<String>>,
    phases: Option<Vec<Phase>>,
    url: Option<Regex>,
    retryable: Option<bool>,
    action: Action,
}

#[derive(Debug, Clone)]
enum Action {
    Retry { max_retries: Option<u32> },
    Resolve { strategies: Option<Vec<Strategy>> },
    Capture,
    Expected { reason: String },
}

impl Policy {
    /// Reads a policy file: JSON when its name ends in `.json`, TOML otherwise.
    pub fn from_file(path: &Path) -> Result<Self, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_owned(),
            source,
        })?;
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let spec: PolicySpec = if is_json {
            serde_json::from_str(&text).map_err(|error| PolicyError::Json {
                path: path.to_owned(),
                error,
            })?
        } else {
            toml::from_str(&text).map_err(|error| PolicyError::Toml {
                path: path.to_owned(),
                error,
            })?
        };
        Self::from_spec(spec, path)
    }

    /// Checks a parsed policy and compiles it; `path` names it in errors.
    pub fn from_spec(spec: PolicySpec, path: &Path) -> Result<Self, PolicyError> {
        let invalid = |field: FieldError| PolicyError::Invalid {
            path: path.to_owned(),
            field,
        };
        let max_retry_after = match &spec.max_retry_after {
            None => DEFAULT_MAX_RETRY_AFTER,
            Some(text) => humantime::parse_duration(text).map_err(|e| {
                invalid(FieldError::new("maxRetryAfter", FieldProblem::Duration(e)))
            })?,
        };
        let rules = spec
            .rules
            .into_iter()
            .enumerate()
            .map(|(i, r)| compile_rule(i, r).map_err(invalid))
            .collect::<Result<Vec<_>, _>>()?;
        let resolve =
            ResolveConfig::from_spec(spec.resolve.unwrap_or_default()).map_err(invalid)?;
        let render = spec
            .render
            .into_iter()
            .enumerate()
            .map(|(i, r)| RenderRule::compile(i, r).map_err(invalid))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            max_retries: spec.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
            max_retry_after,
            rules,
            resolve,
            render,
        })
    }

    /// Decides the route of a failure.
    ///
    /// `phase: write` failures are annotations and pass through. The first matching rule
    /// decides; no match gets the default. Routes that send the URL back to `rip-fetch`
    /// (retry, resolve) are taken only while `attempt <= maxRetries` (so the last
    /// `rip-route` of a pipeline captures what is left); past it they become capture. A
    /// candidate URL (`resolves` set) is never resolved again.
    pub fn decide(&self, failure: &Failure) -> Decision {
        if failure.phase == Phase::Write {
            return Decision {
                route: Route::PassThrough,
                rule: None,
            };
        }
        let within = |budget: u32| failure.attempt <= budget;
        let Some(rule) = self.rules.iter().find(|r| r.matches(failure)) else {
            let route = if failure.retryable && within(self.max_retries) {
                Route::Retry
            } else {
                Route::Capture
            };
            return Decision { route, rule: None };
        };
        let route = match &rule.action {
            Action::Retry { max_retries } if within(max_retries.unwrap_or(self.max_retries)) => {
                Route::Retry
            }
            Action::Resolve { strategies }
                if within(self.max_retries) && failure.context.resolves.is_none() =>
            {
                Route::Resolve(
                    strategies
                        .clone()
                        .unwrap_or_else(|| self.resolve.strategies.clone()),
                )
            }
            Action::Retry { .. } | Action::Resolve { .. } | Action::Capture => Route::Capture,
            Action::Expected { reason } => Route::Expected(reason.clone()),
        };
        Decision {
            route,
            rule: Some(rule.name.clone()),
        }
    }

    /// The first render rule other than `auto` that sends `page` to the browser, if one
    /// does (see [`RenderRule`]): only HTML text pages not rendered yet are judged.
    pub fn render_rule(&self, page: &rip_core::Page) -> Option<&RenderRule> {
        if !render::judged(page) {
            return None;
        }
        self.render.iter().find(|r| !r.auto && r.matches(page))
    }

    /// Whether `page` goes to the browser, and why (its `renderedBecause`): the first rule
    /// whose regexes match it, an `auto` one only when `adaptive` finds that its content
    /// needs script. Only HTML text pages not rendered yet are judged.
    pub fn render_decision(
        &self,
        page: &rip_core::Page,
        adaptive: &rip_adaptive::Adaptive,
    ) -> Option<rip_core::RenderedBecause> {
        if !render::judged(page) {
            return None;
        }
        render::decide(&self.render, page, adaptive)
    }
}

impl Rule {
    fn matches(&self, f: &Failure) -> bool {
        self.categories
            .as_ref()
            .is_none_or(|cs| cs.contains(&f.category))
            && self.statuses.as_ref().is_none_or(|ranges| {
                f.status
                    .is_some_and(|s| ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&s)))
            })
            && self.codes.as_ref().is_none_or(|codes| {
                f.errors
                    .last()
                    .is_some_and(|e| codes.iter().any(|c| code_matches(c, &e.code)))
            })
            && self.phases.as_ref().is_none_or(|ps| ps.contains(&f.phase))
            && self.url.as_ref().is_none_or(|re| re.is_match(&f.url))
            && self.retryable.is_none_or(|r| r == f.retryable)
    }
}

fn code_matches(pattern: &str, code: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => code.starts_with(prefix),
        None => pattern == code,
    }
}

fn compile_rule(i: usize, spec: RuleSpec) -> Result<Rule, FieldError> {
    let at = |field: &str, problem: FieldProblem| {
        FieldError::new(format!("rules[{i}].{field}"), problem)
    };
    let name = spec.name.clone().unwrap_or_else(|| format!("rules[{i}]"));
    let statuses = spec
        .status
        .map(|s| {
            s.into_vec()
                .into_iter()
                .map(|s| parse_status(&s).map_err(|p| at("status", p)))
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let url = spec
        .url
        .map(|u| Regex::new(&u).map_err(|e| at("url", FieldProblem::UrlRegex(e))))
        .transpose()?;
    if spec.reason.is_some() && spec.route != RouteName::Expected {
        return Err(at("reason", FieldProblem::ReasonOutsideExpected));
    }
    if spec.max_retries.is_some() && spec.route != RouteName::Retry {
        return Err(at("maxRetries", FieldProblem::MaxRetriesOutsideRetry));
    }
    if spec.strategies.is_some() && spec.route != RouteName::Resolve {
        return Err(at("strategies", FieldProblem::StrategiesOutsideResolve));
    }
    let action = match spec.route {
        RouteName::Retry => Action::Retry {
            max_retries: spec.max_retries,
        },
        RouteName::Resolve => Action::Resolve {
            strategies: spec.strategies,
        },
        RouteName::Capture => Action::Capture,
        RouteName::Expected => Action::Expected {
            reason: spec
                .reason
                .filter(|r| !r.trim().is_empty())
                .ok_or_else(|| at("reason", FieldProblem::MissingReason))?,
        },
    };
    Ok(Rule {
        name,
        categories: spec.category.map(OneOrMany::into_vec),
        statuses,
        codes: spec.code.map(OneOrMany::into_vec),
        phases: spec.phase.map(OneOrMany::into_vec),
        url,
        retryable: spec.retryable,
        action,
    })
}

/// Parses `404`, `"404"`, `"4xx"` or `"500-599"` into an inclusive range.
fn parse_status(spec: &StatusSpec) -> Result<(u16, u16), FieldProblem> {
    let bad = |s: &str| FieldProblem::Status(s.to_owned());
    let (lo, hi) = match spec {
        StatusSpec::Code(c) => (*c, *c),
        StatusSpec::Pattern(p) => {
            let p = p.trim();
            if let Some(class) = p.strip_suffix("xx").or_else(|| p.strip_suffix("XX")) {
                let d: u16 = class.parse().map_err(|_| bad(p))?;
                (d * 100, d * 100 + 99)
            } else if let Some((a, b)) = p.split_once('-') {
                let lo = a.trim().parse().map_err(|_| bad(p))?;
                let hi = b.trim().parse().map_err(|_| bad(p))?;
                (lo, hi)
            } else {
                let c = p.parse().map_err(|_| bad(p))?;
                (c, c)
            }
        }
    };
    if !(100..=999).contains(&lo) || !(100..=999).contains(&hi) || lo > hi {
        let shown = match spec {
            StatusSpec::Code(c) => c.to_string(),
            StatusSpec::Pattern(p) => p.clone(),
        };
        return Err(bad(&shown));
    }
    Ok((lo, hi))
}

#[cfg(test)]
mod tests;
