//! `rip-route`: the failure-routing stage (the reference's `route:failure`, `resolve:link`
//! and `error:capture`).
//!
//! It reads records, applies a [`Policy`] to each `failure`, and passes everything else
//! through unchanged. A failure takes one of four routes:
//!
//! - **retry**: the `ref` is written again with `attempt` advanced, the error history
//!   carried, and a `notBefore` of the failure time plus its Retry-After hint (capped by
//!   `maxRetryAfter`). The back-edge of the reference's DAG is the same stages written
//!   again: `rip-fetch | rip-route | rip-fetch | rip-route`.
//! - **resolve**: the URL may be a wrong locator; candidate `ref`s for corrected URLs are
//!   written, each with `resolves` naming the failed URL (see "Resolve groups").
//! - **capture**: an `error` document with every error of the URL's history.
//! - **expected**: an `expected` record with the rule's reason (`source: policy`).
//!
//! # The default policy and the last `rip-route`
//!
//! With no rule matching: retry when the failure is retryable and its round (`attempt`,
//! 1-based) is at most `maxRetries` (default 2), else capture. Routes that send a URL back
//! to `rip-fetch` (retry and resolve) are taken only while `attempt <= maxRetries`; past
//! it they become capture. So a pipeline with *k* rounds of `rip-fetch | rip-route` gives
//! every `rip-route` `--max-retries k-1`, and the last one captures what is left:
//!
//! ```sh
//! rip-fetch | rip-route --max-retries 1 | rip-fetch | rip-route --max-retries 1
//! ```
//!
//! Counting rounds is easy to get wrong (add a round, forget a flag), so the last
//! `rip-route` can say instead that no `rip-fetch` follows it: with `--final`
//! ([`Config::final_round`]) retry and resolve become capture whatever the budget, and a
//! `rip-route` after `rip-parse` is final too:
//!
//! ```sh
//! rip-fetch | rip-route | rip-fetch | rip-route --final | rip-parse | rip-route --final
//! ```
//!
//! A `rip-route` cannot see what is downstream of it, so a mismatch is caught where it
//! shows: a retry or resolve candidate `ref` that reaches a `rip-route` was not fetched
//! since it was written; it is passed on, counted (`unfetchedRefs`) and reported on stderr
//! with a hint. `rip-write` reports the refs that reach it the same way and exits 2, since
//! nothing after it fetches them.
//!
//! A page fetched in a later round carries that round in its `attempt` (0: first try;
//! 1: after one retry, …), and so does the `doc` parsed from it: `attempt == 0` is a
//! first-attempt success, `attempt > 0` a recovered page, and `resolves` set a page
//! recovered under another URL.
//!
//! # Policy rules
//!
//! A policy file (TOML, or JSON when named `*.json`; shape in [`spec::PolicySpec`] and
//! `docs/schemas/policy.schema.json`) holds ordered rules matching category, status,
//! error code, phase, URL regex and retryability, each with a route, e.g. "410 →
//! expected: removed upstream", "404 on /classes/ → resolve". The first matching rule
//! decides; no match gets the default. Failures with `phase: write` are annotations from
//! `rip-write` (the record they are about still accounts for the URL) and pass through.
//!
//! # Resolve groups
//!
//! The resolve route asks the strategies (`crossLocator`, `canonical`, `search`; see
//! [`resolve`]) for candidate URLs, best first, at most `budget` (default 2). None found:
//! the failure is captured, with a `resolve.none` error saying so. Otherwise it writes the
//! failure itself with `resolving: [candidates]` (the group's *head*) and one candidate
//! `ref` per candidate (`resolves: <failed URL>`, `attempt` advanced, the history carried).
//! `rip-route` makes no HTTP request: the next `rip-fetch` tries the candidates and passes
//! the head through.
//!
//! The next `rip-route` holds the head and waits until every candidate has an outcome: a
//! `page` or `doc` (success), or a `failure`, `expected` or `error`. Then it writes exactly
//! one record for the failed URL: the outcome of the first successful candidate in
//! `resolving` order, unchanged (it keeps `resolves`, so it accounts for the failed URL),
//! or, when none succeeded, the `error` document of the **original** failure, its history
//! extended with each candidate's error (message suffixed `(resolve candidate <url>)`). The
//! other outcomes are dropped and counted (`resolveSurplus`). A candidate is tried once: it
//! is never retried or resolved again. With `matchLinkText`, a candidate page whose body
//! does not contain the failed link's text (or a doc whose `name` is not that text) counts
//! as failed (`resolve.mismatch`): an id shared by unrelated pages does not fool it.
//!
//! # Render rules: pages that need a browser
//!
//! A policy's `render` rules (or `--render-url REGEX`) judge fetched HTML `page`s: one a
//! rule matches (by URL, by a regex its body has, or one it lacks: an empty shell that
//! scripts would fill in) is replaced by a `ref` marked `needsBrowser`, for the
//! `rip-render` after this stage (`rip-fetch | rip-route | rip-render`), counted in
//! `sentToBrowser`. `rip-fetch` passes such refs through, so rounds can sit between; a
//! rendered page (its `render` object set) is never judged again, and a failed render
//! keeps the mark, so its retry goes back to the browser. `--final` does not change them:
//! no `rip-fetch` follows, but a `rip-render` may.
//!
//! An `auto` rule (`auto = true`, or `--render auto`) decides by measuring instead: of the
//! pages its regexes match (every page without them), `rip-adaptive` sends on those whose
//! HTML shows that their content needs script, and learns the decision per URL pattern
//! (after three pages of a pattern agree, the rest take it unjudged, every tenth judged
//! again). Each ref says why in `renderedBecause` (the rule's name, or the signal and the
//! figures measured, or the pattern learnt); the summary counts `autoChecked`,
//! `autoLearnt`, `autoRendered`, `autoKept` and `patternsLearnt` ([`auto_line`] on stderr).
//!
//! This keeps the ledger: the failed URL entered once (candidates are not entries,
//! [`rip_core::Ref::is_entry`]), and exactly one terminal record accounts for it (a record
//! with `resolves` set accounts for that URL, not its own). At the end of input, a group
//! whose candidates went by as unfetched `ref`s, or whose wait Ctrl-C cut short, is passed
//! on (head first, then the outcomes held) for a later `rip-route`; one whose candidates
//! vanished is closed with a
//! `resolve.candidateLost` error for each missing one. Groups are held in memory only
//! while their candidates are in flight.

