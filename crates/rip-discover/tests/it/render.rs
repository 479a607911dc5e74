//! `--render`: links from the DOM after headless Chromium ran the page's scripts, on the
//! script-built demo site (testdata/site-js), whose market links to its products only in
//! the rendered DOM.

use std::time::Duration;

use rip_testkit::{Stage, testdata};
use rip_testserver::{Fault, Rule, TestServer};

use crate::{Crawled, run_with};

fn site_js() -> TestServer {
    TestServer::builder()
        .dir(testdata("site-js"))
        .file(
            "/stall.html",
            "<!doctype html><title>s</title><a href=\"/market/\">Market</a><script src=\"/stall.js\"></script>",
        )
        .file("/stall.js", "document.title = 'late';")
        .rule(Rule::path("/stall.js").always(Fault::serve().stall(Duration::from_secs(60))))
        .start_background()
        .unwrap()
}

fn products(paths: &std::collections::BTreeSet<String>) -> Vec<&String> {
    paths
        .iter()
        .filter(|p| p.starts_with("/market/product.html?id="))
        .collect()
}

#[test]
fn render_follows_the_links_scripts_add_and_a_rip_render_after_replays_them() {
    let server = site_js();
    let dir = tempfile::tempdir().unwrap();
    let start = server.url("/");

    let plain = run_with(&[&start], &dir.path().join("plain"), None);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    assert!(products(&plain.paths()).is_empty(), "{:?}", plain.paths());
    assert_eq!(plain.paths().len(), 4, "{:?}", plain.paths());

    let cache = dir.path().join("cache");
    let rendered = run_with(&[&start, "--render", "--render-tabs", "3"], &cache, None);
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    let paths = rendered.paths();
    assert_eq!(products(&paths).len(), 12, "{paths:?}");
    assert_eq!(paths.len(), 16, "{paths:?}");
    let lantern = rendered
        .refs()
        .into_iter()
        .find(|r| r.url.ends_with("?id=1"))
        .unwrap();
    assert_eq!(lantern.context.link_text.as_deref(), Some("Brass Lantern"));
    assert_eq!(
        lantern.context.parent.as_deref(),
        Some(server.url("/market/").as_str())
    );
    assert_eq!(lantern.context.depth, 2);
    assert_eq!(rendered.counter("renderedPages"), 16);
    assert_eq!(rendered.counter("browserStarts"), 1);
    assert_eq!(
        rendered.expected().len(),
        1,
        "robots.txt keeps the back office out"
    );
    assert_eq!(server.count("/private/ledger.html"), 0);
    assert_eq!(server.count("/api/products.json?from=private"), 0);

    // rip-render after it finds every page rendered in the shared cache.
    let before = server.total();
    let again = Stage::new("rip-render")
        .args(["-q", "--delay", "0ms", "--jitter", "0ms", "--cache-dir"])
        .arg(&cache)
        .stdin(&rendered.stdout)
        .run();
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.counter("renderCacheHits"), 16);
    // Rendered by rip-render's default rule, `settled`, as rip-render renders them.
    for r in again.of("page") {
        let rip_core::Record::Page(p) = r else {
            continue;
        };
        let wait = p.render.as_ref().map(|info| info.wait.as_str());
        assert_eq!(wait, Some("settled"), "{}", p.url);
    }
    assert_eq!(again.counter("browserStarts"), 0);
    assert_eq!(server.total(), before, "nothing asked of the site");
}

#[test]
fn budgets_hold_a_failed_render_falls_back_and_a_changed_flag_is_refused_on_resume() {
    let server = site_js();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let start = server.url("/stall.html");
    let state = dir.path().join("state");
    let state = state.to_str().unwrap();
    let args = [
        start.as_str(),
        "--render",
        "--render-timeout",
        "10s",
        "--max-pages",
        "6",
        "--state",
        state,
    ];
    let r = run_with(&args, &cache, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.refs().len(), 6, "the budget: {:?}", r.paths());
    assert!(r.paths().contains("/market/"), "{:?}", r.paths());
    assert_eq!(r.counter("renderFallbacks"), 1);
    assert_eq!(r.counter("renderTimeouts"), 1);
    let notes = r.summary().notes.join("\n");
    assert!(
        notes.contains("/stall.html: render failed (render.timeout"),
        "{notes}"
    );

    let without = Stage::new("rip-discover")
        .args([start.as_str(), "--max-pages", "6", "--state", state])
        .arg("--cache-dir")
        .arg(&cache)
        .run();
    assert_eq!(without.code, 1, "{}", without.stderr);
    assert!(
        without.stderr.contains("different crawl"),
        "{}",
        without.stderr
    );
}

#[test]
fn render_auto_renders_only_the_pages_whose_content_needs_script() {
    let server = site_js();
    let dir = tempfile::tempdir().unwrap();
    let start = server.url("/");
    // Depth 2: the products' links are not read, so only the index (server-rendered:
    // kept), the market and the two app views (shells: rendered) are judged.
    let args = [start.as_str(), "--render", "auto", "--max-depth", "2"];
    let auto = run_with(&args, &dir.path().join("cache"), None);
    assert_eq!(auto.code, 0, "{}", auto.stderr);
    let paths = auto.paths();
    assert_eq!(
        products(&paths).len(),
        12,
        "read from the rendered market: {paths:?}"
    );
    assert_eq!(paths.len(), 16, "{paths:?}");
    assert_eq!(auto.counter("renderedPages"), 3);
    assert_eq!(auto.counter("autoKept"), 1, "the index needs no script");
    assert_eq!(auto.counter("autoChecked"), 4);
    assert_eq!(auto.counter("browserStarts"), 1);
}

#[test]
fn render_without_a_browser_is_a_clear_fatal_error() {
    let ran = Stage::new("rip-discover")
        .args([
            "http://127.0.0.1:9/",
            "--render",
            "--chromium",
            "/nonexistent/chromium",
        ])
        .run();
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr
            .contains("--render: no browser at /nonexistent/chromium"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_rendering_crawl_archives_what_the_browser_was_given_and_each_dom() {
    let server = site_js();
    let dir = tempfile::tempdir().unwrap();
    let warc = dir.path().join("archive");
    let args = [
        &server.url("/"),
        "--render",
        "--render-tabs",
        "3",
        "--warc",
        warc.to_str().unwrap(),
    ];
    let rendered = run_with(&args, &dir.path().join("cache"), None);
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    assert_eq!(rendered.counter("renderedPages"), 16);
    let files = rip_testkit::files_ending(&warc, ".warc.gz");
    assert_eq!(files.len(), 1, "{files:?}");
    let archived = rip_testkit::checked_records(&files);
    // Each page rendered has its DOM tied to it; the data its scripts asked for was archived
    // as the browser was given it.
    for url in rendered.refs().iter().map(|r| &r.url) {
        let dom = ("resource".to_owned(), format!("urn:dom:{url}"));
        assert_eq!(archived.get(&dom), Some(&1), "{url}: {archived:?}");
        // A page whose body was archived before (the product pages share one) is a revisit.
        let captured = ["response", "revisit"]
            .iter()
            .any(|kind| archived.contains_key(&((*kind).to_owned(), url.clone())));
        assert!(captured, "{url}: {archived:?}");
    }
    let data = archived
        .keys()
        .filter(|(kind, uri)| kind == "response" && uri.contains("/api/products.json"))
        .count();
    assert!(data >= 1, "the market's data: {archived:?}");
}
