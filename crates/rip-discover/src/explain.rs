//! A dry run of the scope (`rip-discover --explain URL…`): what a crawl with this
//! configuration would do with each URL, and which rule decides it, without fetching a page.
//!
//! Each URL goes through the steps a link found on a page goes through: canonicalisation
//! ([`rip_url`]: the fragment, escapes, the dropped query parameters), the three regexes of
//! [`scope`](crate::scope) against the canonical URL (domain, delimiter = `--follow`,
//! target), then robots.txt. robots.txt is fetched, once per origin, through the same HTTP
//! stack a crawl uses (the cache, politeness, retries), since what it says decides, and only
//! for URLs the scope keeps (a crawl asks no other host); with robots off
//! (`--ignore-robots`) nothing is fetched at all. No page is fetched: the
//! explanation is of the URL, not of the links on it.

use regex::Regex;
use rip_http::{Fetcher, HttpConfig};
use rip_url::Url;
use serde::Serialize;

use crate::scope::{Decision, Domain, Scope};
use crate::{Config, DiscoverError, STAGE};

/// What a crawl would do with one URL, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explained {
    /// The URL as given.
    pub url: String,
    /// Its canonical form, which the regexes see and a `ref` would carry (`None` when it
    /// is not an http(s) URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
    /// True when it is one of the start URLs: always traversed, whatever the domain and
    /// `--follow` say (a target when it matches `--follow` and `--target`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub start: bool,
    /// Why it is no URL to crawl (`not an http(s) URL`, a parse error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
    /// Query parameters canonicalisation removed, each with the pattern that removed it
    /// (`sid` by `--drop-param sid`, `utm_source` by `utm_*`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_params: Vec<String>,
    /// The domain check: `--domain`, or the start URLs' origins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<Check>,
    /// The delimiter (`--follow`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follow: Option<Check>,
    /// The target regex (`--target`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Check>,
    /// robots.txt's word on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub robots: Option<RobotsCheck>,
    /// What the crawl would do with it.
    pub verdict: Verdict,
}

/// One regex (or the start origins) and whether it accepts the URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// The rule: the regex as given, `*` for none (everything), or the start origins.
    pub rule: String,
    /// True when the rule accepts the URL.
    pub accepts: bool,
}

/// robots.txt's word on a URL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RobotsCheck {
    /// `allowed`, `disallowed`, `unreachable` (robots.txt could not be read: the crawl
    /// would not fetch the URL either), `notAsked` (out of scope: a crawl would not ask,
    /// and neither does the explanation) or `off` (`--ignore-robots`: not fetched).
    pub status: &'static str,
    /// The rule that disallowed it (`Disallow: /private/`), or why robots.txt could not be
    /// read (with its failure code).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// What a crawl would do with a URL found as a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Verdict {
    /// Fetched and written as a `ref` (matches the domain, the delimiter and the target).
    Target,
    /// Fetched for its links, not written (fails the target regex).
    Traverse,
    /// Ignored: fails the domain.
    OutOfDomain,
    /// Skipped: in the domain, fails the delimiter (`--follow`).
    NotFollowed,
    /// Written as an `expected` record naming the rule, never fetched.
    RobotsDisallowed,
    /// robots.txt could not be read: written as a failure, not fetched.
    RobotsUnreachable,
    /// Not an http(s) URL: dropped.
    Invalid,
}

impl Verdict {
    /// For a person.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Target => "fetched and written as a ref (a target)",
            Self::Traverse => "fetched for its links, not written (not a target)",
            Self::OutOfDomain => "ignored (out of the domain)",
            Self::NotFollowed => "skipped (in the domain, not followed)",
            Self::RobotsDisallowed => "not fetched: an `expected` record (robots.txt)",
            Self::RobotsUnreachable => "not fetched: robots.txt could not be read",
            Self::Invalid => "dropped (not an http(s) URL)",
        }
    }
}

