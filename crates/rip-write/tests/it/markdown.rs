//! `--markdown` on real docs: rip-parse's output on a page of the demo site, generic and
//! by the demo's rules.

use crate::support::*;
use rip_testkit::{Stage, testdata};

/// The demo site's item 7 as a fetched page (with the bookkeeping a fetch leaves on it).
fn item_page() -> String {
    let body = std::fs::read_to_string(testdata("site/items/item-7.html")).unwrap();
    serde_json::json!({"_type":"page","url":"http://h/items/item-7.html",
        "finalUrl":"http://h/items/item-7.html","status":200,"contentType":"text/html",
        "fetchedAt":"2026-12-01T09:00:00Z","body":body,"truncated":false,"attempt":0,
        "httpAttempts":1,"elapsedMs":12,
        "siteFetch":{"fetchedBy":"rip-fetch","httpAttempts":1,"latencyMs":9,"elapsedMs":12}})
    .to_string()
        + "\n"
}

/// rip-parse `args` on item 7, then rip-write --markdown; the `.md` page.
fn markdown_of(args: &[&str]) -> String {
    let parsed = Stage::new("rip-parse").args(args).stdin(item_page()).run();
    assert_eq!(parsed.code, 0, "{}", parsed.stderr);
    let dir = tempfile::tempdir().unwrap();
    let r = write(
        &["--out", dir.path().to_str().unwrap(), "--markdown"],
        &parsed.stdout,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::read_to_string(dir.path().join("items-item-7.html.md")).unwrap()
}

#[test]
fn a_generic_docs_page_is_the_pages_markdown() {
    let md = markdown_of(&["--markdown"]);
    assert!(
        md.starts_with(
            "---\ntitle: \"Cloak of Elvenkind\"\nurl: \"http://h/items/item-7.html\"\n\
             lang: \"en\"\nexcerpt: \"A hooded cloak of grey-green wool that shifts colour to \
             match the light around it.\"\n---\n\n# Cloak of Elvenkind\n"
        ),
        "{md}"
    );
    assert!(md.contains("\n## Description\n"), "{md}");
    assert!(
        md.contains("\n\nPull the hood up and stand still (two actions)"),
        "{md}"
    );
    for not in ["<br>", "| field |", "elapsedMs", "siteFetch", "links"] {
        assert!(!md.contains(not), "{not} in {md}");
    }
}

#[test]
fn a_generic_doc_without_markdown_is_its_text() {
    let md = markdown_of(&[]);
    assert!(md.starts_with("---\ntitle: "), "{md}");
    assert!(md.contains("\n---\n\nCloak of Elvenkind"), "{md}");
    assert!(!md.contains("<br>") && !md.contains("elapsedMs"), "{md}");
}

#[test]
fn a_rules_docs_page_lists_its_fields_not_the_bookkeeping() {
    let rules = testdata("demo/emberfall.rules.toml");
    let md = markdown_of(&["--rules", rules.to_str().unwrap()]);
    assert!(
        md.starts_with(
            "# Cloak of Elvenkind\n\n- URL: <http://h/items/item-7.html>\n- Concept: item\n\
             - Id: 7\n\n## Fields\n\n"
        ),
        "{md}"
    );
    for field in [
        "- **traits:**\n  - Invested\n  - Magical\n",
        "- **level:** 7\n",
        "- **price:** 360 gp\n",
        "- **rarity:** Uncommon\n",
        "\n### summary\n\nA hooded cloak of grey-green wool",
    ] {
        assert!(md.contains(field), "{field} in {md}");
    }
    for not in ["elapsedMs", "siteFetch", "httpAttempts", "Round", "<br>"] {
        assert!(!md.contains(not), "{not} in {md}");
    }
}
