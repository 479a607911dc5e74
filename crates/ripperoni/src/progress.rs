//! The one progress display of a run, on stderr: discovered, fetched, parsed, failed and
//! the current retry round, from the records counted between stages ([`crate::tap`]).
//! Drawn in place on a terminal; a line every ten seconds otherwise; nothing with
//! `--quiet`.

use crate::plan::Role;
use crate::tap::Counts;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rip_core::Kind;
use std::io::IsTerminal as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The counters of the links the wrapper relays.
#[derive(Debug, Clone, Default)]
pub struct Taps {
    source: Arc<Counts>,
    /// After the rip-route of round r (index r-1).
    routes: Arc<std::sync::Mutex<Vec<Arc<Counts>>>>,
    /// After `rip-queue relay`: what the workers made (a scrape spread over machines).
    workers: Arc<Counts>,
    /// The pages the workers fetched, as their `rip-parse` summaries say.
    worker_pages: Arc<AtomicU64>,
    last: Arc<Counts>,
}

impl Taps {
    /// The counters of the link after a stage of `role`, when that link is relayed.
    pub fn after(&self, role: Role, rounds: u32) -> Option<Arc<Counts>> {
        match role {
            Role::Source => Some(self.source.clone()),
            Role::Route(r) if r >= 1 && r <= rounds => {
                let mut routes = self.routes.lock().ok()?;
                while routes.len() < r as usize {
                    routes.push(Arc::new(Counts::default()));
                }
                Some(routes[r as usize - 1].clone())
            }
            Role::Relay => Some(self.workers.clone()),
            _ => None,
        }
    }

    /// Where the link after a stage of `role` adds the pages its `rip-parse` summaries say
    /// were fetched ([`crate::tap::relay_workers`]): after `rip-queue relay`, whose workers'
    /// fetch rounds run elsewhere.
    pub fn worker_pages(&self, role: Role) -> Option<Arc<AtomicU64>> {
        (role == Role::Relay).then(|| self.worker_pages.clone())
    }

    /// The final stream's counters.
    pub fn final_counts(&self) -> Arc<Counts> {
        self.last.clone()
    }

    /// `ref`s the source wrote.
    pub fn discovered(&self) -> u64 {
        self.source.get(&Kind::Ref)
    }

    /// Pages that came out of the last round: here, or on the workers.
    pub fn fetched(&self) -> u64 {
        self.routes
            .lock()
            .ok()
            .and_then(|r| r.last().map(|c| c.get(&Kind::Page)))
            .unwrap_or_else(|| self.worker_pages.load(Ordering::Relaxed))
    }

    /// Retries sent to each round after the first: `(round, refs)`.
    fn retries(&self) -> Vec<(usize, u64)> {
        let routes = self.routes.lock().map(|r| r.clone()).unwrap_or_default();
        routes
            .iter()
            .enumerate()
            .map(|(i, c)| (i + 2, c.get(&Kind::Ref)))
            .collect()
    }

    /// One line of progress.
    pub fn line(&self, rounds: u32, elapsed: Duration) -> String {
        let parsed = self.last.get(&Kind::Doc);
        let rate = parsed as f64 / elapsed.as_secs_f64().max(0.001);
        let round = self
            .retries()
            .into_iter()
            .rfind(|&(r, n)| n > 0 && r as u32 <= rounds);
        let round = match round {
            Some((r, n)) => format!("round {r}/{rounds} ({n} retried)"),
            None => format!("round 1/{rounds}"),
        };
        format!(
            "discovered {} · fetched {} · parsed {} · failed {} · expected {} · {round} · {rate:.0} docs/s",
            self.discovered(),
            self.fetched(),
            parsed,
            self.last.get(&Kind::Error),
            self.last.get(&Kind::Expected),
        )
    }
}

/// The display: a spinner line on a terminal, periodic lines otherwise.
#[derive(Clone)]
pub struct Display {
    bar: Option<ProgressBar>,
    quiet: bool,
    rounds: u32,
    stop: Arc<AtomicBool>,
}

