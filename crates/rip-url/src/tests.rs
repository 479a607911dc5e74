use super::*;
use proptest::prelude::*;

fn canon(base: &str, href: &str) -> String {
    let base = Url::parse(base).unwrap();
    Canonicalizer::default()
        .resolve(&base, href)
        .unwrap()
        .to_string()
}

/// The normalisation cases of testdata/site/README.md, and the usual suspects.
#[test]
fn demo_site_normalisation_cases() {
    let page = "http://127.0.0.1:8080/blog/welcome-to-the-compendium.html";
    let cases = [
        (
            "/items/item-1.html#description",
            "http://127.0.0.1:8080/items/item-1.html",
        ),
        (
            "/items/../items/item-3.html",
            "http://127.0.0.1:8080/items/item-3.html",
        ),
        (
            "/items/item-6.html?utm_source=blog&utm_medium=post&utm_campaign=launch",
            "http://127.0.0.1:8080/items/item-6.html",
        ),
        (
            "./../ancestries/./44.html",
            "http://127.0.0.1:8080/ancestries/44.html",
        ),
        (
            "http://127.0.0.1:8080/items/item-2.html",
            "http://127.0.0.1:8080/items/item-2.html",
        ),
        ("#comments", page),
        ("", page),
        (
            "  /about.html#contact \n",
            "http://127.0.0.1:8080/about.html",
        ),
    ];
    for (href, want) in cases {
        assert_eq!(canon(page, href), want, "href {href:?}");
    }
}

#[test]
fn case_ports_dots_and_escapes() {
    let b = "http://h/dir/page.html";
    assert_eq!(canon(b, "HTTP://Ex.COM:80/A"), "http://ex.com/A");
    assert_eq!(canon(b, "https://ex.com:443/"), "https://ex.com/");
    assert_eq!(canon(b, "http://ex.com:8080"), "http://ex.com:8080/");
    assert_eq!(canon(b, "/a/b/../../c/./d"), "http://h/c/d");
    assert_eq!(canon(b, "/a/%2e%2E/b"), "http://h/b");
    assert_eq!(
        canon(b, "/%7euser/%41%c3%a9%2f"),
        "http://h/~user/A%C3%A9%2F"
    );
    assert_eq!(canon(b, "/caf\u{e9} x"), "http://h/caf%C3%A9%20x");
    assert_eq!(canon(b, "/a?x=%7e&&y=%2f&"), "http://h/a?x=~&y=%2F");
    assert_eq!(canon(b, "/a?"), "http://h/a");
    assert_eq!(canon(b, "/a?utm_source=x"), "http://h/a");
    assert_eq!(canon(b, "//Other.Host/x"), "http://other.host/x");
    assert_eq!(canon(b, "sub/x"), "http://h/dir/sub/x");
    assert_eq!(
        canon(b, "http://BÜCHER.example/"),
        "http://xn--bcher-kva.example/"
    );
}

/// Found by the `href_join` fuzz target: decoding `%33` after a stray `%4` made `%43`,
/// which a second canonicalisation decoded to `C`. A canonical URL canonicalises to itself.
#[test]
fn decoding_an_escape_never_makes_a_new_one() {
    let b = "http://h/dir/page.html";
    for (href, want) in [
        ("file>//%4%33A", "http://h/dir/file%3E//%4%33A"),
        ("%%34%31", "http://h/dir/%%341"),
        ("%%341", "http://h/dir/%%341"),
        ("a%4%7e%33", "http://h/dir/a%4~3"),
        ("/q?x=%4%31", "http://h/q?x=%4%31"),
    ] {
        let once = canon(b, href);
        assert_eq!(once, want, "{href:?}");
        assert_eq!(canon(&once, &once), once, "{once} again");
    }
    assert_eq!(normalize_escapes("%4%33A"), "%4%33A");
    assert_eq!(normalize_escapes("%%7e%41"), "%~A");
}

#[test]
fn parameters_dropped_by_name_and_prefix() {
    let c = Canonicalizer::keeping_all_params().drop_params(["sid", "ref_*"]);
    let base = Url::parse("http://h/").unwrap();
    let u = c
        .resolve(&base, "/p?a=1&sid=9&ref_a=2&ref=3&utm_x=4")
        .unwrap();
    assert_eq!(u.as_str(), "http://h/p?a=1&ref=3&utm_x=4");
    let u = Canonicalizer::default()
        .resolve(&base, "/p?utm_source=a&UTM_x=b")
        .unwrap();
    assert_eq!(u.as_str(), "http://h/p?UTM_x=b", "names are case-sensitive");
}

