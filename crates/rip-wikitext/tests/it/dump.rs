//! Every page of the test wiki's dump (testdata/wiki/emberfall-wiki.xml) against its
//! manifest: infoboxes found, categories exact, numbers readable.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// (title, latest wikitext) of every page: the dump is simple enough to cut by tags.
fn pages() -> Vec<(String, String)> {
    let xml = std::fs::read_to_string(root().join("testdata/wiki/emberfall-wiki.xml")).unwrap();
    let unescape = |s: &str| {
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&amp;", "&")
    };
    xml.split("<page>")
        .skip(1)
        .map(|page| {
            let title = between(page, "<title>", "</title>");
            let last = page.rfind("<text ").unwrap();
            let text = &page[last..];
            let text = between(text, ">", "</text>");
            (unescape(title), unescape(text))
        })
        .collect()
}

fn between<'a>(s: &'a str, open: &str, close: &str) -> &'a str {
    let start = s.find(open).unwrap() + open.len();
    let end = s[start..].find(close).unwrap() + start;
    &s[start..end]
}

fn manifest() -> Value {
    let text = std::fs::read_to_string(root().join("testdata/wiki/manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn every_page_of_the_test_wiki_parses_as_its_manifest_says() {
    let manifest = manifest();
    let pages = pages();
    assert_eq!(pages.len(), 357);
    let with_infobox = strings(&manifest["pages_with_infobox"]);
    let mut categories: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let start = std::time::Instant::now();
    let mut creatures = 0;
    for (title, wikitext) in &pages {
        let page = rip_wikitext::parse(title, wikitext);
        if title.contains(':') {
            continue; // templates and category pages
        }
        for c in &page.categories {
            categories.entry(c.clone()).or_default().push(title.clone());
        }
        assert_eq!(
            page.infobox.is_some(),
            with_infobox.contains(title),
            "{title}"
        );
        assert_eq!(
            page.redirect.is_some(),
            manifest["redirects"].get(title).is_some(),
            "{title}"
        );
        if let Some(target) = manifest["redirects"][title].as_str() {
            assert_eq!(page.redirect.as_ref().unwrap().target, target);
        }
        let Some(infobox) = &page.infobox else {
            continue;
        };
        assert!(
            !page.text.contains("{{") && !page.text.contains("<ref"),
            "{title}: {}",
            page.text
        );
        assert!(
            !page.text.contains("<!--") && !page.text.contains("'''"),
            "{title}: {}",
            page.text
        );
        if infobox.kind() == "creature" {
            creatures += 1;
            assert_eq!(infobox.field("name"), Some(title.as_str()));
            let hp = infobox
                .number("hit_points")
                .unwrap_or_else(|| panic!("{title}: {infobox:?}"));
            assert!(hp >= 8.0, "{title}: {hp}");
            assert!(infobox.number("challenge").is_some(), "{title}");
            let speed = infobox.field("speed").unwrap();
            assert!(speed.ends_with(" ft"), "{title}: {speed}");
            assert!(!infobox.field("diet").unwrap().contains("<!--"), "{title}");
            assert!(
                !infobox.field("caption").unwrap().contains("ref"),
                "{title}"
            );
            assert!(
                infobox
                    .field("first_seen")
                    .unwrap()
                    .starts_with("Emberfall")
                    || infobox.field("first_seen").unwrap().starts_with("T"),
                "{title}"
            );
            let lead = &page.sections[0];
            assert_eq!(lead.level, 0);
            assert!(
                lead.text.starts_with(&format!("The {title} is a ")),
                "{title}: {}",
                lead.text
            );
            assert!(page.section("Description").is_some() && page.section("References").is_some());
            assert!(!page.references.is_empty(), "{title}");
        }
    }
    assert_eq!(creatures, 121);
    let want: BTreeMap<String, Vec<String>> =
        serde_json::from_value(manifest["categories"].clone()).unwrap();
    for list in categories.values_mut() {
        list.sort();
    }
    assert_eq!(categories, want);
    eprintln!("parsed {} pages in {:?}", pages.len(), start.elapsed());
}
