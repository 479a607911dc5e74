//! robots.txt parsing and matching, with the expectations of Google's robots.txt parser
//! tests (robots_test.cc) rewritten as our own cases: the facts carry over, the code is ours.

use rip_http::robots::{Robots, RobotsRules, Verdict};

fn allowed(txt: &str, agent: &str, url: &str) -> bool {
    let u = url::Url::parse(url).unwrap();
    let robots = Robots::parse(txt.as_bytes(), agent);
    matches!(
        robots.check(&rip_http::robots::robots_target(&u)),
        Verdict::Allowed
    )
}

const URL: &str = "http://foo.bar/x/y";

#[test]
fn line_syntax() {
    let correct = "user-agent: FooBot\ndisallow: /\n";
    let incorrect = "foo: FooBot\nbar: /\n";
    let no_colon = "user-agent FooBot\ndisallow /\n";
    assert!(!allowed(correct, "FooBot", URL));
    assert!(allowed(incorrect, "FooBot", URL));
    assert!(!allowed(no_colon, "FooBot", URL));
}

#[test]
fn groups() {
    let txt = "allow: /foo/bar/\n\n\
               user-agent: FooBot\ndisallow: /\nallow: /x/\n\
               user-agent: BarBot\ndisallow: /\nallow: /y/\n\n\n\
               allow: /w/\n\
               user-agent: BazBot\n\
               user-agent: FooBot\nallow: /z/\ndisallow: /\n";
    let (w, x, y, z, foo) = (
        "http://foo.bar/w/a",
        "http://foo.bar/x/b",
        "http://foo.bar/y/c",
        "http://foo.bar/z/d",
        "http://foo.bar/foo/bar/",
    );
    assert!(allowed(txt, "FooBot", x));
    assert!(allowed(txt, "FooBot", z));
    assert!(!allowed(txt, "FooBot", y));
    assert!(allowed(txt, "BarBot", y));
    assert!(allowed(txt, "BarBot", w));
    assert!(!allowed(txt, "BarBot", z));
    assert!(allowed(txt, "BazBot", z));
    // Rules before any user-agent line belong to no group.
    assert!(!allowed(txt, "FooBot", foo));
    assert!(!allowed(txt, "BarBot", foo));
    assert!(!allowed(txt, "BazBot", foo));
}

#[test]
fn other_lines_do_not_end_a_group() {
    let sitemap =
        "User-agent: BarBot\nSitemap: https://foo.bar/sitemap\nUser-agent: *\nDisallow: /\n";
    let unknown = "User-agent: FooBot\nInvalid-Unknown-Line: unknown\nUser-agent: *\nDisallow: /\n";
    assert!(!allowed(sitemap, "FooBot", URL));
    assert!(!allowed(sitemap, "BarBot", URL));
    assert!(!allowed(unknown, "FooBot", URL));
    assert!(!allowed(unknown, "BarBot", URL));
}

#[test]
fn line_names_are_case_insensitive() {
    for txt in [
        "USER-AGENT: FooBot\nALLOW: /x/\nDISALLOW: /\n",
        "user-agent: FooBot\nallow: /x/\ndisallow: /\n",
        "uSeR-aGeNt: FooBot\nAlLoW: /x/\ndIsAlLoW: /\n",
    ] {
        assert!(allowed(txt, "FooBot", "http://foo.bar/x/y"), "{txt}");
        assert!(!allowed(txt, "FooBot", "http://foo.bar/a/b"), "{txt}");
    }
}

#[test]
fn user_agent_values_are_case_insensitive_and_cut_at_a_space() {
    for txt in [
        "User-Agent: FOO BAR\nAllow: /x/\nDisallow: /\n",
        "User-Agent: foo bar\nAllow: /x/\nDisallow: /\n",
        "User-Agent: FoO bAr\nAllow: /x/\nDisallow: /\n",
    ] {
        assert!(allowed(txt, "Foo", "http://foo.bar/x/y"), "{txt}");
        assert!(!allowed(txt, "Foo", "http://foo.bar/a/b"), "{txt}");
        assert!(allowed(txt, "foo", "http://foo.bar/x/y"), "{txt}");
        assert!(!allowed(txt, "foo", "http://foo.bar/a/b"), "{txt}");
    }
    // Google: the value is read up to the first space, so "Foo Bar" is agent "Foo".
    let txt = "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n";
    assert!(allowed(txt, "Foo", "http://foo.bar/x/y"));
    assert!(!allowed(txt, "Foo", "http://foo.bar/a/b"));
}

