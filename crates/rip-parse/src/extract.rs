//! Applying a concept's fields to a parsed page.

use scraper::{ElementRef, Html};
use serde_json::{Map, Number, Value};
use url::Url;

use crate::dom::text_of_node;
use crate::rules::{Concept, Extract, Field, Source, ValueType};
use crate::{dom, markdown};

mod streamed;

pub use streamed::{Found, RulesWalk};

/// Where a page's elements are read from.
pub enum Elements<'a> {
    /// A parsed tree.
    Tree(&'a Html),
    /// What the streaming pass found for each selector of the concepts in play.
    Stream(&'a Found),
}

/// A parsed page as the rules see it.
pub struct PageView<'a> {
    /// The document, or what the streaming pass found in it.
    pub elements: Elements<'a>,
    /// The URL routing and `source = "url"` fields read (`finalUrl`).
    pub url: &'a str,
    /// The URL relative references resolve against (`<base href>` or the page URL).
    pub base: Url,
    text: Option<String>,
}

impl<'a> PageView<'a> {
    /// A view of `html`, served from `url`, with relative references resolving
    /// against `base`.
    pub fn new(html: &'a Html, url: &'a str, base: Url) -> Self {
        Self {
            elements: Elements::Tree(html),
            url,
            base,
            text: None,
        }
    }

    /// A view of what the streaming pass found in a page served from `url`.
    pub fn streamed(found: &'a Found, url: &'a str, base: Url) -> Self {
        Self {
            elements: Elements::Stream(found),
            url,
            base,
            text: None,
        }
    }

    /// The bodies of the page's JSON-LD scripts (`<script type="application/ld+json">`),
    /// in document order.
    pub fn jsonld_blocks(&self) -> std::borrow::Cow<'_, [String]> {
        match &self.elements {
            Elements::Stream(found) => std::borrow::Cow::Borrowed(found.jsonld()),
            Elements::Tree(html) => std::borrow::Cow::Owned(
                html.tree
                    .root()
                    .descendants()
                    .filter_map(scraper::ElementRef::wrap)
                    .filter(|el| is_jsonld_script(el.value().name(), el.value().attr("type")))
                    .map(|el| el.text().collect())
                    .collect(),
            ),
        }
    }

    /// The text of the whole page (computed once, when a rule first asks).
    pub fn text(&mut self) -> &str {
        let root = match &self.elements {
            Elements::Tree(html) => html.tree.root(),
            Elements::Stream(found) => return found.page_text(),
        };
        self.text
            .get_or_insert_with(|| text_of_node(root, crate::dom::Skip::Hidden))
    }
}

/// What a concept's fields gave.
#[derive(Debug, Default)]
pub struct Extracted {
    /// The doc's `id`.
    pub id: Option<String>,
    /// The doc's `name`.
    pub name: Option<String>,
    /// The other fields, in rule order.
    pub fields: Map<String, Value>,
}

/// A rule of a concept's field that a page breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleBreak {
    /// A required field found nothing (and has no default).
    #[error("required field `{field}` is missing ({from})")]
    Missing {
        /// The field.
        field: String,
        /// Where it was looked for: its selector, infobox key, section, regex.
        from: String,
    },
    /// A value is not of the field's type.
    #[error("field `{field}`: `{value}` is not {expected}")]
    WrongType {
        /// The field.
        field: String,
        /// The value found (its first 60 characters).
        value: String,
        /// What the type wants (`a number`, `an integer`, `a URL`, …).
        expected: &'static str,
    },
}

/// Every rule a page breaks, in field order (shown joined by `; `).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", join(.0))]
pub struct BrokenRules(pub Vec<RuleBreak>);

fn join(broken: &[RuleBreak]) -> String {
    let all: Vec<String> = broken.iter().map(ToString::to_string).collect();
    all.join("; ")
}

impl BrokenRules {
    /// `Ok(extracted)` when nothing is broken.
    pub(crate) fn or_ok(self, extracted: Extracted) -> Result<Extracted, Self> {
        if self.0.is_empty() {
            Ok(extracted)
        } else {
            Err(self)
        }
    }
}

/// Extracts `concept`'s fields. `Err` lists every rule the page breaks (required
/// fields missing, values of the wrong type).
pub fn apply(concept: &Concept, page: &PageView<'_>) -> Result<Extracted, BrokenRules> {
    let mut out = Extracted::default();
    let mut broken = Vec::new();
    if let Some(f) = &concept.id {
        out.id = fixed(f, page, &mut broken);
    }
    if let Some(f) = &concept.name_field {
        out.name = fixed(f, page, &mut broken);
    }
    for f in &concept.fields {
        match value(f, page) {
            Ok(Some(v)) => {
                out.fields.insert(f.name.clone(), v);
            }
            Ok(None) => {}
            Err(why) => broken.push(why),
        }
    }
    BrokenRules(broken).or_ok(out)
}

fn fixed(f: &Field, page: &PageView<'_>, broken: &mut Vec<RuleBreak>) -> Option<String> {
    match value(f, page) {
        Ok(Some(Value::String(s))) => Some(s),
        Ok(Some(other)) => Some(other.to_string()),
        Ok(None) => None,
        Err(why) => {
            broken.push(why);
            None
        }
    }
}