/// Explains each of `urls` under `cfg`'s scope (its start URLs give the default domain),
/// canonicalisation and robots.txt; robots.txt is fetched when `cfg.http.robots` is on.
pub async fn explain(cfg: &Config, urls: &[String]) -> Result<Vec<Explained>, DiscoverError> {
    let scope = Scope::with_starts(cfg);
    let fetcher = match cfg.http.robots {
        true => Some(Fetcher::new(HttpConfig {
            stage: STAGE.into(),
            ..cfg.http.clone()
        })?),
        false => None,
    };
    // The start URLs' networks, as the crawl admits them (the network policy).
    for start in (cfg.starts.iter()).filter_map(|s| Url::parse(s).ok()) {
        fetcher.iter().for_each(|f| f.admit_start(&start));
    }
    let mut all = Vec::with_capacity(urls.len());
    for given in urls {
        let mut e = judge(cfg, &scope, given);
        let Some(url) = e.canonical.as_deref().and_then(|c| Url::parse(c).ok()) else {
            all.push(e);
            continue;
        };
        e.robots = Some(match &fetcher {
            // A crawl asks robots.txt only of the links it keeps: no other host is reached.
            Some(_) if !e.start && !scope.decide(&url).follows() => RobotsCheck {
                status: "notAsked",
                detail: Some("out of scope: a crawl would not ask".to_owned()),
            },
            Some(fetcher) => robots(fetcher, &url).await,
            None => RobotsCheck {
                status: "off",
                detail: None,
            },
        });
        e.verdict = verdict(&e, &scope);
        all.push(e);
    }
    Ok(all)
}

/// Canonicalisation and the three regexes (robots.txt comes after).
fn judge(cfg: &Config, scope: &Scope, given: &str) -> Explained {
    let mut e = Explained {
        url: given.to_owned(),
        canonical: None,
        start: false,
        invalid: None,
        dropped_params: Vec::new(),
        domain: None,
        follow: None,
        target: None,
        robots: None,
        verdict: Verdict::Invalid,
    };
    let url = match cfg.canon.parse(given) {
        Ok(url) => url,
        Err(why) => {
            e.invalid = Some(why.to_string());
            return e;
        }
    };
    e.dropped_params = dropped_params(cfg, given);
    e.start = cfg
        .starts
        .iter()
        .any(|s| cfg.canon.parse(s).is_ok_and(|s| s == url));
    let s = url.as_str();
    let check = |re: &Option<Regex>| Check {
        rule: re
            .as_ref()
            .map_or("*".to_owned(), |r| r.as_str().to_owned()),
        accepts: re.as_ref().is_none_or(|r| r.is_match(s)),
    };
    e.domain = Some(Check {
        rule: match &scope.domain {
            Domain::Regex(re) => re.as_str().to_owned(),
            Domain::Hosts(hosts) if hosts.is_empty() => {
                "the start URLs' origins (none given)".to_owned()
            }
            Domain::Hosts(hosts) => {
                let origins: Vec<String> = hosts.iter().map(|(h, p)| format!("{h}:{p}")).collect();
                format!("the start URLs' origins ({})", origins.join(", "))
            }
        },
        accepts: scope.in_domain(&url),
    });
    e.follow = Some(check(&scope.follow));
    e.target = Some(check(&scope.target));
    e.canonical = Some(url.into());
    e
}

/// The query parameters of `given` that canonicalisation drops, each `name (by pattern)`.
fn dropped_params(cfg: &Config, given: &str) -> Vec<String> {
    let Ok(url) = url::Url::parse(given.trim()) else {
        return Vec::new();
    };
    let mut dropped = Vec::new();
    for (name, _) in url.query_pairs() {
        if let Some(p) = cfg.canon.dropped().iter().find(|p| p.matches(&name)) {
            let pattern = match p {
                rip_url::ParamPattern::Exact(n) => n.clone(),
                rip_url::ParamPattern::Prefix(p) => format!("{p}*"),
            };
            dropped.push(format!("{name} (by {pattern})"));
        }
    }
    dropped
}

async fn robots(fetcher: &Fetcher, url: &Url) -> RobotsCheck {
    match fetcher.disallowed_by_robots(url).await {
        Ok(None) => RobotsCheck {
            status: "allowed",
            detail: None,
        },
        Ok(Some(skip)) => RobotsCheck {
            status: "disallowed",
            detail: skip.rule,
        },
        Err(f) => RobotsCheck {
            status: "unreachable",
            detail: Some(format!("{}: {}", f.class.code, f.class.message)),
        },
    }
}

