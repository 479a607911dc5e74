//! HTML: rip-html's tokenizer alone, and rip-parse's streaming extraction against the
//! same extraction from html5ever's tree.

use rip_html::{Scanner, Token};
use rip_parse::dom::ParseLimits;
use rip_parse::generic::{Agreement, streaming_agrees};
use url::Url;

use crate::input::text;

/// Elements whose content a caller reads with [`Scanner::raw_text`], and whether it is
/// RCDATA (references decoded).
const RAW: &[(&str, bool)] = &[
    ("script", false),
    ("style", false),
    ("xmp", false),
    ("iframe", false),
    ("noembed", false),
    ("noframes", false),
    ("title", true),
    ("textarea", true),
];

/// The tokenizer reads every input to its end or a bail, each token moving on, tag and
/// attribute names lower case; after a raw-text element's start tag the caller reads its
/// content with `raw_text`, as rip-parse and rip-discover do.
pub(crate) fn tokenizer(data: &[u8]) {
    let page = text(data);
    for decode in [true, false] {
        let mut scanner = Scanner::new(&page);
        scanner.set_decode_text(decode);
        let mut attrs = Vec::new();
        let mut ended = false;
        // Each token but the last reads at least one byte.
        for _ in 0..=page.len() + 1 {
            attrs.clear();
            match scanner.next(&mut attrs) {
                // A bail is the caller's cue to stop: what follows is not looked at.
                Err(_) => ended = true,
                Ok(Token::Eof) => {
                    assert!(matches!(scanner.next(&mut attrs), Ok(Token::Eof)));
                    ended = true;
                }
                Ok(Token::Start { name, .. }) => {
                    lower_case(&name);
                    for (attr, _) in &attrs {
                        lower_case(attr);
                    }
                    if let Some(&(raw, rcdata)) = RAW.iter().find(|(n, _)| *n == name) {
                        ended = scanner.raw_text(raw, rcdata).is_err();
                    }
                }
                Ok(Token::End(name)) => lower_case(&name),
                Ok(_) => {}
            }
            if ended {
                break;
            }
        }
        assert!(
            ended,
            "the scanner went on past one token a byte on {page:?}"
        );
    }
}

fn lower_case(name: &str) {
    assert!(
        !name.bytes().any(|b| b.is_ascii_uppercase()),
        "a name not lower case: {name:?}"
    );
}

/// The streaming pass either gives the page up or gives exactly the doc fields that the
/// tree gives ([`streaming_agrees`], as `crates/rip-parse/tests/it/differential.rs` checks
/// it), on any input.
pub(crate) fn stream_vs_tree(data: &[u8]) {
    let html = text(data);
    let url = Url::parse("http://site.test/dir/page.html").expect("a URL");
    if let Agreement::Differs(what) = streaming_agrees(&html, &url, ParseLimits::default()) {
        panic!("{html:?}: {what}");
    }
}
