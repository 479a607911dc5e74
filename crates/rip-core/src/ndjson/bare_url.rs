//! A line that is a bare absolute URL (`https://example.com/`), as `katana`, `httpx` and
//! a plain list of URLs write them: read as the `ref` record of that URL, so that
//! `echo https://example.com/ | rip-fetch` works without wrapping each URL in JSON.
//!
//! A line is taken for a URL when it starts with `http://` or `https://` (any case); one
//! that does not parse as an absolute URL with a host is a bad line like any other, saying
//! why. A line that is one URL of another scheme (`ftp://h/f`, `mailto:a@h`) is a bad line saying that
//! only http and https are fetched. Everything else is read as JSON, as before.

use crate::fetch::Ref;
use crate::record::{Kind, Record};

use super::{Line, LineError};

/// The `ref` line of `text` when it is a bare URL (`None` when it is not one, to be read as
/// JSON), or why it is a URL line that is not a URL.
pub(super) fn as_ref_line(text: &str) -> Option<Result<Line, LineError>> {
    let url = text.trim();
    if !looks_like_url(url) {
        return other_scheme(url).map(|scheme| {
            Err(LineError::NotHttpUrl {
                url: shortened(url),
                scheme: scheme.to_owned(),
            })
        });
    }
    let read = parse(url).map_err(|e| match e {
        LineError::BadUrl { url, reason } => LineError::BadUrl {
            url,
            reason: format!("{reason} (a line starting with http:// or https:// is a URL)"),
        },
        other => other,
    });
    Some(read.map(|()| {
        let record = Record::Ref(Ref::new(url));
        // A `Ref` of a string always serialises.
        let json = serde_json::to_string(&record).unwrap_or_default();
        Line::from_trusted(Kind::Ref, json)
    }))
}

/// A URL given as a command-line argument, checked as a bare URL line is: an absolute
/// http(s) URL with a host, without white space; it is read as its `ref` (see
/// `as_ref_line`).
pub fn url_argument(text: &str) -> Result<String, LineError> {
    if !looks_like_url(text) {
        return Err(LineError::BadUrl {
            url: shortened(text),
            reason: "not an absolute http:// or https:// URL".to_owned(),
        });
    }
    parse(text).map(|()| text.to_owned())
}

/// Starts with `http://` or `https://`, in any case.
fn looks_like_url(text: &str) -> bool {
    let starts = |scheme: &str| {
        text.get(..scheme.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
    };
    starts("http://") || starts("https://")
}

/// The scheme of a line that is one URL of another scheme than http(s) (`ftp://h/f`,
/// `file:///x`, `mailto:a@h`): a scheme as RFC 3986 spells one, then `://`, or `:` and
/// something for a scheme of two letters or more other than http(s) (`C:\x` is no URL;
/// `http:/x` is a broken http URL, left to JSON's message), and no white space.
fn other_scheme(text: &str) -> Option<&str> {
    let (scheme, rest) = text.split_once(':')?;
    let mut chars = scheme.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let opaque = scheme.len() >= 2
        && !rest.is_empty()
        && !scheme.eq_ignore_ascii_case("http")
        && !scheme.eq_ignore_ascii_case("https");
    (well_formed && (rest.starts_with("//") || opaque) && !text.contains(char::is_whitespace))
        .then_some(scheme)
}

/// Whether `url` is an absolute http(s) URL with a host, by the WHATWG parser; white space
/// inside is refused (a parser would drop or escape it: two URLs on a line are not one).
fn parse(url: &str) -> Result<(), LineError> {
    let bad = |reason: String| LineError::BadUrl {
        url: shortened(url),
        reason,
    };
    if url.contains(char::is_whitespace) {
        return Err(bad("it contains white space".to_owned()));
    }
    let parsed = url::Url::parse(url).map_err(|e| bad(e.to_string()))?;
    match parsed.host_str() {
        Some(host) if !host.is_empty() => Ok(()),
        _ => Err(bad("it has no host".to_owned())),
    }
}

/// The URL cut to a readable length for a message.
fn shortened(url: &str) -> String {
    const MAX: usize = 200;
    match url.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &url[..end]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Option<Result<String, String>> {
        as_ref_line(text).map(|r| r.map(|l| l.text().to_owned()).map_err(|e| e.to_string()))
    }

    #[test]
    fn a_bare_url_is_its_ref() {
        for (text, url) in [
            ("https://example.com/", "https://example.com/"),
            (
                "  http://127.0.0.1:8080/a?b=c#d \t",
                "http://127.0.0.1:8080/a?b=c#d",
            ),
            ("HTTPS://Example.COM/X", "HTTPS://Example.COM/X"),
        ] {
            let want = format!(r#"{{"_type":"ref","url":"{url}","depth":0,"attempt":0}}"#);
            assert_eq!(read(text), Some(Ok(want)), "{text}");
        }
    }

    #[test]
    fn a_bad_bare_url_says_why() {
        for (text, why) in [
            ("http://exa mple.com/", "it contains white space"),
            ("http://[::1/", "invalid IPv6 address"),
            ("https://", "empty host"),
            ("http://a:99999/", "invalid port number"),
        ] {
            let got = read(text).expect("a URL line").unwrap_err();
            assert!(got.starts_with("not a URL: "), "{text}: {got}");
            assert!(got.contains(why), "{text}: {got}");
        }
    }

    #[test]
    fn an_argument_is_a_url_or_an_error() {
        assert_eq!(url_argument("http://a/").as_deref(), Ok("http://a/"));
        for bad in ["a.com", "ftp://a/", "http://a b/", "http://"] {
            let err = url_argument(bad).unwrap_err().to_string();
            assert!(err.starts_with(&format!("not a URL: {bad}: ")), "{err}");
        }
    }

    #[test]
    fn a_url_of_another_scheme_says_so() {
        for (text, scheme) in [
            ("ftp://example.com/f.txt", "ftp"),
            ("  file:///etc/hosts ", "file"),
            ("git+ssh://h/r", "git+ssh"),
            ("mailto:x@h", "mailto"),
            ("javascript:void(0)", "javascript"),
            ("urn:isbn:0451450523", "urn"),
        ] {
            let got = read(text).expect("a URL line").unwrap_err();
            assert_eq!(
                got,
                format!(
                    "`{}` is a `{scheme}` URL, but only http and https are fetched",
                    text.trim()
                ),
            );
        }
    }

    #[test]
    fn other_lines_are_left_to_json() {
        for text in [
            r#"{"_type":"ref","url":"http://x/"}"#,
            "example.com/",
            "http:/example.com",
            "1ftp://x/",
            "ftp://a b/",
            "C:\\x",
            "mailto:",
            "HTTP:x",
            "",
        ] {
            assert_eq!(read(text), None, "{text}");
        }
    }
}
