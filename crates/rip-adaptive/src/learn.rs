//! Learning per URL pattern within a crawl: after [`Learning::agree`] pages of a pattern
//! ([`crate::pattern_of`]) are judged alike, the next pages of the pattern take that
//! decision unjudged, but every [`Learning::recheck_every`]-th page of it is judged again;
//! a page judged otherwise unlearns the pattern at once, and it takes `agree` pages alike
//! again to learn it anew.

use std::collections::HashMap;

use crate::judge::Judgement;
use crate::pattern_of;

/// How fast a pattern is learnt and how often it is checked again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Learning {
    /// Pages of a pattern judged alike, in a row, before the rest take their decision
    /// (0: never learn, judge every page).
    pub agree: u32,
    /// Of the pages that take a learnt decision, every this-many-th is judged again.
    pub recheck_every: u32,
}

impl Default for Learning {
    fn default() -> Self {
        Self {
            agree: 3,
            recheck_every: 10,
        }
    }
}

/// A decision a pattern's pages agreed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Learnt {
    /// The pattern.
    pub pattern: String,
    /// Its pages need script.
    pub needs_script: bool,
    /// The pages judged alike since it was last contradicted.
    pub agreed: u32,
    /// The last page judged: what said so.
    pub last: Judgement,
}

#[derive(Debug)]
struct PatternState {
    /// The pages judged alike in a row, and the last judgement.
    agreed: u32,
    last: Judgement,
    learnt: bool,
    /// Pages that took the learnt decision since the last judged one.
    since_check: u32,
}

/// Counters of a [`Learner`] (a stage's summary).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LearnCounts {
    /// Pages judged from their HTML.
    pub checked: u64,
    /// Pages that took their pattern's learnt decision unjudged.
    pub learnt_skips: u64,
    /// Patterns learnt (a pattern learnt again after a contradiction counts again).
    pub patterns_learnt: u64,
    /// Learnt patterns a page judged otherwise unlearnt.
    pub contradictions: u64,
}

/// What a crawl learnt, pattern by pattern.
#[derive(Debug, Default)]
pub struct Learner {
    learning: Learning,
    patterns: HashMap<String, PatternState>,
    counts: LearnCounts,
}

impl Learner {
    /// A learner with these rates.
    pub fn new(learning: Learning) -> Self {
        Self {
            learning,
            ..Self::default()
        }
    }

    /// The learnt decision for `url`'s pattern, when there is one and this page is not
    /// one to judge again; counted as a page decided unjudged.
    pub fn advise(&mut self, url: &str) -> Option<Learnt> {
        let pattern = pattern_of(url);
        let state = self.patterns.get_mut(&pattern)?;
        if !state.learnt {
            return None;
        }
        state.since_check += 1;
        if state.since_check >= self.learning.recheck_every.max(1) {
            state.since_check = 0;
            return None;
        }
        self.counts.learnt_skips += 1;
        Some(Learnt {
            pattern,
            needs_script: state.last.needs_script(),
            agreed: state.agreed,
            last: state.last,
        })
    }

    /// Records that `url` was judged `j`.
    pub fn observe(&mut self, url: &str, j: Judgement) {
        self.counts.checked += 1;
        let agree = self.learning.agree;
        let state = self
            .patterns
            .entry(pattern_of(url))
            .or_insert(PatternState {
                agreed: 0,
                last: j,
                learnt: false,
                since_check: 0,
            });
        if state.agreed > 0 && state.last.needs_script() != j.needs_script() {
            if state.learnt {
                self.counts.contradictions += 1;
            }
            state.learnt = false;
            state.agreed = 0;
        }
        state.agreed += 1;
        state.last = j;
        if !state.learnt && agree > 0 && state.agreed >= agree {
            state.learnt = true;
            state.since_check = 0;
            self.counts.patterns_learnt += 1;
        }
    }

    /// The counters so far.
    pub fn counts(&self) -> LearnCounts {
        self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::judge;

    fn shell() -> Judgement {
        judge("<div id=app></div><script src=/a.js></script>")
    }

    fn full() -> Judgement {
        judge("<p>Plenty of text here, as a server-rendered page has it.</p>")
    }

    #[test]
    fn a_pattern_is_learnt_after_k_pages_agree_and_checked_again_every_nth() {
        let mut l = Learner::new(Learning {
            agree: 3,
            recheck_every: 4,
        });
        for i in 0..3 {
            let url = format!("http://h/app/{i}");
            assert_eq!(l.advise(&url), None, "page {i} is judged");
            l.observe(&url, shell());
        }
        let mut judged = Vec::new();
        for i in 3..12 {
            let url = format!("http://h/app/{i}");
            match l.advise(&url) {
                Some(learnt) => {
                    assert!(learnt.needs_script);
                    assert_eq!(learnt.pattern, "http://h/app/{n}");
                }
                None => {
                    judged.push(i);
                    l.observe(&url, shell());
                }
            }
        }
        assert_eq!(judged, [6, 10], "every 4th page judged again");
        let c = l.counts();
        assert_eq!((c.checked, c.learnt_skips, c.patterns_learnt), (5, 7, 1));
        assert_eq!(l.advise("http://h/other/1"), None, "another pattern");
    }

    #[test]
    fn a_contradiction_unlearns_the_pattern_at_once() {
        let mut l = Learner::new(Learning {
            agree: 2,
            recheck_every: 2,
        });
        for i in 0..2 {
            l.observe(&format!("http://h/p/{i}"), full());
        }
        assert!(l.advise("http://h/p/2").is_some_and(|x| !x.needs_script));
        assert_eq!(l.advise("http://h/p/3"), None, "the re-check");
        l.observe("http://h/p/3", shell());
        assert_eq!(l.advise("http://h/p/4"), None, "unlearnt");
        l.observe("http://h/p/4", shell());
        assert!(l.advise("http://h/p/5").is_some_and(|x| x.needs_script));
        let c = l.counts();
        assert_eq!((c.contradictions, c.patterns_learnt), (1, 2));
    }

    #[test]
    fn agree_zero_never_learns() {
        let mut l = Learner::new(Learning {
            agree: 0,
            recheck_every: 10,
        });
        for i in 0..5 {
            l.observe(&format!("http://h/p/{i}"), full());
        }
        assert_eq!(l.advise("http://h/p/9"), None);
    }
}
