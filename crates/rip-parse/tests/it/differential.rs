//! The streaming pass against the tree: on every page, `extract_streaming` either
//! gives up (and the tree path reads the page) or gives exactly the doc fields that
//! `extract` gives from html5ever's tree. Pages: the project's demo site, hostile
//! markup written by hand, and thousands of generated pages mixing the tags the
//! tree builder treats specially (`RIP_DIFF_CASES` for more, `RIP_DIFF_SEED` to
//! replay a seed).

use std::path::Path;

use rip_parse::dom::{ParseLimits, parse};
use rip_parse::generic::{extract, extract_streaming, streaming_agrees};
use url::Url;

pub(crate) use rip_parse::generic::Agreement as Compared;

/// Compares the two paths on `html` ([`rip_parse::generic::streaming_agrees`]), with the
/// page URL every differential test uses.
pub(crate) fn compare(html: &str) -> Compared {
    let url = Url::parse("http://site.test/dir/page.html").unwrap();
    streaming_agrees(html, &url, ParseLimits::default())
}

/// Compares the two paths on `html`; true when the streaming pass read it. Panics on a
/// difference.
fn same(html: &str) -> bool {
    match compare(html) {
        Compared::Streamed => true,
        Compared::GaveUp => false,
        Compared::Differs(what) => panic!("{html:?}: {what}"),
    }
}

#[test]
fn the_demo_sites_pages_stream_to_the_same_fields() {
    let mut files = Vec::new();
    html_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata"),
        &mut files,
    );
    assert!(files.len() > 50, "only {} pages", files.len());
    let streamed = files
        .iter()
        .filter(|f| same(&String::from_utf8_lossy(&std::fs::read(f).unwrap())))
        .count();
    // Every page of the demo site is ordinary HTML: none should need the tree.
    assert!(
        streamed * 10 >= files.len() * 9,
        "{streamed} of {}",
        files.len()
    );
}

fn html_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            html_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "html") {
            out.push(path);
        }
    }
}

