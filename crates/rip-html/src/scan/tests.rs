//! The tokenizer's unit tests.

use super::*;

#[test]
fn a_character_across_a_doctype_sized_prefix_is_a_comment_not_a_panic() {
    assert_eq!(tokens("<!abcdef\u{20ac}>x").unwrap(), ["comment", "x"]);
    assert_eq!(tokens("<!DocType html>").unwrap(), ["doctype No"]);
}

/// The tokens of `src` as short strings (a start tag with its attributes).
fn tokens(src: &str) -> Result<Vec<String>, Bail> {
    let mut scan = Scanner::new(src);
    let mut out = Vec::new();
    loop {
        let mut attrs = Vec::new();
        out.push(match scan.next(&mut attrs)? {
            Token::Start { name, self_closing } => {
                let attrs: String = attrs.iter().map(|(n, v)| format!(" {n}={v}")).collect();
                format!("<{name}{attrs}{}>", if self_closing { "/" } else { "" })
            }
            Token::End(name) => format!("</{name}>"),
            Token::Text(t) => t.into_owned(),
            Token::Comment => "comment".into(),
            Token::Doctype(q) => format!("doctype {q:?}"),
            Token::Eof => return Ok(out),
        });
    }
}

#[test]
fn an_attribute_name_may_start_with_an_equals_sign() {
    // As the tokenizer reads it: `=` where a name would start begins the name.
    for (src, want) in [
        ("<a =b c=d>", "<a =b= c=d>"),
        ("<a b=\"x\"=y>", "<a b=x =y=>"),
        ("<a ==>", "<a ==>"),
        ("<a/=B>", "<a =b=>"),
        ("<a = b>", "<a == b=>"),
    ] {
        assert_eq!(tokens(src).unwrap(), [want], "{src:?}");
    }
}

#[test]
fn bogus_comments_run_to_the_first_gt_as_the_tokenizer_reads_them() {
    // An XML declaration, processing instructions, conditional comments, `</` and
    // `<!` followed by what starts no tag, comment or doctype.
    for (src, want) in [
        ("<?xml version=\"1.0\"?><p>x", &["comment", "<p>", "x"][..]),
        ("<?php echo '<b>' ?>y", &["comment", "' ?>y"]),
        (
            "<![if IE]><a href=x>x</a><![endif]>",
            &["comment", "<a href=x>", "x", "</a>", "comment"],
        ),
        (
            "</ p>a</1>b</\u{e9}>",
            &["comment", "a", "comment", "b", "comment"],
        ),
        ("<!-x->y", &["comment", "y"]),
        ("<!DOCTYP>z", &["comment", "z"]),
        ("<?>", &["comment"]),
        ("<?no end <b>", &["comment"]),
        ("</ no end", &["comment"]),
        ("<!", &["comment"]),
    ] {
        assert_eq!(tokens(src).unwrap(), want, "{src:?}");
    }
    // `</` at the end is text. `</>` is no token, but a parse error html5ever's tree
    // builder takes for the token after a `<pre>` (whose newline it then keeps): a bail.
    assert_eq!(tokens("a</").unwrap(), ["a", "</"]);
    assert_eq!(tokens("a</>b"), Err(Bail("a `</>`")));
    // CDATA is text in SVG and MathML, a bogus comment elsewhere: left to the tree.
    assert_eq!(tokens("<![CDATA[x]]>"), Err(Bail("a CDATA section")));
    assert_eq!(tokens("<![cdata[x]]>").unwrap(), ["comment"]);
}

#[test]
fn the_page_ending_in_a_comment_doctype_or_tag_ends_as_the_tokenizer_ends_it() {
    // A comment or doctype runs to the end (the doctype forcing quirks); a tag is
    // dropped, its attributes too.
    for (src, want) in [
        ("a<!-- open", &["a", "comment"][..]),
        ("<!-- a --", &["comment"]),
        ("<!-- a --!", &["comment"]),
        ("<!---", &["comment"]),
        ("<!DOCTYPE html", &["doctype Yes"]),
        ("<!doctype", &["doctype Yes"]),
        ("<p id=1>a<b", &["<p id=1>", "a"]),
        ("<p>a<b c=d e", &["<p>", "a"]),
        ("<p>a<b c=\"d&amp;", &["<p>", "a"]),
        ("<p>a<b c='d", &["<p>", "a"]),
        ("<p>a<b c=d", &["<p>", "a"]),
        ("<p>a<b c=", &["<p>", "a"]),
        ("<p>a<b/", &["<p>", "a"]),
        ("<p>a</p", &["<p>", "a"]),
        ("<p>a</p x='>", &["<p>", "a"]),
    ] {
        assert_eq!(tokens(src).unwrap(), want, "{src:?}");
    }
    let mut attrs = Vec::new();
    let mut scan = Scanner::new("<a href=\"x");
    assert!(matches!(scan.next(&mut attrs), Ok(Token::Eof)));
    assert!(attrs.is_empty());
    assert!(matches!(scan.next(&mut attrs), Ok(Token::Eof)));
}

