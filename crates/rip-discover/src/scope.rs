//! The three regexes of the reference's link crawler, exactly as it defines them:
//!
//! | regex | flag | a link that matches… | default |
//! |---|---|---|---|
//! | domain | `--domain` | …is considered at all; one that does not is ignored | the start URLs' origins (host and port) |
//! | delimiter | `--follow` | …is traversed (fetched, its links extracted); one that does not is skipped | every considered link |
//! | target | `--target` | …*and the delimiter* is collected (written as a `ref`); others are traversed, not returned | every traversed link |
//!
//! So a link can be traversed without being collected, and a link that matches the
//! target but not the delimiter is neither traversed nor collected. Regexes are matched
//! (unanchored, as JavaScript's `RegExp.test`) against the canonical URL.
//!
//! The scope is assembled here only ([`Scope::of`], [`Scope::with_starts`]): the crawl,
//! `--explain` and the state folder's parameters read the same one.

use std::collections::BTreeSet;

use regex::Regex;
use rip_url::Url;

use crate::Config;

/// What becomes of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Fails the domain regex: ignored.
    OutOfDomain,
    /// In the domain, fails the delimiter: skipped.
    NotFollowed,
    /// Traversed, not collected.
    Traverse,
    /// Traversed and collected.
    Target,
}

impl Decision {
    /// True for [`Decision::Traverse`] and [`Decision::Target`].
    pub fn follows(self) -> bool {
        matches!(self, Self::Traverse | Self::Target)
    }
}

/// Which links are considered: a regex, or the start URLs' hosts.
#[derive(Debug, Clone)]
pub enum Domain {
    /// `--domain REGEX`.
    Regex(Regex),
    /// The host and port of the start URLs (added as start URLs arrive).
    Hosts(BTreeSet<(String, u16)>),
}

/// The three regexes.
#[derive(Debug, Clone)]
pub struct Scope {
    /// Links that are considered at all.
    pub domain: Domain,
    /// The delimiter: links that are traversed (`None`: all considered links).
    pub follow: Option<Regex>,
    /// Links that are collected among the traversed ones (`None`: all of them).
    pub target: Option<Regex>,
}

impl Default for Scope {
    fn default() -> Self {
        Self {
            domain: Domain::Hosts(BTreeSet::new()),
            follow: None,
            target: None,
        }
    }
}

impl Scope {
    /// The scope of a crawl configured by `cfg`, before any start URL: its three regexes,
    /// and without `--domain` no origin yet (each start URL adds its own, [`Scope::add_start`]).
    pub fn of(cfg: &Config) -> Self {
        Self {
            domain: match &cfg.domain {
                Some(re) => Domain::Regex(re.clone()),
                None => Domain::Hosts(BTreeSet::new()),
            },
            follow: cfg.follow.clone(),
            target: cfg.target.clone(),
        }
    }

    /// [`Scope::of`] with the origins of `cfg`'s start URLs (canonicalised; one that is
    /// not a valid URL adds nothing): the scope of a crawl whose input adds no start.
    pub fn with_starts(cfg: &Config) -> Self {
        let mut scope = Self::of(cfg);
        for start in &cfg.starts {
            if let Ok(url) = cfg.canon.parse(start) {
                scope.add_start(&url);
            }
        }
        scope
    }

    /// True when [`Scope::add_start`] with `url` would change the scope (a new origin for
    /// the default domain).
    pub fn widened_by(&self, url: &Url) -> bool {
        matches!(&self.domain, Domain::Hosts(h) if !h.contains(&origin_of(url)))
    }

    /// Adds a start URL's origin to the default domain (no effect with `--domain`).
    pub fn add_start(&mut self, url: &Url) {
        if let Domain::Hosts(hosts) = &mut self.domain {
            hosts.insert(origin_of(url));
        }
    }

    /// True when `url` passes the domain regex (or is on a start host).
    pub fn in_domain(&self, url: &Url) -> bool {
        match &self.domain {
            Domain::Regex(re) => re.is_match(url.as_str()),
            Domain::Hosts(hosts) => hosts.iter().any(|(h, p)| {
                url.port_or_known_default() == Some(*p) && url.host_str() == Some(h.as_str())
            }),
        }
    }

