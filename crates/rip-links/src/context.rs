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
//! apply to (`--context-pages REGEX`, default every page) are parsed with `scraper`
//! (html5ever's spec-compliant tree builder) instead of the streaming link extractor;
//! both give the same links, text and `rel` (a test compares them on every demo page).

use std::collections::HashMap;

use regex::Regex;
use scraper::{ElementRef, Html, Selector};
use serde_json::{Map, Value};

use crate::{Extracted, MAX_LINKS_PER_PAGE, collapse_ws, meta_nofollow, rel_nofollow};

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

    /// Extracts links as [`crate::extract`] does, with row context, from text.
    pub fn extract(&self, html: &str) -> Extracted {
        let doc = Html::parse_document(html);
        let mut out = Extracted::default();
        let base = Selector::parse("base[href]").expect("a valid selector");
        out.base = doc
            .select(&base)
            .next()
            .and_then(|b| b.attr("href"))
            .map(str::to_owned);
        let meta = Selector::parse("meta[name][content]").expect("a valid selector");
        out.nofollow_page = doc.select(&meta).any(|m| {
            m.attr("name")
                .is_some_and(|n| n.trim().eq_ignore_ascii_case("robots"))
                && m.attr("content").is_some_and(meta_nofollow)
        });
        let anchors = Selector::parse("a[href]").expect("a valid selector");
        let img = Selector::parse("img[alt]").expect("a valid selector");
        let mut rows: HashMap<ego_tree::NodeId, Map<String, Value>> = HashMap::new();
        for a in doc.select(&anchors) {
            if out.len() >= MAX_LINKS_PER_PAGE {
                out.dropped += 1;
                continue;
            }
            let mut text = collapse_ws(&a.text().collect::<Vec<_>>().join(""));
            if text.is_empty() {
                text = a
                    .select(&img)
                    .next()
                    .and_then(|i| i.attr("alt"))
                    .or_else(|| a.attr("title"))
                    .map(collapse_ws)
                    .unwrap_or_default();
            }
            let row = a
                .ancestors()
                .filter_map(ElementRef::wrap)
                .find(|e| self.row.matches(e));
            let raw = match row {
                Some(r) => rows
                    .entry(r.id())
                    .or_insert_with(|| self.row_context(r))
                    .clone(),
                None => Map::new(),
            };
            let href = a.attr("href").unwrap_or_default();
            out.push(href, &text, rel_nofollow(a.attr("rel")), raw);
        }
        out
    }
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

    /// The tokenizer-based extractor agrees with html5ever's tree builder on markup where
    /// a tokenizer alone would go wrong: raw-text elements, foreign content, nested and
    /// unclosed anchors, character references in attributes.
    #[test]
    fn same_links_as_the_tree_builder_on_tricky_markup() {
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
            r#"<table><tr><td><a href=/a>A<td><a href=/b rel="x nofollow">B</table>"#,
            r#"<p>text <!-- <a href="/c"> --> <a href="/d"><b>bold</b><i> it</i></a>"#,
        ];
        for html in pages {
            let fast = extract(html.as_bytes(), encoding_rs::UTF_8);
            let tree = rules.extract(html);
            assert_eq!(triples(&fast), triples(&tree), "{html}");
        }
    }

    /// Both extractors agree on every page of the demo site.
    #[test]
    fn same_links_as_the_streaming_extractor() {
        let rules = ContextRules::new("tr", &[], None).unwrap();
        let mut pages = 0;
        let mut stack = vec![std::path::PathBuf::from(SITE)];
        while let Some(p) = stack.pop() {
            for entry in std::fs::read_dir(&p).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "html") {
                    let body = std::fs::read(&path).unwrap();
                    let enc = charset_for(Some("text/html"), &body);
                    let fast = extract(&body, enc);
                    let (text, _, _) = enc.decode(&body);
                    let tree = rules.extract(&text);
                    assert_eq!(triples(&fast), triples(&tree), "{}", path.display());
                    assert_eq!(fast.base, tree.base, "{}", path.display());
                    assert_eq!(fast.nofollow_page, tree.nofollow_page);
                    pages += 1;
                }
            }
        }
        assert_eq!(pages, 51);
    }
}
