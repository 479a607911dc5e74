//! Joining a link against its base URL, with `Url::join`'s answers for less work: the
//! fast paths of the two callers that resolve links by the thousand.
//!
//! **A string join** ([`join`], [`Resolver`]), for a caller that wants the resolved link
//! as text (`rip-parse`'s documents). `Url::join` parses the whole reference with the
//! URL standard's state machine and builds a new `Url`. [`join`] resolves a reference of
//! plain ASCII against an `http` or `https` base by string work: a fragment alone, or a
//! path (relative, or absolute but not `//host`) of letters, digits and
//! `-._~!$&'()*+,;=@/`, `.` and `..` segments removed as the standard removes them, then
//! an optional fragment of printable ASCII the standard leaves as is. So is an absolute
//! `http(s)://` reference already in the form the URL parser writes (a plain lower case
//! domain, such a path, a query and a fragment of printable ASCII that the standard
//! leaves as is). Anything else (another scheme, a relative query, `%` in a path, `\`,
//! white space, other characters, ports, users, IP addresses, IDNA) goes to `Url::join`.
//! The tests compare the two on every combination of such pieces, a property test on
//! random references, and the WHATWG URL standard's own test data (docs/conformance.md).
//!
//! **What a reference needs of its base** ([`href_needs`], [`base_dir`]), for a caller
//! that resolves the same navigation links on many pages (`rip-discover`'s crawl, which
//! remembers a [`Canonicalizer::resolve`](crate::Canonicalizer::resolve) per directory):
//! a property test checks that bases with one [`base_dir`] resolve a [`HrefNeeds::Dir`]
//! reference alike.

use url::{Position, Url};

/// `base.join(href)` as a string, or `None` when `href` does not resolve.
pub fn join(base: &Url, href: &str) -> Option<String> {
    let mut out = String::new();
    resolve(base, parts_of(base), href, &mut out).then_some(out)
}

/// Resolves references against one base URL, its pieces found once.
#[derive(Debug, Clone)]
pub struct Resolver {
    base: Url,
    parts: Option<Parts>,
}

impl Resolver {
    /// A resolver against `base`.
    pub fn new(base: &Url) -> Self {
        Self {
            base: base.clone(),
            parts: parts_of(base),
        }
    }

    /// `base.join(href)` appended to `out`: false (and `out` as it was) when `href`
    /// does not resolve.
    pub fn join_onto(&self, href: &str, out: &mut String) -> bool {
        resolve(&self.base, self.parts, href, out)
    }
}

/// For an `http` or `https` base with a host: where in it its path starts, where its
/// path's last `/` ends, and where its query ends.
pub(crate) type Parts = (usize, usize, usize);

pub(crate) fn parts_of(base: &Url) -> Option<Parts> {
    (matches!(base.scheme(), "http" | "https") && base.has_host()).then(|| {
        let path_start = base[..Position::BeforePath].len();
        let dir = base.path().as_bytes().iter().rposition(|&c| c == b'/');
        (
            path_start,
            path_start + dir.map_or(0, |i| i + 1),
            base[..Position::AfterQuery].len(),
        )
    })
}

/// Appends `base.join(href)` to `out`: false (nothing appended) when it does not resolve.
fn resolve(base: &Url, parts: Option<Parts>, href: &str, out: &mut String) -> bool {
    if fast(base, parts, href, out).is_some() {
        return true;
    }
    match base.join(href) {
        Ok(url) => {
            out.push_str(url.as_str());
            true
        }
        Err(_) => false,
    }
}

/// Appends the resolved reference to `out` when it is one the fast path knows to
/// resolve as `Url::join` would; `None` otherwise, with nothing appended (not an
/// answer: ask `Url::join`).
pub(crate) fn fast(base: &Url, parts: Option<Parts>, href: &str, out: &mut String) -> Option<()> {
    if let Some(done) = absolute(href, out) {
        return done;
    }
    let (path_at, dir_end, query_end) = parts?;
    let s = base.as_str();
    let (origin, dir, no_fragment) = (&s[..path_at], &s[path_at..dir_end], &s[..query_end]);
    let b = href.as_bytes();
    let hash = b
        .iter()
        .position(|&c| !PATH[usize::from(c)])
        .unwrap_or(b.len());
    if hash < b.len() && b[hash] != b'#' {
        return None;
    }
    let (path, fragment) = (&href[..hash], href.get(hash + 1..));
    if fragment.is_some_and(|f| !all_in(f, &FRAGMENT)) {
        return None;
    }
    if path.starts_with("//") {
        return None;
    }
    out.reserve(no_fragment.len() + href.len());
    if path.is_empty() {
        // A fragment alone (or nothing): the base without its fragment.
        out.push_str(no_fragment);
    } else {
        out.push_str(origin);
        match path.strip_prefix('/') {
            Some(rest) => merged_path(out, "", rest),
            None => merged_path(out, dir, path),
        }
    }
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    Some(())
}

