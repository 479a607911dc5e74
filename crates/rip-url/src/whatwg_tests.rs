//! The WHATWG URL standard's own test data (`tests/data/urltestdata.json`, see
//! `tests/data/README.md`) through the resolution paths rip-parse and rip-discover use:
//!
//! - **join**: [`join`](crate::join::join) and [`Resolver`] (rip-parse's links), on the
//!   trimmed input as rip-parse calls them: the string fast path, else `Url::join`.
//!   Against the standard's `href`; and against `Url::join` on the same input (as it is
//!   and trimmed), which they must equal on every case, with no exception.
//! - **resolve**: [`Canonicalizer::resolve`] (rip-discover's links), against the
//!   standard's `href` canonicalised (fragment dropped, escapes of unreserved characters
//!   decoded, empty query pairs dropped; not `http(s)`: rejected), and the premises of
//!   rip-discover's per-directory cache ([`href_needs`], [`base_dir`]).
//! - **parse**: [`Canonicalizer::parse`] (start URLs) on the cases without a base, against
//!   the standard's `href` canonicalised.
//!
//! Every difference from the standard is listed in [`KNOWN`] with its reason (and in
//! docs/conformance.md): an unlisted difference fails, and so does a listed one that no
//! longer occurs.

use std::collections::{BTreeMap, BTreeSet};

use crate::join::{fast, join, parts_of};
use crate::{Canonicalizer, Url};

/// One case: `input` against `base` (none: parsed alone) gives `href`, or fails (`None`).
struct Case {
    input: String,
    base: Option<String>,
    href: Option<String>,
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/urltestdata.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let json: Vec<serde_json::Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    // Strings are comments; objects are cases.
    json.iter()
        .filter_map(serde_json::Value::as_object)
        .map(|o| {
            let s = |k: &str| o.get(k).and_then(|v| v.as_str()).map(str::to_owned);
            let failure = o.get("failure").and_then(serde_json::Value::as_bool) == Some(true);
            Case {
                input: s("input").unwrap_or_else(|| panic!("{path}: a case without input")),
                base: s("base"),
                href: if failure { None } else { s("href") },
            }
        })
        .collect()
}

/// Why the differences of [`KNOWN`] are left as they are.
const URL_CRATE_FILE: &str = "url 2.5.8 (join's fallback) itself: a file: URL's host \
     and Windows drive letters (the url crate's tests/expected_failures.txt lists them); \
     the fast path takes only http(s) bases, and rip-discover rejects file: URLs";

/// The cases (input, base) on which the `join` path (and `Url::join` under it) differs
/// from the standard, each for [`URL_CRATE_FILE`].
const KNOWN: &[(&str, &str)] = &[
    ("/", "file://h/C:/a/b"),
    ("/..//localhost//pig", "file://lion/"),
    ("/////mouse", "file:///elephant"),
    ("////one/two", "file:///"),
    ("//localhost//pig", "file://lion/"),
    ("/C:/", "file://host/"),
    ("/c:/foo/bar", "file://host/path"),
    ("C|", "file://host/D:/dir1/dir2/file"),
    ("C|", "file://host/dir/file"),
    ("C|\n/", "file://host/dir/file"),
    ("C|#", "file://host/dir/file"),
    ("C|/", "file://host/"),
    ("C|/", "file://host/dir/file"),
    ("C|?", "file://host/dir/file"),
    ("C|\\", "file://host/dir/file"),
    ("\\/localhost//pig", "file://lion/"),
    ("file:///.//", "file:////"),
    ("file:////one/two", "file:///"),
    ("file:/C:/", "file://host/"),
    ("file:C:/", "file://host/"),
];

/// Bases of the kinds rip-parse resolves against, which every input (with or without a
/// base of its own) is also joined against: the string join must give `Url::join`'s
/// answer there too (the standard's bases are mostly `file:`, `about:` and odd ones).
const MORE_BASES: [&str; 4] = [
    "http://example.org/foo/bar",
    "https://docs.example/0/std/vec/struct.Vec.html?search=x#method.push",
    "http://h/",
    "https://u:p@h:8443/a/b/",
];

/// The paths checked against the standard; [`KNOWN`] is for the first two.
const PATHS: [&str; 4] = ["Url::join", "join", "resolve", "parse"];

/// What the standard's answer becomes once canonicalised: what `resolve` and `parse`
/// must give.
fn canonical(canon: &Canonicalizer, href: Option<&str>) -> Option<String> {
    let mut url = Url::parse(href?).expect("the standard's href parses");
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    canon.canonicalize(&mut url);
    Some(url.into())
}

