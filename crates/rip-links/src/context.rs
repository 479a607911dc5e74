//! Context rules (Ladon's `Ref.raw`): fields found on a listing page attached to the
//! refs of the links found there, so a later stage has them without fetching the
//! listing again.
//!
//! A rule names a **row** (a CSS selector for the element that holds one listing entry,
//! e.g. `table.items tbody tr`) and **fields** (`name=selector` inside the row; the
//! element's text, or with `selector@attr` an attribute). A link inside a row gets
//! `raw.rowText` (the row's text, whitespace collapsed) and one `raw` entry per field
//! that matched. Links outside any row get nothing.
//!
//! Rows need a real tree (tables routinely omit `</td>` and `</tr>`), so pages the rules
//! apply to (`--context-pages REGEX`, default every page) are also parsed with `scraper`
//! (html5ever's spec-compliant tree builder), for their rows only: the links themselves,
//! their text, `<base href>` and nofollow are [`crate::extract`]'s, whose rules live in
//! one place.

use std::collections::HashMap;

use regex::Regex;
use scraper::{ElementRef, Html, Selector};
use serde_json::{Map, Value};

use crate::{Extracted, collapse_ws};

/// A bad rule.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// A selector did not parse.
    #[error("bad CSS selector `{selector}` in {what}: {message}")]
    Selector {
        /// Where it was (`--row`, `--field price`).
        what: String,
        /// The selector.
        selector: String,
        /// The parser's message.
        message: String,
    },
    /// A field not written `name=selector`.
    #[error(
        "bad --field `{0}` (hint: NAME=SELECTOR or NAME=SELECTOR@attribute, e.g. price=td.price)"
    )]
    Field(String),
}

#[derive(Debug, Clone)]
struct Field {
    name: String,
    selector: Selector,
    attr: Option<String>,
}

/// The context rules of a crawl.
#[derive(Debug, Clone)]
pub struct ContextRules {
    row: Selector,
    fields: Vec<Field>,
    pages: Option<Regex>,
    description: String,
}

fn selector(what: &str, s: &str) -> Result<Selector, RuleError> {
    Selector::parse(s).map_err(|e| RuleError::Selector {
        what: what.to_owned(),
        selector: s.to_owned(),
        message: e.to_string(),
    })
}

impl ContextRules {
    /// Rules from a row selector, `name=selector[@attr]` fields and the pages they apply to.
    pub fn new(row: &str, fields: &[String], pages: Option<Regex>) -> Result<Self, RuleError> {
        let row_sel = selector("--row", row)?;
        let mut parsed = Vec::new();
        for f in fields {
            let (name, sel) = f
                .split_once('=')
                .filter(|(n, s)| !n.trim().is_empty() && !s.trim().is_empty())
                .ok_or_else(|| RuleError::Field(f.clone()))?;
            let (sel, attr) = match sel.rsplit_once('@') {
                Some((s, a)) if !a.is_empty() && !a.contains([' ', ']', '"', '\'']) => {
                    (s, Some(a.to_owned()))
                }
                _ => (sel, None),
            };
            parsed.push(Field {
                name: name.trim().to_owned(),
                selector: selector(&format!("--field {}", name.trim()), sel.trim())?,
                attr,
            });
        }
        let description = format!(
            "row={row} fields={} pages={}",
            fields.join(","),
            pages.as_ref().map_or("*", |r| r.as_str())
        );
        Ok(Self {
            row: row_sel,
            fields: parsed,
            pages,
            description,
        })
    }

    /// True when the rules apply to the page at `url`.
    pub fn applies(&self, url: &str) -> bool {
        self.pages.as_ref().is_none_or(|re| re.is_match(url))
    }

    /// A stable description, for the state folder's parameters.
    pub fn describe(&self) -> &str {
        &self.description
    }

    fn row_context(&self, row: ElementRef<'_>) -> Map<String, Value> {
        let mut raw = Map::new();
        let text: String = row.text().collect::<Vec<_>>().join(" ");
        raw.insert("rowText".into(), Value::String(collapse_ws(&text)));
        for f in &self.fields {
            let Some(el) = row.select(&f.selector).next() else {
                continue;
            };
            let value = match &f.attr {
                Some(a) => el.attr(a).map(|v| v.trim().to_owned()),
                None => Some(collapse_ws(&el.text().collect::<Vec<_>>().join(" "))),
            };
            if let Some(v) = value {
                raw.insert(f.name.clone(), Value::String(v));
            }
        }
        raw
    }

