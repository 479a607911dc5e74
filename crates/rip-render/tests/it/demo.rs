//! The script-built demo site (testdata/site-js): what the server sends has no items;
//! the rendered DOM has every one. And a rerun replays the renders from the cache.

use rip_core::Record;
use rip_testkit::{Stage, testdata};
use rip_testserver::TestServer;
use serde_json::Value;

use crate::{one_each, refs, stage};

fn json(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(testdata(path)).unwrap()).unwrap()
}

/// The names the JSON endpoint holds under `key`, as the page shows them.
fn names(path: &str, key: &str, line: impl Fn(&Value) -> String) -> Vec<String> {
    json(path)[key]
        .as_array()
        .unwrap()
        .iter()
        .map(line)
        .collect()
}

/// The docs rip-parse makes of `pages` with the market's rules, by URL.
fn parse(pages: &str, dir: &std::path::Path) -> Vec<Value> {
    let rules = testdata("render/market.rules.toml");
    let ran = Stage::new("rip-parse")
        .arg("--rules")
        .arg(rules)
        .arg("-q")
        .current_dir(dir)
        .stdin(pages)
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    ran.values()
        .into_iter()
        .filter(|v| v["_type"] == "doc")
        .collect()
}

fn list(doc: &Value, field: &str) -> Vec<String> {
    doc[field]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn fetch_misses_the_script_built_items_and_render_extracts_every_one() {
    let server = TestServer::builder()
        .dir(testdata("site-js"))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = ["/market/", "/app/?view=caravans", "/app/?view=guilds"]
        .iter()
        .map(|p| server.url(p))
        .collect();
    let products = names("site-js/api/products.json", "products", |p| {
        p["name"].as_str().unwrap().to_owned()
    });
    let caravans = names("site-js/api/caravans.json", "caravans", |c| {
        format!("{} ({} stops)", c["name"].as_str().unwrap(), c["stops"])
    });
    let guilds = names("site-js/api/guilds.json", "guilds", |g| {
        format!("{}, founded {}", g["name"].as_str().unwrap(), g["founded"])
    });

    let fetched = stage("rip-fetch", dir.path(), &[], &refs(&urls)).run();
    assert_eq!(fetched.code, 0, "{}", fetched.stderr);
    let docs = parse(&fetched.stdout, dir.path());
    assert_eq!(docs.len(), 3);
    for doc in &docs {
        assert!(
            list(doc, "products").is_empty() && list(doc, "entries").is_empty(),
            "{doc}"
        );
    }

    let rendered = stage("rip-render", dir.path(), &["-c", "3"], &refs(&urls)).run();
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    for record in one_each(&rendered, &urls) {
        let Record::Page(page) = record else {
            panic!("{record:?}")
        };
        let render = page.render.as_ref().expect("a render object");
        assert_eq!(render.wait, "network-idle");
        assert!(render.browser.contains("156") || !render.browser.is_empty());
        assert!(render.requests >= 2, "the script and its JSON: {render:?}");
        assert!(render.console_errors.is_empty(), "{render:?}");
    }
    let docs = parse(&rendered.stdout, dir.path());
    let by_url = |u: &str| docs.iter().find(|d| d["url"] == u).unwrap();
    assert_eq!(list(by_url(&urls[0]), "products"), products);
    assert_eq!(list(by_url(&urls[1]), "entries"), caravans);
    assert_eq!(list(by_url(&urls[2]), "entries"), guilds);
    assert_eq!(by_url(&urls[2])["name"], "Guilds");
    let banner = server.count("/images/banner.png");
    assert_eq!(banner, 0, "images are not fetched by default");

    // A rerun replays the renders from the cache: no browser, no request.
    let before = server.total();
    let again = stage("rip-render", dir.path(), &[], &refs(&urls)).run();
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.counter("renderCacheHits"), 3);
    assert_eq!(again.counter("browserStarts"), 0);
    assert_eq!(server.total(), before, "nothing asked of the site");
    assert_eq!(list(by_url(&urls[0]), "products").len(), products.len());
    let replayed = parse(&again.stdout, dir.path());
    assert_eq!(replayed.len(), 3);
    for doc in &replayed {
        let fresh = by_url(doc["url"].as_str().unwrap());
        assert_eq!(doc["products"], fresh["products"]);
        assert_eq!(doc["entries"], fresh["entries"]);
    }
}

#[test]
fn only_the_matching_refs_are_rendered_and_rip_fetch_takes_the_rest() {
    let server = TestServer::builder()
        .dir(testdata("site-js"))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = [
        "/market/",
        "/index.html",
        "/app/?view=guilds",
        "/robots.txt",
    ]
    .iter()
    .map(|p| server.url(p))
    .collect();
    let only = ["--only", "/(market|app)/"];
    let rendered = stage("rip-render", dir.path(), &only, &refs(&urls)).run();
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    assert_eq!(rendered.summary().passed_through.get("ref"), Some(&2));
    assert_eq!(rendered.counter("rendered"), 2);
    let fetched = stage("rip-fetch", dir.path(), &[], &rendered.stdout).run();
    assert_eq!(fetched.code, 0, "{}", fetched.stderr);
    let got = one_each(&fetched, &urls);
    for (i, record) in got.iter().enumerate() {
        let Record::Page(page) = record else {
            panic!("{record:?}")
        };
        let by_browser = i == 0 || i == 2;
        assert_eq!(page.render.is_some(), by_browser, "{}", page.url);
    }
    assert_eq!(server.count("/index.html"), 1, "fetched once, by rip-fetch");
    assert_eq!(
        server.count("/api/products.json"),
        1,
        "the market's script ran"
    );
}
