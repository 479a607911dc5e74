//! Page titles: namespaces and MediaWiki's normal form.

/// The namespaces that change what a `[[…]]` means. English names and aliases only: a wiki
/// in another language names them differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Namespace {
    /// `[[Category:X]]` puts the page in a category.
    Category,
    /// `[[File:X]]`, `[[Image:X]]`, `[[Media:X]]` embed a file.
    File,
    /// Anything else, including the main namespace.
    Other,
}

/// The namespace of a link target and the rest after its colon.
pub(crate) fn namespace_of(target: &str) -> (Namespace, &str) {
    if let Some((prefix, rest)) = target.split_once(':') {
        let prefix = prefix.trim();
        let ns = if prefix.eq_ignore_ascii_case("category") {
            Namespace::Category
        } else if ["file", "image", "media"]
            .iter()
            .any(|p| prefix.eq_ignore_ascii_case(p))
        {
            Namespace::File
        } else {
            Namespace::Other
        };
        if ns != Namespace::Other {
            return (ns, rest.trim_start());
        }
    }
    (Namespace::Other, target)
}

/// MediaWiki's normal form of a title: entities decoded, underscores as spaces, runs of
/// whitespace as one space, trimmed, first letter upper-case (the default `$wgCapitalLinks`).
pub fn normalize_title(title: &str) -> String {
    let decoded = html_escape::decode_html_entities(title);
    let mut out = String::with_capacity(decoded.len());
    let mut space = false;
    for c in decoded.chars() {
        if c == '_' || c.is_whitespace() {
            space = !out.is_empty();
        } else {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c);
        }
    }
    let mut chars = out.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_form() {
        assert_eq!(normalize_title("  ash_wyrm  "), "Ash wyrm");
        assert_eq!(normalize_title("Q&amp;A   Tavern"), "Q&A Tavern");
        assert_eq!(normalize_title("æther Wisp"), "Æther Wisp");
        assert_eq!(normalize_title(""), "");
    }

    #[test]
    fn namespaces() {
        assert_eq!(namespace_of("Category: Dragons").0, Namespace::Category);
        assert_eq!(namespace_of("category:Dragons").1, "Dragons");
        assert_eq!(namespace_of("Image:x.png").0, Namespace::File);
        assert_eq!(
            namespace_of("Help:Contents"),
            (Namespace::Other, "Help:Contents")
        );
    }
}
