//! [`Rule`] and [`FaultPlan`]: which requests get which [`Fault`], in what order.

use std::collections::HashMap;

use crate::fault::Fault;
use crate::log::host_without_port;
use crate::urlpath::{glob_match, relative_reference};

/// Which requests a rule applies to.
///
/// A pattern containing `?` is compared with the whole target (path and query, as sent);
/// one without `?` with the path alone, whatever the query. Paths are compared as sent
/// (still percent-encoded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Matcher {
    /// Exactly this path (or target).
    Exact(String),
    /// Any path (or target) starting with this.
    Prefix(String),
    /// `*` matches any run of characters, `/` included: `/api/*.json`.
    Glob(String),
}

impl Matcher {
    fn pattern(&self) -> &str {
        match self {
            Matcher::Exact(p) | Matcher::Prefix(p) | Matcher::Glob(p) => p,
        }
    }

    /// Whether a request path and target match.
    pub fn matches(&self, path: &str, target: &str) -> bool {
        let subject = if self.pattern().contains('?') {
            target
        } else {
            path
        };
        match self {
            Matcher::Exact(p) => subject == p,
            Matcher::Prefix(p) => subject.starts_with(p.as_str()),
            Matcher::Glob(p) => glob_match(p, subject),
        }
    }
}

/// How a rule's sequence advances.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Counter {
    /// Each distinct target (path and query) matched by the rule goes through the sequence
    /// on its own: with `Rule::prefix("/flaky/").once(Fault::status(503))` every page under
    /// `/flaky/` fails once. The default.
    #[default]
    PerTarget,
    /// All requests matched by the rule share one position in the sequence.
    Shared,
}

/// A rule of a [`FaultPlan`]: a [`Matcher`] (and optionally a host), a sequence of faults for
/// the first matching requests, and the fault for every request after them.
///
/// ```
/// use std::time::Duration;
/// use rip_testserver::{Fault, RetryAfter, Rule};
///
/// // Two 503s with Retry-After, then a reset, then normal service.
/// let rule = Rule::path("/flaky")
///     .times(2, Fault::retry_after(503, RetryAfter::Seconds(1)))
///     .once(Fault::reset());
/// // Every request under /slow/ waits 200 ms.
/// let slow = Rule::prefix("/slow/").always(Fault::serve().delay(Duration::from_millis(200)));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub(crate) matcher: Matcher,
    pub(crate) host: Option<String>,
    pub(crate) sequence: Vec<Fault>,
    pub(crate) then: Fault,
    pub(crate) counter: Counter,
}

impl Rule {
    /// A rule for this exact path (or target, if it contains `?`).
    pub fn path(path: impl Into<String>) -> Self {
        Rule::new(Matcher::Exact(path.into()))
    }

    /// A rule for every path (or target) starting with `prefix`.
    pub fn prefix(prefix: impl Into<String>) -> Self {
        Rule::new(Matcher::Prefix(prefix.into()))
    }

    /// A rule for every path (or target) matching a `*` glob.
    pub fn glob(glob: impl Into<String>) -> Self {
        Rule::new(Matcher::Glob(glob.into()))
    }

    /// A rule with any matcher.
    pub fn new(matcher: Matcher) -> Self {
        Rule {
            matcher,
            host: None,
            sequence: Vec::new(),
            then: Fault::serve(),
            counter: Counter::PerTarget,
        }
    }

    /// Only for requests whose `Host` names this host (port ignored, case-insensitive):
    /// `localhost`, `127.0.0.1`, or a name a client maps with `reqwest`'s `resolve`.
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host_without_port(&host.into()));
        self
    }

    /// Append one step to the sequence: the next matching request gets `fault`.
    pub fn once(mut self, fault: Fault) -> Self {
        self.sequence.push(fault);
        self
    }

    /// Append `n` steps of the same fault: "fail `n` times, then ...".
    pub fn times(mut self, n: usize, fault: Fault) -> Self {
        self.sequence.extend(std::iter::repeat_n(fault, n));
        self
    }

    /// The fault for every request after the sequence ([`Fault::serve`] unless set).
    pub fn then(mut self, fault: Fault) -> Self {
        self.then = fault;
        self
    }

    /// The same as [`then`](Self::then), which reads better for a rule without a sequence:
    /// `Rule::path("/r").always(Fault::reset())`.
    pub fn always(self, fault: Fault) -> Self {
        self.then(fault)
    }

    /// Share one position in the sequence among all targets the rule matches
    /// (see [`Counter`]).
    pub fn shared_counter(mut self) -> Self {
        self.counter = Counter::Shared;
        self
    }

    /// The matcher.
    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    fn applies(&self, host: Option<&str>, path: &str, target: &str) -> bool {
        if let Some(want) = &self.host
            && host.map(host_without_port).as_deref() != Some(want.as_str())
        {
            return false;
        }
        self.matcher.matches(path, target)
    }
}

