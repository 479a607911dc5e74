//! The wire tap: told of every request sent (retries too) and what came back.

use std::sync::{Arc, Mutex};

use rip_http::{Fetcher, WireAnswer, WireExchange, WireTap};
use rip_testserver::{Fault, Rule, TestServer};

use crate::{HTML, config, page};

/// What the tap saw: request number, method, status or transport code, body length.
#[derive(Debug, Default)]
struct Seen(Mutex<Vec<(u32, &'static str, String, usize)>>);

impl WireTap for Seen {
    fn exchange(&self, ex: &WireExchange<'_>) {
        let (what, len) = match &ex.answer {
            WireAnswer::Response { status, body, .. } => (status.to_string(), body.len()),
            WireAnswer::Transport { code, .. } => ((*code).to_owned(), 0),
        };
        assert!(ex.request_headers.iter().any(|(n, _)| n == "User-Agent"));
        self.0
            .lock()
            .expect("lock")
            .push((ex.request_number, ex.method, what, len));
    }
}

#[tokio::test]
async fn the_tap_sees_each_attempt_a_500_a_reset_then_the_page() {
    let server = TestServer::builder()
        .file("/p", HTML)
        .rule(
            Rule::path("/p")
                .once(Fault::status(500))
                .once(Fault::reset()),
        )
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(config()).unwrap();
    let seen = Arc::new(Seen::default());
    assert!(f.set_tap(seen.clone()));
    assert!(!f.set_tap(seen.clone()), "one tap a fetcher");
    let got = f.fetch(&server.url("/p")).await;
    assert_eq!(page(&got).status, 200);
    let seen = seen.0.lock().expect("lock").clone();
    let what: Vec<(u32, &str, &str)> = seen
        .iter()
        .map(|(n, m, w, _)| (*n, *m, w.as_str()))
        .collect();
    assert_eq!(
        what,
        [
            (1, "GET", "500"),
            (2, "GET", "network.reset"),
            (3, "GET", "200")
        ]
    );
    assert_eq!(seen[2].3, HTML.len());
}
