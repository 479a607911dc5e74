//! Link resolution (`rip_url`): the string fast path against `Url::join`, and the
//! canonical form rip-discover keeps.

use rip_url::Canonicalizer;
use rip_url::check::{cache_premises_hold, joins_agree};
use url::Url;

use crate::input::{choice, split_nul, text};

/// Bases of the kinds pages have.
const BASES: [&str; 6] = [
    "http://example.org/foo/bar",
    "https://docs.example/0/std/vec/struct.Vec.html?search=x#method.push",
    "http://h/",
    "https://u:p@h:8443/a/b/",
    "http://[::1]/x/y.html?a=1&b=2",
    "https://xn--nxasmq6b.example/%C3%A9/index",
];

/// The first byte picks a base from [`BASES`] (below 0x80) or says that the input is a
/// base (`http` or `https`), a NUL, then the reference. The string join and the resolver give `Url::join`'s
/// answer on the reference as it is and trimmed (as rip-parse calls them); rip-discover's
/// canonical URL is a fixed point of canonicalisation, parses back to itself, and
/// resolves alike against every base of its directory when it needs only that.
pub(crate) fn href_join(data: &[u8]) {
    let (c, rest) = choice(data);
    let (base, href) = if c < 0x80 {
        let base = Url::parse(BASES[usize::from(c) % BASES.len()]).expect("a base");
        (base, text(rest))
    } else {
        let (base, href) = split_nul(rest);
        // Pages, the bases our programs resolve against, are `http(s)` (the `url` crate
        // 2.5.8 trips a debug assertion of its own joining `..` onto `file:+..\\c:`).
        let Ok(base) = Url::parse(&text(base)) else {
            return;
        };
        if !matches!(base.scheme(), "http" | "https") {
            return;
        }
        (base, text(href))
    };
    if let Err(what) = joins_agree(&base, &href) {
        panic!("{what}");
    }
    canonical(&base, &href);
}

fn canonical(base: &Url, href: &str) {
    let canon = Canonicalizer::keeping_all_params();
    let Ok(url) = canon.resolve(base, href) else {
        return;
    };
    let mut again = Url::parse(url.as_str()).expect("a canonical URL parses");
    canon.canonicalize(&mut again);
    assert_eq!(again, url, "canonicalising {url} again");
    assert_eq!(canon.parse(url.as_str()).ok(), Some(url.clone()));
    if let Err(what) = cache_premises_hold(&canon, base, href, Some(url.as_str())) {
        panic!("{what}");
    }
}