    /// The fate of a link.
    pub fn decide(&self, url: &Url) -> Decision {
        if !self.in_domain(url) {
            return Decision::OutOfDomain;
        }
        let s = url.as_str();
        if self.follow.as_ref().is_some_and(|re| !re.is_match(s)) {
            return Decision::NotFollowed;
        }
        if self.target.as_ref().is_none_or(|re| re.is_match(s)) {
            Decision::Target
        } else {
            Decision::Traverse
        }
    }

    /// Whether a start URL is collected: start URLs are always traversed (they are where
    /// the crawl begins) and collected when they match the delimiter and the target.
    pub fn start_is_target(&self, url: &Url) -> bool {
        let s = url.as_str();
        self.follow.as_ref().is_none_or(|re| re.is_match(s))
            && self.target.as_ref().is_none_or(|re| re.is_match(s))
    }

    /// A stable description of the scope, for the state folder's parameters.
    pub fn describe(&self) -> String {
        let d = match &self.domain {
            Domain::Regex(re) => format!("domain={}", re.as_str()),
            Domain::Hosts(h) => {
                format!(
                    "hosts={}",
                    h.iter()
                        .map(|(h, p)| format!("{h}:{p}"))
                        .collect::<Vec<_>>()
                        .join(",")
                )
            }
        };
        format!(
            "{d} follow={} target={}",
            self.follow.as_ref().map_or("*", |r| r.as_str()),
            self.target.as_ref().map_or("*", |r| r.as_str())
        )
    }
}

/// The host (lower case, as canonical URLs have it) and port of a URL.
pub fn origin_of(url: &Url) -> (String, u16) {
    (
        url.host_str().unwrap_or("").to_ascii_lowercase(),
        url.port_or_known_default().unwrap_or(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn reference_semantics() {
        let mut scope = Scope {
            domain: Domain::Regex(Regex::new(r"^https?://shop\.test/").unwrap()),
            follow: Some(Regex::new(r"/(catalog|item)/").unwrap()),
            target: Some(Regex::new(r"/item/\d+$").unwrap()),
        };
        scope.add_start(&url("http://other.test/")); // no effect with a domain regex
        use Decision::*;
        let cases = [
            ("http://elsewhere.test/item/1", OutOfDomain),
            ("http://shop.test/about", NotFollowed),
            // Matches the target but not the delimiter: neither traversed nor collected.
            ("http://shop.test/about/item-9", NotFollowed),
            ("http://shop.test/catalog/page-2", Traverse),
            ("http://shop.test/item/7", Target),
            ("http://shop.test/item/7/reviews", Traverse),
        ];
        for (u, want) in cases {
            assert_eq!(scope.decide(&url(u)), want, "{u}");
        }
        assert!(!scope.start_is_target(&url("http://shop.test/")));
        assert!(scope.start_is_target(&url("http://shop.test/item/3")));
    }

    #[test]
    fn built_from_the_config_with_its_start_origins() {
        let cfg = Config {
            starts: vec!["http://A.test:8080/x".into(), "not a url".into()],
            follow: Some(Regex::new("/docs/").unwrap()),
            ..Config::default()
        };
        let scope = Scope::with_starts(&cfg);
        assert_eq!(scope.describe(), "hosts=a.test:8080 follow=/docs/ target=*");
        assert_eq!(Scope::of(&cfg).describe(), "hosts= follow=/docs/ target=*");
        assert!(!scope.widened_by(&url("http://a.test:8080/y")));
        assert!(scope.widened_by(&url("http://a.test/y")));
        let cfg = Config {
            domain: Some(Regex::new("a").unwrap()),
            ..cfg
        };
        assert!(!Scope::with_starts(&cfg).widened_by(&url("http://b.test/")));
    }

    #[test]
    fn default_domain_is_the_start_hosts() {
        let mut scope = Scope::default();
        scope.add_start(&url("http://127.0.0.1:8080/"));
        assert_eq!(
            scope.decide(&url("http://127.0.0.1:8080/x")),
            Decision::Target
        );
        assert_eq!(
            scope.decide(&url("http://127.0.0.1:9/x")),
            Decision::OutOfDomain
        );
        assert_eq!(
            scope.decide(&url("https://127.0.0.1/x")),
            Decision::OutOfDomain
        );
        assert_eq!(
            scope.decide(&url("https://example.com/")),
            Decision::OutOfDomain
        );
        assert_eq!(
            scope.decide(&url("http://localhost:8080/")),
            Decision::OutOfDomain
        );
    }
}
