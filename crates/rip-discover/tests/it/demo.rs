//! The demo site (testdata/site), against the numbers its README states.

use std::collections::BTreeSet;

use rip_core::{ExpectedSource, Phase, Status};

use crate::*;

/// The 47 pages of crawl A, by depth (testdata/site/README.md).
fn crawl_a() -> Vec<(u32, &'static str)> {
    let mut v = vec![(0, "/")];
    for p in [
        "/about.html",
        "/items/",
        "/ancestries/",
        "/classes/",
        "/spells/",
        "/blog/",
        "/blog/welcome-to-the-compendium.html",
        "/blog/patch-notes-2-1.html",
    ] {
        v.push((1, p));
    }
    let mut two: Vec<String> = (1..=12).map(|i| format!("/items/item-{i}.html")).collect();
    two.extend([12, 15, 23, 31, 44, 58, 63, 77].map(|i| format!("/ancestries/{i}.html")));
    two.extend([3, 5, 7, 9, 12, 14, 20, 26].map(|i| format!("/classes/{i}.html")));
    two.extend([8, 19, 33, 41, 77, 102].map(|i| format!("/spells/{i}.html")));
    two.extend(
        [
            "choosing-an-ancestry",
            "spell-roundup",
            "a-night-at-the-cafe",
            "behind-the-scenes",
        ]
        .map(|p| format!("/blog/{p}.html")),
    );
    for p in two {
        v.push((2, Box::leak(p.into_boxed_str())));
    }
    v
}

/// Not HTML pages but targets too: the logo and the two broken links (rip-fetch records
/// their outcome).
const NON_PAGES: [&str; 3] = [
    "/images/logo.png",
    "/classes/77.html",
    "/items/item-99.html",
];

