//! Hostile and odd pages: each becomes a doc or a failure (never a panic, never lost),
//! and the records around it are processed.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::*;

fn one(args: &[&str], page: Value) -> (Value, Ran) {
    let r = run(args, &ndjson(&[page]));
    let out = r.values();
    assert_eq!(out.len(), 1, "{}\n{}", r.stdout, r.stderr);
    (out.into_iter().next().unwrap(), r)
}

fn assert_failure(v: &Value, code: &str, category: &str) {
    assert_eq!(v["_type"], "failure", "{v}");
    assert_eq!(v["phase"], "parse", "{v}");
    assert_eq!(v["category"], category, "{v}");
    assert_eq!(v["retryable"], false, "{v}");
    let last = v["errors"].as_array().unwrap().last().unwrap();
    assert_eq!(
        (last["code"].as_str(), last["operation"].as_str()),
        (Some(code), Some("rip-parse")),
        "{v}"
    );
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[test]
fn deep_nesting_is_a_failure() {
    let body = format!("<html><body>{}deep", "<div>".repeat(5000));
    let (v, r) = one(
        &[],
        page("http://h/deep", "text/html", body.as_bytes(), false),
    );
    assert_failure(&v, "parse.html", "VALIDATION");
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("nested deeper than 1024"),
        "{v}"
    );
    assert_eq!(r.code, 2, "a failure makes the run partial");
}

#[test]
fn html_that_is_too_slow_to_parse_is_a_failure() {
    // 100,000 nested elements: html5ever's work grows with depth squared.
    let body = "<div>".repeat(100_000);
    let (v, _) = one(
        &["--parse-timeout", "100ms"],
        page("http://h/slow", "text/html", body.as_bytes(), false),
    );
    assert_failure(&v, "parse.html", "VALIDATION");
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("longer than 100ms"),
        "{v}"
    );
    // Very many attributes on one element: the same.
    let attrs: String = (0..80_000).map(|i| format!(" a{i}=1")).collect();
    let body = format!("<p{attrs}>x");
    let (v, _) = one(
        &["--parse-timeout", "100ms"],
        page("http://h/attrs", "text/html", body.as_bytes(), false),
    );
    assert_failure(&v, "parse.html", "VALIDATION");
}

#[test]
fn a_huge_attribute_is_parsed() {
    let body = format!(
        "<title>T</title><p title=\"{}\">x</p><a href=\"/a\">a</a>",
        "x".repeat(8 << 20)
    );
    let (v, r) = one(
        &[],
        page("http://h/big", "text/html", body.as_bytes(), false),
    );
    assert_eq!(
        (v["_type"].as_str(), v["name"].as_str()),
        (Some("doc"), Some("T")),
        "{}",
        r.stderr
    );
    assert_eq!(v["links"][0]["href"], "http://h/a");
}

#[test]
fn bodies_over_the_size_limit_are_resource_failures() {
    let body = "<p>x</p>".repeat(200_000); // 1.6 MB
    let (v, _) = one(
        &["--max-body", "1MiB"],
        page("http://h/big", "text/html", body.as_bytes(), false),
    );
    assert_failure(&v, "parse.body", "RESOURCE");
}

#[test]
fn invalid_utf8_in_a_base64_body_becomes_replacement_characters() {
    let (v, _) = one(
        &[],
        page(
            "http://h/bad",
            "text/html",
            b"<title>caf\xe9 \xff\xfe</title>",
            true,
        ),
    );
    assert_eq!(v["_type"], "doc");
    assert_eq!(v["name"], "caf\u{fffd} \u{fffd}\u{fffd}");
}

#[test]
fn invalid_utf8_on_an_input_line_is_a_bad_line_and_the_rest_goes_on() {
    let mut input = ndjson(&[page(
        "http://h/1",
        "text/html",
        b"<title>one</title>",
        false,
    )]);
    input.extend_from_slice(b"{\"_type\":\"page\",\"url\":\"http://h/\xff\"}\n");
    input.extend(ndjson(&[page(
        "http://h/3",
        "text/html",
        b"<title>three</title>",
        false,
    )]));
    let r = run(&[], &input);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("-:2: invalid UTF-8"), "{}", r.stderr);
    let (records, summary) = (r.records(), r.summary());
    assert_eq!(records.len(), 2);
    assert_eq!(summary.bad_lines, 1);
}