fn start_tag_attrs(tag: &str) -> Vec<(String, String)> {
    let mut attrs = Vec::new();
    let token = Scanner::new(tag).next(&mut attrs).unwrap();
    assert!(matches!(token, Token::Start { .. }), "{tag}: {token:?}");
    attrs
        .into_iter()
        .map(|(n, v)| (n.into_owned(), v.into_owned()))
        .collect()
}

#[test]
fn find2_finds_what_memchr2_finds() {
    // Each of the two bytes, a byte next to them, or nothing, at every place of
    // haystacks of 0 to 80 bytes (across the words and the change to memchr2), with
    // a second hit after the first, or bytes whose arithmetic borrows (0x00, 0x01).
    for len in 0..80 {
        for at in 0..=len {
            for hit in [b'<', b'&', b'=', 0x00, 0x01, 0x80, 0xff] {
                for later in [None, Some(b'<'), Some(b'&'), Some(0x00)] {
                    let mut hay = vec![b'a'; len];
                    if at < len {
                        hay[at] = hit;
                        if let Some(c) = later
                            && at + 3 < len
                        {
                            hay[at + 3] = c;
                        }
                    }
                    for from in [0, 1, 7, 9] {
                        let hay = hay.get(from..).unwrap_or_default();
                        assert_eq!(
                            find2(b'<', b'&', hay),
                            memchr::memchr2(b'<', b'&', hay),
                            "{hay:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn names_are_read_lower_case_in_one_pass() {
    let mut attrs = Vec::new();
    let mut scan =
        Scanner::new("<DiV CLASS=x Data-Y='1' id=Z><sPan/></DIV ></Span x=\"1\">\u{e9}<P\u{c9}X>");
    let mut got = Vec::new();
    loop {
        match scan.next(&mut attrs).unwrap() {
            Token::Start { name, self_closing } => {
                got.push(format!("<{name}{}>", if self_closing { "/" } else { "" }))
            }
            Token::End(name) => got.push(format!("</{name}>")),
            Token::Text(t) => got.push(t.into_owned()),
            Token::Eof => break,
            other => panic!("{other:?}"),
        }
    }
    // Only ASCII letters are lower-cased (as the HTML tokenizer does).
    assert_eq!(
        got,
        [
            "<div>",
            "<span/>",
            "</div>",
            "</span>",
            "\u{e9}",
            "<p\u{c9}x>"
        ]
    );
    let read: Vec<(&str, &str)> = attrs.iter().map(|(n, v)| (&**n, &**v)).collect();
    assert_eq!(read, [("class", "x"), ("data-y", "1"), ("id", "Z")]);
    attrs.clear();
    // An end tag's name runs to its `>` or white space; what follows is read past.
    for tag in ["</b>", "</B >", "</b\tx=\">\">", "</b/>"] {
        let mut scan = Scanner::new(tag);
        assert!(
            matches!(scan.next(&mut attrs).unwrap(), Token::End(n) if n == "b"),
            "{tag}"
        );
        assert!(
            matches!(scan.next(&mut attrs).unwrap(), Token::Eof),
            "{tag}"
        );
    }
}

#[test]
fn attribute_values_are_decoded_only_where_they_hold_a_reference() {
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter().map(|(n, v)| ((*n).into(), (*v).into())).collect()
    };
    assert_eq!(
        start_tag_attrs(r#"<a HREF="x?a=1&amp;b=2" title='t&lt;' data-x=u&amp;v rel=n>"#),
        pairs(&[
            ("href", "x?a=1&b=2"),
            ("title", "t<"),
            ("data-x", "u&v"),
            ("rel", "n")
        ])
    );
    // A `&` that starts no reference stays; a value without one is the text as is.
    assert_eq!(
        start_tag_attrs("<p a=\"&\" b='&&x' c=plain d=\"\" e\tf=1 g/>"),
        pairs(&[
            ("a", "&"),
            ("b", "&&x"),
            ("c", "plain"),
            ("d", ""),
            ("e", ""),
            ("f", "1"),
            ("g", "")
        ])
    );
    // A quoted value left open: the page ends in the tag, which is dropped, with or
    // without a `&` in it.
    for tag in ["<a href=\"x", "<a href=\"x&amp;y", "<a href='&"] {
        assert_eq!(tokens(tag).unwrap(), Vec::<String>::new(), "{tag}");
    }
}
