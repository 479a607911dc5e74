//! The URLs a record carries: each must be an absolute `http` or `https` URL.

use rip_core::{Context, Record};

/// The first URL field of `record` that is not an absolute http(s) URL, as a message
/// naming the field and what is wrong with its value.
pub fn first_break(record: &Record) -> Option<String> {
    let mut fields: Vec<(&str, &str)> = Vec::new();
    if let Some(url) = record.url() {
        fields.push(("url", url));
    }
    match record {
        Record::Page(p) => fields.push(("finalUrl", &p.final_url)),
        Record::Failure(f) => fields.extend(f.final_url.as_deref().map(|u| ("finalUrl", u))),
        Record::Ledger(l) => fields.extend(l.entered.iter().map(|u| ("entered", u.as_str()))),
        _ => {}
    }
    if let Some(context) = context(record) {
        let optional = [
            ("parent", &context.parent),
            ("resolves", &context.resolves),
            ("wikiApi", &context.wiki_api),
        ];
        fields.extend(
            optional
                .into_iter()
                .filter_map(|(name, value)| Some((name, value.as_deref()?))),
        );
    }
    fields
        .into_iter()
        .find_map(|(name, value)| why_not_http(value).map(|why| format!("field `{name}`: {why}")))
}

fn context(record: &Record) -> Option<&Context> {
    match record {
        Record::Ref(r) => Some(&r.context),
        Record::Page(p) => Some(&p.context),
        Record::Failure(f) => Some(&f.context),
        Record::Doc(d) => Some(&d.context),
        Record::Error(e) => Some(&e.context),
        Record::Expected(e) => Some(&e.context),
        Record::Ledger(_) | Record::Summary(_) => None,
    }
}

/// Why `value` is not an absolute http(s) URL, or `None` when it is one.
fn why_not_http(value: &str) -> Option<String> {
    match url::Url::parse(value) {
        Err(e) => Some(format!(
            "`{value}` is not a URL ({e}; hint: an absolute http(s) URL)"
        )),
        Ok(u) if !matches!(u.scheme(), "http" | "https") => {
            Some(format!("`{value}` is a `{}` URL, not http(s)", u.scheme()))
        }
        Ok(u) if u.host_str().is_none_or(str::is_empty) => Some(format!("`{value}` has no host")),
        Ok(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_absolute_http_urls_pass() {
        for good in ["http://h/a", "https://h.example:8080/a?b#c", "HTTP://H/"] {
            assert_eq!(why_not_http(good), None, "{good}");
        }
        for (bad, says) in [
            ("not a url", "is not a URL (relative URL without a base"),
            ("/items/1.html", "is not a URL"),
            ("ftp://h/x", "is a `ftp` URL, not http(s)"),
            ("mailto:a@h", "is a `mailto` URL"),
            ("", "is not a URL"),
        ] {
            let why = why_not_http(bad).unwrap();
            assert!(why.contains(says), "{bad}: {why}");
        }
    }
}