#![deny(missing_docs)]

use chrono::Utc;
use rip_core::{
    ErrorEntry, Failure, Kind, Line, Pipe, PipeError, PipeOptions, Record, Ref, Summary,
};
use std::fmt;
use std::io::{Read, Write};

mod error;
mod groups;
pub mod policy;
mod records;
pub mod resolve;
pub mod spec;

pub use policy::{Decision, Policy, PolicyError, Route};
pub use spec::{PolicySpec, Strategy};

use groups::{Group, Groups, Outcome, Peek};

/// What `rip-route` needs to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Pipe options (stage name, input name, strictness, stop flag).
    pub pipe: PipeOptions,
    /// The failure policy.
    pub policy: Policy,
    /// No `rip-fetch` follows this `rip-route` (`--final`): routes that would send a URL
    /// back to one (retry, resolve) capture it instead.
    pub final_round: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            pipe: PipeOptions::new("rip-route"),
            policy: Policy::default(),
            final_round: false,
        }
    }
}

/// Routes the failures of `input`, passing every other record to `output`.
pub fn run<R: Read + Send + 'static, W: Write>(
    config: Config,
    input: R,
    output: W,
) -> Result<Summary, PipeError> {
    let mut router = Router {
        pipe: Pipe::new(config.pipe, input, output)?,
        policy: config.policy,
        final_round: config.final_round,
        groups: Groups::default(),
        unfetched: None,
        adaptive: rip_adaptive::Adaptive::new(rip_adaptive::Learning::default()),
        auto_sent: 0,
    };
    while let Some(line) = router.pipe.next_line()? {
        router.line(line)?;
    }
    router.end_of_input()?;
    router.count_auto();
    if let Some((n, first)) = &router.unfetched {
        tracing::warn!("{}", unfetched_warning(*n, first));
    }
    router.pipe.finish(None)
}