#[test]
fn binary_and_undecodable_html_bodies_are_failures() {
    let mut p = page("http://h/bin", "text/html", b"", false);
    p["body"] = json!(b64(b"<html>\0\0\0\x01\x02"));
    p["bodyEncoding"] = json!("base64");
    let (v, _) = one(&[], p);
    assert_failure(&v, "parse.body", "VALIDATION");

    let mut p = page("http://h/b64", "text/html", b"", false);
    p["body"] = json!("@@@ not base64 @@@");
    p["bodyEncoding"] = json!("base64");
    let (v, _) = one(&[], p);
    assert_failure(&v, "parse.body", "VALIDATION");
}

/// A PDF, JSON, plain text without a type, and a wiki page (which is not "other").
fn not_html_pages() -> Vec<u8> {
    let pdf = page(
        "http://h/a.pdf",
        "application/pdf",
        b"%PDF-1.7\n\x00\x01binary",
        true,
    );
    let json_page = page(
        "http://h/a.json",
        "application/json; charset=utf-8",
        b"{\"a\":1}",
        false,
    );
    let mut untyped = page("http://h/notes", "", b"just words", false);
    untyped.as_object_mut().unwrap().remove("contentType");
    let wiki = page("http://h/wiki/A", "text/x-wiki", b"A is a [[page]].", false);
    ndjson(&[pdf, json_page, untyped, wiki])
}

#[test]
fn pages_that_are_not_html_are_validation_failures_naming_type_and_size() {
    let rules = testdata("parse/rules/emberfall-by-url.toml");
    for args in [vec![], vec!["--rules", rules.to_str().unwrap()]] {
        let r = run(&args, &not_html_pages());
        assert_eq!(r.code, 2, "partial: {}", r.stderr);
        let out = r.values();
        assert_eq!(out.len(), 4, "{}", r.stdout);
        for (v, what) in out.iter().zip([
            "application/pdf (17 bytes)",
            "application/json (7 bytes)",
            "unknown (10 bytes)",
        ]) {
            assert_failure(v, "parse.notHtml", "VALIDATION");
            let m = v["errors"][0]["message"].as_str().unwrap();
            assert!(m.contains(&format!("the page is {what}, not HTML")), "{m}");
        }
        assert_eq!(
            out[3]["_type"], "doc",
            "wikitext is not `other`: {}",
            out[3]
        );
        assert!(r.stderr.contains("3 failures"), "{}", r.stderr);
    }
}