#[test]
fn global_group_is_the_fallback() {
    let empty = "";
    let global = "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n";
    let only_specific = "user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n";
    assert!(allowed(empty, "FooBot", URL));
    assert!(!allowed(global, "FooBot", URL));
    assert!(allowed(global, "BarBot", URL));
    assert!(allowed(only_specific, "QuxBot", URL));
}

#[test]
fn paths_are_case_sensitive() {
    let upper = "user-agent: FooBot\ndisallow: /X/\n";
    let lower = "user-agent: FooBot\ndisallow: /x/\n";
    assert!(!allowed(lower, "FooBot", URL));
    assert!(allowed(upper, "FooBot", URL));
}

#[test]
fn longest_match_wins_and_allow_wins_ties() {
    let url = "http://foo.bar/x/page.html";
    let t1 = "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n";
    assert!(allowed(t1, "FooBot", url));
    let t2 = "user-agent: FooBot\nallow: /x/page.html\ndisallow: /x/\n";
    assert!(allowed(t2, "FooBot", url));
    assert!(!allowed(t2, "FooBot", "http://foo.bar/x/"));
    let t3 = "user-agent: FooBot\ndisallow: \nallow: \n";
    assert!(allowed(t3, "FooBot", url));
    let t4 = "user-agent: FooBot\ndisallow: /\nallow: /\n";
    assert!(allowed(t4, "FooBot", url));
    let t5 = "user-agent: FooBot\ndisallow: /x\nallow: /x/\n";
    assert!(!allowed(t5, "FooBot", "http://foo.bar/x"));
    assert!(allowed(t5, "FooBot", "http://foo.bar/x/"));
    let t6 = "user-agent: FooBot\ndisallow: /x/page.html\nallow: /x/page.html\n";
    assert!(allowed(t6, "FooBot", url));
    let t7 = "user-agent: FooBot\nallow: /page\ndisallow: /*.html\n";
    assert!(!allowed(t7, "FooBot", "http://foo.bar/page.html"));
    assert!(allowed(t7, "FooBot", "http://foo.bar/page"));
    let t8 = "user-agent: FooBot\nallow: /x/page.\ndisallow: /*.html\n";
    assert!(allowed(t8, "FooBot", url));
    assert!(!allowed(t8, "FooBot", "http://foo.bar/x/y.html"));
    let t9 = "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n";
    assert!(allowed(t9, "FooBot", "http://foo.bar/x/page"));
    assert!(!allowed(t9, "FooBot", "http://foo.bar/y/page"));
}

#[test]
fn percent_encoding() {
    let t1 =
        "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n";
    assert!(allowed(
        t1,
        "FooBot",
        "http://foo.bar/foo/bar?qux=taz&baz=http://foo.bar?tar&par"
    ));
    let t2 = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n";
    assert!(allowed(t2, "FooBot", "http://foo.bar/foo/bar/%E3%83%84"));
    assert!(allowed(t2, "FooBot", "http://foo.bar/foo/bar/ツ"));
    let t3 = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n";
    assert!(allowed(t3, "FooBot", "http://foo.bar/foo/bar/%E3%83%84"));
    let t4 = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n";
    assert!(!allowed(t4, "FooBot", "http://foo.bar/foo/bar/baz"));
    assert!(allowed(t4, "FooBot", "http://foo.bar/foo/bar/%62%61%7A"));
    let t5 = "User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%e3%83%84\n";
    assert!(allowed(t5, "FooBot", "http://foo.bar/foo/bar/%E3%83%84"));
}

#[test]
fn special_characters() {
    let t1 = "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n";
    assert!(!allowed(t1, "FooBot", "http://foo.bar/foo/bar/quz"));
    assert!(allowed(t1, "FooBot", "http://foo.bar/foo/quz"));
    assert!(allowed(t1, "FooBot", "http://foo.bar/foo//quz"));
    assert!(allowed(t1, "FooBot", "http://foo.bar/foo/bax/quz"));
    let t2 = "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n";
    assert!(!allowed(t2, "FooBot", "http://foo.bar/foo/bar"));
    assert!(allowed(t2, "FooBot", "http://foo.bar/foo/bar/qux"));
    assert!(allowed(t2, "FooBot", "http://foo.bar/foo/bar/"));
    assert!(allowed(t2, "FooBot", "http://foo.bar/foo/bar/baz"));
    let t3 = "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n";
    assert!(allowed(t3, "FooBot", "http://foo.bar/foo/bar"));
    assert!(!allowed(t3, "FooBot", "http://foo.bar/foo/quz"));
}