struct Router<W: Write> {
    pipe: Pipe<W>,
    policy: Policy,
    final_round: bool,
    groups: Groups,
    /// Retry and candidate refs that arrived unfetched: how many, and the first.
    unfetched: Option<(u64, Ref)>,
    /// `auto` render rules: what pages needed script, learnt per URL pattern.
    adaptive: rip_adaptive::Adaptive,
    /// Pages an `auto` rule sent to the browser.
    auto_sent: u64,
}

/// The stderr line of a run whose `auto` render rules judged pages: how many were judged,
/// sent to the browser, kept from it, decided by a learnt pattern, and patterns learnt.
pub fn auto_line(s: &Summary) -> Option<String> {
    let c = |k: &str| s.counters.get(k).copied().unwrap_or(0);
    let decided = c("autoChecked") + c("autoLearnt");
    (decided > 0).then(|| {
        format!(
            "rip-route: render auto: {decided} pages: {} to the browser, {} kept from it; \
             {} judged from their HTML, {} by a learnt URL pattern ({} patterns learnt, {} \
             contradicted)",
            c("autoRendered"),
            c("autoKept"),
            c("autoChecked"),
            c("autoLearnt"),
            c("patternsLearnt"),
            c("patternsContradicted"),
        )
    })
}

/// What to say about `n` retry or candidate refs that reached a `rip-route` unfetched.
fn unfetched_warning(n: u64, first: &Ref) -> String {
    let what = match &first.context.resolves {
        Some(u) => format!("a resolve candidate for {u}"),
        None if first.context.needs_browser => "a page sent to the browser".to_owned(),
        None => format!("a retry for round {}", first.attempt + 1),
    };
    let (refs, them) = if n == 1 {
        ("ref", "it")
    } else {
        ("refs", "them")
    };
    format!(
        "{n} {refs} reached rip-route unfetched (first: {}, {what}): passed on, but unless a \
         rip-fetch (or, for pages sent to the browser, a rip-render) comes later, nothing \
         fetches {them} (hint: put `rip-fetch |` or `rip-render |` before this rip-route, or \
         give the rip-route that wrote {them} --final)",
        first.url
    )
}

impl<W: Write> Router<W> {
    fn line(&mut self, line: Line) -> Result<(), PipeError> {
        match line.kind().clone() {
            Kind::Failure => match line.decode() {
                Ok(Record::Failure(f)) => self.failure(f, line),
                Ok(_) => self.pipe.pass(&line),
                Err(message) => self.unreadable(&line, message),
            },
            kind @ (Kind::Page | Kind::Doc | Kind::Expected | Kind::Error)
                if !self.groups.is_empty() =>
            {
                let peek = match Peek::of(&line) {
                    Ok(p) => p,
                    Err(message) => return self.unreadable(&line, message),
                };
                match peek.resolves.clone() {
                    Some(u) if self.groups.awaits(&u, &peek.url) => {
                        let url = peek.url.clone();
                        let verify = self.policy.resolve.match_link_text;
                        let closed = self.groups.record(&u, &url, |head| {
                            Outcome::of(&kind, &peek, line, head, verify)
                        });
                        self.close_if(closed)
                    }
                    _ if kind == Kind::Page => self.page(line),
                    _ => self.pipe.pass(&line),
                }
            }
            Kind::Page => self.page(line),
            Kind::Ref => {
                if let Ok(Record::Ref(r)) = line.decode()
                    && !r.is_entry()
                {
                    if let Some(u) = &r.context.resolves {
                        self.groups.saw_ref(u, &r.url);
                    }
                    self.pipe.count("unfetchedRefs", 1);
                    match &mut self.unfetched {
                        Some((n, _)) => *n += 1,
                        None => self.unfetched = Some((1, r)),
                    }
                }
                self.pipe.pass(&line)
            }
            _ => self.pipe.pass(&line),
        }
    }