#[test]
fn hostile_markup_streams_the_same_or_goes_to_the_tree() {
    let deep = format!("{}x{}", "<div>".repeat(10_000), "</div>".repeat(10_000));
    let cases = [
        "<p>a<b>b<p>c</b>d",
        "<b><i>x</b>y</i>",
        "<a href=1>one<a href=2>two</a>",
        "<h1 id=h><a href=#h>Syncing <a href=https://x.test/r><code>r</code></a></a></h1>",
        "<a href=1><span>s<a href=2>t</span>u</a>v",
        "<a href=1><b>x<a href=2>y</a>",
        "<a href=1><div>x<a href=2>y</div>z",
        "<a href=1><td>x<a href=2>y",
        "<a href=1><svg><a href=2>y</a></svg><a href=3>z",
        "<table>text<tr><td>x</table>",
        "<table><tr><td>a<td>b<tr><th>c</table>after",
        "<table><div>moved</div></table>",
        "<ul><li>a<li>b<ul><li>c</ul>d</ul>",
        "<dl><dt>t<dd>d<dt>t2</dl>",
        "<p>unclosed <div>block",
        "<h1>a<h2>b</h1>c",
        "<pre>\nkept\n</pre><textarea>\nx</textarea>",
        // Found by the stream_vs_tree fuzz target: the tree keeps a `&#10;` that starts a
        // <pre> (only a written newline is dropped).
        "<!DOCTYPE html><pre>&#x0a",
        // The same fuzz target: text the tree holds as one node, read in two pieces
        // (around an end tag it ignores, a `<` ending the page), chose another region.
        "<div id=text><p>abcdefghijklmnopqrstuvwxy</div><p>.<",
        "<div id=text><p>abcdefghijklmnopqrstuvwxy</div><p>a.</x>b",
        "<div id=text><p>abcdefghijklmnopqrstuvwxy</div><p>a.<!---->b",
        // The same fuzz target: a list item's marker left waiting in a table cell.
        "<table><td>l<li>o</x>y",
        "<table><td>l<li>o<",
        "<pre>&#10;x&amp;y</pre><pre>\n&lt;z</pre><pre>\nw</pre>",
        "<template><a href=t>in template</a><tr></template>",
        "<svg><title>t</title><a href=s>svg link</a><p>out</svg>",
        "<svg><path/><g><rect/></g></svg><math><mi>x</mi></math>",
        "<select><option>a<option>b</select>",
        "<frameset><frame></frameset>",
        "<title>a &amp; b</title><p>&notit; &notin; &copy &#x80;&#0;&#xD800;",
        "<a href='?a=1&copy=2&amp;b'>q</a>",
        "<p>a\r\nb\rc</p>",
        "<p>nul\0char</p>",
        "<script>if (a<b) { document.write('<!--<script>x</script>-->') }</script><p>after",
        "<script><!-- no end",
        "<!-- a --!> <p>x</p> <!--> <!---> <!-- -- -->",
        "<![CDATA[x]]><p>y",
        "<?php echo 1 ?><p>y",
        "</p><p>stray end</br>",
        "<form><form>nested</form></form>",
        "<base href='/b/'><a href=x>x</a><main><a href=y>y</a></main>",
        "<p><a href=x>one</a><base href='/late/'><a href=y>two</a>",
        "<body><div role=main>rm</div><main>m</main>",
        "<html><body><p>x</body></html><p>after html",
        "<p>x<table><tr><td>in p?</table>",
        "<!DOCTYPE html><p>x<table><tr><td>in p?</table>",
        "<!DOCTYPE html PUBLIC \"-//W3C//DTD HTML 4.01//EN\"><p>x<table><tr><td>y</table>",
        "<div hidden>h</div><nav>n</nav><header>hd</header><p>body",
        "<p>a<br/>b<img src=i.png alt=A>c<hr>d",
        "<li>orphan<li>items",
        "<button><button>b</button></button>",
        "<nobr>a<nobr>b",
        "<object><b>x</object>y",
        "<p><span>a</p>b</span>",
        "<div><span>a</div>b",
        "<code>a<div>b</div>c</code>",
        "<table><caption>c</caption><tr><td>x</table>",
        "<table><colgroup><col></colgroup><tr><td>x</table>",
        "<iframe><p>not parsed</p></iframe><noscript><a href=n>n</a></noscript>",
        "<xmp><b>raw</b></xmp><plaintext><b>rest",
        "<html lang=en><head><title>T</title></head>  <body>x",
        "<head><meta name=description content=d></head><meta name=keywords content=k><p>x",
        "text before <html>",
        // What a broken encoding leaves after decoding: replacement characters, and
        // windows-1252 text read as such.
        "<p>caf\u{FFFD} \u{FFFD}\u{FFFD}<a href='/\u{FFFD}'>\u{FFFD}</a> na\u{EF}ve \u{201C}q\u{201D}",
        "\u{FEFF}<p>after a BOM",
        &deep,
    ];
    let streamed = cases.iter().filter(|c| same(c)).count();
    assert!(streamed >= cases.len() / 3, "only {streamed} streamed");
}

#[test]
fn a_link_opened_inside_a_link_closes_it_and_streams() {
    // As mdbook's print pages have it: a heading's anchor around a link.
    for html in [
        "<h1 id=h><a href=#h>Syncing <a href=https://x.test/r><code>r</code></a></a></h1>",
        "<p><a href=1>one<a href=2>two</a> three</p>",
        "<a href=1><span>s<a href=2>t</span>u</a>v",
    ] {
        assert!(same(html), "{html:?} went to the tree");
    }
    // A formatting or special element inside the open link: the tree's repairs.
    for html in [
        "<a href=1><b>x<a href=2>y</a>",
        "<a href=1><div>x<a href=2>y</div>z",
    ] {
        assert!(!same(html), "{html:?} streamed");
    }
}

