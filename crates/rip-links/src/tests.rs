use super::*;

/// The charset the crawler reads a page in (`rip-discover` picks it from the response).
pub(crate) fn charset_for(content_type: Option<&str>, body: &[u8]) -> &'static Encoding {
    if let Some((enc, _)) = Encoding::for_bom(body) {
        return enc;
    }
    content_type
        .and_then(rip_http::decode::header_charset)
        .and_then(|l| Encoding::for_label(l.as_bytes()))
        .or_else(|| rip_http::decode::meta_charset(body))
        .unwrap_or(encoding_rs::UTF_8)
}

/// The links of `html`, checked to be the same by the streaming scan and html5gum.
fn links(html: &str) -> Extracted {
    super::differential::assert_agree(html.as_bytes());
    extract(html.as_bytes(), encoding_rs::UTF_8)
}

#[test]
fn hrefs_text_base_and_nofollow() {
    let e = links(
        r#"<html><head><base href="/spells/"><base href="/ignored/"></head><body>
        <a href="a.html">  Plain
           text </a>
        <a href="/b?x=1&amp;y=2" rel="external NoFollow"><span>Nested</span> <b>bits</b></a>
        <a href="c.html"><img src="c.png" alt="Picture"></a>
        <a href="d.html" title="Titled"></a>
        <a>no href</a>
        <script>var s = '<a href="/in-script">x</a>';</script>
        <!-- <a href="/in-comment">x</a> -->
        <a href="e.html">Caf&eacute; &amp; more</a>
        </body></html>"#,
    );
    assert_eq!(e.base.as_deref(), Some("/spells/"));
    assert_eq!(
        triples(&e),
        [
            ("a.html", "Plain text", false),
            ("/b?x=1&y=2", "Nested bits", true),
            ("c.html", "Picture", false),
            ("d.html", "Titled", false),
            ("e.html", "Café & more", false),
        ]
    );
    assert!(!e.nofollow_page);
}

#[test]
fn meta_robots_nofollow_and_unclosed_links() {
    let e = links(
        r#"<meta name="Robots" content="noindex, nofollow"><a href="/1">one<a href="/2">two</a>"#,
    );
    assert!(e.nofollow_page);
    let t: Vec<&str> = e.links().map(|l| l.text).collect();
    assert_eq!(t, ["one", "two"]);
}

