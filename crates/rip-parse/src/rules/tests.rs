//! Routing order, inheritance and extractors, on small in-memory rules and pages.

use serde_json::{Value, json};
use std::path::Path;
use url::Url;

use super::*;
use crate::dom::{ParseLimits, parse};
use crate::extract::{PageView, apply};

fn rules(text: &str) -> Rules {
    Rules::parse(text, Path::new("test.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// Routes `html` served at `url` and extracts it: (concept, id, name, fields).
fn run(rules: &Rules, url: &str, html: &str) -> (String, Option<String>, Option<String>, Value) {
    let doc = parse(html, ParseLimits::default()).unwrap();
    let mut view = PageView::new(&doc, url, Url::parse(url).unwrap());
    let concept = rules.route(url, &mut view);
    let x = apply(concept, &view).unwrap_or_else(|e| panic!("{e:?}"));
    (concept.name.clone(), x.id, x.name, Value::Object(x.fields))
}

#[test]
fn concepts_are_tried_in_order_and_the_first_match_wins() {
    let r = rules(
        r#"
[[concept]]
name = "special"
match = { url = '/items/', text = "Legendary" }
[[concept]]
name = "item"
match.url = '/items/'
[[concept]]
name = "post"
match.selector = "article.post"
"#,
    );
    assert_eq!(
        run(&r, "http://h/items/1", "<p>Legendary sword").0,
        "special"
    );
    assert_eq!(run(&r, "http://h/items/2", "<p>Plain sword").0, "item");
    assert_eq!(run(&r, "http://h/x", "<article class=post>").0, "post");
    assert_eq!(run(&r, "http://h/x", "<p>nothing").0, "unknown");
    // The built-in fallback has the generic fields switched on.
    assert!(r.unknown.generic);
}

#[test]
fn extends_inherits_fields_and_options_and_a_child_overrides() {
    let r = rules(
        r#"
[[concept]]
name = "base"
abstract = true
generic = true
onSchemaError = "warn"
fields.name = { selector = "h1" }
fields.tags = { selector = "li", list = true }
fields.note = { selector = "p.note", default = "none" }

[[concept]]
name = "mid"
abstract = true
extends = "base"
fields.name = { selector = "h2" }

[[concept]]
name = "leaf"
extends = "mid"
match.url = '/leaf/(?P<id>\d+)'
fields.extra = { selector = "b" }
"#,
    );
    let leaf = &r.concepts[0];
    assert_eq!(r.concepts.len(), 1, "abstract concepts are not routed");
    assert!(leaf.generic);
    assert_eq!(leaf.on_schema_error, OnSchemaError::Warn);
    let (concept, id, name, fields) = run(
        &r,
        "http://h/leaf/42",
        "<h1>One</h1><h2>Two</h2><ul><li>a<li>b</ul><b>x</b>",
    );
    assert_eq!(
        (concept.as_str(), id.as_deref(), name.as_deref()),
        ("leaf", Some("42"), Some("Two"))
    );
    assert_eq!(
        fields,
        json!({"tags": ["a", "b"], "note": "none", "extra": "x"})
    );
    let keys: Vec<&String> = fields.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["tags", "note", "extra"],
        "parents' fields first, in written order"
    );
}

#[test]
fn extractors_and_types() {
    let r = rules(
        r#"
[[concept]]
name = "t"
match.url = '/'
fields.id = { source = "url", regex = 'id=(\w+)' }
fields.price = { selector = ".price", regex = '([\d,.]+) gp', type = "number" }
fields.count = { selector = ".count", type = "integer" }
fields.ok = { selector = ".ok", type = "boolean" }
fields.has = { selector = ".missing", extract = "exists" }
fields.href = { selector = "a", attr = "href", type = "url" }
fields.inner = { selector = ".rich", extract = "html" }
fields.outer = { selector = "b", extract = "outerHtml" }
fields.md = { selector = ".rich", extract = "markdown" }
fields.all = { selector = "li", list = true, regex = '^(\d+)$', type = "integer" }
fields.none = { selector = ".nothing", list = true }
"#,
    );
    let (_, id, _, f) = run(
        &r,
        "http://h/p?id=abc",
        r#"<span class=price>1,250.5 gp</span><span class=count> 7 </span><i class=ok>Yes</i>
           <a href="../x.html">x</a><div class=rich>a <b>b</b></div><ul><li>1<li>two<li>3</ul>"#,
    );
    assert_eq!(id.as_deref(), Some("abc"));
    assert_eq!(
        f,
        json!({
            "price": 1250.5, "count": 7, "ok": true, "has": false, "href": "http://h/x.html",
            "inner": "a <b>b</b>", "outer": "<b>b</b>", "md": "a **b**", "all": [1, 3], "none": []
        })
    );
}

#[test]
fn broken_rules_name_every_field_at_fault() {
    let r = rules(
        r#"
[[concept]]
name = "t"
match.url = '/'
fields.level = { selector = ".level", type = "integer", required = true }
fields.size = { selector = ".size", type = "integer" }
fields.kept = { selector = ".kept", required = true, default = "d" }
"#,
    );
    let doc = parse("<p class=size>big</p>", ParseLimits::default()).unwrap();
    let view = PageView::new(&doc, "http://h/", Url::parse("http://h/").unwrap());
    let broken: Vec<String> = (apply(&r.concepts[0], &view).unwrap_err().0)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(
        broken[0].contains("required field `level` is missing (selector `.level`)"),
        "{}",
        broken[0]
    );
    assert!(
        broken[1].contains("field `size`: `big` is not a number"),
        "{}",
        broken[1]
    );
}