#[test]
fn index_html_allows_the_directory() {
    let txt = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n";
    assert!(allowed(txt, "foobot", "http://foo.com/allowed-slash/"));
    assert!(!allowed(
        txt,
        "foobot",
        "http://foo.com/allowed-slash/index.htm"
    ));
    assert!(allowed(
        txt,
        "foobot",
        "http://foo.com/allowed-slash/index.html"
    ));
    assert!(!allowed(txt, "foobot", "http://foo.com/anyother-url"));
}

#[test]
fn long_lines_are_cut() {
    let max = 2083 * 8;
    let mut long = String::from("/x/");
    while long.len() < max + 10 {
        long.push('a');
    }
    let txt = format!("user-agent: FooBot\ndisallow: {long}/qux\n");
    // The rule is cut before `/qux`, so its prefix matches a URL with the long path.
    let url = format!("http://foo.bar{long}/fux");
    assert!(!allowed(&txt, "FooBot", &url));
}

#[test]
fn writing_mistakes_google_accepts() {
    let txt = "user-agent: FooBot\ndisalow: /a/\ndissallow: /b/\nuseragent: BarBot\ndisallow: /\n";
    assert!(!allowed(txt, "FooBot", "http://foo.bar/a/x"));
    assert!(!allowed(txt, "FooBot", "http://foo.bar/b/x"));
    assert!(!allowed(txt, "BarBot", "http://foo.bar/c"));
    let spaced = "user agent: FooBot\ndisallow: /\n";
    assert!(!allowed(spaced, "FooBot", URL));
}

#[test]
fn byte_order_mark_and_line_endings() {
    let bom = "\u{feff}User-Agent: foo\nAllow: /AnyValue\n";
    let robots = Robots::parse(bom.as_bytes(), "foo");
    assert_eq!(robots.check("/AnyValue"), Verdict::Allowed);
    let bom_disallow = "\u{feff}user-agent: FooBot\ndisallow: /\n";
    assert!(!allowed(bom_disallow, "FooBot", URL));
    for txt in [
        "User-Agent: foo\rDisallow: /x\rAllow: /\r",
        "User-Agent: foo\r\nDisallow: /x\r\nAllow: /\r\n",
        "User-Agent: foo\nDisallow: /x\nAllow: /\n",
        "User-Agent: foo\nDisallow: /x\r\nAllow: /\r",
    ] {
        assert!(!allowed(txt, "foo", "http://foo.bar/x/1"), "{txt:?}");
        assert!(allowed(txt, "foo", "http://foo.bar/y"), "{txt:?}");
    }
}

#[test]
fn same_agent_groups_merge() {
    let txt = "User-agent: FooBot\nDisallow: /a\nUser-agent: BarBot\nDisallow: /b\nUser-agent: FooBot\nDisallow: /c\n";
    assert!(!allowed(txt, "FooBot", "http://foo.bar/a"));
    assert!(!allowed(txt, "FooBot", "http://foo.bar/c"));
    assert!(allowed(txt, "FooBot", "http://foo.bar/b"));
}

#[test]
fn empty_path_and_query() {
    let txt = "user-agent: FooBot\ndisallow: /*?\n";
    assert!(allowed(txt, "FooBot", "http://foo.bar"));
    assert!(!allowed(txt, "FooBot", "http://foo.bar/?q=1"));
    let root = "user-agent: FooBot\ndisallow: /$\n";
    assert!(!allowed(root, "FooBot", "http://foo.bar"));
    assert!(allowed(root, "FooBot", "http://foo.bar/x"));
}

#[test]
fn verdict_names_the_rule_and_crawl_delay_and_sitemaps_are_read() {
    let txt = "Sitemap: http://foo.bar/s.xml\nUser-agent: ripperoni\nCrawl-delay: 2.5\nDisallow: /private/\n\nUser-agent: *\nCrawl-delay: 9\n";
    let r = Robots::parse(txt.as_bytes(), "ripperoni");
    assert_eq!(
        r.check("/private/secret.html"),
        Verdict::Disallowed {
            rule: "Disallow: /private/".into()
        }
    );
    assert_eq!(
        r.crawl_delay(),
        Some(std::time::Duration::from_millis(2500))
    );
    assert_eq!(r.sitemaps(), ["http://foo.bar/s.xml"]);
    let other = Robots::parse(txt.as_bytes(), "otherbot");
    assert_eq!(other.crawl_delay(), Some(std::time::Duration::from_secs(9)));
    assert_eq!(other.check("/private/x"), Verdict::Allowed);
}
