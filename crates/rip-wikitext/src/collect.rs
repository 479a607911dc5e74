//! Walks the whole tree (inside templates and references too) for links, categories,
//! external links and references.

use crate::inline::{LinkScanner, clean_line};
use crate::preprocess::Node;
use crate::render::Renderer;
use crate::title::{Namespace, namespace_of, normalize_title};
use crate::{ExternalLink, Link, Reference};

#[derive(Default)]
pub(crate) struct Collected {
    pub links: Vec<Link>,
    pub categories: Vec<String>,
    pub external_links: Vec<ExternalLink>,
    pub references: Vec<Reference>,
}

pub(crate) fn collect(r: &Renderer<'_>, nodes: &[Node], into: &mut Collected) {
    for node in nodes {
        match node {
            Node::Text(span) => external_links(&r.src[span.clone()], into),
            Node::Comment(_) => {}
            Node::Template { parts, .. } | Node::Argument { parts, .. } => {
                for part in &parts[1..] {
                    collect(r, &part.nodes, into);
                }
            }
            Node::Link { parts, .. } => {
                link(r, parts, into);
                for part in &parts[1..] {
                    collect(r, &part.nodes, into);
                }
            }
            Node::Ext(ext) => {
                if ext.name != "ref" {
                    continue;
                }
                let name = attribute(&r.src[ext.attrs.clone()], "name");
                if let Some(nodes) = &ext.nodes {
                    let text = clean_line(&r.render_string(nodes));
                    into.references.push(Reference { name, text });
                    collect(r, nodes, into);
                }
            }
        }
    }
}

fn link(r: &Renderer<'_>, parts: &[crate::preprocess::Part], into: &mut Collected) {
    let raw = r.render_string(&parts[0].nodes);
    let raw = raw.trim();
    let (colon, target) = match raw.strip_prefix(':') {
        Some(rest) => (true, rest.trim_start()),
        None => (false, raw),
    };
    match namespace_of(target) {
        (Namespace::Category, name) if !colon => {
            let name = normalize_title(name);
            if !name.is_empty() && !into.categories.contains(&name) {
                into.categories.push(name);
            }
        }
        (Namespace::File, _) if !colon => {}
        _ => {
            let (page, fragment) = match target.split_once('#') {
                Some((page, fragment)) => (page, Some(fragment.trim().to_owned())),
                None => (target, None),
            };
            let page = normalize_title(page);
            if page.is_empty() {
                return; // [[#Section]]: a link within the page.
            }
            // Links cannot nest (MediaWiki shows the outer one as text): rendering the label
            // of such a tower at every level would cost depth × size, so it shows its target.
            let nested = parts[1..]
                .iter()
                .any(|p| p.nodes.iter().any(|n| matches!(n, Node::Link { .. })));
            let mut text = String::new();
            if nested {
                text.push_str(target);
            } else {
                r.link(parts, &mut text);
            }
            into.links.push(Link {
                target: page,
                fragment: fragment.filter(|f| !f.is_empty()),
                text: clean_line(&text),
            });
        }
    }
}

/// `[scheme://… label]` in one text node.
fn external_links(text: &str, into: &mut Collected) {
    let mut scanner = LinkScanner::default();
    let mut from = 0;
    while let Some(p) = text[from..].find('[') {
        let i = from + p;
        from = i + 1;
        if text.as_bytes().get(i + 1) == Some(&b'[') {
            from = i + 2;
            continue;
        }
        if let Some((url, label, _)) = scanner.at(text, i) {
            into.external_links.push(ExternalLink {
                url: url.to_owned(),
                text: clean_line(label),
            });
        }
    }
}

/// The value of attribute `name` in a tag's attribute source (`name="a b"`, `name=x`).
pub(crate) fn attribute(attrs: &str, name: &str) -> Option<String> {
    let lower = attrs.to_ascii_lowercase();
    let mut from = 0;
    while let Some(p) = lower[from..].find(name) {
        let at = from + p;
        from = at + name.len();
        let before_ok = at == 0 || lower.as_bytes()[at - 1].is_ascii_whitespace();
        let rest = attrs[from..].trim_start();
        if !before_ok || !rest.starts_with('=') {
            continue;
        }
        let value = rest[1..].trim_start();
        let value = match value.chars().next() {
            Some(q @ ('"' | '\'')) => value[1..].split(q).next().unwrap_or(""),
            _ => value
                .split(|c: char| c.is_whitespace() || c == '/')
                .next()
                .unwrap_or(""),
        };
        return Some(value.trim().to_owned()).filter(|v| !v.is_empty());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::attribute;

    #[test]
    fn attributes() {
        assert_eq!(
            attribute(" name=\"bestiary\"", "name").as_deref(),
            Some("bestiary")
        );
        assert_eq!(attribute(" name=x", "name").as_deref(), Some("x"));
        assert_eq!(
            attribute(" group=a name = 'b c' ", "name").as_deref(),
            Some("b c")
        );
        assert_eq!(attribute(" name=x/", "name").as_deref(), Some("x"));
        assert_eq!(attribute(" rename=x", "name"), None);
        assert_eq!(attribute("", "name"), None);
    }
}