#[test]
fn non_http_schemes_and_garbage_are_rejected() {
    let base = Url::parse("http://h/").unwrap();
    let c = Canonicalizer::default();
    for href in [
        "mailto:editors@emberfall.example",
        "javascript:void(0)",
        "data:text/html,hi",
        "ftp://h/x",
        "tel:+123",
    ] {
        assert!(
            matches!(c.resolve(&base, href), Err(Rejected::Scheme(_))),
            "{href}"
        );
    }
    assert!(matches!(
        c.resolve(&base, "http://[::1"),
        Err(Rejected::Invalid { .. })
    ));
    assert!(matches!(
        c.parse("/relative"),
        Err(Rejected::Invalid { .. })
    ));
}

#[test]
fn natural_order() {
    let mut v = vec![
        "item-10", "item-9", "item-1", "item-2", "item-010", "item-", "item-a", "item-09",
    ];
    v.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(
        v,
        [
            "item-", "item-1", "item-2", "item-9", "item-09", "item-10", "item-010", "item-a"
        ]
    );
    assert_eq!(
        natural_cmp("/spells/8.html", "/spells/102.html"),
        Ordering::Less
    );
    assert_eq!(natural_cmp("a", "a"), Ordering::Equal);
    // Huge numbers compare without overflow.
    assert_eq!(
        natural_cmp("n99999999999999999999999", "n100000000000000000000000"),
        Ordering::Less
    );
}

fn href_strategy() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("/".to_owned()),
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("%2e".to_owned()),
        Just("%2E%2e".to_owned()),
        Just("%".to_owned()),
        Just("%7e".to_owned()),
        Just("%C3%A9".to_owned()),
        Just("%2f".to_owned()),
        Just("%zz".to_owned()),
        Just("?".to_owned()),
        Just("&".to_owned()),
        Just("=".to_owned()),
        Just("#".to_owned()),
        Just("utm_source=x".to_owned()),
        Just(" ".to_owned()),
        Just("\\".to_owned()),
        Just(":".to_owned()),
        Just("@".to_owned()),
        Just("é".to_owned()),
        Just("日本".to_owned()),
        "[a-zA-Z0-9._~-]{1,4}",
        any::<char>().prop_map(String::from),
    ];
    let prefix = prop_oneof![
        Just(String::new()),
        Just("/".to_owned()),
        Just("//".to_owned()),
        Just("http://Ex.com".to_owned()),
        Just("HTTPS://EX.com:443".to_owned()),
        Just("http://h:8080".to_owned()),
        Just("http://user:pw@h".to_owned()),
        Just("http://[::1]:80".to_owned()),
        Just("http://xn--bcher-kva.example".to_owned()),
    ];
    (prefix, prop::collection::vec(piece, 0..12)).prop_map(|(p, v)| p + &v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// Canonicalising a canonical URL changes nothing, whatever the href was.
    #[test]
    fn canonicalisation_is_idempotent(href in href_strategy()) {
        let base = Url::parse("http://Base.example/dir/sub/page.html?q=1#f").unwrap();
        let c = Canonicalizer::default();
        if let Ok(once) = c.resolve(&base, &href) {
            let twice = c.parse(once.as_str()).expect("a canonical URL parses");
            prop_assert_eq!(once.as_str(), twice.as_str());
            // Resolving the canonical form against any base gives it back too.
            let again = c.resolve(&base, once.as_str()).unwrap();
            prop_assert_eq!(once.as_str(), again.as_str());
            prop_assert!(once.fragment().is_none());
            prop_assert_ne!(once.query(), Some(""));
            prop_assert!(once.query_pairs().all(|(k, _)| !k.starts_with("utm_")));
        }
    }

    #[test]
    fn natural_cmp_is_a_total_order(a in "[a-c0-9]{0,6}", b in "[a-c0-9]{0,6}", c in "[a-c0-9]{0,6}") {
        prop_assert_eq!(natural_cmp(&a, &b), natural_cmp(&b, &a).reverse());
        prop_assert_eq!(natural_cmp(&a, &b) == Ordering::Equal, a == b);
        if natural_cmp(&a, &b) != Ordering::Greater && natural_cmp(&b, &c) != Ordering::Greater {
            prop_assert_ne!(natural_cmp(&a, &c), Ordering::Greater);
        }
    }
}