/// The field's value: `Ok(None)` when missing and allowed to be.
fn value(f: &Field, page: &PageView<'_>) -> Result<Option<Value>, RuleBreak> {
    if f.wiki.is_some() {
        // A MediaWiki field: nothing to read in HTML.
        return finish(f, Vec::new(), &page.base);
    }
    if let Some(path) = &f.jsonld {
        let values = path.values(&page.jsonld_blocks());
        let mut refined = values.into_iter().filter_map(|v| refine(f, v));
        let found = if f.list {
            refined.collect()
        } else {
            refined.next().into_iter().collect()
        };
        return finish(f, found, &page.base);
    }
    if let Elements::Stream(found) = &page.elements {
        return found.value(f, page);
    }
    let Elements::Tree(html) = &page.elements else {
        unreachable!("matched above")
    };
    if f.extract == Extract::Exists {
        let sel = f.selector.as_ref().expect("checked at compile time");
        return Ok(Some(Value::Bool(html.select(sel).next().is_some())));
    }
    let mut found: Vec<String> = Vec::new();
    match f.source {
        Source::Url => {
            if let Some(v) = refine(f, page.url.to_owned()) {
                found.push(v);
            }
        }
        Source::Html => {
            let sel = f.selector.as_ref().expect("checked at compile time");
            for el in html.select(sel) {
                if let Some(v) = read(f, el, &page.base).and_then(|v| refine(f, v)) {
                    found.push(v);
                    if !f.list {
                        break;
                    }
                }
            }
        }
    }
    finish(f, found, &page.base)
}

/// The field's value from what was found (each value already through [`refine`]): its
/// default, a missing-field error or nothing when empty; else converted to its type, one
/// value or the list.
pub(crate) fn finish(
    f: &Field,
    found: Vec<String>,
    base: &Url,
) -> Result<Option<Value>, RuleBreak> {
    if found.is_empty() {
        return match (&f.default, f.required) {
            (Some(d), _) => Ok(Some(d.clone())),
            (None, true) => Err(RuleBreak::Missing {
                field: f.name.clone(),
                from: where_from(f),
            }),
            (None, false) if f.list => Ok(Some(Value::Array(Vec::new()))),
            (None, false) => Ok(None),
        };
    }
    let mut values = Vec::with_capacity(found.len());
    for v in found {
        values.push(convert(f, v, base)?);
    }
    Ok(Some(if f.list {
        Value::Array(values)
    } else {
        values.swap_remove(0)
    }))
}

fn where_from(f: &Field) -> String {
    use crate::rules::WikiSource;
    let mut s = match (&f.source, &f.selector) {
        _ if f.wiki.is_some() => match &f.wiki {
            Some(WikiSource::Infobox(k)) => format!("infobox `{k}`"),
            Some(WikiSource::Section(t)) => format!("section `{t}`"),
            Some(WikiSource::Page(v)) => format!("wiki `{v:?}`"),
            None => unreachable!("guarded"),
        },
        _ if f.jsonld.is_some() => format!("jsonld `{}`", f.jsonld.as_ref().expect("guarded")),
        (Source::Url, _) => "from the URL".to_owned(),
        (Source::Html, Some(sel)) => {
            use scraper::selector::ToCss;
            format!("selector `{}`", sel.to_css_string())
        }
        (Source::Html, None) => "no selector".to_owned(),
    };
    if let Some(re) = &f.regex {
        s.push_str(&format!(", regex `{re}`"));
    }
    s
}

/// What the field reads from one element; `None` when it is empty.
fn read(f: &Field, el: ElementRef<'_>, base: &Url) -> Option<String> {
    let v = match f.extract {
        Extract::Text => dom::text_of(el),
        Extract::Attr => el.value().attr(f.attr.as_deref()?)?.trim().to_owned(),
        Extract::Html => el.inner_html().trim().to_owned(),
        Extract::OuterHtml => el.html(),
        Extract::Markdown => markdown::convert(*el, base, crate::dom::Skip::Hidden),
        Extract::Exists => unreachable!("handled before"),
    };
    (!v.is_empty()).then_some(v)
}

/// Applies the field's regex: the group named `value` (or `id`), else group 1, else
/// the whole match. `None` when it does not match or gives nothing.
pub(crate) fn refine(f: &Field, v: String) -> Option<String> {
    let Some(re) = &f.regex else { return Some(v) };
    let caps = re.captures(&v)?;
    let m = caps
        .name("value")
        .or_else(|| caps.name("id"))
        .or_else(|| caps.get(1))
        .or_else(|| caps.get(0))?;
    let s = m.as_str().trim();
    (!s.is_empty()).then(|| s.to_owned())
}

fn convert(f: &Field, v: String, base: &Url) -> Result<Value, RuleBreak> {
    let bad = |expected| RuleBreak::WrongType {
        field: f.name.clone(),
        value: clip(&v),
        expected,
    };
    match f.value_type {
        ValueType::String => Ok(Value::String(v)),
        ValueType::Number | ValueType::Integer => {
            let cleaned: String = v
                .chars()
                .filter(|c| !matches!(c, ',' | '_') && !c.is_whitespace())
                .collect();
            let n: f64 = cleaned.parse().map_err(|_| bad("a number"))?;
            if !n.is_finite() {
                return Err(bad("a finite number"));
            }
            let integral = n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0;
            if f.value_type == ValueType::Integer && !integral {
                return Err(bad("an integer"));
            }
            Ok(if integral {
                Value::Number(Number::from(n as i64))
            } else {
                Number::from_f64(n).map_or(Value::Null, Value::Number)
            })
        }
        ValueType::Boolean => match v.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" | "on" => Ok(Value::Bool(true)),
            "false" | "no" | "0" | "off" => Ok(Value::Bool(false)),
            _ => Err(bad("a boolean (true/yes/1 or false/no/0)")),
        },
        ValueType::Url => crate::resolve::join(base, v.trim())
            .map(Value::String)
            .ok_or_else(|| bad("a URL")),
    }
}

/// True for a `<script type="application/ld+json">` (the type's case and spaces aside).
pub(crate) fn is_jsonld_script(name: &str, ty: Option<&str>) -> bool {
    name == "script" && ty.is_some_and(|t| t.trim().eq_ignore_ascii_case("application/ld+json"))
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}
