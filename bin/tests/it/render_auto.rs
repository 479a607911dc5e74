//! Adaptive rendering end to end, with real Chromium on a loopback site: a site mixing
//! server-rendered pages, pages a script builds from a JSON endpoint and pages half in
//! the HTML and half added by script, under several URL patterns.
//! `rip-fetch | rip-route --render auto | rip-render --only-marked | rip-parse` gives the
//! same documents as `rip-render | rip-parse` (every page rendered), every item of every
//! page extracted, while only the pages whose content needs script open a tab.

use std::collections::BTreeMap;
use std::path::Path;

use rip_testkit::Stage;
use rip_testserver::TestServer;
use serde_json::Value;

/// Items on every page: all in the HTML, all added by script, or half and half.
const ITEMS: usize = 4;

/// The site's pages: (path, body), and its scripts and JSON endpoints.
fn site() -> Vec<(String, String)> {
    let item = |page: &str, k: usize| format!("<li class=\"item\">{page} item {k}</li>");
    let mut files = Vec::new();
    // Server-rendered, with a script that adds nothing (a menu): /articles/article-{n}.html.
    for n in 1..=4 {
        let page = format!("Article {n}");
        let items: String = (1..=ITEMS).map(|k| item(&page, k)).collect();
        let body = format!(
            "<!doctype html><title>{page}</title><main><h1>{page}</h1>\
             <p>A page the server wrote whole, as most pages of most sites are.</p>\
             <ul class=\"items\">{items}</ul></main><script src=\"/js/menu.js\"></script>"
        );
        files.push((format!("articles/article-{n}.html"), body));
    }
    // Server-rendered, no script at all, slugs: /catalog/{slug}.html.
    for slug in ["brass-lantern", "iron-kettle", "oak-chest", "wool-cloak"] {
        let page = format!("Catalog {slug}");
        let items: String = (1..=ITEMS).map(|k| item(&page, k)).collect();
        let body = format!(
            "<!doctype html><title>{page}</title><main><h1>{page}</h1>\
             <ul class=\"items\">{items}</ul></main>"
        );
        files.push((format!("catalog/{slug}.html"), body));
    }
    // Client-rendered: an empty application root, filled from /api/app-{n}.json.
    for n in 1..=4 {
        let body = "<!doctype html><title>App</title><div id=\"app\"></div>\
                    <script src=\"/js/app.js\"></script>"
            .to_owned();
        files.push((format!("app/item-{n}.html"), body));
        let page = format!("App {n}");
        let items: Vec<String> = (1..=ITEMS).map(|k| format!("{page} item {k}")).collect();
        let json = serde_json::json!({"name": page, "items": items});
        files.push((format!("api/app-{n}.json"), json.to_string()));
    }
    // Half and half: two items in the HTML, two placeholders a script fills in from
    // /api/half-{n}.json.
    for n in 1..=4 {
        let page = format!("Half {n}");
        let sent: String = (1..=ITEMS / 2).map(|k| item(&page, k)).collect();
        let body = format!(
            "<!doctype html><title>{page}</title><main><h1>{page}</h1>\
             <p>The first items come with the page; the rest are loaded.</p>\
             <ul class=\"items\">{sent}<li class=\"item placeholder\"></li>\
             <li class=\"item placeholder\"></li></ul></main>\
             <script src=\"/js/half.js\"></script>"
        );
        files.push((format!("half/list-{n}.html"), body));
        let rest: Vec<String> = (ITEMS / 2 + 1..=ITEMS)
            .map(|k| format!("{page} item {k}"))
            .collect();
        files.push((
            format!("api/half-{n}.json"),
            serde_json::json!({ "items": rest }).to_string(),
        ));
    }
    files.push(("js/menu.js".into(), "document.title += ' ·';".into()));
    files.push((
        "js/app.js".into(),
        "(async () => {\n  const n = location.pathname.match(/item-(\\d+)/)[1];\n  \
         const data = await (await fetch('/api/app-' + n + '.json')).json();\n  \
         const main = document.createElement('main');\n  \
         main.innerHTML = '<h1></h1><ul class=\"items\"></ul>';\n  \
         main.querySelector('h1').textContent = data.name;\n  \
         for (const t of data.items) {\n    const li = document.createElement('li');\n    \
         li.className = 'item'; li.textContent = t;\n    \
         main.querySelector('ul').appendChild(li);\n  }\n  \
         document.getElementById('app').appendChild(main);\n})();\n"
            .into(),
    ));
    files.push((
        "js/half.js".into(),
        "(async () => {\n  const n = location.pathname.match(/list-(\\d+)/)[1];\n  \
         const data = await (await fetch('/api/half-' + n + '.json')).json();\n  \
         const slots = document.querySelectorAll('li.placeholder');\n  \
         data.items.forEach((t, i) => { slots[i].textContent = t; \
         slots[i].classList.remove('placeholder'); });\n})();\n"
            .into(),
    ));
    files
}

const RULES: &str = r#"
name = "mixed"
description = "The mixed site of bin/tests/it/render_auto.rs"

[[concept]]
name = "page"
match.url = '\.html$'
fields.name = { selector = "main h1" }
fields.items = { selector = "ul.items li.item", list = true }
"#;