/// A case on a path: (path, input, base or "").
type Key = (&'static str, String, String);

/// The outcome of every case on every path.
#[derive(Default)]
struct Outcome {
    /// (path, input, base) → (what we gave, what the standard says).
    diffs: BTreeMap<Key, (Option<String>, Option<String>)>,
    /// Cases run per path.
    runs: BTreeMap<&'static str, usize>,
    /// `resolve` answers equal to the standard's `href` only once canonicalised, by
    /// what canonicalisation changed.
    canonicalised: BTreeMap<&'static str, usize>,
    /// Cases (trimmed input) that the fast path answered without `Url::join`.
    fast: usize,
    /// Inputs joined against [`MORE_BASES`], and how many of those the fast path answered.
    more: (usize, usize),
}

impl Outcome {
    fn check(
        &mut self,
        path: &'static str,
        case: &Case,
        got: Option<String>,
        want: Option<String>,
    ) {
        *self.runs.entry(path).or_default() += 1;
        if got != want {
            let key = (
                path,
                case.input.clone(),
                case.base.clone().unwrap_or_default(),
            );
            self.diffs.insert(key, (got, want));
        }
    }

    /// Counts what canonicalisation changed when `got` is the standard's `want` only
    /// once canonicalised.
    fn canonicalised(&mut self, got: Option<&str>, want: Option<&str>) {
        let (Some(got), Some(want)) = (got, want) else {
            return;
        };
        let (Ok(got), Ok(want)) = (Url::parse(got), Url::parse(want)) else {
            return;
        };
        for (what, differs) in [
            ("fragment dropped", got.fragment() != want.fragment()),
            ("query", got.query() != want.query()),
            ("path escapes", got.path() != want.path()),
        ] {
            if differs {
                *self.canonicalised.entry(what).or_default() += 1;
            }
        }
    }
}

fn run(cases: &[Case]) -> Outcome {
    let canon = Canonicalizer::keeping_all_params();
    let mut out = Outcome::default();
    for case in cases {
        let want = case.href.clone();
        for base in MORE_BASES {
            let base = Url::parse(base).expect("a base of MORE_BASES parses");
            same_as_url_join(&base, &case.input);
            out.more.0 += 1;
            if fast(
                &base,
                parts_of(&base),
                case.input.trim(),
                &mut String::new(),
            )
            .is_some()
            {
                out.more.1 += 1;
            }
        }
        let Some(base) = &case.base else {
            let got = canon.parse(&case.input).ok().map(String::from);
            out.check("parse", case, got, canonical(&canon, want.as_deref()));
            continue;
        };
        let Ok(base) = Url::parse(base) else {
            // No caller resolves against a base that does not parse; the standard
            // expects a failure.
            assert!(want.is_none(), "{base}: the base does not parse");
            *out.runs.entry("base does not parse").or_default() += 1;
            continue;
        };
        let input = case.input.as_str();
        same_as_url_join(&base, input);
        if fast(&base, parts_of(&base), input.trim(), &mut String::new()).is_some() {
            out.fast += 1;
        }
        out.check(
            "Url::join",
            case,
            base.join(input).ok().map(String::from),
            want.clone(),
        );
        out.check("join", case, join(&base, input.trim()), want.clone());
        let got = canon.resolve(&base, input).ok().map(String::from);
        let want_canon = canonical(&canon, want.as_deref());
        if got == want_canon && got != want {
            out.canonicalised(got.as_deref(), want.as_deref());
        }
        out.check("resolve", case, got.clone(), want_canon);
        cache_premises(&canon, &base, input, got.as_deref());
    }
    out
}

/// [`crate::check::joins_agree`], panicking on what broke.
fn same_as_url_join(base: &Url, input: &str) {
    if let Err(what) = crate::check::joins_agree(base, input) {
        panic!("{what}");
    }
}

/// [`crate::check::cache_premises_hold`], panicking on what broke.
fn cache_premises(canon: &Canonicalizer, base: &Url, input: &str, got: Option<&str>) {
    if let Err(what) = crate::check::cache_premises_hold(canon, base, input, got) {
        panic!("{what}");
    }
}

/// Every case of the standard's test data, on every path; the differences are exactly
/// [`KNOWN`]'s. The counts printed are docs/conformance.md's.
#[test]
fn whatwg_url_test_data() {
    let cases = cases();
    assert!(
        cases.len() > 800,
        "{} cases: the data is cut short",
        cases.len()
    );
    let out = run(&cases);
    let known: BTreeSet<Key> = ["Url::join", "join"]
        .iter()
        .flat_map(|p| {
            KNOWN
                .iter()
                .map(|(i, b)| (*p, (*i).to_owned(), (*b).to_owned()))
        })
        .collect();
    let found: BTreeSet<Key> = out.diffs.keys().cloned().collect();
    let unlisted: Vec<_> = out
        .diffs
        .iter()
        .filter(|(k, _)| !known.contains(*k))
        .collect();
    let stale: Vec<_> = known.difference(&found).collect();
    assert!(
        unlisted.is_empty(),
        "differences from the standard, not in KNOWN ((path, input, base): (got, want)): {unlisted:#?}"
    );
    assert!(
        stale.is_empty(),
        "listed in KNOWN, no longer a difference: {stale:#?}"
    );
    // docs/conformance.md's counts: the passes are these less KNOWN's on two paths.
    let runs: Vec<usize> = PATHS.iter().map(|p| out.runs[p]).collect();
    assert_eq!(
        (cases.len(), runs, out.more.0),
        (819, vec![316, 316, 316, 503], 3276),
        "cases, cases per path and joins against MORE_BASES: update docs/conformance.md"
    );
    eprintln!("{} cases ({URL_CRATE_FILE})", cases.len());
    for path in PATHS {
        let runs = out.runs.get(path).copied().unwrap_or_default();
        let diffs = out.diffs.keys().filter(|k| k.0 == path).count();
        eprintln!("{path}: {} of {runs} as the standard", runs - diffs);
    }
    eprintln!(
        "base does not parse: {}; the fast path answered {}; resolve canonicalised: {:?}",
        out.runs
            .get("base does not parse")
            .copied()
            .unwrap_or_default(),
        out.fast,
        out.canonicalised
    );
    eprintln!(
        "against MORE_BASES: {} joins as Url::join's, {} by the fast path",
        out.more.0, out.more.1
    );
}
