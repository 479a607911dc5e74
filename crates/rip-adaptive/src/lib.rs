#![deny(missing_docs)]
//! `rip-adaptive`: adaptive rendering, the one home of the decision "does this fetched
//! page need a browser?" for every stage that makes it (`rip-route --render auto`,
//! `rip-discover --render auto`).
//!
//! - [`judge`]: measures the HTML as sent ([`rip_core::PageFigures`]: text, scripts, the
//!   application root's text, JSON data islands, data-loading calls, empty lists, items
//!   and placeholders) and decides by the first [`Signal`] that holds. No site name, no
//!   per-page constant: the bounds are in [`judge`]'s docs.
//! - [`pattern_of`]: a URL's pattern (ids, digit runs and the last segment's slug
//!   generalised), and [`Learner`]: after a few pages of a pattern agree, the rest take
//!   their decision unjudged, checked again now and then.
//! - [`Adaptive`]: both together, shared by a stage's tasks, giving each page a
//!   [`Decision`] whose [`Decision::because`] is the record's `renderedBecause`.
//!
//! The document is fetched once whatever is decided: the browser is given the fetched
//! response (`rip-render` through the cache, `rip-discover` directly), so learning saves
//! the judging, never a request.

use std::sync::Mutex;

use rip_core::RenderedBecause;

pub mod judge;
pub mod learn;
mod measure;
mod pattern;

pub use judge::{Judgement, Signal, judge};
pub use learn::{LearnCounts, Learner, Learning, Learnt};
pub use measure::measure;
pub use pattern::pattern_of;

/// What to do with one fetched page.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Send it to the browser.
    pub render: bool,
    /// The signal that decided (for a learnt decision, the last judged page's).
    pub signal: Signal,
    /// Its URL pattern's learnt decision was taken: the page was not judged.
    pub learnt: Option<String>,
    /// Why, for the record: set when `render` is.
    pub because: Option<RenderedBecause>,
}

/// Judging and learning for one stage, shared by its tasks.
#[derive(Debug, Default)]
pub struct Adaptive {
    learner: Mutex<Learner>,
}

impl Adaptive {
    /// Judging with `learning`'s rates.
    pub fn new(learning: Learning) -> Self {
        Self {
            learner: Mutex::new(Learner::new(learning)),
        }
    }

    /// The decision for the page of `url` whose HTML is `html`: its pattern's learnt one,
    /// or the page judged (and learnt from).
    pub fn decide(&self, url: &str, html: &str) -> Decision {
        if let Some(learnt) = self.learner().advise(url) {
            return learnt_decision(learnt);
        }
        let j = judge(html);
        self.learner().observe(url, j);
        let because = j.needs_script().then(|| RenderedBecause {
            signal: Some(j.signal.as_str().to_owned()),
            figures: j.figures,
            ..RenderedBecause::default()
        });
        Decision {
            render: j.needs_script(),
            signal: j.signal,
            learnt: None,
            because,
        }
    }

    /// The counters so far.
    pub fn counts(&self) -> LearnCounts {
        self.learner().counts()
    }

    fn learner(&self) -> std::sync::MutexGuard<'_, Learner> {
        // A panic while holding the lock leaves the counters as they were: usable.
        self.learner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn learnt_decision(l: Learnt) -> Decision {
    let because = l.needs_script.then(|| RenderedBecause {
        signal: Some(l.last.signal.as_str().to_owned()),
        learnt: Some(l.pattern.clone()),
        agreed: Some(l.agreed),
        figures: l.last.figures,
        ..RenderedBecause::default()
    });
    Decision {
        render: l.needs_script,
        signal: l.last.signal,
        learnt: Some(l.pattern),
        because,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_says_why_and_a_learnt_one_names_its_pattern() {
        let a = Adaptive::default();
        let shell = "<div id=app></div><script src=/app.js></script>";
        for i in 0..3 {
            let d = a.decide(&format!("http://h/app/{i}"), shell);
            assert!(d.render && d.learnt.is_none());
            let why = serde_json::to_value(d.because.unwrap()).unwrap();
            assert_eq!(
                why,
                serde_json::json!({"signal": "emptyAppRoot", "scripts": 1, "appRootChars": 0})
            );
        }
        let d = a.decide("http://h/app/3", "");
        assert!(d.render, "learnt: the HTML is not read");
        let why = serde_json::to_value(d.because.unwrap()).unwrap();
        assert_eq!(why["learnt"], "http://h/app/{n}");
        assert_eq!(why["agreed"], 3);
        let page = a.decide("http://h/about", "<p>About us</p>");
        assert!(!page.render && page.because.is_none());
        let c = a.counts();
        assert_eq!((c.checked, c.learnt_skips, c.patterns_learnt), (4, 1, 1));
    }
}
