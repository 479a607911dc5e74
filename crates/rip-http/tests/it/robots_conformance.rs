//! Google's robots.txt parser tests (robots_test.cc, the reference parser of RFC 9309),
//! ported as data in `testdata/conformance/google-robots.json`, run through the calls the
//! fetcher makes: [`Robots::parse`] on the body, then [`RobotsRules::check`] on
//! [`robots_target`] of the parsed URL. Every case passes or is listed in [`KNOWN`] with its
//! reason (also in `docs/conformance.md`); a listed case that passes fails the test too.

use std::collections::BTreeSet;

use rip_http::robots::{Robots, RobotsRules, Verdict, robots_target};
use serde::Deserialize;

#[derive(Deserialize)]
struct Suite {
    cases: Vec<Case>,
    bodies: Vec<String>,
}

#[derive(Deserialize)]
struct Case {
    test: String,
    n: u32,
    agent: String,
    url: String,
    allowed: bool,
    body: usize,
}

/// An empty string is no URL: the fetcher only ever asks about a parsed absolute URL.
const NO_URL: &str =
    "the URL is empty; our call path takes a parsed url::Url, so it never sees one";
/// The URL parser percent-encodes the path, as every request sends it.
const ENCODED: &str = "the URL has a raw ツ; parsed (as everything we fetch is) it becomes \
                       /foo/bar/%E3%83%84, the path actually requested, which the rule allows";

/// Cases where we answer otherwise than Google's parser, on purpose: (test, n, why).
const KNOWN: &[(&str, u32, &str)] = &[
    ("GoogleOnly_SystemTest", 1, NO_URL),
    ("GoogleOnly_SystemTest", 2, NO_URL),
    ("GoogleOnly_SystemTest", 3, NO_URL),
    ("GoogleOnly_SystemTest", 4, NO_URL),
    (
        "GoogleOnly_AcceptUserAgentUpToFirstSpace",
        2,
        "our own agent is reduced to its product token (RFC 9309 2.2.1), so \"Foo Bar\" \
         obeys the group of Foo; Google matches the caller's string whole",
    ),
    ("ID_Encoding", 3, ENCODED),
    ("ID_Encoding", 5, ENCODED),
];

/// Our answer for a case, or why there is none.
fn verdict(suite: &Suite, c: &Case) -> Result<bool, String> {
    let url = url::Url::parse(&c.url).map_err(|e| format!("url {:?}: {e}", c.url))?;
    let body = suite
        .bodies
        .get(c.body)
        .ok_or_else(|| format!("no body {}", c.body))?;
    let rules = Robots::parse(body.as_bytes(), &c.agent);
    Ok(matches!(
        rules.check(&robots_target(&url)),
        Verdict::Allowed
    ))
}

#[test]
fn google_robots_test_cases() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/conformance/google-robots.json"
    );
    let text = std::fs::read_to_string(path).expect(path);
    let suite: Suite = serde_json::from_str(&text).expect(path);
    let known: BTreeSet<_> = KNOWN.iter().map(|&(t, n, _)| (t, n)).collect();
    let mut failed = BTreeSet::new();
    let mut unexpected = Vec::new();
    for c in &suite.cases {
        let ours = verdict(&suite, c);
        if ours.as_ref() == Ok(&c.allowed) {
            continue;
        }
        let key = (c.test.as_str(), c.n);
        failed.insert(key);
        if !known.contains(&key) {
            let url: String = c.url.chars().take(80).collect();
            unexpected.push(format!(
                "{}#{} agent {:?} url {url:?}: Google {}, ours {ours:?}",
                c.test, c.n, c.agent, c.allowed
            ));
        }
    }
    let passed = suite.cases.len() - failed.len();
    eprintln!("{passed} of {} cases pass", suite.cases.len());
    let stale: Vec<_> = known.difference(&failed).collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "differences not listed in KNOWN:\n{unexpected:#?}\nlisted in KNOWN but passing: {stale:?}"
    );
}