/// An absolute `http` or `https` URL in the form `Url::parse` writes it back, resolved:
/// `Some(answer)` when the reference starts with `http://` or `https://` (lower case),
/// `None` otherwise. The answer is `None` (ask `Url::join`) unless the host is a plain
/// domain (lower case letters, digits and `-` in labels that are not empty, do not
/// start with `xn--`, the last one starting with a letter: no IP address, port,
/// user or IDNA), followed by a path of [`PATH`] bytes (dot segments removed), then
/// an optional query of [`QUERY`] bytes and an optional fragment of [`FRAGMENT`] bytes.
fn absolute(href: &str, out: &mut String) -> Option<Option<()>> {
    let rest = href
        .strip_prefix("http://")
        .or_else(|| href.strip_prefix("https://"))?;
    let scheme = href.len() - rest.len();
    let b = rest.as_bytes();
    let host = b.iter().position(|&c| c == b'/').unwrap_or(b.len());
    if !plain_domain(&b[..host]) {
        return Some(None);
    }
    let path_end = b[host..]
        .iter()
        .position(|&c| !PATH[usize::from(c)])
        .map_or(b.len(), |i| host + i);
    let (query, fragment) = match b.get(path_end) {
        None => (None, None),
        Some(b'#') => (None, Some(&rest[path_end + 1..])),
        Some(b'?') => match rest[path_end + 1..].split_once('#') {
            Some((q, f)) => (Some(q), Some(f)),
            None => (Some(&rest[path_end + 1..]), None),
        },
        Some(_) => return Some(None),
    };
    if host == path_end
        || query.is_some_and(|q| !all_in(q, &QUERY))
        || fragment.is_some_and(|f| !all_in(f, &FRAGMENT))
    {
        return Some(None);
    }
    out.reserve(href.len());
    out.push_str(&href[..scheme + host]);
    merged_path(out, "", &rest[host + 1..path_end]);
    for (mark, part) in [('?', query), ('#', fragment)] {
        if let Some(p) = part {
            out.push(mark);
            out.push_str(p);
        }
    }
    Some(Some(()))
}

/// A host the URL parser writes back as it is: see [`absolute`].
fn plain_domain(host: &[u8]) -> bool {
    let mut labels = host.split(|&c| c == b'.');
    let last = labels.next_back().unwrap_or_default();
    last.first().is_some_and(u8::is_ascii_lowercase)
        && std::iter::once(last).chain(labels).all(|l| {
            !l.is_empty()
                && !l.starts_with(b"xn--")
                && l.iter()
                    .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        })
}

/// Bytes a query may hold on the fast path: printable ASCII but for the special query
/// percent-encode set (space, `"`, `#`, `<`, `>`, `'`), and `` ` `` and `\`.
const QUERY: [bool; 256] = {
    let mut t = table(b"", true);
    t[b'#' as usize] = false;
    t[b'\'' as usize] = false;
    t[b'\\' as usize] = false;
    t
};

/// Bytes a path segment may hold on the fast path: unreserved and sub-delimiters
/// (which the standard's path percent-encode set leaves as they are), `@` and `/`.
/// Not `:` (a scheme before the first `/`), `%` (`%2e` is a dot segment), `\` (a
/// slash in special URLs), `?`, `#`.
const PATH: [bool; 256] = table(b"-._~!$&'()*+,;=@/", false);

/// Bytes a fragment may hold on the fast path: printable ASCII but for the fragment
/// percent-encode set (space, `"`, `<`, `>`, `` ` ``).
const FRAGMENT: [bool; 256] = table(b"", true);

