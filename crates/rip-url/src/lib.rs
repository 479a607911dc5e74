#![deny(missing_docs)]
//! `rip-url`: one page, one URL.
//!
//! A [`Canonicalizer`] turns an `href` found on a page into the canonical form of the URL
//! it points to, so that a crawler's visited set sees each page once however it was
//! written:
//!
//! | step | by | example |
//! |---|---|---|
//! | resolve against the page or its `<base href>` | `url` | `../b/./c.html` → `http://h/b/c.html` |
//! | lower-case scheme and host, IDNA, drop the default port | `url` | `HTTP://Ex.COM:80/` → `http://ex.com/` |
//! | remove dot segments (also `%2e%2e`) | `url` | `/a/../b` → `/b` |
//! | drop the fragment | here | `/a#top` → `/a` |
//! | decode escapes of unreserved characters, upper-case the others | here | `/%7euser/%c3%a9` → `/~user/%C3%A9` |
//! | drop query parameters by name (`utm_*` by default), empty pairs and an empty `?` | here | `/a?utm_source=x&b=1&&` → `/a?b=1` |
//!
//! The result is idempotent: canonicalising a canonical URL gives it back unchanged
//! (a property test checks this on random URLs). The `url` crate does the first three
//! steps; it does not drop fragments, decode unreserved escapes or strip parameters.
//!
//! Only `http` and `https` URLs are kept; `mailto:`, `javascript:`, `data:`, … are
//! [`Rejected::Scheme`].
//!
//! [`join`](mod@join) holds the fast paths around joining a link against its base: a
//! string join that gives `Url::join`'s answer for less work ([`Resolver`]), and what of
//! its base an `href` needs ([`href_needs`], [`base_dir`]), so that a crawler resolves a
//! navigation link once per directory, not once per page.
//!
//! [`natural_cmp`] orders strings the way people number things (`item-9` before
//! `item-10`).

use std::borrow::Cow;
use std::cmp::Ordering;

pub use url::Url;

pub mod check;
pub mod join;
pub use join::{HrefNeeds, Resolver, base_dir, href_needs};

/// Why an `href` gives no URL to crawl.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejected {
    /// The `href` does not parse as a URL, even relative to the page.
    #[error("invalid URL `{href}`: {source}")]
    Invalid {
        /// The `href` as written.
        href: String,
        /// What the parser said.
        source: url::ParseError,
    },
    /// Not an `http` or `https` URL (`mailto:`, `javascript:`, `ftp:`, …).
    #[error("not an http(s) URL: `{0}`")]
    Scheme(String),
}

/// Which query parameters to drop: an exact name, or a prefix written `name*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamPattern {
    /// Exactly this name.
    Exact(String),
    /// Any name starting with this.
    Prefix(String),
}

impl ParamPattern {
    /// `utm_*` is a prefix, anything else an exact name.
    pub fn parse(pattern: &str) -> Self {
        match pattern.strip_suffix('*') {
            Some(prefix) => Self::Prefix(prefix.to_owned()),
            None => Self::Exact(pattern.to_owned()),
        }
    }

    /// True when `name` (escapes normalised) matches.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Self::Exact(n) => n == name,
            Self::Prefix(p) => name.starts_with(p.as_str()),
        }
    }
}

/// The tracking parameters dropped by [`Canonicalizer::default`].
pub const DEFAULT_DROPPED: &[&str] = &["utm_*"];

/// Canonicalises URLs; see the crate docs for the steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canonicalizer {
    drop: Vec<ParamPattern>,
}

impl Default for Canonicalizer {
    /// Drops the [`DEFAULT_DROPPED`] tracking parameters.
    fn default() -> Self {
        Self::keeping_all_params().drop_params(DEFAULT_DROPPED.iter().copied())
    }
}

impl Canonicalizer {
    /// A canonicaliser that keeps every query parameter.
    pub fn keeping_all_params() -> Self {
        Self { drop: Vec::new() }
    }

    /// Also drops parameters matching these patterns (`name` or `prefix*`).
    pub fn drop_params<S: AsRef<str>>(mut self, patterns: impl IntoIterator<Item = S>) -> Self {
        for p in patterns {
            let p = ParamPattern::parse(p.as_ref());
            if !self.drop.contains(&p) {
                self.drop.push(p);
            }
        }
        self
    }

    /// The patterns of parameters dropped.
    pub fn dropped(&self) -> &[ParamPattern] {
        &self.drop
    }

    /// Resolves `href` against `base` (the page URL, or its `<base href>` resolved against
    /// the page) and canonicalises it. Surrounding blanks are ignored; an empty `href`
    /// or a bare `#fragment` names the page itself.
    pub fn resolve(&self, base: &Url, href: &str) -> Result<Url, Rejected> {
        let mut url = base.join(href.trim()).map_err(|source| Rejected::Invalid {
            href: href.to_owned(),
            source,
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Rejected::Scheme(truncate(href, 80)));
        }
        self.canonicalize(&mut url);
        Ok(url)
    }