/// The docs of `stream` by URL: name and items, and the `renderedBecause` they carry.
fn docs(stream: &str) -> BTreeMap<String, (Value, Value, Option<Value>)> {
    stream
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["_type"] == "doc")
        .map(|v| {
            let url = v["url"].as_str().unwrap().to_owned();
            let why = v.get("renderedBecause").cloned();
            (url, (v["name"].clone(), v["items"].clone(), why))
        })
        .collect()
}

fn run<S: AsRef<std::ffi::OsStr>>(
    stage: &str,
    args: impl IntoIterator<Item = S>,
    stdin: &str,
) -> rip_testkit::Ran {
    let ran = Stage::new(stage).args(args).stdin(stdin).run();
    assert!(ran.code == 0, "{stage}: exit {}: {}", ran.code, ran.stderr);
    ran
}

/// The mixed site written into `tmp` and served: the server, its origin, the pages' URLs
/// (one a line) and the rules file's path.
fn mixed_site(tmp: &Path) -> (TestServer, String, String, String) {
    let root = tmp.join("site");
    let files = site();
    for (path, body) in &files {
        let file = root.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, body).unwrap();
    }
    let rules = tmp.join("mixed.rules.toml");
    std::fs::write(&rules, RULES).unwrap();
    let server = TestServer::builder().dir(&root).start_background().unwrap();
    let origin = server.origin();
    let urls: String = files
        .iter()
        .filter(|(p, _)| p.ends_with(".html"))
        .map(|(p, _)| format!("{origin}/{p}\n"))
        .collect();
    (server, origin, urls, rules.display().to_string())
}

#[test]
fn render_auto_renders_exactly_the_pages_that_need_script_with_the_same_docs() {
    let tmp = tempfile::tempdir().unwrap();
    let (server, origin, urls, rules) = mixed_site(tmp.path());
    let rules = rules.as_str();
    let pages = urls.lines().count();
    // Done when the fourth item has its text (not the 500 ms of network quiet of the
    // default rule): seconds saved on every page, none of them cut short.
    let wait = "selector:ul.items li.item:nth-child(4):not(.placeholder)";
    let http = |cache: &str, render: bool| -> Vec<String> {
        let dir = tmp.path().join(cache).display().to_string();
        let flags = ["-q", "--delay", "0ms", "--jitter", "0ms", "--ignore-robots"];
        let mut v: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
        v.extend(["--cache-dir".to_owned(), dir]);
        if render {
            v.extend(["-c", "4", "--wait", wait].map(String::from));
        }
        v
    };
    let parse = |records: &str| run("rip-parse", ["-q", "--rules", rules], records).stdout;

    // Everything rendered.
    let all = run("rip-render", http("all", true), &urls);
    assert_eq!(all.counter("rendered"), pages as u64);
    let all_docs = docs(&parse(&all.stdout));

    // Adaptive: fetched, judged, only the pages that need script rendered.
    let fetched = run("rip-fetch", http("auto", false), &urls);
    let routed = run("rip-route", ["--render", "auto"], &fetched.stdout);
    let mut only_marked = http("auto", true);
    only_marked.push("--only-marked".into());
    let rendered = run("rip-render", only_marked, &routed.stdout);
    let auto_docs = docs(&parse(&rendered.stdout));
    drop(server);

    // The same documents, every item of every page.
    assert_eq!(auto_docs.len(), pages);
    for (url, (name, items, _)) in &all_docs {
        let (auto_name, auto_items, _) = &auto_docs[url];
        assert_eq!((auto_name, auto_items), (name, items), "{url}");
        assert_eq!(
            items.as_array().map(Vec::len),
            Some(ITEMS),
            "{url}: {items}"
        );
    }
    // Exactly the pages that need script opened a tab, each saying why.
    let script_built = |url: &str| url.contains("/app/") || url.contains("/half/");
    assert_eq!(rendered.counter("rendered"), 8, "4 app pages and 4 halves");
    for (url, (_, _, why)) in &auto_docs {
        assert_eq!(why.is_some(), script_built(url), "{url}: {why:?}");
        if let Some(why) = why {
            let signal = if url.contains("/app/") {
                "emptyAppRoot"
            } else {
                "emptyItems"
            };
            assert_eq!(why["signal"], signal, "{url}: {why}");
        }
    }
    let learnt: Vec<_> = auto_docs
        .values()
        .filter_map(|(_, _, why)| why.as_ref()?.get("learnt").cloned())
        .collect();
    assert!(
        learnt.contains(&Value::from(format!("{origin}/app/item-{{n}}.html"))),
        "{learnt:?}"
    );
    // The summary counts them: 16 pages fetched, 8 rendered, the rest kept, and the four
    // patterns learnt after three pages each.
    assert_eq!(fetched.summary().made("page"), pages as u64);
    for (counter, n) in [
        ("autoRendered", 8),
        ("autoKept", 8),
        ("autoChecked", 12),
        ("autoLearnt", 4),
        ("patternsLearnt", 4),
    ] {
        assert_eq!(routed.counter(counter), n, "{counter}: {}", routed.stderr);
    }
}
