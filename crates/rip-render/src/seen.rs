//! What a page did while it rendered: its requests (in flight, served, blocked, failed),
//! its script errors, dialogs and refused navigations. Shared by the interception task,
//! the event listeners and the wait, bounded whatever the page does.

use std::sync::{Arc, Mutex, PoisonError};

use rip_core::{ConsoleError, FailedRequest, Rendered};
use tokio::time::Instant;

/// Console errors and failed requests kept, each (the rest are counted in `dropped`).
pub const KEPT: usize = 50;
/// Characters of a message kept.
pub const MESSAGE_CHARS: usize = 1_000;
/// Refused navigations kept.
const NAVIGATIONS_KEPT: usize = 10;

/// The shared record of one page's render.
#[derive(Clone, Default)]
pub(crate) struct Seen(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    info: Rendered,
    /// Requests being answered now, by URL (for a timeout's message).
    in_flight: Vec<String>,
    /// When the last request started or ended.
    last_activity: Option<Instant>,
    load_fired: bool,
    /// When the load event fired.
    loaded_at: Option<Instant>,
    /// The browser's own `networkIdle` lifecycle event fired for the page's document since
    /// its navigation began: no request of the page's in flight for 500 ms, as its renderer
    /// counts them. A request a script starts reaches the interception some time later
    /// (much later on a loaded machine), so the interception alone can look quiet while
    /// the page still waits for its data.
    browser_idle: bool,
    /// The loader of the page's document: the main frame's first `init` once watched (a
    /// blank tab's own late events have another).
    document_loader: Option<String>,
    crashed: bool,
    /// When each of `info.console_errors` happened (the page's clock, ms), in the same
    /// order: console messages and exceptions come through separate listeners, so they
    /// are put in the order they happened, not the order they were heard.
    console_stamps: Vec<f64>,
}