/// How redirect helpers write `Location`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LocationStyle {
    /// `/r1` (the default).
    #[default]
    Path,
    /// `http://HOST/r1`, HOST being the request's `Host` header.
    Absolute,
    /// `r1` or `../x/r1`, relative to the redirecting path.
    Relative,
}

/// An ordered list of [`Rule`]s. A request gets the answer of the **first** rule that
/// matches it; requests no rule matches are served normally.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FaultPlan {
    pub(crate) rules: Vec<Rule>,
}

impl FaultPlan {
    /// An empty plan.
    pub fn new() -> Self {
        FaultPlan::default()
    }

    /// Append a rule.
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// Append a rule in place.
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// Append the rules of another plan after these.
    pub fn extend(&mut self, other: FaultPlan) {
        self.rules.extend(other.rules);
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// A redirect chain: `paths[0]` redirects to `paths[1]`, ..., the last to `to`, each with
    /// `status`. `to` is served normally (it can be a site page or have its own rule).
    pub fn redirect_chain(
        self,
        paths: &[&str],
        to: &str,
        status: u16,
        style: LocationStyle,
    ) -> Self {
        let targets: Vec<&str> = paths.iter().skip(1).copied().chain([to]).collect();
        self.redirects(paths, &targets, status, style)
    }

    /// A redirect loop: `paths[0]` → `paths[1]` → ... → the last → `paths[0]`. One path
    /// redirects to itself.
    pub fn redirect_loop(self, paths: &[&str], status: u16, style: LocationStyle) -> Self {
        let targets: Vec<&str> = paths.iter().skip(1).chain(paths.first()).copied().collect();
        self.redirects(paths, &targets, status, style)
    }

    fn redirects(mut self, from: &[&str], to: &[&str], status: u16, style: LocationStyle) -> Self {
        for (from, to) in from.iter().zip(to) {
            let location = match style {
                LocationStyle::Path => (*to).to_owned(),
                LocationStyle::Absolute => format!("{{origin}}{to}"),
                LocationStyle::Relative => {
                    let from_path = from.split('?').next().unwrap_or(from);
                    match to.split_once('?') {
                        Some((path, query)) => {
                            format!("{}?{query}", relative_reference(from_path, path))
                        }
                        None => relative_reference(from_path, to),
                    }
                }
            };
            self.rules
                .push(Rule::path(*from).always(Fault::redirect(status, location)));
        }
        self
    }
}

/// A plan being served: its rules and where each target is in each rule's sequence.
#[derive(Debug, Default)]
pub(crate) struct PlanState {
    rules: Vec<(Rule, HashMap<String, usize>)>,
}

impl PlanState {
    pub fn new(plan: FaultPlan) -> Self {
        let mut state = PlanState::default();
        state.extend(plan);
        state
    }

