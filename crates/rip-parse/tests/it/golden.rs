//! Golden tests: fixture pages in, the expected docs out (`testdata/parse/golden/`).

use serde_json::{Value, json};

use crate::support::*;

fn docs_by_url(values: &[Value]) -> std::collections::HashMap<String, Value> {
    values
        .iter()
        .map(|v| (v["url"].as_str().unwrap().to_owned(), v.clone()))
        .collect()
}

/// Generic extraction (no rules) with `--markdown`, over demo-site pages chosen for
/// what they exercise: `<base href>`, a base href that differs from the page's
/// directory, windows-1252 bytes declared only in `<meta charset>` (sent as base64),
/// nofollow and mailto links, a listing table, and a PNG (not HTML: a failure).
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a golden scenario: one run, then its checks, read top to bottom"
)]
fn generic_extraction_golden() {
    let pages = [
        "index.html",
        "about.html",
        "items/index.html",
        "items/item-1.html",
        "spells/index.html",
        "blog/spell-roundup.html",
        "blog/a-night-at-the-cafe.html",
        "images/logo.png",
    ];
    let input: Vec<Value> = pages.iter().map(|p| site_page(p)).collect();
    let r = run(&["--markdown"], &ndjson(&input));
    assert_eq!(r.code, 2, "partial: the PNG is a failure: {}", r.stderr);
    let out = r.values();
    assert_golden("generic.ndjson", &out);

    // The facts the golden file must hold, stated here so that a careless
    // UPDATE_GOLDEN cannot bless a regression.
    let by = docs_by_url(&out);
    let item = &by[&format!("{ORIGIN}/items/item-1.html")];
    assert_eq!(item["concept"], "page");
    assert_eq!(item["name"], "Longsword | Items | Emberfall Compendium");
    assert_eq!(item["canonical"], format!("{ORIGIN}/items/item-1.html"));
    assert_eq!(item["lang"], "en");
    assert_eq!(
        item["keywords"],
        json!(["longsword", "martial", "sword", "item"])
    );
    assert!(
        item["text"]
            .as_str()
            .unwrap()
            .starts_with("Longsword\nPrice\n1 gp\nWeight\n"),
        "{}",
        item["text"]
    );
    assert!(
        !item["text"]
            .as_str()
            .unwrap()
            .contains("Emberfall Compendium. A fan-made"),
        "footer skipped"
    );
    assert_eq!(
        item["headings"][0],
        json!({"level": 1, "text": "Longsword"})
    );
    assert_eq!(
        item["links"].as_array().unwrap().len(),
        1 + 7 + 2 + 2,
        "header, nav, see also, footer"
    );
    assert!(
        item["markdown"]
            .as_str()
            .unwrap()
            .starts_with("# Longsword\n\n**Price**\n1 gp\n\n**Weight**"),
        "{}",
        item["markdown"]
    );

    let roundup = &by[&format!("{ORIGIN}/blog/spell-roundup.html")];
    let hrefs: Vec<&str> = roundup["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["href"].as_str().unwrap())
        .collect();
    assert!(
        hrefs.contains(&format!("{ORIGIN}/spells/19.html").as_str()),
        "base href honoured: {hrefs:?}"
    );
    assert!(hrefs.contains(&format!("{ORIGIN}/spells/77.html#heightened").as_str()));
    assert!(
        hrefs.contains(&format!("{ORIGIN}/blog/").as_str()),
        "../blog/ under /spells/"
    );

    let about = &by[&format!("{ORIGIN}/about.html")];
    let links = about["links"].as_array().unwrap();
    assert!(
        links
            .iter()
            .any(|l| l["rel"] == "nofollow" && l["href"] == format!("{ORIGIN}/login.html"))
    );
    assert!(
        links
            .iter()
            .any(|l| l["href"] == "mailto:editors@emberfall.example")
    );

    let cafe = &by[&format!("{ORIGIN}/blog/a-night-at-the-cafe.html")];
    assert_eq!(
        cafe["name"],
        "A Night at the Gilded Café | Blog | Emberfall Compendium"
    );
    let text = cafe["text"].as_str().unwrap();
    for s in ["crêpes", "señor", "naïve", "€", "—"] {
        assert!(text.contains(s), "windows-1252 decoded: {s} in {text}");
    }

    let logo = &by[&format!("{ORIGIN}/images/logo.png")];
    assert_eq!(
        (logo["_type"].as_str(), logo["category"].as_str()),
        (Some("failure"), Some("VALIDATION"))
    );
    assert_eq!(logo["errors"][0]["code"], "parse.notHtml");
    assert!(
        logo["errors"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("the page is image/png ("),
        "{logo}"
    );

    // --keep-other: the PNG is an `unknown` doc, as before.
    let r = run(&["--keep-other"], &ndjson(&[site_page("images/logo.png")]));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let logo = &r.values()[0];
    assert_eq!(logo["concept"], "unknown");
    assert_eq!(logo["contentType"], "image/png");
    assert!(logo["bytes"].as_u64().unwrap() > 50);
}

/// The URL-routed example rules over every page of the demo site.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a golden scenario: one run, then its checks, read top to bottom"
)]
fn emberfall_by_url_golden() {
    let rules = testdata("parse/rules/emberfall-by-url.toml");
    let input: Vec<Value> = site_files().iter().map(|p| site_page(p)).collect();
    let r = run(&["--rules", rules.to_str().unwrap()], &ndjson(&input));
    let out = r.values();
    assert_golden("emberfall-by-url.ndjson", &out);

    let by = docs_by_url(&out);
    let doc = |path: &str| &by[&format!("{ORIGIN}/{path}")];
    assert_eq!(
        doc("items/item-1.html"),
        &json!({
            "_type": "doc", "url": format!("{ORIGIN}/items/item-1.html"), "concept": "item",
            "id": "1", "name": "Longsword", "depth": 2, "parent": format!("{ORIGIN}/items/"),
            "attempt": 0, "httpAttempts": 1, "elapsedMs": 5,
            "traits": ["Martial", "Sword", "Versatile P"],
            "summary": "A straight, double-edged blade about three and a half feet long, the longsword is the sidearm of knights, caravan guards and anyone else who expects to fight on foot. The cruciform hilt leaves room for a second hand when the wielder needs extra leverage.",
            "level": 0, "price": "1 gp", "priceGp": 1, "weightLb": 4, "rarity": "Common",
            "seeAlso": [format!("{ORIGIN}/items/item-8.html"), format!("{ORIGIN}/items/")]
        })
    );
    let catfolk = doc("ancestries/77.html");
    assert_eq!(
        (
            catfolk["concept"].as_str(),
            catfolk["id"].as_str(),
            catfolk["name"].as_str()
        ),
        (Some("ancestry"), Some("77"), Some("Catfolk"))
    );
    assert_eq!(
        (
            catfolk["hitPoints"].as_i64(),
            catfolk["size"].as_str(),
            catfolk["speedFeet"].as_i64()
        ),
        (Some(8), Some("Medium"), Some(25))
    );
    assert_eq!(
        catfolk["heritages"],
        json!(["Clawed Catfolk", "Hunting Catfolk", "Nine Lives Catfolk"])
    );
    let wizard = doc("classes/12.html");
    assert_eq!(
        (
            wizard["name"].as_str(),
            wizard["keyAbility"].as_str(),
            wizard["hitPointsPerLevel"].as_i64()
        ),
        (Some("Wizard"), Some("Intelligence"), Some(6))
    );
    let gust = doc("spells/77.html");
    assert_eq!(
        (
            gust["concept"].as_str(),
            gust["name"].as_str(),
            gust["rankNumber"].as_i64()
        ),
        (Some("spell"), Some("Gust of Wind"), Some(1))
    );
    let light = doc("spells/8.html");
    assert_eq!(
        (light["rank"].as_str(), light.get("rankNumber")),
        (Some("Cantrip"), None)
    );
    // Teleport's range is in miles: the spell schema's `warn` keeps the doc, with the
    // violation in its errors.
    let teleport = doc("spells/102.html");
    assert_eq!(teleport["_type"], "doc");
    assert_eq!(teleport["errors"][0]["code"], "parse.schema");
    assert!(
        r.stderr.contains("spells/102.html"),
        "a warning on stderr: {}",
        r.stderr
    );
    let post = doc("blog/spell-roundup.html");
    assert_eq!(
        (
            post["concept"].as_str(),
            post["id"].as_str(),
            post["author"].as_str(),
            post["published"].as_str()
        ),
        (
            Some("post"),
            Some("spell-roundup"),
            Some("Mira Stonebrook"),
            Some("2024-03-10")
        )
    );
    assert!(
        post["body"]
            .as_str()
            .unwrap()
            .contains(&format!("[Magic Missile]({ORIGIN}/spells/19.html)"))
    );
    assert_eq!(doc("items/")["concept"], "listing");
    assert_eq!(doc("items/")["entries"].as_array().unwrap().len(), 12);
    assert_eq!(doc("")["concept"], "unknown");
    assert!(
        doc("")["links"].is_array(),
        "the unknown fallback has the generic fields"
    );
    let logo = doc("images/logo.png");
    assert_eq!(
        (logo["_type"].as_str(), logo["errors"][0]["code"].as_str()),
        (Some("failure"), Some("parse.notHtml")),
        "no rule applies to a page that is not HTML"
    );

    let (_, summary) = (r.records(), r.summary());
    assert_eq!(summary.counters.get("concept.item"), Some(&12));
    assert_eq!(summary.counters.get("concept.ancestry"), Some(&8));
    assert_eq!(summary.counters.get("concept.class"), Some(&8));
    assert_eq!(summary.counters.get("concept.spell"), Some(&6));
    assert_eq!(summary.counters.get("failures"), Some(&1), "the PNG");
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// The content-routed example rules over the wiki fixtures, whose URLs say nothing.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a golden scenario: one run, then its checks, read top to bottom"
)]
fn gloomhollow_by_content_golden() {
    let rules = testdata("parse/rules/gloomhollow-by-content.toml");
    let dir = testdata("parse/pages/wiki");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".html"))
        .collect();
    names.sort();
    let input: Vec<Value> = names
        .iter()
        .map(|n| {
            let url = format!(
                "http://wiki.test/index.php?title={}",
                n.trim_end_matches(".html")
            );
            page(
                &url,
                "text/html; charset=UTF-8",
                &std::fs::read(dir.join(n)).unwrap(),
                false,
            )
        })
        .collect();
    let r = run(&["--rules", rules.to_str().unwrap()], &ndjson(&input));
    assert_eq!(r.code, 2, "partial: one page breaks a rule\n{}", r.stderr);
    let out = r.values();
    assert_golden("gloomhollow-by-content.ndjson", &out);

    let by = docs_by_url(&out);
    let get = |t: &str| &by[&format!("http://wiki.test/index.php?title={t}")];
    let frost = get("Frost_Lance");
    assert_eq!(
        (
            frost["concept"].as_str(),
            frost["id"].as_str(),
            frost["name"].as_str()
        ),
        (Some("spell"), Some("Frost_Lance"), Some("Frost Lance"))
    );
    assert_eq!(
        (
            frost["school"].as_str(),
            frost["level"].as_i64(),
            frost["castingTime"].as_str(),
            frost["range"].as_str()
        ),
        (
            Some("evocation"),
            Some(2),
            Some("1 action"),
            Some("90 feet")
        )
    );
    assert_eq!(frost["categories"], json!(["Spells", "Evocation"]));
    let ember = get("Ember_Step");
    assert_eq!(
        (
            ember["_type"].as_str(),
            ember["category"].as_str(),
            ember["phase"].as_str()
        ),
        (Some("failure"), Some("VALIDATION"), Some("parse"))
    );
    assert_eq!(ember["errors"][0]["code"], "parse.rule");
    assert!(
        ember["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("`castingTime`")
    );
    let golem = get("Iron_Golem");
    assert_eq!(
        (
            golem["concept"].as_str(),
            golem["armorClass"].as_i64(),
            golem["hitPoints"].as_i64(),
            golem["challenge"].as_i64(),
            golem["xp"].as_i64()
        ),
        (Some("monster"), Some(20), Some(210), Some(16), Some(15000))
    );
    let bag = get("Bag_of_Embers");
    assert_eq!(
        (bag["concept"].as_str(), bag["rarity"].as_str()),
        (Some("magicItem"), Some("uncommon"))
    );
    assert_eq!(
        get("Talk_Armor_Class")["concept"],
        "unknown",
        "text outside a stat block does not route"
    );
    assert_eq!(get("Main_Page")["concept"], "unknown");
    assert!(
        get("Main_Page").get("links").is_none(),
        "this unknown has no generic fields"
    );
}