/// Cuts `text` to [`MESSAGE_CHARS`] characters.
pub fn cut(text: &str) -> String {
    match text.char_indices().nth(MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

impl Seen {
    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// A subresource request starts (`blocked`: refused by its type at once).
    pub fn request(&self, url: &str, blocked: bool) -> u32 {
        self.with(|s| {
            s.info.requests += 1;
            if blocked {
                s.info.blocked += 1;
            } else {
                s.in_flight.push(url.to_owned());
            }
            s.last_activity = Some(Instant::now());
            s.info.requests
        })
    }

    /// A subresource request ended.
    pub fn answered(&self, url: &str) {
        self.with(|s| {
            if let Some(i) = s.in_flight.iter().position(|u| u == url) {
                s.in_flight.swap_remove(i);
            }
            s.last_activity = Some(Instant::now());
        })
    }

    pub fn failed(&self, failed: FailedRequest) {
        self.with(|s| {
            if s.info.failed_requests.len() < KEPT {
                s.info.failed_requests.push(FailedRequest {
                    message: cut(&failed.message),
                    ..failed
                });
            } else {
                s.info.dropped += 1;
            }
        })
    }

    /// A console error or uncaught exception, which happened at `at` (ms, the page's
    /// clock: CDP's `Runtime.Timestamp`).
    pub fn console_error(&self, error: ConsoleError, at: f64) {
        self.with(|s| {
            if s.info.console_errors.len() < KEPT {
                let place = s.console_stamps.partition_point(|&t| t <= at);
                s.console_stamps.insert(place, at);
                let error = ConsoleError {
                    text: cut(&error.text),
                    ..error
                };
                s.info.console_errors.insert(place, error);
            } else {
                s.info.dropped += 1;
            }
        })
    }

    pub fn dialog(&self) {
        self.with(|s| s.info.dialogs += 1)
    }

    pub fn navigation_blocked(&self, url: &str) {
        self.with(|s| {
            if s.info.navigations_blocked.len() < NAVIGATIONS_KEPT {
                s.info.navigations_blocked.push(cut(url));
            }
        })
    }

    /// The page's navigation starts: what the blank tab did before (its own load event and
    /// lifecycle, heard since its watchers started) is forgotten.
    pub fn arm(&self) {
        self.with(|s| {
            s.load_fired = false;
            s.loaded_at = None;
            s.browser_idle = false;
            s.document_loader = None;
            s.last_activity = None;
        })
    }

    pub fn load_fired(&self) {
        self.with(|s| {
            s.load_fired = true;
            s.loaded_at.get_or_insert_with(Instant::now);
            s.last_activity = Some(Instant::now());
        })
    }

    /// How long after `start` the load event fired, if it did.
    pub fn loaded_after(&self, start: Instant) -> Option<std::time::Duration> {
        self.with(|s| s.loaded_at.map(|t| t.saturating_duration_since(start)))
    }

    pub fn is_loaded(&self) -> bool {
        self.with(|s| s.load_fired)
    }

    /// A lifecycle event of the page's main frame, of the document of `loader`: the first
    /// `init` names the page's document; its `networkIdle` says its renderer has had no
    /// request in flight for 500 ms.
    pub fn lifecycle(&self, name: &str, loader: &str) {
        self.with(|s| match name {
            "init" if s.document_loader.is_none() => s.document_loader = Some(loader.to_owned()),
            "networkIdle" if s.document_loader.as_deref() == Some(loader) => s.browser_idle = true,
            _ => {}
        })
    }

    /// True when the browser said the page's network is idle ([`Seen::lifecycle`]).
    pub fn is_browser_idle(&self) -> bool {
        self.with(|s| s.browser_idle)
    }

    pub fn crash(&self) {
        self.with(|s| s.crashed = true)
    }

    pub fn has_crashed(&self) -> bool {
        self.with(|s| s.crashed)
    }

    /// When the page has had no request in flight since, if it has none now.
    pub fn quiet_since(&self) -> Option<Instant> {
        self.with(|s| {
            if s.in_flight.is_empty() {
                s.last_activity
            } else {
                None
            }
        })
    }

    /// What a page that did not settle was doing: for the failure's message.
    pub fn state_line(&self) -> String {
        self.with(|s| {
            let mut line = format!(
                "load event {}; {} requests",
                if s.load_fired { "fired" } else { "not fired" },
                s.info.requests
            );
            if s.load_fired && !s.browser_idle {
                line.push_str(", the browser's network not idle");
            }
            if !s.in_flight.is_empty() {
                let shown: Vec<&str> = s.in_flight.iter().take(3).map(String::as_str).collect();
                line.push_str(&format!(
                    ", {} still in flight ({}{})",
                    s.in_flight.len(),
                    shown.join(", "),
                    if s.in_flight.len() > 3 { ", …" } else { "" }
                ));
            }
            line
        })
    }

    /// The `render` object of the page record.
    pub fn info(&self) -> Rendered {
        self.with(|s| s.info.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_errors_are_in_the_order_they_happened() {
        let seen = Seen::default();
        let error = |kind: &str| ConsoleError {
            kind: kind.into(),
            text: kind.into(),
            url: None,
            line: None,
        };
        seen.console_error(error("exception"), 20.0);
        seen.console_error(error("console"), 10.0);
        seen.console_error(error("later"), 20.0);
        let kinds: Vec<String> = seen
            .info()
            .console_errors
            .into_iter()
            .map(|e| e.kind)
            .collect();
        assert_eq!(kinds, ["console", "exception", "later"]);
    }

    #[test]
    fn messages_and_lists_are_bounded() {
        let seen = Seen::default();
        for i in 0..(KEPT + 7) {
            seen.console_error(
                ConsoleError {
                    kind: "console".into(),
                    text: "x".repeat(5_000),
                    url: None,
                    line: Some(i as u32),
                },
                i as f64,
            );
        }
        let info = seen.info();
        assert_eq!(info.console_errors.len(), KEPT);
        assert_eq!(info.dropped, 7);
        assert_eq!(
            info.console_errors[0].text.chars().count(),
            MESSAGE_CHARS + 1
        );
    }

    #[test]
    fn the_browser_is_idle_when_it_says_so_of_the_pages_document() {
        let seen = Seen::default();
        seen.lifecycle("networkIdle", "blank");
        assert!(!seen.is_browser_idle(), "the blank tab's late word");
        seen.lifecycle("init", "doc");
        seen.lifecycle("load", "doc");
        seen.lifecycle("networkAlmostIdle", "doc");
        assert!(!seen.is_browser_idle(), "almost is not idle");
        seen.load_fired();
        assert!(seen.state_line().contains("network not idle"));
        seen.lifecycle("init", "error page");
        seen.lifecycle("networkIdle", "error page");
        assert!(!seen.is_browser_idle(), "another document");
        seen.lifecycle("networkIdle", "doc");
        assert!(seen.is_browser_idle());
        assert!(!seen.state_line().contains("network not idle"));
    }

    #[test]
    fn what_the_blank_tab_did_is_forgotten_when_the_page_starts() {
        let seen = Seen::default();
        seen.lifecycle("init", "blank");
        seen.load_fired();
        seen.lifecycle("networkIdle", "blank");
        assert!(seen.is_loaded() && seen.is_browser_idle());
        seen.arm();
        assert!(!seen.is_loaded(), "the blank tab's load is not the page's");
        assert!(!seen.is_browser_idle());
        assert!(seen.quiet_since().is_none(), "nothing happened yet");
        seen.lifecycle("init", "doc");
        seen.lifecycle("networkIdle", "doc");
        assert!(seen.is_browser_idle(), "the page's own document");
    }

    #[test]
    fn quiet_only_without_requests_in_flight() {
        let seen = Seen::default();
        assert!(seen.quiet_since().is_none(), "nothing happened yet");
        seen.request("http://h/a.js", false);
        assert!(seen.quiet_since().is_none());
        assert!(
            seen.state_line()
                .contains("1 still in flight (http://h/a.js)")
        );
        seen.answered("http://h/a.js");
        assert!(seen.quiet_since().is_some());
        seen.request("http://h/i.png", true);
        assert!(
            seen.quiet_since().is_some(),
            "a blocked request is not in flight"
        );
        assert_eq!((seen.info().requests, seen.info().blocked), (2, 1));
    }
}
