//! MediaWiki pages: wikitext (`text/x-wiki`, as `rip-fetch` writes wiki pages) to a doc.
//!
//! The wikitext is parsed by [`rip_wikitext`] (infobox as a flat map, sections, categories,
//! links, plain text).
//!
//! **Without rules**, a wiki page becomes a doc of concept `page` whose `name` is the page's
//! title (after redirects; the ref's own `title` stays in the doc's context) and whose
//! fields are [`generic`]'s: `infobox` (`{template, kind, fields, fieldsWikitext}`:
//! each field's text as the wiki shows it, and the wikitext the page gives it),
//! `sections` (`[{title, level, text}]`, the lead first with level 0), `categories`,
//! `links` (the titles linked to, each once), `text`, and `pageid`, `revid`, `redirect`
//! when known.
//!
//! **Templates.** A value holding a template call (`{{Coin|gp=2238|sp=7}}`) shows what the
//! template's page on that wiki makes of it, which only the wiki knows: rip-fetch asks the
//! wiki to expand the calls and carries the answers on the page (`wikiExpansions`), and
//! [`expand_infobox`] shows the value through them. A value whose calls were not expanded
//! (the request failed, the cache-only mode, a page fetched without expansion) is never
//! guessed: the field is `null` in `fields` (missing for rules), and the doc carries a
//! `wiki.unexpanded` warning in its `errors` naming the field, the calls and why.
//!
//! **With rules**, the page is routed by [`Rules::route_wiki`](crate::rules::Rules::route_wiki)
//! (`match.category`, `match.infobox`, `match.url`, `match.text`; a `match.selector` never
//! matches wikitext), and fields read the page through `infobox`, `section` or `wiki`
//! ([`WikiSource`]); `source = "url"` fields read the page's URL as for HTML, and `selector`
//! fields are missing (wikitext has no elements). A concept with `generic = true` also gets
//! the generic fields.

use serde_json::{Map, Value, json};
use url::Url;

use crate::extract::{BrokenRules, Extracted, RuleBreak, finish, refine};
use crate::rules::{Concept, Extract, Field, Source, ValueType, WikiSource, WikiValue};

/// The page's title: `wikiTitle` (after redirects), else the ref's `title`, else the last
/// path segment of its URL.
pub fn title_of(page: &rip_core::Page) -> String {
    if let Some(t) = page.wiki_title.as_deref().or(page.context.title.as_deref()) {
        return t.to_owned();
    }
    let url = if page.final_url.is_empty() {
        &page.url
    } else {
        &page.final_url
    };
    let last = url.rsplit('/').next().unwrap_or(url);
    let decoded = percent_decode(last);
    rip_wikitext::normalize_title(&decoded)
}

fn percent_decode(s: &str) -> String {
    url::form_urlencoded::parse(format!("x={}", s.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_owned())
}

/// The code of the warning a doc carries for an infobox field it cannot show.
pub const UNEXPANDED: &str = "wiki.unexpanded";

/// Shows each infobox field of `parsed` as the wiki does: a value holding template calls
/// through the page's `wikiExpansions` (see [`rip_wikitext::expanded_text`]), any other
/// value as the offline renderer shows it. A field whose calls were not all expanded is
/// removed from the fields (its wikitext stays) and named in the returned messages, one per
/// field, with the reason the page gives.
pub fn expand_infobox(parsed: &mut rip_wikitext::Page, page: &rip_core::Page) -> Vec<String> {
    let title = parsed.title.clone();
    let Some(ib) = parsed.infobox.as_mut() else {
        return Vec::new();
    };
    let mut unexpanded = Vec::new();
    for (key, wikitext) in &ib.wikitext {
        let expansion = |call: &str| page.wiki_expansions.get(call).map(String::as_str);
        match rip_wikitext::expanded_text(&title, wikitext, expansion) {
            Ok(text) => {
                ib.fields.insert(key.clone(), text);
            }
            Err(missing) => {
                ib.fields.shift_remove(key);
                let why = page.wiki_expansion_error.as_deref().unwrap_or(
                    "the page carries no expansion for it (fetched without template expansion)",
                );
                unexpanded.push(format!(
                    "infobox field `{key}` not shown: the wiki did not expand {}: {why}",
                    missing.join(", ")
                ));
            }
        }
    }
    unexpanded
}

/// The generic fields of a wiki page (see the module docs). `fields` holds every
/// parameter, `null` where [`expand_infobox`] could not show it; `fieldsWikitext` what the
/// page says.
pub fn generic(parsed: &rip_wikitext::Page, page: &rip_core::Page) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(ib) = &parsed.infobox {
        let fields: Map<String, Value> = ib
            .wikitext
            .keys()
            .map(|k| {
                (
                    k.clone(),
                    ib.fields.get(k).map_or(Value::Null, |v| json!(v)),
                )
            })
            .collect();
        out.insert(
            "infobox".into(),
            json!({
                "template": ib.template, "kind": ib.kind(), "fields": fields,
                "fieldsWikitext": ib.wikitext,
            }),
        );
    }
    let sections: Vec<Value> = parsed
        .sections
        .iter()
        .filter(|s| s.level > 0 || !s.text.is_empty())
        .map(|s| json!({ "title": s.title, "level": s.level, "text": s.text }))
        .collect();
    out.insert("sections".into(), Value::Array(sections));
    out.insert("categories".into(), json!(parsed.categories));
    out.insert("links".into(), json!(link_targets(parsed)));
    out.insert("text".into(), Value::String(parsed.text.clone()));
    if let Some(id) = page.pageid {
        out.insert("pageid".into(), Value::from(id));
    }
    if let Some(id) = page.revid {
        out.insert("revid".into(), Value::from(id));
    }
    if let Some(r) = &parsed.redirect {
        out.insert("redirect".into(), Value::String(r.target.clone()));
    }
    out
}