/// After `<pre>` the tree drops a newline written first, also when a reference follows it:
/// the stream reads those. One that `&#10;` decodes to it drops or keeps by its tokenizer's
/// timing (the `stream_vs_tree` fuzz target's first finding, `<pre>&#x0a`): the stream
/// gives those to the tree.
#[test]
fn a_newline_after_pre_is_dropped_when_written_and_a_decoded_one_goes_to_the_tree() {
    for html in [
        "<pre>\n&lt;z&gt;</pre>",
        "<pre>\n\nw</pre>",
        "<pre>\nplain &amp; more</pre><textarea>\nt&amp;</textarea>",
    ] {
        assert!(same(html), "{html:?} went to the tree");
    }
    for html in [
        "<pre>&#x0a",
        "<pre>&#x0a;x</pre>",
        "<pre>&#10;&#10;x&amp;y</pre>",
    ] {
        assert!(!same(html), "{html:?} streamed");
    }
}

#[test]
fn bogus_comments_and_markup_cut_short_stream_the_same() {
    // What html5lib's tokenizer tests showed the tokenizer could read as the standard
    // does: bogus comments, a page ending inside a comment or a tag, long numeric
    // references, attribute names starting with `=`.
    for html in [
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!DOCTYPE html><title>T</title><p>x",
        "<p>a<![if IE]><a href=ie>ie</a><![endif]>b</ p>c<!x>d",
        "<pre><?pi?>\nkept</pre>",
        "<p>text<a href=x>link</a><!-- cut",
        "<p>text<a href=x>link</a><b class=\"cut",
        "<p>text<a href=x>link</a></b",
        "<p><a =b href=x>l</a>&#0000000000065;&#99999999999;",
    ] {
        assert!(same(html), "{html:?} went to the tree");
    }
    // CDATA is text in SVG; after `</>` (no token) html5ever keeps a `<pre>`'s first
    // newline: both still the tree's.
    assert!(!same("<svg><![CDATA[<a href=x>]]></svg>"));
    assert!(!same("<pre></>\nkept</pre>"));
}

#[test]
fn end_tags_and_links_with_none_of_their_element_open_stream_the_same() {
    // The streaming pass counts the open elements of each tag and answers a search
    // for one of which none is open without a look at its stack.
    for html in [
        "<p>x</a>y</b>z</span>w</p>",
        "<div>x</li>y</dd>z</div>u",
        "<ul><li>a</li></ul></li>b",
        "<p>a<div>b</div></span>c",
        "<a href=1>x</a></a>y<a href=2>z</a>",
        "<b>x</b></b><i>y</i></i>",
        "<span>a<span>b</span></span></span>c",
        "<table><tr><td><a href=1>in</a></td></tr></table><a href=2>out</a></a>",
        "<a href=1>x</a><table><tr><td><a href=2>y<a href=3>z</a></td></tr></table>",
        "<div><p>a<section>b</section><p>c</div></x-y>d",
    ] {
        assert!(same(html), "{html:?} went to the tree");
    }
}

#[test]
fn a_base_after_a_link_goes_to_the_tree_which_resolves_every_link_against_it() {
    // Links resolve as they open in the streaming pass: one read before the `<base>`
    // would have resolved against the page URL.
    let html = "<p><a href=x>one</a><base href='/late/'><a href=y>two</a>";
    assert!(!same(html), "streamed");
    let url = Url::parse("http://site.test/dir/page.html").unwrap();
    let tree = parse(html, ParseLimits::default()).unwrap();
    let links = extract(&tree, &url, false).links;
    let hrefs: Vec<&str> = links.iter().map(|l| l.href).collect();
    assert_eq!(
        hrefs,
        ["http://site.test/late/x", "http://site.test/late/y"]
    );
    // A `<base>` before the links streams.
    assert!(same(
        "<base href='/b/'><p><a href=x>one</a><a href=y>two</a>"
    ));
}

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[(self.next() % from.len() as u64) as usize]
    }
    fn tag(&mut self) -> &'static str {
        if self.next().is_multiple_of(8) {
            self.pick(RARE_TAGS)
        } else {
            self.pick(TAGS)
        }
    }
}