    pub fn extend(&mut self, plan: FaultPlan) {
        self.rules
            .extend(plan.rules.into_iter().map(|r| (r, HashMap::new())));
    }

    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// The answer for a request, advancing the matching rule's sequence: the rule's index
    /// and the fault, or `None` when no rule matches.
    pub fn choose(
        &mut self,
        host: Option<&str>,
        path: &str,
        target: &str,
    ) -> Option<(usize, Fault)> {
        let (index, (rule, counters)) = self
            .rules
            .iter_mut()
            .enumerate()
            .find(|(_, (rule, _))| rule.applies(host, path, target))?;
        let key = match rule.counter {
            Counter::PerTarget => target,
            Counter::Shared => "",
        };
        let position = match counters.get_mut(key) {
            Some(n) => n,
            None => counters.entry(key.to_owned()).or_insert(0),
        };
        let fault = rule.sequence.get(*position).unwrap_or(&rule.then).clone();
        *position = position.saturating_add(1);
        Some((index, fault))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(state: &mut PlanState, target: &str, n: usize) -> Vec<Option<(usize, u16)>> {
        let path = target.split('?').next().unwrap();
        (0..n)
            .map(|_| {
                state
                    .choose(Some("127.0.0.1:1"), path, target)
                    .map(|(i, f)| (i, f.status.unwrap_or(200)))
            })
            .collect()
    }

    #[test]
    fn sequence_then_fallback() {
        let plan = FaultPlan::new().rule(
            Rule::path("/f")
                .times(2, Fault::status(503))
                .once(Fault::status(429))
                .then(Fault::status(200)),
        );
        let mut state = PlanState::new(plan);
        let got = kinds(&mut state, "/f", 5);
        let want = [503, 503, 429, 200, 200].map(|s| Some((0, s)));
        assert_eq!(got, want);
        assert_eq!(kinds(&mut state, "/other", 1), vec![None]);
    }

    #[test]
    fn times_zero_adds_nothing() {
        let rule = Rule::path("/f").times(0, Fault::reset());
        assert!(rule.sequence.is_empty());
        let rule = Rule::path("/f").times(3, Fault::reset());
        assert_eq!(rule.sequence, vec![Fault::reset(); 3]);
    }

    #[test]
    fn counters_per_target_or_shared() {
        let plan = FaultPlan::new()
            .rule(Rule::prefix("/a/").once(Fault::status(503)))
            .rule(
                Rule::prefix("/b/")
                    .once(Fault::status(503))
                    .shared_counter(),
            );
        let mut state = PlanState::new(plan);
        assert_eq!(
            kinds(&mut state, "/a/1", 2),
            vec![Some((0, 503)), Some((0, 200))]
        );
        assert_eq!(kinds(&mut state, "/a/2", 1), vec![Some((0, 503))]);
        assert_eq!(kinds(&mut state, "/a/2?x", 1), vec![Some((0, 503))]);
        assert_eq!(kinds(&mut state, "/b/1", 1), vec![Some((1, 503))]);
        assert_eq!(kinds(&mut state, "/b/2", 1), vec![Some((1, 200))]);
    }

    #[test]
    fn matchers_and_queries() {
        let exact = Matcher::Exact("/p".into());
        assert!(exact.matches("/p", "/p?x=1"));
        assert!(!exact.matches("/p/", "/p/"));
        let with_query = Matcher::Exact("/p?x=1".into());
        assert!(with_query.matches("/p", "/p?x=1"));
        assert!(!with_query.matches("/p", "/p?x=2"));
        assert!(!with_query.matches("/p", "/p"));
        assert!(Matcher::Glob("/i/*.json".into()).matches("/i/a/b.json", "/i/a/b.json"));
        assert!(Matcher::Prefix("/s?page=".into()).matches("/s", "/s?page=3"));
    }

    #[test]
    fn first_matching_rule_wins_and_hosts_filter() {
        let plan = FaultPlan::new()
            .rule(
                Rule::path("/p")
                    .host("LOCALHOST")
                    .always(Fault::status(500)),
            )
            .rule(Rule::prefix("/").always(Fault::status(404)));
        let mut state = PlanState::new(plan);
        let local = state
            .choose(Some("localhost:9"), "/p", "/p")
            .map(|(i, _)| i);
        let ip = state
            .choose(Some("127.0.0.1:9"), "/p", "/p")
            .map(|(i, _)| i);
        let none = state.choose(None, "/p", "/p").map(|(i, _)| i);
        assert_eq!((local, ip, none), (Some(0), Some(1), Some(1)));
    }

    #[test]
    fn redirect_helpers() {
        let location = |plan: &FaultPlan, i: usize| {
            plan.rules[i]
                .then
                .headers
                .iter()
                .find(|(n, _)| n == "Location")
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        let chain =
            FaultPlan::new().redirect_chain(&["/r0", "/r1"], "/final", 302, LocationStyle::Path);
        assert_eq!(chain.rules.len(), 2);
        assert_eq!(location(&chain, 0), "/r1");
        assert_eq!(location(&chain, 1), "/final");
        assert_eq!(chain.rules[1].then.status, Some(302));
        let abs = FaultPlan::new().redirect_loop(&["/a", "/b"], 308, LocationStyle::Absolute);
        assert_eq!(location(&abs, 0), "{origin}/b");
        assert_eq!(location(&abs, 1), "{origin}/a");
        let rel =
            FaultPlan::new().redirect_chain(&["/x/a"], "/y/b?q=1", 301, LocationStyle::Relative);
        assert_eq!(location(&rel, 0), "../y/b?q=1");
        let me = FaultPlan::new().redirect_loop(&["/me"], 307, LocationStyle::Path);
        assert_eq!(location(&me, 0), "/me");
    }
}