#[test]
fn base_after_links_still_applies_and_bad_base_is_ignored() {
    let page = Url::parse("http://h/blog/post.html").unwrap();
    let e = links(r#"<a href="x.html">x</a><base href="/spells/">"#);
    assert_eq!(e.base_url(&page).as_str(), "http://h/spells/");
    let e = links(r#"<base href="javascript:alert(1)"><a href="x.html">x</a>"#);
    assert_eq!(e.base_url(&page).as_str(), "http://h/blog/post.html");
}

#[test]
fn windows_1252_page_text_is_decoded() {
    let body = b"<meta charset=\"windows-1252\"><a href=\"/caf\xe9.html\">Caf\xe9 \x80</a>";
    let enc = charset_for(Some("text/html"), body);
    assert_eq!(enc, encoding_rs::WINDOWS_1252);
    let e = extract(body, enc);
    assert_eq!(e.link(0).unwrap().href, "/caf\u{e9}.html");
    assert_eq!(e.link(0).unwrap().text, "Caf\u{e9} \u{20ac}");
}

#[test]
fn utf16_bodies_are_decoded_first() {
    let mut body = vec![0xFF, 0xFE];
    for u in "<a href=\"/x\">X</a>".encode_utf16() {
        body.extend_from_slice(&u.to_le_bytes());
    }
    let enc = charset_for(None, &body);
    assert_eq!(enc, encoding_rs::UTF_16LE);
    let e = extract(&body[2..], enc);
    assert_eq!(e.len(), 1);
    assert_eq!(e.link(0).unwrap().href, "/x");
}

#[test]
fn link_text_is_bounded() {
    let long = "word ".repeat(10_000);
    let e = links(&format!("<a href=/x>{long}</a>"));
    assert!(e.link(0).unwrap().text.chars().count() <= MAX_LINK_TEXT);
}

/// Every page of the demo site parses, and the known links are there.
#[test]
fn demo_site_pages() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/site");
    let read = |p: &str| std::fs::read(format!("{root}/{p}")).unwrap();
    let about = read("about.html");
    let e = extract(&about, charset_for(Some("text/html"), &about));
    let nofollow: Vec<&str> = e.links().filter(|l| l.nofollow).map(|l| l.href).collect();
    assert_eq!(nofollow, ["/login.html"]);
    let roundup = read("blog/spell-roundup.html");
    let e = extract(&roundup, charset_for(Some("text/html"), &roundup));
    assert_eq!(e.base.as_deref(), Some("/spells/"));
    let cafe = read("blog/a-night-at-the-cafe.html");
    assert_eq!(
        charset_for(Some("text/html"), &cafe),
        encoding_rs::WINDOWS_1252
    );
}

/// Each link as (href, text, nofollow).
pub(crate) fn triples(e: &Extracted) -> Vec<(&str, &str, bool)> {
    e.links().map(|l| (l.href, l.text, l.nofollow)).collect()
}

fn hrefs(e: &Extracted) -> Vec<&str> {
    e.links().map(|l| l.href).collect()
}

#[test]
fn raw_text_elements_hold_no_links() {
    let e = links(
        r#"<title><a href="/t">x</a></title><style>a[href="/s"] {}</style>
        <textarea><a href="/ta">x</a></textarea><noscript><a href="/ns">x</a></noscript>
        <xmp><a href="/xmp"></a></xmp><iframe><a href="/if"></a></iframe>
        <script>document.write('<a href="/js">')</script><a href="/real">Real</a>
        <SCRIPT type=module><!-- <script> </script> --></SCRIPT><a href="/after">After</a>"#,
    );
    assert_eq!(hrefs(&e), ["/real", "/after"]);
}

/// An SVG `<script/>` or `<style/>` is not a raw-text element: the page after it is
/// still read as HTML, and an SVG `<a href>` is a link too.
#[test]
fn svg_and_mathml_are_foreign_content() {
    let e = links(
        r#"<svg><script/><style/><a href="/in-svg"><text>In SVG</text></a>
        <foreignObject><script>'<a href="/fo-js">'</script><a href="/fo">FO</a></foreignObject>
        <svg><g/></svg><title>Chart</title></svg><math><mi>x</mi></math>
        <script>'<a href="/html-js">'</script><a href="/end">End</a>"#,
    );
    assert_eq!(hrefs(&e), ["/in-svg", "/fo", "/end"]);
    assert_eq!(e.link(0).unwrap().text, "In SVG");
}

#[test]
fn attributes_as_the_tokenizer_reads_them() {
    let e = links(
        r#"<a href="/first" href="/second">dup</a><a href>empty</a>
        <a HREF='/upper?a=1&amp;b=2&copy=3'>Upper</a><a href=/unquoted?x=1&y=2 rel=NOFOLLOW>U</a>
        <a title="T &amp; U" href="/t"></a><a href="/alt"><IMG ALT="Pic &lt;1&gt;"></a>"#,
    );
    assert_eq!(
        triples(&e),
        [
            ("/first", "dup", false),
            ("", "empty", false),
            // `&copy=` in an attribute stays as written (the spec's attribute rule).
            ("/upper?a=1&b=2&copy=3", "Upper", false),
            ("/unquoted?x=1&y=2", "U", true),
            ("/t", "T & U", false),
            ("/alt", "Pic <1>", false),
        ]
    );
}

#[test]
fn an_anchor_without_href_closes_the_open_link() {
    let e = links(r#"<a href="/1">one <a name="x">named</a> tail"#);
    assert_eq!(e.len(), 1);
    assert_eq!(e.link(0).unwrap().text, "one");
}

#[test]
fn hostile_markup_is_bounded() {
    // A tag name and an attribute name far past anything kept, nested SVG past the
    // tracked depth, and an unterminated comment: no panic, and the links before stay.
    let mut html = String::from(r#"<a href="/ok">ok</a>"#);
    html.push('<');
    html.push_str(&"x".repeat(100_000));
    html.push_str(&format!(" {}=1>", "y".repeat(100_000)));
    html.push_str(&"<svg>".repeat(10_000));
    html.push_str(r#"<a href="/deep">deep</a>"#);
    html.push_str("<!-- <a href=/c>");
    let e = links(&html);
    assert_eq!(hrefs(&e), ["/ok", "/deep"]);
}

#[test]
fn link_count_is_bounded() {
    let html = r#"<a href="/x">x</a>"#.repeat(MAX_LINKS_PER_PAGE + 5);
    let e = links(&html);
    assert_eq!(e.len(), MAX_LINKS_PER_PAGE);
    assert_eq!(e.dropped, 5);
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let e = extract(
        b"<a href=\"/a\xff\">b\xfe</a><a href=/c>c</a>",
        encoding_rs::UTF_8,
    );
    assert_eq!(hrefs(&e), ["/a\u{fffd}", "/c"]);
    assert_eq!(e.link(0).unwrap().text, "b\u{fffd}");
}

#[test]
fn collapsing_whitespace() {
    let cases = [
        ("", ""),
        ("Plain", "Plain"),
        ("Two words", "Two words"),
        (" lead", "lead"),
        ("trail ", "trail"),
        ("in  side", "in side"),
        ("tab\there", "tab here"),
        ("line\nbreak", "line break"),
        ("nbsp\u{a0}space", "nbsp space"),
        ("Caf\u{e9}  au lait", "Caf\u{e9} au lait"),
    ];
    for (input, want) in cases {
        assert_eq!(collapse_ws(input), want, "{input:?}");
    }
    let long = "a".repeat(MAX_LINK_TEXT + 10);
    assert_eq!(collapse_ws(&long).len(), MAX_LINK_TEXT);
}

#[test]
fn collapsed_text_appended_to_a_buffer_is_cut_counting_only_itself() {
    let mut out = "é".repeat(MAX_LINK_TEXT);
    let held = out.clone();
    collapse_ws_onto(&format!("  {}  x", "ü".repeat(MAX_LINK_TEXT)), &mut out);
    assert_eq!(&out[..held.len()], held, "what the buffer held is kept");
    assert_eq!(out[held.len()..], "ü".repeat(MAX_LINK_TEXT));
    collapse_ws_onto(" a \n b ", &mut out);
    assert!(out.ends_with(&format!("{}a b", "ü".repeat(MAX_LINK_TEXT))));
}

#[test]
fn links_texts_and_hrefs_interleave_in_one_buffer_without_mixing() {
    let e = links(
        r#"<a href="/1"> one </a><a href="/2" title=" two  t "></a><a href="/3"><img alt="three"></a>
        <a href="/4">  </a><a href="/5">five<a href="/6">six"#,
    );
    assert_eq!(
        triples(&e),
        [
            ("/1", "one", false),
            ("/2", "two t", false),
            ("/3", "three", false),
            ("/4", "", false),
            ("/5", "five", false),
            ("/6", "six", false),
        ]
    );
}