/// The titles linked to, each once, in order.
fn link_targets(parsed: &rip_wikitext::Page) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    parsed
        .links
        .iter()
        .filter(|l| !l.target.is_empty() && seen.insert(l.target.as_str()))
        .map(|l| l.target.clone())
        .collect()
}

/// Extracts `concept`'s fields from a wiki page served at `url`. `Err` lists every rule the
/// page breaks.
pub fn apply(
    concept: &Concept,
    parsed: &rip_wikitext::Page,
    url: &str,
    base: &Url,
) -> Result<Extracted, BrokenRules> {
    let mut out = Extracted::default();
    let mut broken = Vec::new();
    let mut one = |f: &Field| match value(f, parsed, url, base) {
        Ok(v) => v,
        Err(why) => {
            broken.push(why);
            None
        }
    };
    if let Some(f) = &concept.id {
        out.id = one(f).map(as_text);
    }
    if let Some(f) = &concept.name_field {
        out.name = one(f).map(as_text);
    }
    for f in &concept.fields {
        if let Some(v) = one(f) {
            out.fields.insert(f.name.clone(), v);
        }
    }
    BrokenRules(broken).or_ok(out)
}

fn as_text(v: Value) -> String {
    match v {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// One field's value on a wiki page: `Ok(None)` when missing and allowed to be.
fn value(
    f: &Field,
    parsed: &rip_wikitext::Page,
    url: &str,
    base: &Url,
) -> Result<Option<Value>, RuleBreak> {
    let raw: Vec<String> = match &f.wiki {
        None if f.source == Source::Url => vec![url.to_owned()],
        // A `selector` field: wikitext has no elements.
        None => Vec::new(),
        Some(WikiSource::Infobox(key)) => parsed
            .infobox_field(key)
            .map(|v| number_in(f, v))
            .into_iter()
            .collect(),
        Some(WikiSource::Section(title)) => section_text(parsed, title).into_iter().collect(),
        Some(WikiSource::Page(what)) => page_values(*what, parsed),
    };
    let found: Vec<String> = raw
        .into_iter()
        .filter(|v| !v.is_empty())
        .filter_map(|v| refine(f, v))
        .collect();
    if f.extract == Extract::Exists {
        return Ok(Some(Value::Bool(!found.is_empty())));
    }
    let found = if f.list {
        found
    } else {
        found.into_iter().take(1).collect()
    };
    finish(f, found, base)
}

/// For a number field, the first number in an infobox value (`1,200 (est.)` → `1200`);
/// otherwise (or when there is none, so that the type check names the text) the text.
fn number_in(f: &Field, text: &str) -> String {
    if matches!(f.value_type, ValueType::Number | ValueType::Integer)
        && f.regex.is_none()
        && let Some(n) = rip_wikitext::parse_number(text)
    {
        return n.to_string();
    }
    text.to_owned()
}

/// The plain text of the section headed `title` (case-insensitive), its subsections
/// included; `None` when there is none or it is empty.
fn section_text(parsed: &rip_wikitext::Page, title: &str) -> Option<String> {
    let want = title.to_lowercase();
    let at = parsed
        .sections
        .iter()
        .position(|s| s.level > 0 && s.title.to_lowercase() == want)?;
    let level = parsed.sections[at].level;
    let text = parsed.sections[at..]
        .iter()
        .enumerate()
        .take_while(|(i, s)| *i == 0 || s.level > level)
        .map(|(_, s)| s.text.as_str())
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    (!text.is_empty()).then_some(text)
}

fn page_values(what: WikiValue, parsed: &rip_wikitext::Page) -> Vec<String> {
    match what {
        WikiValue::Title => vec![parsed.title.clone()],
        WikiValue::Text => vec![parsed.text.clone()],
        WikiValue::Categories => parsed.categories.clone(),
        WikiValue::Links => link_targets(parsed),
        WikiValue::InfoboxType => parsed.infobox.iter().map(|i| i.kind()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Rules;
    use std::path::Path;

    const ASH: &str = "{{Infobox creature\n| name = Ash Wyrm\n| hit_points = {{Nowrap|1,200}} (est.)\n\
        | habitat = [[Cinder Wastes|the Wastes]]<ref>Bestiary, p. 3</ref>\n| level = 12\n}}\n\
        The '''Ash Wyrm''' is a [[dragon]] of the [[Cinder Wastes]].\n\
        == Behaviour ==\nIt sleeps <!-- mostly --> in [[ash]].\n\
        [[Category:Dragons|Ash]]\n[[Category:Fire creatures]]";

    fn rules(text: &str) -> Rules {
        Rules::parse(text, Path::new("test.toml")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn run(rules: &Rules, wikitext: &str) -> Result<(String, Extracted), Vec<String>> {
        let url = "http://w/index.php/Ash_Wyrm";
        let parsed = rip_wikitext::parse("Ash Wyrm", wikitext);
        let concept = rules.route_wiki(url, &parsed);
        let x = apply(concept, &parsed, url, &Url::parse(url).unwrap())
            .map_err(|broken| broken.0.iter().map(ToString::to_string).collect::<Vec<_>>())?;
        Ok((concept.name.clone(), x))
    }

    #[test]
    fn infobox_fields_map_to_concept_fields_with_types() {
        let r = rules(
            r#"
[[concept]]
name = "creature"
match.infobox = "Creature"
fields.id = { source = "url", regex = '/index\.php/(?<id>.+)$' }
fields.name = { wiki = "title" }
fields.hp = { infobox = "Hit points", type = "integer", required = true }
fields.habitat = { infobox = "habitat" }
fields.level = { infobox = "level", type = "number" }
fields.behaviour = { section = "behaviour" }
fields.categories = { wiki = "categories", list = true }
fields.kind = { wiki = "infoboxType" }
fields.hasLore = { section = "Lore", extract = "exists" }
fields.css = { selector = "h1" }
"#,
        );
        let (concept, x) = run(&r, ASH).unwrap();
        assert_eq!(concept, "creature");
        assert_eq!(x.id.as_deref(), Some("Ash_Wyrm"));
        assert_eq!(x.name.as_deref(), Some("Ash Wyrm"));
        assert_eq!(
            Value::Object(x.fields),
            json!({
                "hp": 1200, "habitat": "the Wastes", "level": 12,
                "behaviour": "It sleeps in ash.",
                "categories": ["Dragons", "Fire creatures"], "kind": "creature",
                "hasLore": false,
            })
        );
    }

    #[test]
    fn routing_by_category_and_infobox_and_fallback() {
        let r = rules(
            r#"
[[concept]]
name = "html"
match.selector = "h1"
[[concept]]
name = "fire"
match.category = "category:fire_creatures"
[[concept]]
name = "spell"
match.infobox = "spell"
"#,
        );
        assert_eq!(run(&r, ASH).unwrap().0, "fire");
        assert_eq!(run(&r, "{{Infobox Spell|name=Blaze}}").unwrap().0, "spell");
        assert_eq!(run(&r, "Just text.").unwrap().0, "unknown");
    }

    #[test]
    fn missing_required_and_bad_numbers_are_named() {
        let r = rules(
            r#"
[[concept]]
name = "creature"
match.infobox = "creature"
fields.weight = { infobox = "weight", required = true }
fields.habitat = { infobox = "habitat", type = "number" }
"#,
        );
        let broken = run(&r, ASH).unwrap_err();
        assert_eq!(broken.len(), 2, "{broken:?}");
        assert!(broken[0].contains("`weight`") && broken[0].contains("infobox `weight`"));
        assert!(
            broken[1].contains("`the Wastes` is not a number"),
            "{broken:?}"
        );
    }

    fn page(url: &str) -> rip_core::Page {
        serde_json::from_value(json!({
            "url": url, "finalUrl": url, "status": 200,
            "fetchedAt": "2026-12-01T00:00:00Z", "body": "",
        }))
        .unwrap()
    }

    #[test]
    fn generic_fields_of_a_page() {
        let parsed = rip_wikitext::parse("Ash Wyrm", ASH);
        let mut page = page("http://w/index.php/Ash_Wyrm");
        page.pageid = Some(7);
        let g = generic(&parsed, &page);
        assert!(g.get("title").is_none(), "`title` is the doc's context");
        assert_eq!(g["infobox"]["kind"], "creature");
        assert_eq!(g["infobox"]["fields"]["hit_points"], "1,200 (est.)");
        assert_eq!(
            g["sections"][1],
            json!({"title": "Behaviour", "level": 2, "text": "It sleeps in ash."})
        );
        assert_eq!(g["categories"], json!(["Dragons", "Fire creatures"]));
        assert_eq!(g["links"], json!(["Cinder Wastes", "Dragon", "Ash"]));
        assert_eq!(g["pageid"], 7);
        assert!(g.get("revid").is_none());
    }

    #[test]
    fn title_falls_back_to_the_url() {
        let page = page("http://w/index.php/%C3%86ther_Wisp");
        assert_eq!(title_of(&page), "Æther Wisp");
    }
}
