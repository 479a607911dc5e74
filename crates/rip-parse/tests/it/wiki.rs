//! MediaWiki pages (`text/x-wiki`, as rip-fetch writes them): generic docs and rules
//! mapping infobox fields to concept fields, with the Emberfall Wiki's own wikitext.

use rip_core::Record;
use serde_json::{Value, json};

use crate::support::*;

/// `Ash Wyrm` of testdata/wiki/emberfall-wiki.xml (references, comments, nested templates).
const ASH_WYRM: &str = r#"{{Infobox creature
| name        = Ash Wyrm
| caption     = A '''Ash Wyrm''' at rest<ref name="bestiary"/>
| type        = [[Dragons|Dragon]]
| habitat     = [[Storm Barrow]], [[Rust Reach]]<!-- and more -->
| size        = Tiny
| hit_points  = {{Nowrap|1,790}}
| challenge   = 11
| speed       = {{Convert|60|ft|m}}
| first_seen  = {{Cite book |title=Emberfall Core Rules |page=69 |year=2019}}
}}
The '''Ash Wyrm''' is a [[Dragons|dragon]] of the [[Cinder Coast]].<ref name="bestiary">{{Cite book |title=The Gloamwood Gazetteer |page=141}}</ref>

== Behaviour ==
The Ash Wyrm is said to guard [[Moss Key|moss key]].<ref name="bestiary" />

=== Hunting ===
It hunts at dusk.

[[Category:Creatures]]
[[Category:Dragons|Ash]]
"#;

const ASH_BOW: &str = "{{Infobox item\n|name=Ash Bow\n|rarity=Common\n|made_in=[[Ember Fen]]\n}}\n\
    The '''Ash Bow''' is a common item.\n[[Category:Items]]\n[[Category:Common items]]";

/// What the test wiki expands the template calls of [`ASH_WYRM`] to (as rip-fetch asks it
/// with `action=expandtemplates`).
const EXPANSIONS: &[(&str, &str)] = &[
    (
        "{{Nowrap|1,790}}",
        "<span style=\"white-space:nowrap\">1,790</span>",
    ),
    ("{{Convert|60|ft|m}}", "60 ft"),
    (
        "{{Cite book |title=Emberfall Core Rules |page=69 |year=2019}}",
        "''Emberfall Core Rules''(2019), p.&nbsp;69",
    ),
];

fn wiki_page(title: &str, wikitext: &str) -> Value {
    let url = format!(
        "http://127.0.0.1:8080/index.php/{}",
        title.replace(' ', "_")
    );
    let mut p = page(
        &url,
        "text/x-wiki; charset=utf-8",
        wikitext.as_bytes(),
        false,
    );
    p["title"] = json!(title);
    p["wikiApi"] = json!("http://127.0.0.1:8080/api.php");
    p["wikiTitle"] = json!(title);
    p["pageid"] = json!(42);
    p["revid"] = json!(420);
    let parsed = rip_wikitext::parse(title, wikitext);
    let calls: Vec<String> = parsed
        .infobox
        .iter()
        .flat_map(|ib| ib.wikitext.values())
        .flat_map(|v| rip_wikitext::template_calls(v))
        .collect();
    let expansions: serde_json::Map<String, Value> = EXPANSIONS
        .iter()
        .filter(|(call, _)| calls.iter().any(|c| c == call))
        .map(|(call, text)| (call.to_string(), json!(text)))
        .collect();
    if !expansions.is_empty() {
        p["wikiExpansions"] = Value::Object(expansions);
    }
    p
}

fn input(pages: &[Value]) -> Vec<u8> {
    pages
        .iter()
        .map(|p| format!("{p}\n"))
        .collect::<String>()
        .into_bytes()
}

