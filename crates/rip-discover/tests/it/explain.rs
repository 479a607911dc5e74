//! `--explain URL…`: a dry run of the scope against a local server's robots.txt: each rule
//! refuses once, and no page is fetched (robots.txt only, for the URLs in scope).

use rip_testkit::Stage;
use rip_testserver::TestServer;
use serde_json::Value;

fn explain(args: &[&str], cache: &std::path::Path) -> (Vec<Value>, rip_testkit::Ran) {
    let ran = Stage::new("rip-discover")
        .args(["--delay", "0", "--jitter", "0", "-q", "--cache-dir"])
        .arg(cache)
        .args(args)
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let lines = ran
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (lines, ran)
}

#[test]
fn each_rule_refuses_once_and_no_page_is_fetched() {
    let server = TestServer::builder()
        .file("/robots.txt", "User-agent: *\nDisallow: /shop/private/\n")
        .file("/shop/items/1", "<a href=/x>x</a>")
        .start_background()
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let u = |p: &str| server.url(p);
    let (target, listing, private) = (
        u("/shop/items/1?sid=9&utm_source=feed#top"),
        u("/shop/list/2"),
        u("/shop/private/3"),
    );
    let (about, elsewhere) = (u("/about"), "http://elsewhere.test/shop/items/2".to_owned());
    let args = [
        &u("/"),
        "--domain",
        "^http://127\\.0\\.0\\.1:",
        "--follow",
        "/shop/",
        "--target",
        "/items/\\d+$",
        "--drop-param",
        "sid",
        "--explain",
        &target,
        &listing,
        &private,
        &about,
        &elsewhere,
        "ftp://127.0.0.1/file",
    ];
    let (lines, _) = explain(&args, cache.path());
    let verdicts: Vec<&str> = lines
        .iter()
        .map(|l| l["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        [
            "target",
            "traverse",
            "robotsDisallowed",
            "notFollowed",
            "outOfDomain",
            "invalid"
        ],
        "{lines:#?}"
    );
    // Canonicalisation: the fragment and the dropped parameters, each with its pattern.
    assert_eq!(lines[0]["canonical"], u("/shop/items/1"));
    assert_eq!(
        lines[0]["droppedParams"],
        serde_json::json!(["sid (by sid)", "utm_source (by utm_*)"])
    );
    assert_eq!(lines[0]["robots"]["status"], "allowed");
    // Each refusal names its rule.
    assert_eq!(lines[1]["target"]["accepts"], false);
    assert_eq!(lines[1]["target"]["rule"], "/items/\\d+$");
    assert_eq!(lines[2]["robots"]["detail"], "Disallow: /shop/private/");
    assert_eq!(lines[3]["follow"]["accepts"], false);
    assert_eq!(lines[3]["follow"]["rule"], "/shop/");
    assert_eq!(lines[4]["domain"]["accepts"], false);
    assert_eq!(lines[4]["robots"]["status"], "notAsked");
    assert!(
        lines[5]["invalid"]
            .as_str()
            .unwrap()
            .contains("not an http(s) URL")
    );
    // Only robots.txt was asked for, once.
    let paths: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/robots.txt"]);
}

#[test]
fn without_robots_nothing_is_fetched_and_the_readable_form_says_each_step() {
    let server = TestServer::builder()
        .file("/robots.txt", "User-agent: *\nDisallow: /\n")
        .start_background()
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let page = server.url("/items/1?utm_medium=x");
    let start = server.url("/");
    let args = [
        start.as_str(),
        "--ignore-robots",
        "--target",
        "/items/",
        "--explain-text",
        "--explain",
        &page,
    ];
    let ran = Stage::new("rip-discover")
        .args(["-q", "--cache-dir"])
        .arg(cache.path())
        .args(args)
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let want = format!(
        "{page}\n  canonical: {}\n  dropped parameter: utm_medium (by utm_*)\n  domain accepts: \
         the start URLs' origins (127.0.0.1:{})\n  follow accepts: *\n  target accepts: \
         /items/\n  robots.txt: off\n  => fetched and written as a ref (a target)\n",
        server.url("/items/1"),
        server.addr().port()
    );
    assert_eq!(ran.stdout, want);
    assert!(server.requests().is_empty());
}

/// `rip-discover --explain URL…` without start URLs or `--domain` (the issue's own command)
/// has no domain to judge by: every URL would be "out of the domain". It says so and stops.
#[test]
fn without_start_urls_or_a_domain_it_says_what_is_missing() {
    let cache = tempfile::tempdir().unwrap();
    let ran = Stage::new("rip-discover")
        .args(["-q", "--cache-dir"])
        .arg(cache.path())
        .args(["--explain", "http://127.0.0.1:9/a.html"])
        .run();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert_eq!(ran.stdout, "", "nothing explained");
    assert!(ran.stderr.contains("no start URLs"), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("rip-discover URL… --explain URL…"),
        "{}",
        ran.stderr
    );
}
