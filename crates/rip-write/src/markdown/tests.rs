use super::*;
use serde_json::json;

fn map(v: Value) -> Map<String, Value> {
    let Value::Object(m) = v else { unreachable!() };
    m
}

#[test]
fn a_rules_doc_is_a_list_of_its_fields_without_the_bookkeeping() {
    let doc = map(
        json!({"_type":"doc","url":"http://h/a","concept":"item","id":"7",
        "name":"Rope","attempt":1,"httpAttempts":2,"elapsedMs":31,
        "siteFetch":{"fetchedBy":"rip-fetch","httpAttempts":2},"wikiApi":"http://h/api.php",
        "price":"3 gp","note":"a | b\nc","tags":["x","y"],"level":3,"rarity":null}),
    );
    let md = render("doc", &doc);
    assert!(
        md.starts_with("# Rope\n\n- URL: <http://h/a>\n- Concept: item\n- Id: 7\n- Round: 1\n"),
        "{md}"
    );
    assert!(
        md.contains(
            "## Fields\n\n- **price:** 3 gp\n- **tags:**\n  - x\n  - y\n- **level:** 3\n\
             - **rarity:** —\n\n### note\n\na | b\nc\n"
        ),
        "{md}"
    );
    for bookkeeping in [
        "elapsedMs",
        "siteFetch",
        "wikiApi",
        "httpAttempts",
        "fetchedBy",
    ] {
        assert!(!md.contains(bookkeeping), "{bookkeeping} in {md}");
    }
    assert!(
        !md.contains("<br>") && !md.contains("|---|"),
        "no table: {md}"
    );
}

#[test]
fn nested_fields_are_nested_lists() {
    let doc = map(
        json!({"_type":"doc","url":"http://w/Ash","concept":"page","attempt":0,
        "infobox":{"template":"Item","fields":{"price":"3 gp","weight":null}},
        "sections":[{"title":"Lore","level":2,"links":["A","B"]}],"categories":[]}),
    );
    let md = render("doc", &doc);
    assert!(md.starts_with("# http://w/Ash\n\n- URL: <http://w/Ash>\n- Concept: page\n\n"));
    assert!(
        md.contains(
            "- **infobox:**\n  - **template:** Item\n  - **fields:**\n    - **price:** 3 gp\n    \
             - **weight:** —\n- **sections:**\n  - **title:** Lore · **level:** 2\n    \
             - **links:**\n      - A\n      - B\n- **categories:** (none)\n"
        ),
        "{md}"
    );
}

#[test]
fn a_generic_doc_is_its_page_under_a_front_matter() {
    let doc = map(
        json!({"_type":"doc","url":"http://h/a","concept":"page","attempt":0,
        "elapsedMs":4,"name":"A \"quoted\" title","lang":"en","text":"Hello world",
        "links":[{"url":"http://h/b","text":"b"}],"headline":"Hello","structured":[{"@type":"Article"}],
        "markdown":"# Hello\n\nworld [b](http://h/b)\n"}),
    );
    assert_eq!(
        render("doc", &doc),
        "---\ntitle: \"Hello\"\nurl: \"http://h/a\"\nlang: \"en\"\n---\n\n\
         # Hello\n\nworld [b](http://h/b)\n"
    );
    let without_markdown = map(json!({"_type":"doc","url":"http://h/a","concept":"page",
        "text":"Hello world"}));
    assert_eq!(
        render("doc", &without_markdown),
        "---\nurl: \"http://h/a\"\n---\n\nHello world\n"
    );
}

#[test]
fn a_generic_docs_metadata_is_its_front_matter() {
    let doc = map(json!({"_type":"doc","url":"http://h/a","concept":"page",
        "name":"Moon landing | Planet","headline":"Moon landing","authors":["Ann \"A\" Lee","Bo"],
        "published":"2024-07-20T20:17:40Z","modified":"2024-07-21","siteName":"Planet",
        "lang":"en","excerpt":"They landed.\nSafely.","image":"http://h/m.jpg",
        "structured":{"jsonLd":[{"@type":"Article"}]},"text":"Body"}));
    assert_eq!(
        render("doc", &doc),
        "---\ntitle: \"Moon landing\"\nurl: \"http://h/a\"\n\
         authors: [\"Ann \\\"A\\\" Lee\",\"Bo\"]\npublished: \"2024-07-20T20:17:40Z\"\n\
         modified: \"2024-07-21\"\nsiteName: \"Planet\"\nlang: \"en\"\n\
         excerpt: \"They landed. Safely.\"\nimage: \"http://h/m.jpg\"\n---\n\nBody\n"
    );
}

#[test]
fn an_error_page_lists_every_error() {
    let e = map(json!({"_type":"error","url":"http://h/x","status":404,
        "errors":[{"code":"httpError.transient","message":"HTTP 503","operation":"rip-fetch"},
                  {"code":"httpError.permanent","message":"HTTP 404","operation":"rip-fetch"}]}));
    let md = render("error", &e);
    assert!(md.starts_with("# Error: http://h/x\n"));
    assert!(md.contains("- Status: 404\n"));
    assert!(
        md.contains("1. `httpError.transient`: HTTP 503 (rip-fetch)\n2. `httpError.permanent`"),
        "{md}"
    );
}