impl Display {
    /// A display for a run of `rounds` fetch rounds.
    pub fn new(quiet: bool, rounds: u32) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
            let style = ProgressStyle::with_template("{spinner} ripperoni [{elapsed}] {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(125));
            bar
        });
        Self {
            bar,
            quiet,
            rounds,
            stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Prints a line above the display.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => rip_core::stderr::say(line),
        }
    }

    /// Starts updating from `taps`.
    pub fn start(&self, taps: Taps) -> Option<JoinHandle<()>> {
        if self.quiet {
            return None;
        }
        let me = self.clone();
        Some(std::thread::spawn(move || {
            let started = Instant::now();
            let mut last_line = Instant::now();
            while !me.stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(200));
                let line = taps.line(me.rounds, started.elapsed());
                match &me.bar {
                    Some(b) => b.set_message(line),
                    None if last_line.elapsed() >= Duration::from_secs(10) => {
                        rip_core::stderr::say(format_args!("ripperoni: {line}"));
                        last_line = Instant::now();
                    }
                    None => {}
                }
            }
        }))
    }

    /// Stops and clears the display.
    pub fn stop(&self, ticker: Option<JoinHandle<()>>) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = ticker {
            let _ = t.join();
        }
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_each_link_counted_and_the_current_round() {
        let taps = Taps::default();
        let source = taps.after(Role::Source, 3).unwrap();
        let routes: Vec<_> = (1..=3)
            .map(|r| taps.after(Role::Route(r), 3).unwrap())
            .collect();
        assert!(taps.after(Role::Parse, 3).is_none(), "not relayed");
        let add = |c: &Counts, k: Kind, n: usize| (0..n).for_each(|_| c.add(&k));
        add(&source, Kind::Ref, 50);
        let line = taps.line(3, Duration::from_secs(1));
        assert!(
            line.starts_with("discovered 50 · fetched 0 · parsed 0"),
            "{line}"
        );
        assert!(line.contains("round 1/3"), "{line}");
        // Round 1 sent 3 refs to round 2, round 2 sent 1 to round 3.
        add(&routes[0], Kind::Ref, 3);
        add(&routes[1], Kind::Ref, 1);
        add(&routes[2], Kind::Page, 47);
        let last = taps.final_counts();
        add(&last, Kind::Doc, 46);
        add(&last, Kind::Error, 3);
        add(&last, Kind::Expected, 1);
        let line = taps.line(3, Duration::from_secs(2));
        assert_eq!(
            line,
            "discovered 50 · fetched 47 · parsed 46 · failed 3 · expected 1 · \
             round 3/3 (1 retried) · 23 docs/s"
        );
        assert_eq!(taps.discovered(), 50);
        assert_eq!(taps.fetched(), 47);
    }

    #[test]
    fn with_workers_the_pages_they_fetched_are_counted() {
        let taps = Taps::default();
        add_refs(&taps, 44);
        let relayed = taps
            .after(Role::Relay, 3)
            .expect("the relay's link is counted");
        let pages = taps.worker_pages(Role::Relay).expect("and its pages");
        assert!(taps.worker_pages(Role::Source).is_none());
        pages.fetch_add(44, Ordering::Relaxed);
        (0..43).for_each(|_| relayed.add(&Kind::Doc));
        let last = taps.final_counts();
        (0..43).for_each(|_| last.add(&Kind::Doc));
        assert_eq!(taps.fetched(), 44);
        let line = taps.line(3, Duration::from_secs(1));
        assert!(
            line.starts_with("discovered 44 · fetched 44 · parsed 43"),
            "{line}"
        );
    }

    fn add_refs(taps: &Taps, n: usize) {
        let source = taps.after(Role::Source, 3).unwrap();
        (0..n).for_each(|_| source.add(&Kind::Ref));
    }
}