fn docs(r: &Ran) -> Vec<rip_core::Doc> {
    let (records, summary) = (r.records(), r.summary());
    assert_eq!(summary.status, rip_core::Status::Complete, "{}", r.stderr);
    records
        .iter()
        .map(|rec| match rec {
            Record::Doc(d) => d.clone(),
            other => panic!("not a doc: {other:?}"),
        })
        .collect()
}

#[test]
fn a_wiki_page_without_rules_is_a_doc_with_title_infobox_sections_categories() {
    let r = run(&[], &input(&[wiki_page("Ash Wyrm", ASH_WYRM)]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let d = &docs(&r)[0];
    assert_eq!(
        (d.concept.as_str(), d.name.as_deref()),
        ("page", Some("Ash Wyrm"))
    );
    assert_eq!(d.context.title.as_deref(), Some("Ash Wyrm"));
    let f = Value::Object(d.fields.clone());
    assert_eq!(f["infobox"]["kind"], "creature");
    assert_eq!(f["infobox"]["fields"]["type"], "Dragon");
    assert_eq!(
        f["infobox"]["fields"]["habitat"],
        "Storm Barrow, Rust Reach"
    );
    assert_eq!(f["infobox"]["fields"]["hit_points"], "1,790");
    assert_eq!(f["infobox"]["fields"]["speed"], "60 ft");
    assert_eq!(
        f["infobox"]["fields"]["first_seen"],
        "Emberfall Core Rules(2019), p. 69"
    );
    assert_eq!(
        f["infobox"]["fieldsWikitext"]["hit_points"],
        "{{Nowrap|1,790}}"
    );
    assert_eq!(f["infobox"]["fields"]["caption"], "A Ash Wyrm at rest");
    assert!(d.errors.is_empty(), "{:?}", d.errors);
    let titles: Vec<(&str, u64)> = f["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["title"].as_str().unwrap(), s["level"].as_u64().unwrap()))
        .collect();
    assert_eq!(titles, [("", 0), ("Behaviour", 2), ("Hunting", 3)]);
    assert_eq!(
        f["sections"][1]["text"],
        "The Ash Wyrm is said to guard moss key."
    );
    assert_eq!(f["categories"], json!(["Creatures", "Dragons"]));
    assert_eq!(
        f["links"],
        json!([
            "Dragons",
            "Storm Barrow",
            "Rust Reach",
            "Cinder Coast",
            "Moss Key"
        ])
    );
    assert_eq!(
        (f["pageid"].as_u64(), f["revid"].as_u64()),
        (Some(42), Some(420))
    );
    assert!(
        f["text"]
            .as_str()
            .unwrap()
            .starts_with("The Ash Wyrm is a dragon of the Cinder Coast.")
    );
}

#[test]
fn rules_map_infobox_fields_to_concept_fields() {
    let rules = testdata("parse/rules/emberfall-wiki.toml");
    let pages = [
        wiki_page("Ash Wyrm", ASH_WYRM),
        wiki_page("Ash Bow", ASH_BOW),
        wiki_page(
            "Ember Fen",
            "{{Infobox place|name=Ember Fen}}\nA fen.\n== Lore ==\nOld.",
        ),
        wiki_page("Main Page", "Welcome to the [[Emberfall]] wiki."),
    ];
    let r = run(&["--rules", rules.to_str().unwrap()], &input(&pages));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let docs = docs(&r);
    let concepts: Vec<&str> = docs.iter().map(|d| d.concept.as_str()).collect();
    assert_eq!(concepts, ["creature", "item", "place", "unknown"]);
    let wyrm = &docs[0];
    assert_eq!(
        (wyrm.id.as_deref(), wyrm.name.as_deref()),
        (Some("Ash_Wyrm"), Some("Ash Wyrm"))
    );
    assert_eq!(
        Value::Object(wyrm.fields.clone()),
        json!({
            "type": "Dragon", "habitat": "Storm Barrow, Rust Reach", "size": "Tiny",
            "hitPoints": 1790, "challenge": 11,
            "behaviour": "The Ash Wyrm is said to guard moss key.\n\nIt hunts at dusk.",
            "categories": ["Creatures", "Dragons"],
        })
    );
    assert_eq!(docs[1].fields["rarity"], "Common");
    assert_eq!(docs[1].fields["madeIn"], "Ember Fen");
    // `generic = true`: the concept's fields and the generic wiki fields.
    assert_eq!(docs[2].name.as_deref(), Some("Ember Fen"));
    assert_eq!(docs[2].fields["sections"][1]["title"], "Lore");
    // The fallback concept has the generic fields.
    assert_eq!(docs[3].fields["links"], json!(["Emberfall"]));
}

#[test]
fn a_creature_without_hit_points_breaks_its_rule() {
    let rules = testdata("parse/rules/emberfall-wiki.toml");
    let page = wiki_page(
        "Odd Wyrm",
        "{{Infobox creature|name=Odd Wyrm|hit_points=unknown}}\nOdd.",
    );
    let r = run(&["--rules", rules.to_str().unwrap()], &input(&[page]));
    let (records, _) = (r.records(), r.summary());
    let Record::Failure(f) = &records[0] else {
        panic!("{records:?}")
    };
    assert_eq!(f.context.title.as_deref(), Some("Odd Wyrm"));
    let e = f.errors.last().unwrap();
    assert_eq!(e.code, "parse.rule");
    assert!(
        e.message.contains("`unknown` is not a number"),
        "{}",
        e.message
    );
}

#[test]
fn wiki_fields_with_a_selector_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.toml");
    std::fs::write(
        &path,
        "[[concept]]\nname = \"c\"\nmatch.infobox = \"creature\"\n\
         fields.hp = { infobox = \"hit_points\", selector = \"td\" }\n",
    )
    .unwrap();
    let r = run(&["--rules", path.to_str().unwrap()], b"");
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("r.toml:4"), "{}", r.stderr);
    assert!(r.stderr.contains("take no `selector`"), "{}", r.stderr);
}

#[test]
fn a_template_value_without_its_expansion_is_null_with_a_warning_never_a_guess() {
    let mut page = wiki_page("Ash Wyrm", ASH_WYRM);
    page.as_object_mut().unwrap().remove("wikiExpansions");
    page["wikiExpansionError"] = json!("expandtemplates: HTTP 503");
    let r = run(&[], &input(&[page]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let d = &docs(&r)[0];
    let fields = &d.fields["infobox"]["fields"];
    for key in ["hit_points", "speed", "first_seen"] {
        assert_eq!(fields[key], Value::Null, "{key}");
    }
    assert_eq!(
        fields["type"], "Dragon",
        "values without templates are shown"
    );
    let warned: Vec<&str> = d
        .errors
        .iter()
        .filter(|e| e.code == "wiki.unexpanded")
        .map(|e| e.message.as_str())
        .collect();
    assert_eq!(warned.len(), 3, "{warned:?}");
    assert!(
        warned[0].contains("`hit_points`")
            && warned[0].contains("{{Nowrap|1,790}}")
            && warned[0].contains("HTTP 503"),
        "{warned:?}"
    );
    // With rules, the field is missing: a required one breaks its rule, naming why.
    let rules = testdata("parse/rules/emberfall-wiki.toml");
    let mut page = wiki_page("Ash Wyrm", ASH_WYRM);
    page.as_object_mut().unwrap().remove("wikiExpansions");
    let r = run(&["--rules", rules.to_str().unwrap()], &input(&[page]));
    let Record::Failure(f) = &r.records()[0] else {
        panic!("{:?}", r.records())
    };
    let codes: Vec<&str> = f.errors.iter().map(|e| e.code.as_str()).collect();
    assert_eq!(codes.last(), Some(&"parse.rule"), "{codes:?}");
    assert!(codes.contains(&"wiki.unexpanded"), "{codes:?}");
}