/// A table of the ASCII letters and digits and `others`; with `printable`, every
/// printable ASCII byte but space, `"`, `<`, `>` and `` ` `` instead.
const fn table(others: &[u8], printable: bool) -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric()
            || (printable && c > 0x20 && c < 0x7F && !matches!(c, b'"' | b'<' | b'>' | b'`'));
        b += 1;
    }
    let mut i = 0;
    while i < others.len() {
        t[others[i] as usize] = true;
        i += 1;
    }
    t
}

fn all_in(s: &str, table: &[bool; 256]) -> bool {
    s.bytes().all(|b| table[usize::from(b)])
}

/// Appends the path of `rest`'s segments after the base's directory `dir` (`/a/b/`,
/// or empty for the root), `.` and `..` segments removed: a `..` drops the segment
/// before it (none above the root), and a path that ends in `.` or `..` ends in `/`.
fn merged_path(out: &mut String, dir: &str, mut rest: &str) {
    // The root's `/`: a `..` stops there.
    let root = out.len();
    out.push_str(if dir.is_empty() { "/" } else { dir });
    // Leading `../` and `./` (`../../core/option/enum.Option.html`), then the rest
    // whole when it cannot hold another dot segment (no `/.` in it, not `.` or `..`).
    loop {
        if let Some(r) = rest.strip_prefix("../") {
            up(out, root);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("./") {
            rest = r;
        } else {
            break;
        }
    }
    if rest != "." && rest != ".." && !rest.as_bytes().windows(2).any(|w| w == b"/.") {
        out.push_str(rest);
        return;
    }
    let mut from = 0;
    loop {
        let end = rest.as_bytes()[from..]
            .iter()
            .position(|&c| c == b'/')
            .map(|i| from + i);
        let seg = &rest[from..end.unwrap_or(rest.len())];
        // `out` ends with `/` here: the segments so far, and the empty one after them.
        match seg {
            "." => {}
            ".." => up(out, root),
            _ => {
                out.push_str(seg);
                if end.is_some() {
                    out.push('/');
                }
            }
        }
        match end {
            Some(e) => from = e + 1,
            None => return,
        }
    }
}

/// Drops the last segment of `out` (which ends with `/`), keeping the root's `/` at
/// `root`: what a `..` segment does.
fn up(out: &mut String, root: usize) {
    if let Some(i) = out.as_bytes()[root..out.len() - 1]
        .iter()
        .rposition(|&c| c == b'/')
    {
        out.truncate(root + i + 1);
    }
}

/// What of the base URL an `href` needs to be resolved ([`Canonicalizer::resolve`](crate::Canonicalizer::resolve)): a
/// crawler that resolves the same navigation links on every page of a directory can
/// remember what an `href` gave in that directory ([`base_dir`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HrefNeeds {
    /// Nothing of the base past its [`base_dir`]: a path relative to the directory
    /// (`b.html`, `../c/`), an absolute path (`/a`), a scheme-relative URL (`//h/a`) or
    /// an absolute `http(s)://` URL, with no query or fragment of the base's taken over.
    Dir,
    /// `#…`: the base itself, whatever the fragment (canonical URLs have none), so every
    /// such `href` resolves as `#` does against the same base.
    Itself,
    /// The whole base: an empty `href`, a `?query`, a scheme without `//` (`http:x` is
    /// relative to a base of that scheme), a control character or a tab or newline.
    Whole,
}

/// What of the base `href` (surrounding blanks ignored, as [`Canonicalizer::resolve`](crate::Canonicalizer::resolve)
/// ignores them) needs; see [`HrefNeeds`].
pub fn href_needs(href: &str) -> HrefNeeds {
    let b = trim(href).as_bytes();
    match b.first() {
        Some(b'#') => return HrefNeeds::Itself,
        None | Some(b'?') => return HrefNeeds::Whole,
        Some(&c) if c <= b' ' => return HrefNeeds::Whole,
        Some(_) => {}
    }
    // Tabs and newlines are dropped anywhere by the URL parser.
    if b.iter().any(|&c| matches!(c, b'\t' | b'\n' | b'\r')) {
        return HrefNeeds::Whole;
    }
    // A scheme ends at a `:` before any `/`, `\\`, `?` or `#`.
    match b
        .iter()
        .position(|&c| matches!(c, b':' | b'/' | b'\\' | b'?' | b'#'))
    {
        Some(i) if b[i] == b':' => {
            let absolute = |p: &[u8]| b.get(..p.len()).is_some_and(|s| s.eq_ignore_ascii_case(p));
            if absolute(b"http://") || absolute(b"https://") {
                HrefNeeds::Dir
            } else {
                HrefNeeds::Whole
            }
        }
        _ => HrefNeeds::Dir,
    }
}