/// Any href: [`href_strategy`]'s, after a start that changes what of the base it needs
/// (a scheme without `//`, a query, a fragment, blanks, control characters).
fn needs_strategy() -> impl Strategy<Value = String> {
    let start = prop_oneof![
        Just(String::new()),
        Just("http:".to_owned()),
        Just("HTTPS:".to_owned()),
        Just("https:/".to_owned()),
        Just("h\tttp://x/".to_owned()),
        Just("mailto:".to_owned()),
        Just("a1+.-:".to_owned()),
        Just("1a:".to_owned()),
        Just("?".to_owned()),
        Just("#".to_owned()),
        Just(" ".to_owned()),
        Just("\t".to_owned()),
        Just("\n".to_owned()),
        Just("\u{1}".to_owned()),
        Just("\u{3000}".to_owned()),
        Just(" \u{3000}".to_owned()),
        Just("\u{b}".to_owned()),
        Just("\u{a0}".to_owned()),
        Just("\\".to_owned()),
        Just("\\\\".to_owned()),
        Just("./".to_owned()),
    ];
    (start, href_strategy()).prop_map(|(s, h)| s + &h)
}

/// Bases that share a directory: one directory, then last segments, queries and
/// fragments that differ.
fn bases_strategy() -> impl Strategy<Value = (String, Vec<String>)> {
    let dir = prop_oneof![
        Just("http://h/".to_owned()),
        Just("https://h/".to_owned()),
        Just("http://h:8080/a/".to_owned()),
        Just("http://user:pw@Ex.com/a/b/".to_owned()),
        Just("https://xn--bcher-kva.example/a%20b/c/".to_owned()),
        Just("http://[::1]/x/".to_owned()),
    ];
    let last = prop_oneof![
        Just(String::new()),
        Just("page.html".to_owned()),
        Just("index".to_owned()),
        Just("x%2Fy".to_owned()),
        Just("a;b".to_owned()),
    ];
    let rest = prop_oneof![
        Just(String::new()),
        Just("?".to_owned()),
        Just("?q=1".to_owned()),
        Just("?q=1#f".to_owned()),
        Just("#f".to_owned()),
    ];
    (dir, prop::collection::vec((last, rest), 2..5)).prop_map(|(d, v)| {
        let bases = v.iter().map(|(l, r)| format!("{d}{l}{r}")).collect();
        (d, bases)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6000, ..ProptestConfig::default() })]

    /// What `href_needs` says of the base is all the resolution uses: bases with one
    /// `base_dir` resolve a `Dir` href alike (failures included), and an `Itself` href
    /// resolves as `#` does.
    #[test]
    fn hrefs_need_what_href_needs_says(href in needs_strategy(), (dir, bases) in bases_strategy()) {
        let c = Canonicalizer::default();
        let bases: Vec<Url> = bases.iter().map(|b| Url::parse(b).unwrap()).collect();
        let dir = Url::parse(&dir).unwrap();
        for b in &bases {
            prop_assert_eq!(base_dir(b), dir.as_str());
        }
        match href_needs(&href) {
            HrefNeeds::Dir => {
                let first = c.resolve(&bases[0], &href);
                for b in &bases[1..] {
                    prop_assert_eq!(&c.resolve(b, &href), &first, "{} against {}", href, b);
                }
            }
            HrefNeeds::Itself => {
                for b in &bases {
                    prop_assert_eq!(c.resolve(b, &href), c.resolve(b, "#"));
                }
            }
            HrefNeeds::Whole => {}
        }
    }
}

#[test]
fn what_hrefs_need() {
    use HrefNeeds::*;
    for (href, want) in [
        ("b.html", Dir),
        ("../c/", Dir),
        ("/a", Dir),
        ("//h/a", Dir),
        ("HTTP://h/a", Dir),
        ("https://h", Dir),
        ("a/b:c", Dir),
        ("a?b:c", Dir),
        ("\\x", Dir),
        (" #top ", Itself),
        (" \u{3000}#top\u{3000}", Itself),
        ("\u{b}#top\u{b}", Itself),
        ("\u{3000}b.html", Dir),
        ("\u{e9}/b:c", Dir),
        ("#", Itself),
        ("", Whole),
        ("  ", Whole),
        ("?q", Whole),
        ("http:x", Whole),
        ("http:", Whole),
        ("https:/x", Whole),
        ("mailto:x", Whole),
        ("a\tb", Whole),
        ("\u{1}x", Whole),
    ] {
        assert_eq!(href_needs(href), want, "{href:?}");
    }
    let base = Url::parse("http://u:p@h:81/a/b.html?q#f").unwrap();
    assert_eq!(base_dir(&base), "http://u:p@h:81/a/");
    let base = Url::parse("http://h").unwrap();
    assert_eq!(base_dir(&base), "http://h/");
}
