//! Waiting, in tests, for something another process does.

use std::time::{Duration, Instant};

/// Waits (polling every 20 ms) until `done`, failing after `timeout` with `what`.
pub fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "waited {timeout:?} for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
