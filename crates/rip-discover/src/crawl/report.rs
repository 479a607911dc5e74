//! What the crawl says about itself: the progress display's numbers and the `summary`
//! record.

use std::collections::BTreeMap;
use std::io::Write;

use chrono::Utc;
use rip_core::{Status, Summary};

use super::Crawl;
use crate::{Progress, STAGE};

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

    /// The run's `summary` record.
    pub(super) fn summary(&self, status: Status) -> Summary {
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
        let mut notes = Vec::new();
        if let Some(e) = &self.exhausted {
            notes.push(format!(
                "budget exhausted: {e}; {} items left in the frontier",
                self.frontier.len()
            ));
        }
        notes.extend(self.notes.iter().take(20).cloned());
        if self.notes.len() > 20 {
            notes.push(format!("… and {} more notes", self.notes.len() - 20));
        }
        Summary {
            stage: STAGE.into(),
            pid: std::process::id(),
            started_at: self.started_at,
            ended_at: Utc::now(),
            input: self.input_counts.clone(),
            output: self.out.counts().clone(),
            passed_through: self.out.passed().clone(),
            bad_lines: self.bad_lines,
            status,
            counters,
            notes,
            peak_rss_bytes: rip_core::peak_rss_bytes(),
            extra: Default::default(),
        }
    }
}
