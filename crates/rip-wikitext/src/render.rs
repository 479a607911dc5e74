//! The second pass: the preprocessor tree to text. Templates are reduced by a small table of
//! what common templates display ([`template_text`]), links to their labels, comments and
//! references to nothing. Inline markup (bold, HTML tags, entities, external links) is left
//! for [`crate::inline`].

use crate::preprocess::{Node, Part, Span};
use crate::title::{Namespace, namespace_of};

/// Renders nodes of one source.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Renderer<'a> {
    pub src: &'a str,
    /// The page title, for `{{PAGENAME}}`.
    pub title: &'a str,
}

/// A template call, with parameters split into positional and named.
pub(crate) struct Call<'n> {
    /// The name as written, trimmed (`Infobox creature`).
    pub name: String,
    /// `(key, value)` in order; positional parameters get keys `1`, `2`, …
    pub params: Vec<(String, Value<'n>)>,
    /// Whether each parameter was positional.
    pub positional: Vec<bool>,
}

/// A parameter value: the text after the `=` in the node holding it, then the nodes after.
#[derive(Clone)]
pub(crate) struct Value<'n> {
    pub head: Option<Span>,
    pub nodes: &'n [Node],
    /// The value's source, for its raw wikitext.
    pub span: Span,
}

impl<'a> Renderer<'a> {
    pub fn render(&self, nodes: &[Node], out: &mut String) {
        for node in nodes {
            match node {
                Node::Text(span) => out.push_str(&self.src[span.clone()]),
                Node::Comment(_) => {}
                Node::Template { parts, .. } => self.template(parts, out),
                Node::Argument { parts, .. } => {
                    if let Some(default) = parts.get(1) {
                        self.render(&default.nodes, out);
                    }
                }
                Node::Link { parts, .. } => self.link(parts, out),
                Node::Ext(ext) => match (ext.name, &ext.inner) {
                    ("nowiki" | "pre" | "math" | "chem" | "ce" | "poem", Some(inner))
                    | ("syntaxhighlight" | "source", Some(inner)) => {
                        out.push_str(&self.src[inner.clone()]);
                    }
                    _ => {}
                },
            }
        }
    }

    pub fn render_string(&self, nodes: &[Node]) -> String {
        let mut out = String::new();
        self.render(nodes, &mut out);
        out
    }

    pub fn render_value(&self, value: &Value<'_>) -> String {
        let mut out = String::new();
        if let Some(head) = &value.head {
            out.push_str(&self.src[head.clone()]);
        }
        self.render(value.nodes, &mut out);
        out
    }

    /// The template call of `parts`: its name and parameters.
    pub fn call<'n>(&self, parts: &'n [Part]) -> Call<'n> {
        let name = self.render_string(&parts[0].nodes).trim().to_owned();
        let mut params = Vec::new();
        let mut positional = Vec::new();
        let mut index = 0;
        for part in &parts[1..] {
            match self.split(part) {
                Some((key, value)) => {
                    params.push((key, value));
                    positional.push(false);
                }
                None => {
                    index += 1;
                    params.push((
                        index.to_string(),
                        Value {
                            head: None,
                            nodes: &part.nodes,
                            span: part.span.clone(),
                        },
                    ));
                    positional.push(true);
                }
            }
        }
        Call {
            name,
            params,
            positional,
        }
    }

    /// Splits a `key=value` part at its first top-level `=`.
    fn split<'n>(&self, part: &'n Part) -> Option<(String, Value<'n>)> {
        let eq = part.eq?;
        let k = part
            .nodes
            .iter()
            .position(|n| matches!(n, Node::Text(s) if s.start <= eq && eq < s.end))?;
        let Node::Text(span) = &part.nodes[k] else {
            return None;
        };
        let mut key = self.render_string(&part.nodes[..k]);
        key.push_str(&self.src[span.start..eq]);
        let value = Value {
            head: Some(eq + 1..span.end),
            nodes: &part.nodes[k + 1..],
            span: eq + 1..part.span.end,
        };
        Some((key.trim().to_owned(), value))
    }

    fn template(&self, parts: &[Part], out: &mut String) {
        let call = self.call(parts);
        out.push_str(&template_text(self, &call));
    }

    pub fn link(&self, parts: &[Part], out: &mut String) {
        let target = self.render_string(&parts[0].nodes);
        let target = target.trim();
        let (colon, target) = match target.strip_prefix(':') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, target),
        };
        if !colon
            && matches!(
                namespace_of(target).0,
                Namespace::Category | Namespace::File
            )
        {
            return;
        }
        if parts.len() == 1 {
            out.push_str(target);
            return;
        }
        let mut label = String::new();
        for (k, part) in parts[1..].iter().enumerate() {
            if k > 0 {
                label.push('|');
            }
            self.render(&part.nodes, &mut label);
        }
        if label.trim().is_empty() {
            // The pipe trick: [[Dragon (creature)|]] shows "Dragon".
            let (_, title) = namespace_of(target);
            let title = match title.rfind(" (") {
                Some(p) if title.ends_with(')') => &title[..p],
                _ => title,
            };
            out.push_str(title);
        } else {
            out.push_str(&label);
        }
    }
}

/// Templates that display nothing useful as text: hatnotes, maintenance tags, reference
/// lists, navigation.
const SILENT: &[&str] = &[
    "reflist",
    "refbegin",
    "refend",
    "references",
    "notelist",
    "main",
    "main article",
    "see also",
    "further",
    "details",
    "about",
    "for",
    "distinguish",
    "other uses",
    "redirect",
    "short description",
    "defaultsort",
    "use dmy dates",
    "use mdy dates",
    "toc",
    "clear",
    "-",
    "portal",
    "commons category",
    "authority control",
    "coord missing",
    "sfn",
    "efn",
    "refn",
    "r",
    "rp",
    "harv",
    "harvnb",
    "citation needed",
    "cn",
    "fact",
    "clarify",
    "dubious",
    "when",
    "who",
    "by whom",
    "better source needed",
    "update needed",
];