const TAGS: &[&str] = &[
    "p",
    "div",
    "span",
    "a href=l",
    "a href='x y' rel=nofollow",
    "b",
    "i",
    "em",
    "strong",
    "code",
    "pre",
    "ul",
    "ol start=3",
    "li",
    "dl",
    "dt",
    "dd",
    "table",
    "h1 id=h",
    "h2",
    "h3",
    "main",
    "nav",
    "header",
    "footer",
    "aside",
    "section",
    "article",
    "br",
    "hr",
    "img src=i.png alt=I",
    "blockquote",
    "font",
    "u",
    "small",
    "div role=main",
    "div role=navigation",
    "div hidden",
    "section role=banner",
    "svg",
    "path",
    "g",
    "input",
    "kbd",
    "samp",
    "menu",
    "details",
    "summary",
    "figure",
    "figcaption",
    "address",
    "center",
    "label",
    "sup",
    // Metadata and microdata (generic::meta).
    "div itemscope itemtype=T",
    "span itemprop=name",
    "p itemprop='headline author'",
    "a itemprop=url href=u",
    "time datetime=2024-03-05",
    "span class=byline",
];

/// Tags the tree builder treats in their own ways, picked one time in eight.
const RARE_TAGS: &[&str] = &[
    "tbody",
    "tr",
    "td",
    "th",
    "thead",
    "template",
    "form",
    "button",
    "title",
    "textarea",
    "script",
    "style",
    "noscript",
    "iframe",
    "body",
    "html lang=fr",
    "head",
    "base href=/b/",
    "meta name=description content=D",
    "link rel=canonical href=/c",
    "object",
    "nobr",
    "caption",
    "select",
    "option",
    "math",
    "listing",
    "xmp",
];

const TEXT: &[&str] = &[
    "word",
    " ",
    "  two words ",
    "\n",
    "\n  ",
    "&amp;",
    "&lt;x&gt;",
    "&copy",
    "&notin;",
    "&#65;",
    "&#x80;",
    "x & y",
    "a<b",
    "*star*",
    "_u_",
    "[br]",
    "`tick`",
    "|pipe|",
    "é",
    "<!-- c -->",
    "<!DOCTYPE html>",
    "\r\n",
    "-->",
    "<table><tr><td>c1<td>c2<tr><th>h</table>",
    "<table> <thead><tr><th>H</th></tr></thead> <tbody><tr><td>D</td></tr></tbody> </table>",
    "<title>T &amp; t</title>",
    "<script>x = a < b;</script>",
    "<style>p{}</style>",
    "<template><a href=t>t</a></template>",
    "<textarea>\nx</textarea>",
    r#"<script type=application/ld+json>{"@type":"Article","headline":"H","author":"A"}</script>"#,
    "<script type=application/ld+json>{broken</script>",
    "<meta property=og:title content=O><meta itemprop=datePublished content=2024-01-02>",
];

/// A page of random tags: balanced by a stack of open tags (end tags mostly in
/// order, sometimes left out or misplaced) when `balanced`, else at random.
fn random_page(rng: &mut Rng, balanced: bool) -> String {
    let mut page = String::new();
    if rng.next().is_multiple_of(2) {
        page.push_str("<!DOCTYPE html>");
    }
    let mut open: Vec<&str> = Vec::new();
    let n = 5 + rng.next() % 40;
    for _ in 0..n {
        if balanced {
            match rng.next() % 10 {
                0..=3 => {
                    let tag = rng.tag();
                    page.push('<');
                    page.push_str(tag);
                    page.push('>');
                    open.push(tag.split(' ').next().unwrap_or("p"));
                }
                4..=5 => {
                    if let Some(tag) = open.pop()
                        && !rng.next().is_multiple_of(8)
                    {
                        page.push_str("</");
                        page.push_str(tag);
                        page.push('>');
                    }
                }
                _ => page.push_str(rng.pick(TEXT)),
            }
            continue;
        }
        match rng.next() % 10 {
            0..=3 => {
                let tag = rng.tag();
                page.push('<');
                page.push_str(tag);
                if rng.next().is_multiple_of(12) {
                    page.push('/');
                }
                page.push('>');
            }
            4..=6 => {
                let tag = rng.tag().split(' ').next().unwrap_or("p");
                page.push_str("</");
                page.push_str(tag);
                page.push('>');
            }
            _ => page.push_str(rng.pick(TEXT)),
        }
    }
    page
}

