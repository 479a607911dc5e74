//! A URL's pattern: what the pages of one template have in common. The pages of a
//! listing's items differ in their ids, not their shape, so the ids are generalised:
//!
//! - a run of digits is `{n}` (`/items/item-12.html` → `/items/item-{n}.html`);
//! - a segment that is an id (hex of 8 or more with a digit, a UUID, a token of 16 or more
//!   letters and digits mixed) is `{id}`;
//! - the last segment, when it is a slug (words joined by `-` or `_`), is `{slug}`, its
//!   extension kept (`/bestiary/ash-wyrm.html` → `/bestiary/{slug}.html`);
//! - query values are `{v}`, the names kept and sorted (`/app/?view=guilds` →
//!   `/app/?view={v}`).
//!
//! Scheme, host and port are kept: two sites never share a pattern.

use url::Url;

/// The pattern of `url` (a URL that does not parse is its own pattern).
pub fn pattern_of(url: &str) -> String {
    let Ok(u) = Url::parse(url) else {
        return url.to_owned();
    };
    let mut out = format!("{}://{}", u.scheme(), u.host_str().unwrap_or(""));
    if let Some(port) = u.port() {
        out.push_str(&format!(":{port}"));
    }
    let segments: Vec<&str> = u.path().split('/').collect();
    let last = segments.len() - 1;
    for (i, seg) in segments.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&segment(seg, i == last));
    }
    let mut keys: Vec<String> = u.query_pairs().map(|(k, _)| k.into_owned()).collect();
    if !keys.is_empty() {
        keys.sort();
        keys.dedup();
        let q: Vec<String> = keys.iter().map(|k| format!("{k}={{v}}")).collect();
        out.push('?');
        out.push_str(&q.join("&"));
    }
    out
}

fn segment(seg: &str, last: bool) -> String {
    if seg.is_empty() {
        return String::new();
    }
    if is_id(seg) {
        return "{id}".into();
    }
    let (stem, ext) = match seg.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() && ext.chars().all(|c| c.is_ascii_alphabetic()) => {
            (stem, Some(ext))
        }
        _ => (seg, None),
    };
    let digits = stem.chars().any(|c| c.is_ascii_digit());
    let stem = if last && !digits && is_slug(stem) {
        "{slug}".to_owned()
    } else {
        digit_runs(stem)
    };
    match ext {
        Some(ext) => format!("{stem}.{ext}"),
        None => stem,
    }
}

/// Digit runs made `{n}`.
fn digit_runs(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_run {
                out.push_str("{n}");
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// Hex of 8 or more with a digit (a hash, a UUID's parts), or a token of 16 or more
/// letters and digits with both.
fn is_id(seg: &str) -> bool {
    let hexish = seg.len() >= 8
        && seg.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        && seg.chars().any(|c| c.is_ascii_digit())
        && seg
            .chars()
            .any(|c| c.is_ascii_hexdigit() && !c.is_ascii_digit());
    let token = seg.len() >= 16
        && seg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && seg.chars().any(|c| c.is_ascii_digit())
        && seg.chars().any(|c| c.is_ascii_alphabetic());
    hexish || token
}

/// Words joined by `-` or `_`.
fn is_slug(s: &str) -> bool {
    let words = s.split(['-', '_']).filter(|w| !w.is_empty()).count();
    words >= 2
        && s.chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::pattern_of;

    #[test]
    fn ids_digits_slugs_and_query_values_are_generalised() {
        let cases = [
            (
                "http://h:8080/items/item-12.html",
                "http://h:8080/items/item-{n}.html",
            ),
            ("http://h/items/item-7.html", "http://h/items/item-{n}.html"),
            (
                "http://h/bestiary/ash-wyrm.html",
                "http://h/bestiary/{slug}.html",
            ),
            (
                "http://h/blog/2024/05/my-first-post",
                "http://h/blog/{n}/{n}/{slug}",
            ),
            (
                "http://h/u/3f2a9c1e-77d0-4b5e-9a1c-0e5a2b7c9d11/profile",
                "http://h/u/{id}/profile",
            ),
            ("http://h/app/?view=guilds", "http://h/app/?view={v}"),
            ("http://h/p?id=3&lang=en", "http://h/p?id={v}&lang={v}"),
            ("http://h/", "http://h/"),
            ("http://h/about", "http://h/about"),
            ("http://h/market/", "http://h/market/"),
        ];
        for (url, want) in cases {
            assert_eq!(pattern_of(url), want, "{url}");
        }
    }

    #[test]
    fn pages_of_one_template_share_a_pattern_and_others_do_not() {
        assert_eq!(
            pattern_of("http://h/market/product.html?id=1"),
            pattern_of("http://h/market/product.html?id=12")
        );
        assert_ne!(pattern_of("http://h/a/1"), pattern_of("http://h/b/1"));
        assert_ne!(pattern_of("http://h/a/1"), pattern_of("http://g/a/1"));
        assert_eq!(pattern_of("not a url"), "not a url");
    }
}