    /// Parses an absolute URL and canonicalises it.
    pub fn parse(&self, s: &str) -> Result<Url, Rejected> {
        let mut url = Url::parse(s.trim()).map_err(|source| Rejected::Invalid {
            href: s.to_owned(),
            source,
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Rejected::Scheme(truncate(s, 80)));
        }
        self.canonicalize(&mut url);
        Ok(url)
    }

    /// Canonicalises a parsed URL in place (the steps `url` does not do).
    pub fn canonicalize(&self, url: &mut Url) {
        url.set_fragment(None);
        if !url.cannot_be_a_base()
            && let Cow::Owned(path) = normalize_escapes(url.path())
        {
            url.set_path(&path);
        }
        if let Some(query) = url.query() {
            let kept: Vec<Cow<'_, str>> = query
                .split('&')
                .filter(|pair| !pair.is_empty())
                .map(normalize_escapes)
                .filter(|pair| {
                    let name = pair.split_once('=').map_or(pair.as_ref(), |(n, _)| n);
                    !self.drop.iter().any(|p| p.matches(name))
                })
                .collect();
            let joined = kept.join("&");
            if joined.is_empty() {
                url.set_query(None);
            } else if joined != query {
                url.set_query(Some(&joined));
            }
        }
    }
}

fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decodes `%XX` escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`) and upper-cases
/// the hex digits of every other escape (RFC 3986 §6.2.2). Borrowed when nothing changes.
/// A hex digit is left escaped after a stray `%` or `%X` (`%4%33A` stays as it is), where
/// decoding it would make a new escape (`%43A`) that a second pass would decode: the
/// result is a fixed point.
pub fn normalize_escapes(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    let needs = b.windows(3).any(|w| {
        w[0] == b'%'
            && match (hex_val(w[1]), hex_val(w[2])) {
                (Some(h), Some(l)) => {
                    is_unreserved(h << 4 | l)
                        || w[1].is_ascii_lowercase()
                        || w[2].is_ascii_lowercase()
                }
                _ => false,
            }
    });
    if !needs {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex_val(b[i + 1]), hex_val(b[i + 2]))
        {
            let byte = h << 4 | l;
            if is_unreserved(byte) && !(byte.is_ascii_hexdigit() && ends_in_open_escape(&out)) {
                out.push(byte as char);
            } else {
                out.push('%');
                out.push(b[i + 1].to_ascii_uppercase() as char);
                out.push(b[i + 2].to_ascii_uppercase() as char);
            }
            i += 3;
            continue;
        }
        // Copy up to the next '%' in one go (keeps multi-byte characters whole).
        let next = s[i + 1..].find('%').map_or(b.len(), |j| i + 1 + j);
        out.push_str(&s[i..next]);
        i = next;
    }
    Cow::Owned(out)
}

/// `s` ends in `%` or `%` and a hex digit: a hex digit after it would make an escape.
fn ends_in_open_escape(s: &str) -> bool {
    match s.as_bytes() {
        [.., b'%'] => true,
        [.., b'%', d] => d.is_ascii_hexdigit(),
        _ => false,
    }
}

/// Compares two strings the way people number things: runs of ASCII digits compare by
/// value (`item-9` < `item-10` < `item-010`… ties broken by length, then bytewise), the
/// rest bytewise. A total order, consistent with equality.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < x.len() && j < y.len() {
        if x[i].is_ascii_digit() && y[j].is_ascii_digit() {
            let si = i;
            while i < x.len() && x[i].is_ascii_digit() {
                i += 1;
            }
            let sj = j;
            while j < y.len() && y[j].is_ascii_digit() {
                j += 1;
            }
            let (da, db) = (&x[si..i], &y[sj..j]);
            let ta = trim_zeros(da);
            let tb = trim_zeros(db);
            let ord = ta
                .len()
                .cmp(&tb.len())
                .then_with(|| ta.cmp(tb))
                .then_with(|| da.len().cmp(&db.len()));
            if ord != Ordering::Equal {
                return ord;
            }
        } else {
            match x[i].cmp(&y[j]) {
                Ordering::Equal => {
                    i += 1;
                    j += 1;
                }
                ord => return ord,
            }
        }
    }
    (x.len() - i).cmp(&(y.len() - j)).then_with(|| x.cmp(y))
}

fn trim_zeros(d: &[u8]) -> &[u8] {
    let nz = d.iter().position(|&c| c != b'0').unwrap_or(d.len());
    &d[nz..]
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod whatwg_tests;
