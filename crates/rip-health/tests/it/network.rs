//! The network story is the site's, not the cache's: rip-discover fetches every page from
//! a slow, faulty site (300 ms a page; 503s, a 429 with Retry-After, a reset, all recovered
//! inside the fetch), rip-fetch reads them from the shared cache, and the report must
//! still show the site's latency, HTTP requests and recovered faults, with the cache hits
//! counted beside them. Needs the stages built (`cargo build --workspace --bins`).

use std::time::Duration;

use rip_testserver::{Fault, RetryAfter, Rule, TestServer};
use serde_json::{Value, json};

/// The least wait that shows a Retry-After of one second was honoured (see its use).
const RETRY_AFTER_FLOOR_MS: u64 = 950;

const DELAY: Duration = Duration::from_millis(300);

const HTTP: &str = "-q --delay 0ms --jitter 0ms --attempts 3 --retry-base 10ms --retry-max 50ms \
                    --cache-dir cache";

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn the_report_counts_the_fetch_that_went_to_the_site_and_the_cache_hits_beside_it() {
    for b in ["rip-discover", "rip-fetch", "rip-parse", "rip-route"] {
        rip_testkit::bin(b);
    }
    let slow = || Fault::serve().delay(DELAY);
    let links: String = (1..=6)
        .map(|i| format!("<a href=\"/p/{i}.html\">page {i}</a>"))
        .collect();
    let mut server = TestServer::builder()
        .file(
            "/",
            format!("<html><title>home</title><body>{links}</body></html>"),
        )
        .rule(
            Rule::path("/p/1.html")
                .times(2, Fault::status(503))
                .then(slow()),
        )
        .rule(
            Rule::path("/p/2.html")
                .once(Fault::retry_after(429, RetryAfter::Seconds(1)))
                .then(slow()),
        )
        .rule(Rule::path("/p/3.html").once(Fault::reset()).then(slow()))
        .rule(Rule::glob("*").always(slow()));
    for i in 1..=6 {
        server = server.file(
            format!("/p/{i}.html"),
            format!("<html><title>page {i}</title><body><main>text {i}</main></body></html>"),
        );
    }
    let server = server.start_background().expect("the test server starts");
    let tmp = tempfile::tempdir().unwrap();
    let script = format!(
        "rip-discover {HTTP} {url} | rip-fetch {HTTP} | rip-parse -q | rip-route -q --max-retries 0 \
         | tee stream.ndjson | rip-health --html report.html > crawl-health.json; \
         echo \"${{PIPESTATUS[@]}}\"",
        url = server.url("/")
    );
    let out = rip_testkit::run_shell(&script, Some(tmp.path()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "0 0 0 0 0 0",
        "{stderr}"
    );
    assert_eq!(
        server.count("/p/1.html"),
        3,
        "rip-discover fetched the site, rip-fetch read the cache"
    );
    let json = std::fs::read_to_string(tmp.path().join("crawl-health.json")).unwrap();
    let report: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(report["complete"], true, "{json}");
    let docs = report["totals"]["concepts"].as_u64().unwrap();
    assert_eq!(docs, 7, "the home page and six pages: {json}");

    // The site's latency, not the cache's: every page took the server's delay.
    let latency = &report["latency"];
    assert_eq!(latency["samples"], docs, "{json}");
    let p50 = latency["p50"].as_u64().unwrap();
    assert!(p50 >= DELAY.as_millis() as u64, "p50 {p50} ms: {json}");

    // The site fetch's HTTP requests: 503, 503, 200; 429, 200; reset, 200; one each else.
    assert_eq!(
        report["retries"]["httpAttempts"],
        json!({"1": 4, "2": 2, "3": 1}),
        "{json}"
    );
    assert_eq!(report["outcomes"]["recoveredInFetch"], 3, "{json}");
    let site = &report["siteFetches"];
    assert_eq!(site["records"], docs, "{json}");
    assert_eq!(
        site["fromCache"], docs,
        "every doc's page came from the cache"
    );
    assert_eq!(site["originUnknown"], 0);
    assert_eq!(site["fetchedBy"], json!({"rip-discover": docs}));
    assert_eq!(
        site["faults"],
        json!({"httpError.transient": 2, "httpError.throttled": 1, "network.reset": 1}),
        "{json}"
    );
    // The Retry-After second runs from the 429's arrival; the wait is measured from a
    // moment later (the answer read, the retry scheduled), so it may show 999 ms.
    assert!(
        site["waitedMs"].as_u64().unwrap() >= RETRY_AFTER_FLOOR_MS,
        "the Retry-After second: {json}"
    );

    // The records carry it: the doc of the throttled page says what the site did.
    let stream = std::fs::read_to_string(tmp.path().join("stream.ndjson")).unwrap();
    let doc: Value = stream
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["_type"] == "doc" && v["url"] == server.url("/p/2.html"))
        .expect("the doc of /p/2.html");
    let fetch = &doc["siteFetch"];
    assert_eq!(fetch["fetchedBy"], "rip-discover", "{doc}");
    assert_eq!(fetch["httpAttempts"], 2);
    assert_eq!(fetch["statuses"], json!([429, 200]));
    assert_eq!(fetch["faults"], json!(["httpError.throttled"]));
    assert!(
        fetch["waitedMs"].as_u64().unwrap() >= RETRY_AFTER_FLOOR_MS,
        "{doc}"
    );
    assert!(fetch["latencyMs"].as_u64().unwrap() >= DELAY.as_millis() as u64);
    assert_eq!(doc["httpAttempts"], 0, "rip-fetch's own round: a cache hit");

    // The summary and the HTML report tell the same story.
    assert!(
        stderr.contains(
            "site fetches: 7 by rip-discover · 7 from the cache · 3 recovered by HTTP retries"
        ),
        "{stderr}"
    );
    let html = std::fs::read_to_string(tmp.path().join("report.html")).unwrap();
    assert!(html.contains("recovered by HTTP retries"), "{html}");
    assert!(
        !html.contains("from cache</text>"),
        "no 'from cache' bucket"
    );
}