#[test]
fn generated_pages_stream_the_same_or_go_to_the_tree() {
    let cases: u64 = std::env::var("RIP_DIFF_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let seed: u64 = std::env::var("RIP_DIFF_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_1234_abcd_0001);
    let mut rng = Rng(seed);
    let mut streamed = 0;
    let mut bails = std::collections::BTreeMap::new();
    let url = Url::parse("http://site.test/dir/page.html").unwrap();
    for i in 0..cases {
        let page = random_page(&mut rng, i % 2 == 0);
        if same(&page) {
            streamed += 1;
        } else if let Err(b) = extract_streaming(&page, &url, true, ParseLimits::default()) {
            *bails.entry(b.0).or_insert(0) += 1;
        }
    }
    eprintln!("{streamed} of {cases} streamed; the others: {bails:#?}");
    // Most generated pages are misnested on purpose; a good share must still stream,
    // or this test compares nothing.
    assert!(streamed * 4 >= cases, "only {streamed} of {cases} streamed");
}

/// The outcome of `page` with the streaming pass on or off, as JSON without its
/// timestamps, and how many pages took the streaming pass.
pub(crate) fn outcome_json(
    opts: &rip_parse::ExtractOptions,
    page: &serde_json::Value,
) -> serde_json::Value {
    let line = page.to_string();
    let mut v = match rip_parse::process::page_line(opts, &line) {
        o @ rip_parse::Outcome::Doc { .. } => serde_json::to_value(o.into_doc()).unwrap(),
        rip_parse::Outcome::Failure { failure, .. } => serde_json::to_value(failure).unwrap(),
        rip_parse::Outcome::BadRecord(m) => serde_json::Value::String(m),
    };
    if let Some(o) = v.as_object_mut() {
        o.remove("failedAt");
    }
    v
}

#[test]
fn rules_files_stream_to_the_same_docs_and_failures() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages = Vec::new();
    html_files(&root.join("testdata/site"), &mut pages);
    let mut compared = 0;
    // gloomhollow's selectors use `:first-child`, which needs a tree: its pages all go
    // to the tree path, and the test checks that they do.
    for (rules, streams) in [
        ("emberfall-by-url.toml", true),
        ("gloomhollow-by-content.toml", false),
        ("rustdoc.toml", true),
    ] {
        let path = root.join("testdata/parse/rules").join(rules);
        let rules = std::sync::Arc::new(rip_parse::Rules::load(&path).unwrap());
        for markdown in [false, true] {
            let stream = rip_parse::ExtractOptions {
                rules: Some(rules.clone()),
                markdown,
                ..Default::default()
            };
            let tree = rip_parse::ExtractOptions {
                stream: false,
                ..stream.clone()
            };
            for file in &pages {
                let rel = file.strip_prefix(root.join("testdata/site")).unwrap();
                let url = format!("http://site.test/{}", rel.display());
                let body = std::fs::read(file).unwrap();
                let page = crate::support::page(&url, "text/html", &body, false);
                assert_eq!(
                    outcome_json(&stream, &page),
                    outcome_json(&tree, &page),
                    "{} with {}",
                    rel.display(),
                    path.display()
                );
                compared += 1;
            }
            let streamed = stream
                .paths
                .streamed
                .load(std::sync::atomic::Ordering::Relaxed);
            assert_eq!(
                streamed > 0,
                streams,
                "{streamed} pages of {} streamed",
                path.display()
            );
        }
    }
    assert!(compared > 300, "{compared}");
}