    /// A page: sent on to the browser when a render rule says so, else passed through.
    fn page(&mut self, line: Line) -> Result<(), PipeError> {
        if self.policy.render.is_empty() {
            return self.pipe.pass(&line);
        }
        let page = match line.decode() {
            Ok(Record::Page(p)) => p,
            Ok(_) => return self.pipe.pass(&line),
            Err(message) => return self.unreadable(&line, message),
        };
        let Some(because) = self.policy.render_decision(&page, &self.adaptive) else {
            return self.pipe.pass(&line);
        };
        tracing::debug!(url = %page.url, ?because, "sent to the browser");
        self.pipe.count("sentToBrowser", 1);
        self.auto_sent += u64::from(because.rule.is_none());
        self.pipe
            .emit(&Record::Ref(records::render_ref(page, because)))
    }

    /// The summary's counters of `auto` render rules, when one judged a page: pages
    /// judged from their HTML (`autoChecked`), decided by their URL pattern's learnt
    /// decision (`autoLearnt`), sent to the browser (`autoRendered`) or kept from it
    /// (`autoKept`), and patterns learnt (`patternsLearnt`).
    fn count_auto(&mut self) {
        let c = self.adaptive.counts();
        let decided = c.checked + c.learnt_skips;
        if decided == 0 {
            return;
        }
        for (name, n) in [
            ("autoChecked", c.checked),
            ("autoLearnt", c.learnt_skips),
            ("autoRendered", self.auto_sent),
            ("autoKept", decided - self.auto_sent),
            ("patternsLearnt", c.patterns_learnt),
            ("patternsContradicted", c.contradictions),
        ] {
            self.pipe.count(name, n);
        }
    }

    /// A known kind that does not decode: reported, and passed on so nothing is lost.
    fn unreadable(&mut self, line: &Line, message: impl fmt::Display) -> Result<(), PipeError> {
        self.pipe.bad_record(line, message)?;
        self.pipe.pass(line)
    }

    fn failure(&mut self, f: Failure, line: Line) -> Result<(), PipeError> {
        if !f.resolving.is_empty() {
            self.pipe.count("resolveHeld", 1);
            if self.groups.holds(&f.url) {
                tracing::warn!(url = %f.url, "a second resolve group for one URL: passed on");
                return self.pipe.pass(&line);
            }
            self.groups.open(f);
            return Ok(());
        }
        if let Some(u) = f.context.resolves.clone()
            && self.groups.awaits(&u, &f.url)
        {
            let peek = Peek {
                url: f.url.clone(),
                resolves: Some(u.clone()),
                errors: f.errors,
                reason: None,
            };
            let closed = self.groups.record(&u, &peek.url.clone(), |head| {
                Outcome::of(&Kind::Failure, &peek, line, head, false)
            });
            return self.close_if(closed);
        }
        self.route(f, &line)
    }

