//! Real-looking pages: infoboxes with nested templates, links, references, comments, tables,
//! sections.

use rip_wikitext::{ExternalLink, Link, Reference, parse};

const SETTLEMENT: &str = r#"{{Short description|City in Illinois}}
{{Infobox settlement
| name                = Springfield
| official_name       = City of Springfield<!-- the legal name -->
| nickname            = ''Flower City''<br />''Land of Lincoln''
| image_map           = <!-- none yet -->
| coordinates         = {{coord|39|47|58|N|89|39|18|W|display=inline,title}}
| leader_name         = [[Jim Langfelder]]
| leader_title        = [[Mayor of Springfield|Mayor]]
| area_total_km2      = 170.7<ref name="census">{{cite web |url=https://example.invalid/census |title=2020 Census Gazetteer |publisher=Census Bureau}}</ref>
| population_total    = {{formatnum:167882}}
| population_as_of    = {{As of|2020}}
| population_density_km2 = auto
| elevation_ft        = {{convert|558|ft|m|abbr=on}}
| established_date    = {{Start date and age|1821}}
| website             = {{URL|springfield.il.us}}
| timezone            = [[Central Time Zone|CST]] ([[UTC−6]])
}}
'''Springfield''' is the capital of [[Illinois]].<ref name="census" /> It lies on the
[[Sangamon River]]s banks<ref>{{cite book |title=Rivers of Illinois |page=12}} and [[Lake Springfield]].</ref>, with a
population of {{formatnum:114394}} ''(city proper)''.<!--
== Not a heading ==
-->

== History ==
{{Main|History of Springfield, Illinois}}
Founded in 1821, see [https://example.invalid/history the city's history] and [https://example.invalid/x].

=== Lincoln years ===
[[File:Lincoln home.jpg|thumb|The [[Lincoln Home]] in 2006]]
[[Abraham Lincoln|Lincoln]] lived here.{{citation needed|date=May 2020}}

== Geography ==
{| class="wikitable"
|+ Climate
! Month !! Jan !! Feb
|-
| High || 1 || 3
|}
* Rivers: [[Sangamon River|Sangamon]]
* Lakes: [[Lake Springfield|]]

== References ==
{{Reflist}}
<references />

[[Category:Cities in Illinois|Springfield]]
[[Category:County seats in Illinois]]
[[category:Cities in Illinois]]
"#;

#[test]
fn infobox_values_are_flat_text_with_nested_templates_and_links_reduced() {
    let page = parse("Springfield, Illinois", SETTLEMENT);
    let infobox = page.infobox.as_ref().expect("an infobox");
    assert_eq!(infobox.template, "Infobox settlement");
    assert_eq!(infobox.kind(), "settlement");
    let field = |k| page.infobox_field(k);
    assert_eq!(field("name"), Some("Springfield"));
    assert_eq!(
        field("official_name"),
        Some("City of Springfield"),
        "comment dropped"
    );
    assert_eq!(field("nickname"), Some("Flower City Land of Lincoln"));
    assert_eq!(field("image_map"), None, "only a comment: empty");
    assert_eq!(field("leader_name"), Some("Jim Langfelder"));
    assert_eq!(field("leader_title"), Some("Mayor"));
    assert_eq!(field("area_total_km2"), Some("170.7"), "reference dropped");
    assert_eq!(field("population_total"), Some("167882"));
    assert_eq!(field("population_as_of"), Some("As of 2020"));
    assert_eq!(field("elevation_ft"), Some("558 ft"));
    assert_eq!(field("timezone"), Some("CST (UTC−6)"));
    assert_eq!(field("website"), Some("springfield.il.us"));
    assert_eq!(field("coordinates"), Some("39 47 58 N 89 39 18 W"));
    // Keys match loosely; numbers come out of the text.
    assert_eq!(page.infobox_field("Leader Name"), Some("Jim Langfelder"));
    assert_eq!(page.infobox_number("population_total"), Some(167_882.0));
    assert_eq!(page.infobox_number("area_total_km2"), Some(170.7));
    assert_eq!(page.infobox_number("elevation_ft"), Some(558.0));
    assert_eq!(page.infobox_number("leader_name"), None);
    assert_eq!(page.infobox_number("missing"), None);
    // The raw wikitext stays available for what the text cannot say.
    assert_eq!(
        infobox.field_wikitext("population_total"),
        Some("{{formatnum:167882}}")
    );
    assert!(
        infobox
            .field_wikitext("area_total_km2")
            .unwrap()
            .contains("<ref name=\"census\">")
    );
}

#[test]
fn sections_have_titles_levels_and_wikitext() {
    let page = parse("Springfield, Illinois", SETTLEMENT);
    let shape: Vec<_> = page
        .sections
        .iter()
        .map(|s| (s.level, s.title.as_str()))
        .collect();
    assert_eq!(
        shape,
        [
            (0, ""),
            (2, "History"),
            (3, "Lincoln years"),
            (2, "Geography"),
            (2, "References")
        ]
    );
    let history = page.section("history").unwrap();
    assert!(
        history
            .wikitext
            .starts_with("{{Main|History of Springfield, Illinois}}")
    );
    assert!(
        !history.wikitext.contains("Lincoln years"),
        "subsections are their own"
    );
    assert_eq!(
        history.text,
        "Founded in 1821, see the city's history and ."
    );
    assert_eq!(page.sections[2].text, "Lincoln lived here.");
    assert_eq!(
        page.sections[3].text,
        "Rivers: Sangamon\nLakes: Lake Springfield"
    );
    assert_eq!(page.sections[4].text, "");
}

#[test]
fn plain_text_drops_infobox_references_comments_tables_and_categories() {
    let page = parse("Springfield, Illinois", SETTLEMENT);
    let lead = &page.sections[0].text;
    assert_eq!(
        lead,
        "Springfield is the capital of Illinois. It lies on the\nSangamon Rivers banks, with a\npopulation of 114394 (city proper)."
    );
    for absent in [
        "Not a heading",
        "Jan",
        "Flower City",
        "Census",
        "Category",
        "{{",
        "<ref",
    ] {
        assert!(!page.text.contains(absent), "{absent:?} in {:?}", page.text);
    }
    assert!(page.text.starts_with(lead.as_str()));
}

#[test]
fn categories_links_references_and_external_links_are_collected() {
    let page = parse("Springfield, Illinois", SETTLEMENT);
    assert_eq!(
        page.categories,
        ["Cities in Illinois", "County seats in Illinois"]
    );
    let targets: Vec<_> = page.links.iter().map(|l| l.target.as_str()).collect();
    for want in [
        "Jim Langfelder",
        "Mayor of Springfield",
        "Illinois",
        "Sangamon River",
        "Lake Springfield",
        "Lincoln Home",
        "Abraham Lincoln",
    ] {
        assert!(targets.contains(&want), "{want} not in {targets:?}");
    }
    assert!(
        !targets
            .iter()
            .any(|t| t.starts_with("File:") || t.contains("Category"))
    );
    assert!(page.links.contains(&Link {
        target: "Abraham Lincoln".into(),
        fragment: None,
        text: "Lincoln".into()
    }));
    assert!(page.links.contains(&Link {
        target: "Lake Springfield".into(),
        fragment: None,
        text: "Lake Springfield".into()
    }));
    assert_eq!(
        page.references,
        [
            Reference {
                name: Some("census".into()),
                text: "2020 Census Gazetteer".into()
            },
            Reference {
                name: None,
                text: "Rivers of Illinois and Lake Springfield.".into()
            },
        ]
    );
    assert_eq!(
        page.external_links,
        [
            ExternalLink {
                url: "https://example.invalid/history".into(),
                text: "the city's history".into()
            },
            ExternalLink {
                url: "https://example.invalid/x".into(),
                text: String::new()
            },
        ]
    );
}

#[test]
fn links_of_every_shape() {
    let page = parse(
        "Dragon (creature)",
        "A [[dragon]]s, [[Ash Wyrm|the wyrm]], [[:Category:Dragons|all dragons]], \
         [[Pyromancer#Features|features]], [[#Habitat|below]], [[ash_wyrm]], \
         [[Frost Hound (beast)|]], [[Image:x.png]], [[Category:Dragons]], [[a|b|c]].",
    );
    assert_eq!(
        page.text,
        "A dragons, the wyrm, all dragons, features, below, ash_wyrm, Frost Hound, , , b|c."
    );
    let got: Vec<_> = page
        .links
        .iter()
        .map(|l| (l.target.as_str(), l.fragment.as_deref(), l.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("Dragon", None, "dragon"),
            ("Ash Wyrm", None, "the wyrm"),
            ("Category:Dragons", None, "all dragons"),
            ("Pyromancer", Some("Features"), "features"),
            ("Ash wyrm", None, "ash_wyrm"),
            ("Frost Hound (beast)", None, "Frost Hound"),
            ("A", None, "b|c"),
        ]
    );
    assert_eq!(page.categories, ["Dragons"]);
}

#[test]
fn bold_italic_html_and_entities() {
    let page = parse(
        "x",
        "'''Bold''' and ''italic'' and '''''both''''', <small>small</small>,\
         H<sub>2</sub>O, 5&nbsp;km, &lt;tag&gt;, caf&eacute;, <nowiki>{{not a template}}</nowiki>.",
    );
    assert_eq!(
        page.text,
        "Bold and italic and both, small,H2O, 5 km, <tag>, café, {{not a template}}."
    );
}

#[test]
fn a_redirect_page() {
    let page = parse(
        "Pyro",
        "#REDIRECT [[Pyromancer#Features]]\n\n{{R from alternative name}}",
    );
    let redirect = page.redirect.unwrap();
    assert_eq!(redirect.target, "Pyromancer");
    assert_eq!(redirect.fragment.as_deref(), Some("Features"));
    assert!(parse("x", "text #REDIRECT [[y]]").redirect.is_none());
    assert_eq!(
        parse("x", "#redirect:[[ café_lanterns ]]")
            .redirect
            .unwrap()
            .target,
        "Café lanterns"
    );
}

#[test]
fn the_first_infobox_wins_even_when_nested() {
    let page = parse(
        "x",
        "{{Good article}}{{Wrapper|content={{Infobox person|name=A|module={{Infobox officeholder|office=B}}}}}}\n{{Infobox other|name=C}}",
    );
    let infobox = page.infobox.unwrap();
    assert_eq!(infobox.kind(), "person");
    assert_eq!(infobox.field("name"), Some("A"));
    assert_eq!(infobox.field("module"), None, "an infobox displays nothing");
    assert!(
        infobox
            .field_wikitext("module")
            .unwrap()
            .starts_with("{{Infobox officeholder")
    );
}

#[test]
fn templates_in_running_text() {
    let page = parse(
        "Ash Wyrm",
        "{{PAGENAME}} weighs {{convert|3|lb|kg}} ({{lang|fr|le wyrm}}), \
         {{#if:yes|shown|hidden}}{{#if:|no|empty}}, {{ucfirst:ember}}, {{!}}, \
         {{nowrap|1,200&nbsp;gp}}, {{Coin|gp=5}}, {{{1|default}}}.",
    );
    assert_eq!(
        page.text,
        "Ash Wyrm weighs 3 lb (le wyrm), shownempty, Ember, |, 1,200 gp, , default."
    );
}

#[test]
fn numbers_in_infobox_fields() {
    let page = parse(
        "x",
        "{{Infobox item|price={{Coin|gp=2,848|sp=3}}|weight=12.5 kg|hp=−40|count=1,000,000|range=5–10 ft|none=n/a}}",
    );
    assert_eq!(
        page.infobox_number("price"),
        None,
        "named-only templates show nothing"
    );
    assert_eq!(
        page.infobox.as_ref().unwrap().field_wikitext("price"),
        Some("{{Coin|gp=2,848|sp=3}}")
    );
    assert_eq!(page.infobox_number("weight"), Some(12.5));
    assert_eq!(page.infobox_number("hp"), Some(-40.0));
    assert_eq!(page.infobox_number("count"), Some(1_000_000.0));
    assert_eq!(page.infobox_number("range"), Some(5.0));
    assert_eq!(page.infobox_number("none"), None);
}

#[test]
fn a_page_serializes_to_json_and_back() {
    let page = parse("Springfield, Illinois", SETTLEMENT);
    let json = serde_json::to_string(&page).unwrap();
    assert!(
        json.contains("\"fields\":{\"name\":\"Springfield\""),
        "{json}"
    );
    let back: rip_wikitext::Page = serde_json::from_str(&json).unwrap();
    assert_eq!(back, page);
}
