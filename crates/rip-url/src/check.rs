//! What link resolution promises, stated once: the WHATWG URL test data
//! (`whatwg_tests`) and the `href_join` fuzz target (crates/rip-fuzz) both hold
//! [`join`](crate::join::join), [`Resolver`] and the [`Canonicalizer`] to these.
//! Each returns what broke, for the caller to report or panic with.

use crate::join::join;
use crate::{Canonicalizer, HrefNeeds, Resolver, Url, base_dir, href_needs};

/// The string join and the resolver give `Url::join`'s answer, on `href` as it is and
/// trimmed (as rip-parse calls them); the resolver appends to what its buffer holds, and
/// leaves it as it was when it gives up.
pub fn joins_agree(base: &Url, href: &str) -> Result<(), String> {
    for href in [href, href.trim()] {
        let by_url = base.join(href).ok().map(String::from);
        let by_join = join(base, href);
        if by_join != by_url {
            return Err(format!(
                "join: {href:?} against {base}: {by_join:?}, not {by_url:?}"
            ));
        }
        let mut s = String::from("kept:");
        let done = Resolver::new(base).join_onto(href, &mut s);
        let got = s.strip_prefix("kept:").map(str::to_owned);
        let ok = match &by_url {
            Some(want) => done && got.as_ref() == Some(want),
            None => !done && s == "kept:",
        };
        if !ok {
            return Err(format!(
                "Resolver: {href:?} against {base}: {done}, {s:?}, not {by_url:?}"
            ));
        }
    }
    Ok(())
}

/// What rip-discover's per-directory cache relies on: a [`HrefNeeds::Dir`] href resolves
/// alike against any base of the same [`base_dir`], an [`HrefNeeds::Itself`] one as `#`.
/// `got` is `canon.resolve(base, href)`.
pub fn cache_premises_hold(
    canon: &Canonicalizer,
    base: &Url,
    href: &str,
    got: Option<&str>,
) -> Result<(), String> {
    let again = |b: &Url, h: &str| canon.resolve(b, h).ok().map(String::from);
    match href_needs(href) {
        HrefNeeds::Dir => {
            let Ok(other) = Url::parse(&format!("{}other?q#f", base_dir(base))) else {
                return Ok(());
            };
            let there = again(&other, href);
            if there.as_deref() != got {
                return Err(format!(
                    "Dir: {href:?} against {base} gives {got:?}, against {other} {there:?}"
                ));
            }
        }
        HrefNeeds::Itself => {
            let itself = again(base, "#");
            if itself.as_deref() != got {
                return Err(format!(
                    "Itself: {href:?} against {base} gives {got:?}, `#` gives {itself:?}"
                ));
            }
        }
        HrefNeeds::Whole => {}
    }
    Ok(())
}