/// The crawl's decision: the scope first (a link out of it is never asked of robots.txt),
/// then robots.txt.
fn verdict(e: &Explained, scope: &Scope) -> Verdict {
    let Some(canonical) = e.canonical.as_deref().and_then(|c| Url::parse(c).ok()) else {
        return Verdict::Invalid;
    };
    let decided = match (e.start, scope.start_is_target(&canonical)) {
        (true, true) => Decision::Target,
        (true, false) => Decision::Traverse,
        (false, _) => scope.decide(&canonical),
    };
    match decided {
        Decision::OutOfDomain => return Verdict::OutOfDomain,
        Decision::NotFollowed => return Verdict::NotFollowed,
        Decision::Traverse | Decision::Target => {}
    }
    match e.robots.as_ref().map(|r| r.status) {
        Some("disallowed") => Verdict::RobotsDisallowed,
        Some("unreachable") => Verdict::RobotsUnreachable,
        _ if decided == Decision::Target => Verdict::Target,
        _ => Verdict::Traverse,
    }
}

/// The readable form: the URL, then a line per step, then the verdict.
pub fn text(e: &Explained) -> String {
    let mut out = format!("{}\n", e.url);
    let mark = |ok: bool| if ok { "accepts" } else { "refuses" };
    if let Some(why) = &e.invalid {
        out.push_str(&format!("  invalid: {why}\n"));
    }
    if let Some(c) = &e.canonical
        && c != &e.url
    {
        out.push_str(&format!("  canonical: {c}\n"));
    }
    if e.start {
        out.push_str("  a start URL: traversed whatever the domain and --follow say\n");
    }
    for p in &e.dropped_params {
        out.push_str(&format!("  dropped parameter: {p}\n"));
    }
    for (name, check) in [
        ("domain", &e.domain),
        ("follow", &e.follow),
        ("target", &e.target),
    ] {
        if let Some(c) = check {
            out.push_str(&format!("  {name} {}: {}\n", mark(c.accepts), c.rule));
        }
    }
    if let Some(r) = &e.robots {
        let detail = r
            .detail
            .as_deref()
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        out.push_str(&format!("  robots.txt: {}{detail}\n", r.status));
    }
    out.push_str(&format!("  => {}\n", e.verdict.describe()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        Config {
            starts: vec!["http://shop.test/".into()],
            follow: Some(Regex::new("/(items|list)/").unwrap()),
            target: Some(Regex::new(r"/items/\d+$").unwrap()),
            canon: rip_url::Canonicalizer::default().drop_params(["sid"]),
            ..Config::default()
        }
    }

    fn judged(url: &str) -> Explained {
        let cfg = cfg();
        let scope = Scope::with_starts(&cfg);
        let mut e = judge(&cfg, &scope, url);
        e.verdict = verdict(&e, &scope);
        e
    }

    #[test]
    fn each_rule_is_said_and_decides_in_the_crawls_order() {
        let t = judged("http://shop.test/items/7?sid=x&utm_source=y#top");
        assert_eq!(t.canonical.as_deref(), Some("http://shop.test/items/7"));
        assert_eq!(t.dropped_params, ["sid (by sid)", "utm_source (by utm_*)"]);
        assert_eq!(t.verdict, Verdict::Target);
        assert_eq!(judged("http://shop.test/list/2").verdict, Verdict::Traverse);
        assert_eq!(
            judged("http://shop.test/about").verdict,
            Verdict::NotFollowed
        );
        let off = judged("http://elsewhere.test/items/7");
        assert_eq!(off.verdict, Verdict::OutOfDomain);
        let domain = off.domain.unwrap();
        assert_eq!(domain.rule, "the start URLs' origins (shop.test:80)");
        assert!(!domain.accepts);
        // A start URL is traversed, and a target only when --follow and --target match.
        let start = judged("http://shop.test/");
        assert!(start.start);
        assert_eq!(start.verdict, Verdict::Traverse);
        let bad = judged("mailto:a@b.test");
        assert_eq!(bad.verdict, Verdict::Invalid);
        assert!(bad.invalid.unwrap().contains("not an http(s) URL"));
    }

    #[test]
    fn the_readable_form_names_each_step() {
        let text = text(&judged("http://shop.test/items/x?sid=1"));
        for line in [
            "  canonical: http://shop.test/items/x\n",
            "  dropped parameter: sid (by sid)\n",
            "  domain accepts: the start URLs' origins (shop.test:80)\n",
            "  follow accepts: /(items|list)/\n",
            "  target refuses: /items/\\d+$\n",
            "  => fetched for its links, not written (not a target)\n",
        ] {
            assert!(text.contains(line), "{line:?} in {text}");
        }
    }
}