#[test]
fn crawl_a_reaches_the_47_pages_with_robots_and_without_nofollow() {
    let server = demo_server();
    let r = run(&[&server.url("/")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.status(), Status::Complete);
    let want: BTreeSet<String> = crawl_a().iter().map(|(_, p)| p.to_string()).collect();
    assert_eq!(want.len(), 47);
    let mut pages = r.paths();
    for p in NON_PAGES {
        assert!(pages.remove(p), "{p} is a target too");
    }
    assert_eq!(pages, want);
    // One ref per URL, each with its true BFS depth, parent and link text.
    assert_eq!(r.refs().len(), 50);
    for (d, p) in crawl_a() {
        let rf = r.refs().into_iter().find(|x| path_of(&x.url) == p).unwrap();
        assert_eq!(rf.context.depth, d, "{p}");
        assert_eq!(rf.attempt, 0);
        if d > 0 {
            assert!(rf.context.parent.is_some(), "{p} has a parent");
            assert!(rf.context.link_text.is_some(), "{p} has link text");
        }
    }
    let catfolk = r
        .refs()
        .into_iter()
        .find(|x| path_of(&x.url) == "/classes/77.html")
        .unwrap();
    assert_eq!(catfolk.context.link_text.as_deref(), Some("Catfolk"));
    assert_eq!(
        catfolk.context.parent.as_deref().map(path_of).as_deref(),
        Some("/classes/")
    );

    // The robots-disallowed link is an `expected` record naming the rule, never fetched.
    let exp = r.expected();
    assert_eq!(exp.len(), 1);
    assert_eq!(path_of(&exp[0].url), "/private/secret.html");
    assert_eq!(exp[0].source, Some(ExpectedSource::Robots));
    assert_eq!(exp[0].rule.as_deref(), Some("Disallow: /private/"));
    assert_eq!(exp[0].phase, Some(Phase::Discover));
    assert_eq!(
        exp[0].context.parent.as_deref().map(path_of).as_deref(),
        Some("/blog/behind-the-scenes.html")
    );

    // The server saw 47 pages + the logo + 2 × 404 + robots.txt, each exactly once.
    let log = requests(&server);
    assert_eq!(log.values().sum::<usize>(), 51, "{log:?}");
    assert!(log.values().all(|&n| n == 1), "{log:?}");
    for never in [
        "/private/secret.html",
        "/private/only-linked-here.html",
        "/login.html",
        "/login",
        "/orphan.html",
        "/sitemap.xml",
    ] {
        assert!(!log.contains_key(never), "{never} was requested");
    }
    assert_eq!(r.counter("fetched"), 48);
    assert_eq!(r.counter("failed"), 2);
    assert_eq!(r.counter("targetsFailed"), 2);
    assert_eq!(r.counter("robotsDenied"), 1);
    assert_eq!(r.counter("nofollowSkipped"), 1);
    assert_eq!(r.counter("maxDepth"), 2);
    assert_eq!(r.summary().output.get("ref"), Some(&50));
    assert!(
        !r.summary().output.contains_key("ledger"),
        "discover writes no ledger"
    );
}

#[test]
fn crawls_b_c_d_nofollow_and_sitemap() {
    let server = demo_server();
    let origin = server.url("/");
    let html_pages = |r: &Ran| {
        let mut p = r.paths();
        for x in NON_PAGES {
            p.remove(x);
        }
        p
    };
    let b = run(&[&origin, "--follow-nofollow"]);
    assert_eq!(html_pages(&b).len(), 48);
    assert!(b.paths().contains("/login.html"));
    let c = run(&[&origin, "--sitemaps"]);
    assert_eq!(html_pages(&c).len(), 48);
    assert!(c.paths().contains("/orphan.html"));
    let orphan = c
        .refs()
        .into_iter()
        .find(|x| path_of(&x.url) == "/orphan.html")
        .unwrap();
    assert_eq!(orphan.context.depth, 1);
    assert_eq!(
        orphan.context.parent.as_deref().map(path_of).as_deref(),
        Some("/sitemap.xml")
    );
    assert_eq!(c.counter("sitemaps"), 1);
    assert_eq!(c.counter("sitemapUrls"), 12);
    let d = run(&[&origin, "--sitemaps", "--follow-nofollow"]);
    assert_eq!(html_pages(&d).len(), 49);
    for r in [&b, &c, &d] {
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(!r.paths().iter().any(|p| p.starts_with("/private/")));
    }
}

#[test]
fn max_depth_one_fetches_nine_pages_and_the_logo() {
    let server = demo_server();
    let r = run(&[&server.url("/"), "--max-depth", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want: BTreeSet<String> = crawl_a()
        .iter()
        .filter(|(d, _)| *d <= 1)
        .map(|(_, p)| p.to_string())
        .chain(["/images/logo.png".to_owned()])
        .collect();
    assert_eq!(r.paths(), want);
    let mut fetched: BTreeSet<String> = requests(&server).into_keys().collect();
    assert!(fetched.remove("/robots.txt"));
    assert_eq!(fetched, want, "nothing deeper was fetched");
}

#[test]
fn normalisation_collapses_every_spelling_of_a_page() {
    let server = demo_server();
    let r = run(&[&server.url("/")]);
    let urls: Vec<&str> = r.refs().iter().map(|x| x.url.as_str()).collect();
    let unique: BTreeSet<&str> = urls.iter().copied().collect();
    assert_eq!(urls.len(), unique.len(), "one ref per URL");
    for u in &urls {
        assert!(
            !u.contains('#') && !u.contains("utm_") && !u.contains("/./"),
            "{u}"
        );
        assert!(!u.contains("/../") && !u.ends_with('?'), "{u}");
    }
    let log = requests(&server);
    // `/items/item-6.html?utm_source=…` is the same page: fetched once, without the query.
    assert_eq!(log.get("/items/item-6.html"), Some(&1));
    assert!(log.keys().all(|k| !k.contains('?')), "{log:?}");
    // <base href="/spells/"> on /blog/spell-roundup.html: no /blog/19.html and friends.
    assert!(
        log.keys()
            .all(|k| !k.starts_with("/blog/") || !k[6..].starts_with(char::is_numeric))
    );
    assert!(!log.contains_key("/items/index.html"));
}

#[test]
fn row_context_travels_in_raw() {
    let server = demo_server();
    let r = run(&[
        &server.url("/"),
        "--row",
        "table.items tbody tr",
        "--field",
        "price=td.price",
        "--field",
        "rarity=td.rarity",
        "--context-pages",
        "/items/$",
    ]);
    let item1 = r
        .refs()
        .into_iter()
        .find(|x| path_of(&x.url) == "/items/item-1.html")
        .unwrap()
        .clone();
    assert_eq!(item1.context.raw["rowText"], "Longsword 0 1 gp 4 lb Common");
    assert_eq!(item1.context.raw["price"], "1 gp");
    assert_eq!(item1.context.raw["rarity"], "Common");
    assert_eq!(item1.context.link_text.as_deref(), Some("Longsword"));
    let with_raw = r
        .refs()
        .iter()
        .filter(|x| !x.context.raw.is_empty())
        .count();
    assert_eq!(with_raw, 12, "the 12 item rows, nothing else");
}

#[test]
fn sorted_output_is_deduplicated_and_numeric_aware() {
    let server = demo_server();
    let r = run(&[&server.url("/"), "--sorted"]);
    let urls: Vec<String> = r.refs().iter().map(|x| path_of(&x.url)).collect();
    let mut want = urls.clone();
    want.sort_by(|a, b| rip_url::natural_cmp(a, b));
    want.dedup();
    assert_eq!(urls, want);
    let pos = |p: &str| urls.iter().position(|u| u == p).unwrap();
    assert!(pos("/items/item-9.html") < pos("/items/item-10.html"));
    assert!(pos("/items/item-2.html") < pos("/items/item-10.html"));
    assert!(pos("/spells/8.html") < pos("/spells/19.html"));
    assert!(pos("/spells/33.html") < pos("/spells/102.html"));
    assert_eq!(urls.len(), 50);
    // Refs come last, after the expected record, just before the summary.
    assert!(matches!(r.records().last(), Some(rip_core::Record::Ref(_))));
}

/// `rip-discover | rip-fetch`: the fetch stage finds every page in the shared cache, so
/// the server sees each good URL once in the whole pipeline.
#[test]
fn discover_then_fetch_fetches_each_page_once() {
    let server = demo_server();
    let dir = tempfile::tempdir().unwrap();
    let script = format!(
        "rip-discover -q --delay 0 --jitter 0 '{}' | rip-fetch -q --delay 0 --jitter 0 > out.ndjson; \
         echo ${{PIPESTATUS[@]}}",
        server.url("/")
    );
    let out = rip_testkit::run_shell(&script, Some(dir.path()));
    let codes = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        codes.trim(),
        "0 2",
        "discover ok, fetch partial (two 404s): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.path().join("out.ndjson")).unwrap();
    let (records, fetch) = record(&text);
    let pages = records
        .iter()
        .filter(|r| matches!(r, rip_core::Record::Page(_)))
        .count();
    assert_eq!(pages, 48);
    // 48 pages and robots.txt from the cache: rip-fetch sent no request for them.
    assert_eq!(fetch.counters.get("cacheHits"), Some(&49));
    let log = requests(&server);
    for (path, n) in &log {
        let want = if NON_PAGES[1..].contains(&path.as_str()) {
            2
        } else {
            1
        };
        assert_eq!(*n, want, "{path} requested {n} times");
    }
}
