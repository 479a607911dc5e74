//! robots.txt (`rip_http::robots`).

use rip_http::robots::robots_target;
use rip_http::{Robots, RobotsRules, Verdict};
use url::Url;

use crate::input::{split_nul, text};

/// A robots.txt body, a NUL, then a URL path: parsing and checking never panic, the
/// same body parses to the same answers, and a path the `Disallow: /`-only file refuses
/// is one `Allow: /` would allow.
pub(crate) fn robots(data: &[u8]) {
    let (body, path) = split_nul(data);
    let path = text(path);
    let Ok(url) = Url::parse("http://site.test/").and_then(|b| b.join(&path)) else {
        return;
    };
    let target = robots_target(&url);
    for agent in ["ripperoni", "ripperoni/1.0 (+https://x)", "*"] {
        let robots = Robots::parse(body, agent);
        let verdict = robots.check(&target);
        assert_eq!(Robots::parse(body, agent).check(&target), verdict);
    }
    assert!(matches!(
        Robots::disallow_all().check(&target),
        Verdict::Disallowed { .. }
    ));
}