    /// The links [`crate::extract`] finds in `html`, each inside a row with that row's
    /// context. The rows come from a tree (tables routinely omit `</td>` and `</tr>`);
    /// the links, their text, `<base>` and nofollow from the one extractor. The tree's
    /// anchors are paired with the extractor's links in document order by `href`
    /// (`pair`); a link the tree does not hold where the extractor found it (markup a
    /// tree builder rearranges) gets no context.
    pub fn extract(&self, html: &str) -> Extracted {
        let mut out = crate::extract(html.as_bytes(), encoding_rs::UTF_8);
        let doc = Html::parse_document(html);
        let anchors = Selector::parse("a[href]").expect("a valid selector");
        let mut rows: HashMap<ego_tree::NodeId, Map<String, Value>> = HashMap::new();
        let tree: Vec<(&str, Option<ElementRef<'_>>)> = doc
            .select(&anchors)
            .map(|a| {
                let row = a
                    .ancestors()
                    .filter_map(ElementRef::wrap)
                    .find(|e| self.row.matches(e));
                (a.attr("href").unwrap_or_default(), row)
            })
            .collect();
        let hrefs: Vec<&str> = tree.iter().map(|(h, _)| *h).collect();
        for (link, anchor) in pair(&out, &hrefs) {
            if let Some(row) = tree[anchor].1 {
                let raw = rows
                    .entry(row.id())
                    .or_insert_with(|| self.row_context(row))
                    .clone();
                out.set_context(link, raw);
            }
        }
        out
    }
}

/// How far past the last pairing an anchor of the tree is looked for.
const PAIR_WINDOW: usize = 64;

/// Pairs the extractor's links with the tree's anchors (`hrefs`, in tree order): each
/// link with the next anchor of the same `href` within [`PAIR_WINDOW`] anchors of the
/// last one paired. On pages both read alike (every demo page), link `i` is anchor `i`.
fn pair(found: &Extracted, hrefs: &[&str]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::with_capacity(found.len());
    let mut next = 0;
    for (i, link) in found.links().enumerate() {
        let end = hrefs.len().min(next + PAIR_WINDOW);
        if let Some(k) = (next..end).find(|&k| hrefs[k] == link.href) {
            pairs.push((i, k));
            next = k + 1;
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract;
    use crate::tests::{charset_for, triples};

    const SITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/site");

    #[test]
    fn item_rows_carry_their_cells() {
        let html = std::fs::read_to_string(format!("{SITE}/items/index.html")).unwrap();
        let rules = ContextRules::new(
            "table.items tbody tr",
            &[
                "price=td.price".into(),
                "level=td.level".into(),
                "id=td.name a@href".into(),
            ],
            None,
        )
        .unwrap();
        let e = rules.extract(&html);
        let l = e
            .links()
            .find(|l| l.href == "item-1.html")
            .expect("item-1 is listed");
        assert_eq!(l.text, "Longsword");
        assert_eq!(l.raw["rowText"], "Longsword 0 1 gp 4 lb Common");
        assert_eq!(l.raw["price"], "1 gp");
        assert_eq!(l.raw["level"], "0");
        assert_eq!(l.raw["id"], "item-1.html");
        let rows = e.links().filter(|l| !l.raw.is_empty()).count();
        assert_eq!(rows, 12, "one link per row, 12 rows");
        // Navigation links sit outside the table: no context.
        assert!(e.links().any(|l| l.href == "/" && l.raw.is_empty()));
    }

    #[test]
    fn implied_end_tags_still_make_rows() {
        let rules = ContextRules::new("tr", &["p=td.p".into()], None).unwrap();
        let e = rules.extract(
            "<table><tr><td><a href=/a>A</a><td class=p>1 gp<tr><td><a href=/b>B</a><td class=p>2 gp</table>",
        );
        let raw: Vec<(&str, &Value)> = e.links().map(|l| (l.href, &l.raw["p"])).collect();
        assert_eq!(
            raw,
            [("/a", &Value::from("1 gp")), ("/b", &Value::from("2 gp"))]
        );
    }

    #[test]
    fn bad_rules_are_named() {
        let err = ContextRules::new("tr[", &[], None).unwrap_err();
        assert!(err.to_string().contains("--row"), "{err}");
        let err = ContextRules::new("tr", &["nonsense".into()], None).unwrap_err();
        assert!(err.to_string().contains("NAME=SELECTOR"), "{err}");
    }

    /// The rules give the links the extractor gives, with the rows of the tree, on markup
    /// a tree builder rearranges: raw-text elements, foreign content, nested, unclosed
    /// and reopened anchors (`<p><a>x</p>y` is two anchors in the tree, one link here),
    /// character references in attributes.
    #[test]
    fn the_extractors_links_with_the_trees_rows() {
        let rules = ContextRules::new("tr", &[], None).unwrap();
        let pages = [
            r#"<title><a href="/t">x</a></title><textarea><a href="/ta"></a></textarea>
            <noscript><a href="/ns">x</a></noscript><a href="/real">Real</a>"#,
            r#"<svg><script/><style/><a href="/in-svg"><text>In SVG</text></a>
            <foreignObject><script>'<a href="/fo-js">'</script><a href="/fo">FO</a>
            </foreignObject><svg><g/></svg><title>T</title></svg><math><mi>x</mi></math>
            <script>'<a href="/js">'</script><a href="/end">End</a>"#,
            r#"<a href="/1">one <a name="x">named</a> tail <a href="/2">two<a href="/3">three"#,
            r#"<a href="/u?a=1&amp;b=2&copy=3&lt=4" title="T">  </a><a href=/i><img alt="A"></a>"#,
            r#"<p>text <!-- <a href="/c"> --> <a href="/d"><b>bold</b><i> it</i></a>"#,
            r#"<p><a href="/x">a</p>b<table><tr><td><a href=/r>R</table>"#,
        ];
        for html in pages {
            let fast = extract(html.as_bytes(), encoding_rs::UTF_8);
            let tree = rules.extract(html);
            assert_eq!(triples(&fast), triples(&tree), "{html}");
        }
        let e = rules.extract(pages[5]);
        let rows: Vec<_> = e.links().map(|l| l.raw.get("rowText")).collect();
        assert_eq!(rows, [None, Some(&Value::from("R"))]);
    }

    /// Rows that omit their end tags give each link its own row's context.
    #[test]
    fn links_in_rows_without_end_tags_get_their_rows() {
        let rules = ContextRules::new("tr", &[], None).unwrap();
        let e = rules.extract(
            r#"<table><tr><td><a href=/a>A<td><a href=/b rel="x nofollow">B<tr><td><a href=/a>A2</table>"#,
        );
        let got: Vec<_> = e
            .links()
            .map(|l| (l.href, l.nofollow, l.raw["rowText"].as_str().unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                ("/a", false, "A B"),
                ("/b", true, "A B"),
                ("/a", false, "A2")
            ]
        );
    }

    /// On every page of the demo site each link the extractor finds is paired with the
    /// tree's anchor of the same place: link `i` with anchor `i`.
    #[test]
    fn every_demo_link_pairs_with_its_anchor() {
        let anchors = Selector::parse("a[href]").unwrap();
        let mut pages = 0;
        let mut stack = vec![std::path::PathBuf::from(SITE)];
        while let Some(p) = stack.pop() {
            for entry in std::fs::read_dir(&p).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "html") {
                    let body = std::fs::read(&path).unwrap();
                    let (text, _, _) = charset_for(Some("text/html"), &body).decode(&body);
                    let found = extract(text.as_bytes(), encoding_rs::UTF_8);
                    let doc = Html::parse_document(&text);
                    let hrefs: Vec<&str> = (doc.select(&anchors))
                        .map(|a| a.attr("href").unwrap())
                        .collect();
                    let want: Vec<(usize, usize)> = (0..found.len()).map(|i| (i, i)).collect();
                    assert_eq!(pair(&found, &hrefs), want, "{}", path.display());
                    pages += 1;
                }
            }
        }
        assert_eq!(pages, 51);
    }
}
