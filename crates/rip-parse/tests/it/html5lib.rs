//! html5lib's tree-construction tests (`testdata/conformance/html5lib/`) as inputs
//! on which the streaming pass must give up or give exactly the tree's fields
//! ([`crate::differential::compare`]). Every `#data` is read as a whole document,
//! `#document-fragment` cases too (our pages are documents; a fragment's markup is
//! hostile input all the same), and the `#script-on`/`#script-off` ones with the tree
//! builder's own setting. The expected trees are not compared: html5ever passes them
//! (its own test suite), and what is checked here is that both our paths read them alike.

use std::sync::atomic::Ordering;

use rip_parse::dom::ParseLimits;
use rip_parse::generic::extract_streaming;
use rip_testkit::html5lib::tree_construction_cases as all_cases;
use url::Url;

use crate::differential::{Compared, compare, outcome_json};

#[test]
fn html5lib_tree_construction_inputs_stream_the_same_or_go_to_the_tree() {
    let started = std::time::Instant::now();
    let cases = all_cases();
    let (mut streamed, mut gave_up) = (0, 0);
    let mut wrong = Vec::new();
    for case in &cases {
        let outcome = std::panic::catch_unwind(|| compare(&case.data))
            .unwrap_or_else(|_| Compared::Differs("a panic".into()));
        match outcome {
            Compared::Streamed => streamed += 1,
            Compared::GaveUp => gave_up += 1,
            Compared::Differs(what) => {
                wrong.push(format!("{}: {:?}\n  {what}", case.name, case.data))
            }
        }
    }
    let fragments = cases.iter().filter(|c| c.fragment).count();
    eprintln!(
        "html5lib tree construction: {} cases ({fragments} fragments, read as documents): \
         {streamed} read by the streaming pass, {gave_up} gave up, {} differences, in {:?}",
        cases.len(),
        wrong.len(),
        started.elapsed()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // html5lib-tests as html5lib 1.1 ships them: 56 files (3 of them `scripted/`).
    assert_eq!(cases.len(), 1704);
    assert_eq!(fragments, 176);
    // Most of the suite is markup the tree builder repairs, on purpose: a share must
    // still stream, or this test compares nothing.
    assert!(streamed * 4 >= cases.len(), "only {streamed} streamed");
}

#[test]
fn html5lib_tree_construction_inputs_match_selectors_alike_in_both_paths() {
    // Rules files' selectors, of every kind the streaming pass matches, on every input:
    // the docs (or failures) of both paths must be equal.
    let stream = rip_parse::ExtractOptions {
        rules: Some(crate::differential::streaming_selectors_rules()),
        ..Default::default()
    };
    let tree = rip_parse::ExtractOptions {
        stream: false,
        ..stream.clone()
    };
    let cases = all_cases();
    for case in &cases {
        let page = crate::support::page(
            "http://site.test/dir/page.html",
            "text/html",
            case.data.as_bytes(),
            false,
        );
        assert_eq!(
            outcome_json(&stream, &page),
            outcome_json(&tree, &page),
            "{}: {:?}",
            case.name,
            case.data
        );
    }
    let streamed = stream.paths.streamed.load(Ordering::Relaxed);
    eprintln!("{streamed} of {} streamed", cases.len());
    assert!(
        streamed * 4 >= cases.len() as u64,
        "only {streamed} streamed"
    );
}

/// The generic fields of the case `name`, read by the streaming pass (which must read
/// it), checked against the tree's.
fn streamed_fields(name: &str) -> (Option<String>, serde_json::Value) {
    let case = all_cases().into_iter().find(|c| c.name == name).unwrap();
    assert_eq!(compare(&case.data), Compared::Streamed, "{name}");
    let url = Url::parse("http://site.test/dir/page.html").unwrap();
    let mut doc = extract_streaming(&case.data, &url, false, ParseLimits::default()).unwrap();
    let title = doc.title.take();
    (title, serde_json::Value::Object(doc.into_fields()))
}

#[test]
fn html5lib_cases_give_the_fields_their_expected_trees_hold() {
    // Checked by hand against each case's `#document`.
    let (_, doc) = streamed_fields("entities01.dat#21"); // FOO&#x41BAR
    assert_eq!(doc["text"], "FOO\u{41BA}R");
    let (_, doc) = streamed_fields("entities01.dat#10"); // FOO&<BAR>
    assert_eq!(doc["text"], "FOO&");
    // `<title><!--<title></title>--></title>`: the title is raw text, `-->` body text.
    let (title, doc) = streamed_fields("tests16.dat#81");
    assert_eq!(title.as_deref(), Some("<!--<title>"));
    assert_eq!(doc["text"], "-->");
    // `<a href=a>aa<marquee>aa<a href=b>bb</marquee>aa`: the second link opens inside
    // the marquee, which keeps the first open around it.
    let (_, doc) = streamed_fields("tests1.dat#81");
    assert_eq!(doc["text"], "aaaabbaa");
    assert_eq!(
        doc["links"],
        serde_json::json!([
            {"href": "http://site.test/dir/a", "text": "aaaabbaa"},
            {"href": "http://site.test/dir/b", "text": "bb"},
        ])
    );
    // `<a href='\nbar'>`: a backslash is a slash in an http URL.
    let (_, doc) = streamed_fields("html5test-com.dat#5");
    assert_eq!(doc["links"][0]["href"], "http://site.test/nbar");
}
