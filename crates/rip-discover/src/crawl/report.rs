//! What the crawl says about itself: the progress display's numbers and the `summary`
//! record's counters and notes.

use std::collections::BTreeMap;
use std::io::Write;

use super::Crawl;
use crate::Progress;

impl<W: Write> Crawl<W> {
    /// Where the crawl is, for the progress display.
    pub(super) fn progress(&self) -> Progress {
        Progress {
            done: self.counters.fetched + self.counters.failed + self.counters.robots_denied,
            targets: self.counters.targets,
            queued: self.frontier.len() as u64,
            in_flight: self.tasks.len() as u64,
            depth: self
                .frontier
                .min_depth()
                .unwrap_or(0)
                .min(self.min_inflight_depth()),
            http: self.shared.fetcher.stats(),
            elapsed: self.started.elapsed(),
        }
    }

    /// The crawl's counters and notes, into the books for the `summary` record.
    pub(super) fn close_books(&mut self) {
        let mut counters: BTreeMap<String, u64> = BTreeMap::new();
        let mut put = |k: &str, v: u64| {
            counters.insert(k.to_owned(), v);
        };
        for (k, v) in self.counters.named() {
            put(k, v);
        }
        put("visited", self.frontier.visited().len() as u64);
        put("frontierLeft", self.frontier.len() as u64);
        put("frontierSpilled", self.frontier.spilled());
        put("frontierLost", self.frontier.lost());
        put("budgetExhausted", u64::from(self.exhausted.is_some()));
        if let Some(share) = &self.share {
            put("partitionsTakenOver", share.taken_over);
        }
        if let Some(renderer) = &self.shared.renderer {
            for (k, v) in renderer.render_counters() {
                put(&k, v);
            }
        }
        if let Some(adaptive) = &self.shared.adaptive {
            let a = adaptive.counts();
            put("autoChecked", a.checked);
            put("autoLearnt", a.learnt_skips);
            put("patternsLearnt", a.patterns_learnt);
            put("patternsContradicted", a.contradictions);
        }
        let http = self.shared.fetcher.stats();
        for (k, v) in http.counters() {
            if k != "robotsDenied" {
                counters.insert(k, v);
            }
        }
        counters.retain(|k, v| {
            *v > 0
                || matches!(
                    k.as_str(),
                    "fetched" | "targets" | "failed" | "requests" | "cacheHits"
                )
        });
        for (k, v) in counters {
            self.books.count(&k, v);
        }
        if let Some(e) = &self.exhausted {
            self.books.note(format!(
                "budget exhausted: {e}; {} items left in the frontier",
                self.frontier.len()
            ));
        }
        for note in self.notes.iter().take(20) {
            self.books.note(note.clone());
        }
        if self.notes.len() > 20 {
            let more = format!("… and {} more notes", self.notes.len() - 20);
            self.books.note(more);
        }
    }
}