/// `s.trim()`, quicker when what ASCII trimming leaves starts and ends with a character
/// that is no blank of any kind (the usual case).
fn trim(s: &str) -> &str {
    let t = s.trim_ascii();
    let plain = |c: Option<&u8>| c.is_none_or(|&c| c.is_ascii() && c != 0x0b);
    if plain(t.as_bytes().first()) && plain(t.as_bytes().last()) {
        t
    } else {
        s.trim()
    }
}

/// The part of `base` that an [`HrefNeeds::Dir`] `href`'s resolution depends on: the URL
/// up to the last `/` of its path (scheme, credentials, host, port and directory), or up
/// to the end of the path when it has no `/`. Never the query or the fragment.
pub fn base_dir(base: &Url) -> &str {
    let s = base.as_str();
    let end = base[..url::Position::AfterPath].len();
    let start = base[..url::Position::BeforePath].len();
    match s[start..end].rfind('/') {
        Some(i) => &s[..start + i + 1],
        None => &s[..end],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(base: &Url, href: &str) {
        let want = base.join(href).ok().map(String::from);
        assert_eq!(join(base, href), want, "{base} + {href:?}");
        // Appended to what the buffer holds (a `..` does not climb into it), or nothing
        // appended.
        let mut out = String::from("x/../");
        let done = Resolver::new(base).join_onto(href, &mut out);
        assert_eq!(
            done.then(|| &out[5..]),
            want.as_deref(),
            "{base} + {href:?}"
        );
        assert!(out.starts_with("x/../") && (done || out.len() == 5));
    }

    #[test]
    fn fast_joins_are_url_joins() {
        let bases = [
            "http://docs.example/0/std/vec/struct.Vec.html",
            "https://h:8443/a/b/?q=1#top",
            "http://h/",
            "http://h",
            "http://h/dir/",
            "http://user:pw@h/x/y.html?z",
        ];
        let pieces = [
            "", ".", "..", "a", "x.html", "..a", "...", ".a", "a.", "@", "~u", "a;b=c", "",
        ];
        let mut hrefs = vec![String::new(), "/".into(), "//".into(), "///x".into()];
        for a in pieces {
            for b in pieces {
                for c in ["", "/", "/.", "/..", "/z"] {
                    hrefs.push(format!("{a}/{b}{c}"));
                    hrefs.push(format!("/{a}/{b}{c}"));
                    hrefs.push(format!("{a}{c}"));
                }
            }
        }
        for frag in ["", "#", "#m.push", "#a#b", "#%3C&x?/:"] {
            for h in hrefs.clone() {
                hrefs.push(format!("{h}{frag}"));
            }
        }
        // Every printable ASCII byte in a path and in a fragment.
        for c in (0x20u8..0x7F).map(char::from) {
            hrefs.push(format!("a{c}b/c"));
            hrefs.push(format!("{c}x"));
            hrefs.push(format!("x#f{c}g"));
        }
        for extra in [
            "http://o/x",
            "mailto:a@b",
            "a:b",
            "?q",
            "x?q#f",
            "a b",
            "é",
            "#é",
        ] {
            hrefs.push(extra.into());
        }
        hrefs.extend(absolute_hrefs());
        for base in bases {
            let base = Url::parse(base).unwrap();
            for h in &hrefs {
                check(&base, h);
            }
        }
        // The pieces the Rust documentation's links are made of take the fast path.
        let base = Url::parse(bases[0]).unwrap();
        for h in [
            "../primitive.usize.html",
            "#method.push",
            "/x/./y/../z",
            "a/..",
            "",
        ] {
            assert!(
                fast(&base, parts_of(&base), h, &mut String::new()).is_some(),
                "{h}"
            );
        }
        let file = Url::parse("file:///c:/x/y").unwrap();
        check(&file, "../z");
        for h in absolute_hrefs() {
            check(&file, &h);
        }
        for h in [
            "https://play.rust-lang.org/?code=%23!%5Ballow(unused)%5D%0Afn+main()&edition=2021",
            "https://github.com/rust-lang/rust/issues/198#issuecomment-1",
            "http://a-b.c0.example/x/./y/../z.html",
        ] {
            assert!(
                fast(&base, parts_of(&base), h, &mut String::new()).is_some(),
                "{h}"
            );
        }
    }

    /// A base: `http(s)` with a host (plain, upper case, port, user), a path of a few
    /// segments, maybe a query and a fragment; or one of another scheme.
    fn base_strategy() -> impl Strategy<Value = Url> {
        let origin = prop::sample::select(vec![
            "http://h",
            "https://docs.example",
            "HTTP://H.Com:80",
            "http://u:p@h:81",
            "https://1.2.3.4",
            "file://",
            "ftp://h",
            "data:text/plain,",
        ]);
        let seg = prop::sample::select(vec!["a", "b.html", ".", "..", "", "%2e", "x y"]);
        let tail = prop::sample::select(vec!["", "?q=1", "#f", "?a&b#g", "?"]);
        (origin, prop::collection::vec(seg, 0..4), tail)
            .prop_filter_map("parses", |(o, segs, t)| {
                Url::parse(&format!("{o}/{}{t}", segs.join("/"))).ok()
            })
    }

    /// A reference: pieces the fast paths take (segments, dots, fragments, absolute
    /// `http(s)://` prefixes) mixed with what they must leave to `Url::join` (`%`, `\`,
    /// blanks, `?`, `:`, non-ASCII), and any printable ASCII byte.
    fn href_strategy() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            4 => prop::sample::select(vec![
                "a", "x.html", "/", ".", "..", "#", "#m", "?", "?q=1", "//", "http://",
                "https://", "HTTP://", "h", "h.c", ":", ":80", "@", "%", "%2e", "%2E", "\\",
                " ", "\t", "é", "~", "-", "_", "mailto:", "&", "=", ";",
            ]).prop_map(str::to_owned),
            1 => (0x20u8..0x7F).prop_map(|c| char::from(c).to_string()),
        ];
        prop::collection::vec(piece, 0..8).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

        /// The string join and the resolver give `Url::join`'s answer, failures included.
        #[test]
        fn joins_as_url_join(base in base_strategy(), href in href_strategy()) {
            check(&base, &href);
        }
    }

    /// Absolute references: hosts that are plain domains or not (IP addresses in
    /// their forms, IDNA, ports, users, upper case, empty labels), paths, queries and
    /// fragments with every printable ASCII byte.
    fn absolute_hrefs() -> Vec<String> {
        let schemes = ["http://", "https://", "HTTP://", "hTtps://", "ftp://"];
        let hosts = [
            "h",
            "docs.example",
            "a-b.c0.x",
            "-a-.b-",
            "0.1",
            "1.2.3.4",
            "x.0x1",
            "x.09",
            "x.1e",
            "h.c1",
            "xn--nxasmq6b.com",
            "a.xn--nxasmq6b",
            "H.com",
            "a..b",
            "a.b.",
            ".a",
            "h:80",
            "h:443",
            "u@h",
            "u:p@h",
            "",
            "é.com",
            "[::1]",
        ];
        let mut rests: Vec<String> = [
            "",
            "/",
            "/a/../b",
            "/./x",
            "/x/.",
            "/x/..",
            "/..",
            "//x",
            "/a b",
            "/%2e/x",
            "/a/%2E%2e/b",
            "/a?q=1&b=%20#f",
            "?q",
            "#f",
            "/x?'q'",
            "/x?a`b",
            "/x?a\\b",
            "/x#a`b",
            "/x?#",
            "/x?q#f#g",
            "/x?q?r",
            "\\x",
            "/a\\b",
            "/\u{e9}",
            "/x?\u{e9}",
        ]
        .iter()
        .map(|r| (*r).to_owned())
        .collect();
        for c in (0x20u8..0x7F).map(char::from) {
            rests.push(format!("/p{c}q"));
            rests.push(format!("/p?q{c}r"));
            rests.push(format!("/p#f{c}g"));
        }
        let mut out = Vec::new();
        for s in schemes {
            for h in hosts {
                for r in &rests {
                    out.push(format!("{s}{h}{r}"));
                }
            }
        }
        out
    }
}