#[test]
fn keep_other_makes_pages_that_are_not_html_unknown_docs() {
    let rules = testdata("parse/rules/emberfall-by-url.toml");
    let r = run(
        &["--keep-other", "--rules", rules.to_str().unwrap()],
        &not_html_pages(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = r.values();
    assert_eq!(out.len(), 4);
    for v in &out[..3] {
        assert_eq!(
            (v["_type"].as_str(), v["concept"].as_str()),
            (Some("doc"), Some("unknown")),
            "{v}"
        );
    }
    let typed: Vec<(Option<&str>, Option<u64>)> = out[..3]
        .iter()
        .map(|v| (v["contentType"].as_str(), v["bytes"].as_u64()))
        .collect();
    assert_eq!(
        typed,
        [
            (Some("application/pdf"), Some(17)),
            (Some("application/json"), Some(7)),
            (Some("unknown"), Some(10)),
        ]
    );
}

#[test]
fn a_page_record_missing_fields_is_accounted_for_by_its_url() {
    let input = concat!(
        r#"{"_type":"page","url":"http://h/broken","status":"two hundred"}"#,
        "\n",
        r#"{"_type":"page","no":"url"}"#,
        "\n"
    );
    let r = run(&[], input.as_bytes());
    assert_eq!(r.code, 2);
    let (records, summary) = (r.records(), r.summary());
    assert_eq!(records.len(), 1, "the page with a URL becomes a failure");
    let v = serde_json::to_value(&records[0]).unwrap();
    assert_failure(&v, "parse.record", "VALIDATION");
    assert_eq!(v["url"], "http://h/broken");
    assert_eq!(summary.bad_lines, 1, "the one without a URL is a bad line");
    assert!(r.stderr.contains("-:2: bad `page` record"), "{}", r.stderr);
}

/// The body is read from its line in one pass (`record.rs`): escapes as JSON has them,
/// and the lines it cannot read fail as they did, each in its place.
#[test]
fn page_records_read_in_one_pass_keep_their_failures_and_order() {
    let good = |url: &str, body: &str| {
        let mut p = page(url, "text/html", b"", false);
        p["body"] = json!(body);
        serde_json::to_string(&p).unwrap()
    };
    let head = r#""_type":"page","url":"http://h/X","finalUrl":"http://h/X","status":200,"fetchedAt":"2026-12-01T09:00:00Z""#;
    let input = [
        good("http://h/1", "<title>One</title><p>a \"q\" \\ b\tc\u{1}"),
        format!(r#"{{{},"body":"<p>\ud800 lone"}}"#, head.replace('X', "2")),
        format!(
            r#"{{{},"body":"<p>a","body":"<p>b"}}"#,
            head.replace('X', "3")
        ),
        r#"{"_type":"page","body":"<p>no url"}"#.to_owned(),
        format!(
            r#"{{{},"body":"<title>\u00e9\ud83d\ude00\/</title>"}}"#,
            head.replace('X', "5")
        ),
    ]
    .join("\n");
    let r = run(&[], input.as_bytes());
    assert_eq!(r.code, 2, "{}", r.stderr);
    let out = r.values();
    let urls: Vec<_> = out.iter().map(|v| v["url"].as_str().unwrap()).collect();
    assert_eq!(
        urls,
        ["http://h/1", "http://h/2", "http://h/3", "http://h/5"]
    );
    assert_eq!(out[0]["name"], "One");
    assert_eq!(out[0]["text"], "a \"q\" \\ b c\u{1}");
    for (v, why) in [(&out[1], "hex escape"), (&out[2], "duplicate field `body`")] {
        assert_failure(v, "parse.record", "VALIDATION");
        let message = v["errors"][0]["message"].as_str().unwrap();
        assert!(message.contains(why), "{message}");
    }
    assert_eq!(out[3]["name"], "\u{e9}\u{1f600}/");
    assert_eq!(r.summary().bad_lines, 1);
    assert!(r.stderr.contains("-:4: bad `page` record"), "{}", r.stderr);
}

#[test]
fn a_page_with_no_valid_url_is_a_failure() {
    let mut p = page("not a url", "text/html", b"<p>x", false);
    p["finalUrl"] = json!("also not");
    let (v, _) = one(&[], p);
    assert_failure(&v, "parse.url", "VALIDATION");
    assert_eq!(v["url"], "not a url", "the identity is kept byte for byte");
}

#[test]
fn empty_and_garbage_html_still_give_docs() {
    let pages = [
        page("http://h/empty", "text/html", b"", false),
        page(
            "http://h/junk",
            "text/html",
            b"<<<>>><a href=\"\x0b\">\xe2\x80\x8b</a></html></html><p",
            false,
        ),
        page(
            "http://h/table",
            "text/html",
            "<table><td><table><td><p><b><i><a>x".repeat(20).as_bytes(),
            false,
        ),
    ];
    let r = run(&["--markdown"], &ndjson(&pages));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = r.values();
    assert!(
        out.iter()
            .all(|v| v["_type"] == "doc" && v["concept"] == "page"),
        "{out:?}"
    );
}

/// The guide's `rip-route` rule for sites whose non-HTML pages are known gaps
/// (docs/guide/rip-parse.md), run as written: `rip-parse | rip-route --policy` makes the PNG
/// an `expected` record.
#[test]
fn the_guides_policy_rule_makes_pages_that_are_not_html_expected() {
    let guide = std::fs::read_to_string(repo().join("docs/guide/rip-parse.md")).unwrap();
    let block = guide
        .split("```toml")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.contains("code = \"parse.notHtml\""))
        .expect("docs/guide/rip-parse.md shows a policy rule for parse.notHtml");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("policy.toml"), block).unwrap();
    let input = ndjson(&[site_page("images/logo.png"), site_page("about.html")]);
    std::fs::write(dir.path().join("pages.ndjson"), input).unwrap();
    let script = format!(
        "'{}' < pages.ndjson | '{}' --policy policy.toml",
        rip_testkit::bin("rip-parse").display(),
        rip_testkit::bin("rip-route").display()
    );
    let o = rip_testkit::run_shell(&script, Some(dir.path()));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &Value| v["_type"] != "summary")
        .collect();
    let kinds: Vec<(&str, &str)> = out
        .iter()
        .map(|v| (v["_type"].as_str().unwrap(), v["url"].as_str().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("expected", format!("{ORIGIN}/images/logo.png").as_str()),
            ("doc", format!("{ORIGIN}/about.html").as_str()),
        ],
        "{stdout}"
    );
    assert_eq!(
        out[0]["reason"], "not HTML: images and downloads are not scraped",
        "{}",
        out[0]
    );
}