/// Selectors of every kind the streaming pass matches (and a few it leaves to the tree),
/// each a list field of one concept: the docs of both paths must agree on every page.
const SELECTORS: &[(&str, &str)] = &[
    ("p", "text"),
    ("div p", "text"),
    ("div > p", "text"),
    ("a[href]", "attr"),
    ("a[href^='http']", "attr"),
    ("a[href$='.html']", "text"),
    ("a[href*='item']", "text"),
    ("[class~='name']", "text"),
    (".name, .description", "text"),
    ("#firstHeading, h1#t", "text"),
    ("ul li", "markdown"),
    ("ul > li", "text"),
    ("li:not(.x)", "text"),
    (":is(h1, h2) span", "text"),
    (":where(dd, dt)", "text"),
    ("html > body > *", "exists"),
    (":root > body p", "text"),
    ("[lang|=en]", "exists"),
    ("table td", "text"),
    ("svg path, svg", "exists"),
    ("a[rel=nofollow i]", "text"),
    ("article h1 ~ p", "text"),
    ("li:first-child", "text"),
];

fn selectors_rules() -> std::sync::Arc<rip_parse::Rules> {
    let mut toml =
        String::from("name = \"selectors\"\n[[concept]]\nname = \"all\"\nmatch.url = '.'\n");
    for (i, (sel, how)) in SELECTORS.iter().enumerate() {
        let extract = match *how {
            "attr" => "attr = \"href\", ".to_owned(),
            "text" => String::new(),
            other => format!("extract = \"{other}\", "),
        };
        let list = if *how == "exists" {
            ""
        } else {
            ", list = true"
        };
        toml.push_str(&format!(
            "fields.f{i} = {{ {extract}selector = \"{sel}\"{list} }}\n"
        ));
    }
    let rules = rip_parse::Rules::parse(&toml, Path::new("selectors.toml")).unwrap();
    std::sync::Arc::new(rules)
}

/// [`SELECTORS`] but the last two, which need a tree: the fields the streaming pass reads.
pub(crate) fn streaming_selectors_rules() -> std::sync::Arc<rip_parse::Rules> {
    let all = selectors_rules();
    assert!(
        !all.concepts[0].streams(),
        "sibling and :first-child need a tree"
    );
    let mut concept = all.concepts[0].clone();
    concept.fields.truncate(SELECTORS.len() - 2);
    assert!(concept.streams());
    std::sync::Arc::new(rip_parse::Rules {
        path: all.path.clone(),
        concepts: vec![concept],
        unknown: all.unknown.clone(),
    })
}

#[test]
fn selectors_match_the_same_elements_in_both_paths() {
    let stream = rip_parse::ExtractOptions {
        rules: Some(streaming_selectors_rules()),
        ..Default::default()
    };
    let tree = rip_parse::ExtractOptions {
        stream: false,
        ..stream.clone()
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/site");
    let mut files = Vec::new();
    html_files(&root, &mut files);
    let mut bodies: Vec<String> = files
        .iter()
        .map(|f| String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned())
        .collect();
    let mut rng = Rng(0x5e1e_c7a0_0000_0007);
    bodies.extend((0..1500).map(|i| random_page(&mut rng, i % 3 != 0)));
    for body in &bodies {
        let page = crate::support::page(
            "http://site.test/a/b.html",
            "text/html",
            body.as_bytes(),
            false,
        );
        assert_eq!(
            outcome_json(&stream, &page),
            outcome_json(&tree, &page),
            "{body:?}"
        );
    }
    let streamed = stream
        .paths
        .streamed
        .load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        streamed as usize * 3 >= bodies.len(),
        "{streamed} of {} streamed",
        bodies.len()
    );
}
