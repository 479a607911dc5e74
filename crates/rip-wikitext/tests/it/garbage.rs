//! Never panics, stays linear: random input and the shapes that make backtracking parsers
//! explode.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use rip_wikitext::parse;

/// Wikitext-ish tokens, so random strings hit the interesting paths.
const TOKENS: &[&str] = &[
    "{{",
    "}}",
    "{{{",
    "}}}",
    "[[",
    "]]",
    "[",
    "]",
    "|",
    "=",
    "==",
    "\n",
    "<!--",
    "-->",
    "<ref>",
    "<ref name=a/>",
    "</ref>",
    "<nowiki>",
    "'''",
    "''",
    "{|",
    "|}",
    "Category:",
    "Infobox x",
    "https://e.invalid ",
    "&amp;",
    "#REDIRECT",
    "é",
    "ḱ",
];

/// A token, a short run of letters or any character, in the proportions of a union of all
/// 31 (one `select` instead of 29 strategies: proptest seeding each arm's generator was
/// most of this test's time).
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        29 => prop::sample::select(TOKENS).prop_map(str::to_owned),
        1 => "[a-z ]{0,5}",
        1 => any::<char>().prop_map(String::from),
    ]
}

fn check(text: &str) {
    let page = parse("T", text);
    assert!(!page.sections.is_empty());
    assert_eq!(page.sections[0].level, 0);
    for s in &page.sections {
        assert!(s.level <= 6);
        assert!(text.contains(s.wikitext.as_str()));
    }
    if let Some(infobox) = &page.infobox {
        for key in infobox.fields.keys() {
            let _ = infobox.number(key);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(token(), 0..80)) {
        check(&tokens.concat());
    }

    #[test]
    fn any_string_never_panics(text in any::<String>()) {
        check(&text);
    }
}

#[test]
fn pathological_inputs_parse_in_linear_time() {
    let n = 100_000;
    let cases = [
        "{{a|".repeat(n),
        "{{a|".repeat(n) + &"}}".repeat(n),
        "{".repeat(n) + &"}".repeat(n),
        "[[".repeat(n),
        "[[a|".repeat(n) + &"]]".repeat(n),
        "<ref ".repeat(n),
        "<ref>".repeat(n),
        "<!--".repeat(n),
        "{{{{{{x|".repeat(n / 10),
        "==\n".repeat(n),
        "'''''".repeat(n),
        "[https://x ".repeat(n),
        "{{Infobox x|a=".repeat(n / 10),
    ];
    for text in &cases {
        let start = Instant::now();
        check(text);
        let took = start.elapsed();
        // Debug build on a shared 2-core machine: generous, but quadratic work on these
        // 200-500 KB inputs would take minutes.
        assert!(
            took < Duration::from_secs(5),
            "{:?}…: {took:?}",
            &text[..20]
        );
    }
}