    fn route(&mut self, f: Failure, line: &Line) -> Result<(), PipeError> {
        let Decision { mut route, rule } = self.policy.decide(&f);
        if self.final_round && matches!(route, Route::Retry | Route::Resolve(_)) {
            self.pipe.count("finalCaptures", 1);
            route = Route::Capture;
        }
        tracing::debug!(url = %f.url, ?route, ?rule, "routed");
        let now = Utc::now();
        match route {
            Route::PassThrough => {
                self.pipe.count("writeFailuresPassed", 1);
                self.pipe.pass(line)
            }
            Route::Retry => {
                self.pipe.count("retried", 1);
                let r = records::retry_ref(&f, self.policy.max_retry_after, now);
                self.pipe.emit(&Record::Ref(r))
            }
            Route::Expected(reason) => {
                self.pipe.count("expected", 1);
                let e = records::expected(&f, &reason, rule.as_deref());
                self.pipe.emit(&Record::Expected(e))
            }
            Route::Capture => self.capture(&f, Vec::new()),
            Route::Resolve(strategies) => {
                let candidates = self.policy.resolve.candidates(&strategies, &f);
                if candidates.is_empty() {
                    self.pipe.count("resolveNone", 1);
                    let names: Vec<String> = strategies
                        .iter()
                        .map(|s| {
                            serde_json::to_value(s)
                                .map(|v| v.to_string())
                                .unwrap_or_default()
                        })
                        .collect();
                    let none = ErrorEntry {
                        attempt: Some(f.attempt),
                        ..ErrorEntry::new(
                            "resolve.none",
                            format!("no resolve candidate (strategies: {})", names.join(", ")),
                            "rip-route",
                        )
                    };
                    return self.capture(&f, vec![none]);
                }
                self.pipe.count("resolving", 1);
                self.pipe.count("candidates", candidates.len() as u64);
                let refs: Vec<_> = candidates
                    .iter()
                    .map(|c| records::candidate_ref(&f, c))
                    .collect();
                let head = records::group_head(&f, candidates);
                self.pipe.emit(&Record::Failure(head))?;
                for r in refs {
                    self.pipe.emit(&Record::Ref(r))?;
                }
                Ok(())
            }
        }
    }

    fn capture(&mut self, f: &Failure, more: Vec<ErrorEntry>) -> Result<(), PipeError> {
        self.pipe.count("captured", 1);
        self.pipe.mark_partial();
        let doc = records::capture(f, more, Utc::now());
        self.pipe.emit(&Record::Error(doc))
    }

    fn close_if(&mut self, closed: Option<Group>) -> Result<(), PipeError> {
        match closed {
            Some(group) => self.close(group),
            None => Ok(()),
        }
    }

    /// Writes the one record that accounts for a complete group's failed URL.
    fn close(&mut self, group: Group) -> Result<(), PipeError> {
        let mut winner = None;
        let mut errors = Vec::new();
        let mut surplus = 0;
        for outcome in group.outcomes.into_iter().flatten() {
            match outcome {
                Outcome::Success(line) if winner.is_none() => winner = Some(line),
                Outcome::Success(_) => surplus += 1,
                Outcome::Failed { errors: e, .. } => errors.extend(e),
            }
        }
        match winner {
            Some(line) => {
                self.pipe.count("resolved", 1);
                self.pipe.count("resolveSurplus", surplus);
                self.pipe.pass(&line)
            }
            None => {
                self.pipe.count("unresolved", 1);
                self.capture(&group.head, errors)
            }
        }
    }

    /// Groups still held at the end of input: passed on when a later `rip-route` will see
    /// their candidates (or when Ctrl-C cut the input short: their outcomes may still have
    /// been on the way), closed with what arrived otherwise.
    fn end_of_input(&mut self) -> Result<(), PipeError> {
        let interrupted = self.pipe.interrupted();
        for mut group in self.groups.drain() {
            if group.forwarded || interrupted {
                self.pipe.count("resolvePassedOn", 1);
                self.pipe.emit(&Record::Failure(group.head))?;
                for outcome in group.outcomes.into_iter().flatten() {
                    match outcome {
                        Outcome::Success(line)
                        | Outcome::Failed {
                            line: Some(line), ..
                        } => self.pipe.pass(&line)?,
                        Outcome::Failed { line: None, .. } => {}
                    }
                }
                continue;
            }
            for (candidate, slot) in group.head.resolving.iter().zip(&mut group.outcomes) {
                if slot.is_none() {
                    *slot = Some(Outcome::Failed {
                        line: None,
                        errors: vec![ErrorEntry::new(
                            "resolve.candidateLost",
                            format!(
                                "no outcome for resolve candidate {candidate} reached this rip-route"
                            ),
                            "rip-route",
                        )],
                    });
                }
            }
            self.close(group)?;
        }
        Ok(())
    }
}