/// Templates that display their first positional parameter.
const FIRST: &[&str] = &[
    "tooltip",
    "abbr",
    "abbrlink",
    "ill",
    "interlanguage link",
    "visible anchor",
    "sic",
    "nobold",
    "noitalic",
];

/// Templates that display their last positional parameter.
const LAST: &[&str] = &["lang", "transl", "resize", "font color", "color"];

/// What a template displays, as text (before inline cleanup).
pub(crate) fn template_text(r: &Renderer<'_>, call: &Call<'_>) -> String {
    let mut name = call.name.as_str();
    for prefix in ["subst:", "safesubst:", "msgnw:", "template:"] {
        if crate::inline::starts_with_ignore_case(name, prefix) {
            name = name[prefix.len()..].trim_start();
        }
    }
    let lname = name.to_lowercase().replace('_', " ");
    let args = Args::of(r, call);
    if let Some(text) = parser_function(name, &lname, &args) {
        return text;
    }
    if let Some(text) = known_template(r, &lname, &args) {
        return text;
    }
    // Anything else (nowrap, small, coord, custom inline templates): its positional
    // parameters, in order. Named-only templates display nothing.
    (0..args.positional_count())
        .filter_map(|n| args.positional(n))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A template call's parameters, rendered on demand.
struct Args<'c, 'r> {
    r: &'c Renderer<'r>,
    call: &'c Call<'c>,
    /// The positional parameters' values, in order.
    values: Vec<&'c Value<'c>>,
}

impl<'c, 'r> Args<'c, 'r> {
    fn of(r: &'c Renderer<'r>, call: &'c Call<'c>) -> Self {
        let values = call
            .params
            .iter()
            .zip(&call.positional)
            .filter(|(_, p)| **p)
            .map(|((_, v), _)| v)
            .collect();
        Self { r, call, values }
    }

    fn positional_count(&self) -> usize {
        self.values.len()
    }

    /// The `n`-th positional parameter (0-based), rendered and trimmed.
    fn positional(&self, n: usize) -> Option<String> {
        self.values
            .get(n)
            .map(|v| self.r.render_value(v).trim().to_owned())
    }

    /// The last parameter named `key` (ASCII case-insensitive), rendered and trimmed.
    fn named(&self, key: &str) -> Option<String> {
        self.call
            .params
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| self.r.render_value(v).trim().to_owned())
    }
}

/// Parser functions and magic words with an argument after a colon (`{{#if:…}}`,
/// `{{lc:…}}`): what they display, or `None` when `name` is not one.
fn parser_function(name: &str, lname: &str, args: &Args<'_, '_>) -> Option<String> {
    if let Some(rest) = lname.strip_prefix('#') {
        if rest.starts_with("if:") {
            let cond = name.split_once(':').map(|x| x.1).unwrap_or_default().trim();
            let branch = if cond.is_empty() { 1 } else { 0 };
            return Some(args.positional(branch).unwrap_or_default());
        }
        return Some(String::new());
    }
    let (func, arg) = name.split_once(':')?;
    let arg = arg.trim();
    match func.trim().to_lowercase().as_str() {
        "lc" => Some(arg.to_lowercase()),
        "uc" => Some(arg.to_uppercase()),
        "lcfirst" => Some(change_first(arg, false)),
        "ucfirst" => Some(change_first(arg, true)),
        "formatnum" | "padleft" | "padright" | "urlencode" | "anchorencode" => Some(arg.to_owned()),
        "defaultsort" | "displaytitle" | "int" | "ns" | "fullurl" | "localurl" => {
            Some(String::new())
        }
        _ => None,
    }
}

/// Templates whose display is known (escapes, page names, conversions, citations,
/// silent and first- or last-parameter templates): what they display, or `None`.
fn known_template(r: &Renderer<'_>, lname: &str, args: &Args<'_, '_>) -> Option<String> {
    match lname {
        "!" => return Some("|".into()),
        "=" => return Some("=".into()),
        "!!" => return Some("||".into()),
        "pagename" | "pagenamee" | "fullpagename" | "basepagename" | "subpagename" => {
            return Some(r.title.to_owned());
        }
        "convert" | "cvt" => {
            let value = args.positional(0).unwrap_or_default();
            return Some(match args.positional(1) {
                Some(unit) if !unit.is_empty() => format!("{value} {unit}"),
                _ => value,
            });
        }
        "as of" => return Some(format!("As of {}", args.positional(0).unwrap_or_default())),
        "citation" | "cite" => return Some(args.named("title").unwrap_or_default()),
        _ => {}
    }
    if lname.starts_with("cite ") {
        return Some(args.named("title").unwrap_or_default());
    }
    if lname.starts_with("lang-") {
        return Some(args.positional(0).unwrap_or_default());
    }
    if SILENT.contains(&lname)
        || lname.starts_with("infobox")
        || lname.starts_with("navbox")
        || lname.ends_with("stub")
        || lname.ends_with(" sidebar")
    {
        return Some(String::new());
    }
    if FIRST.contains(&lname) {
        return Some(args.positional(0).unwrap_or_default());
    }
    let count = args.positional_count();
    if LAST.contains(&lname) && count > 0 {
        return Some(args.positional(count - 1).unwrap_or_default());
    }
    None
}

fn change_first(s: &str, upper: bool) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if upper => c.to_uppercase().chain(chars).collect(),
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
