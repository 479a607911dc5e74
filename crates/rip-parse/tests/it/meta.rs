//! A generic doc's metadata and structured data, on small pages written for each
//! source: JSON-LD (with `@graph`, references, a broken block), OpenGraph and Twitter
//! cards, microdata nested in the article, `<meta>` tags, the page itself, dates in
//! several forms, right-to-left and non-Latin pages, and pages with none of it. Each
//! page is read by the streaming pass and from a tree, which must agree.

use rip_parse::dom::{ParseLimits, parse};
use rip_parse::generic::{extract, extract_streaming};
use serde_json::{Value, json};
use url::Url;

const URL: &str = "http://news.test/2024/03/rivers.html";

/// The doc fields of `html`, the same from the streaming pass and from a tree.
fn fields(html: &str) -> Value {
    let url = Url::parse(URL).unwrap();
    let limits = ParseLimits::default();
    let tree = parse(html, limits).unwrap();
    let want = Value::Object(extract(&tree, &url, false).into_fields());
    let got = extract_streaming(html, &url, false, limits).expect("streams");
    assert_eq!(Value::Object(got.into_fields()), want, "streamed vs tree");
    want
}

const META_FIELDS: &[&str] = &[
    "headline",
    "authors",
    "published",
    "modified",
    "siteName",
    "excerpt",
    "image",
    "structured",
];

#[test]
fn json_ld_graph_items_are_flattened_and_read_by_reference() {
    let f = fields(
        r##"<!doctype html><html lang="en"><head>
        <title>Why rivers meander | The Daily Planet</title>
        <script type="application/ld+json">{"@context":"https://schema.org","@graph":[
          {"@type":"WebSite","@id":"http://news.test/#site","name":"The Daily Planet"},
          {"@type":"WebPage","@id":"http://news.test/2024/03/rivers.html","name":"Why rivers meander | The Daily Planet"},
          {"@type":"Person","@id":"http://news.test/#ann","name":"Ann Lee"},
          {"@type":"NewsArticle","headline":"Why rivers meander","author":[{"@id":"http://news.test/#ann"},{"@type":"Person","name":"Bo Chen"}],
           "datePublished":"2024-03-05T14:30:00+01:00","dateModified":"2024-03-06T08:00:00Z",
           "publisher":{"@type":"Organization","name":"The Daily Planet"},
           "image":{"@type":"ImageObject","url":"/img/river.jpg"},
           "description":"Water finds the longest way."}
        ]}</script></head>
        <body><h1>Why rivers meander</h1><p>Text.</p></body></html>"##,
    );
    assert_eq!(f["headline"], "Why rivers meander");
    assert_eq!(f["authors"], json!(["Ann Lee", "Bo Chen"]));
    assert_eq!(f["published"], "2024-03-05T14:30:00+01:00");
    assert_eq!(f["modified"], "2024-03-06T08:00:00Z");
    assert_eq!(f["siteName"], "The Daily Planet");
    assert_eq!(f["excerpt"], "Water finds the longest way.");
    assert_eq!(f["image"], "http://news.test/img/river.jpg");
    let ld = f["structured"]["jsonLd"].as_array().unwrap();
    assert_eq!(ld.len(), 4, "one item per @graph node: {ld:?}");
    assert_eq!(ld[3]["@type"], "NewsArticle");
    assert!(f["structured"].get("warnings").is_none());
}

#[test]
fn a_broken_json_ld_block_is_a_warning_and_the_others_are_read() {
    let f = fields(
        r#"<html><head><title>T</title>
        <script type="application/ld+json">{"@type":"BlogPosting","headline":"Good block","author":"Cy Dee"}</script>
        <script type="application/ld+json">{"@type":"Organization" "name":"Broken"}</script>
        <script type="APPLICATION/LD+JSON">[{"@type":"Event","name":"Third"}]</script>
        </head><body><p>x</p></body></html>"#,
    );
    assert_eq!(f["headline"], "Good block");
    assert_eq!(f["authors"], json!(["Cy Dee"]));
    assert_eq!(f["structured"]["jsonLd"].as_array().unwrap().len(), 2);
    let warnings = f["structured"]["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.starts_with("jsonLd block 2: expected `,` or `}` at line 1 column"),
        "{w}"
    );
}

#[test]
fn open_graph_and_twitter_cards_are_kept_and_read() {
    let f = fields(
        r#"<html><head><title>Moon landing — Planet News</title>
        <meta property="og:title" content="Moon landing">
        <meta property="og:site_name" content="Planet News">
        <meta property="og:image" content="https://cdn.test/moon.jpg">
        <meta property="og:description" content="They landed.">
        <meta property="article:published_time" content="2024-07-20T20:17:40Z">
        <meta property="article:author" content="https://news.test/authors/ann">
        <meta property="article:tag" content="space"><meta property="article:tag" content="moon">
        <meta name="twitter:card" content="summary_large_image">
        <meta name="twitter:title" content="Moon landing (card)">
        <meta name="author" content="Ann Lee">
        </head><body><p>x</p></body></html>"#,
    );
    assert_eq!(f["headline"], "Moon landing");
    assert_eq!(f["siteName"], "Planet News");
    assert_eq!(f["image"], "https://cdn.test/moon.jpg");
    assert_eq!(f["excerpt"], "They landed.");
    assert_eq!(f["published"], "2024-07-20T20:17:40Z");
    assert_eq!(f["authors"], json!(["Ann Lee"]), "a URL is not a name");
    assert_eq!(
        f["structured"]["openGraph"]["article:tag"],
        json!(["space", "moon"])
    );
    assert_eq!(f["structured"]["openGraph"]["og:title"], "Moon landing");
    assert_eq!(
        f["structured"]["twitter"],
        json!({"twitter:card":"summary_large_image","twitter:title":"Moon landing (card)"})
    );
}

#[test]
fn microdata_nested_in_the_article_is_read_as_extruct_gives_it() {
    let f = fields(
        r#"<html><head><title>Blog</title></head><body><nav><a href="/">Home</a></nav>
        <article itemscope itemtype="https://schema.org/BlogPosting" itemid="urn:post:7">
          <h1 itemprop="headline">Notes on   <em>moss</em></h1>
          <p>By <span itemprop="author" itemscope itemtype="https://schema.org/Person">
            <a itemprop="url" href="/people/ann"><span itemprop="name">Ann Lee</span></a></span>,
            <time itemprop="datePublished" datetime="2024-03-05">5 March</time></p>
          <meta itemprop="dateModified" content="2024-03-07">
          <img itemprop="image" src="moss.jpg" alt="">
          <div itemprop="articleBody"><p>Moss grows.</p></div>
          <span itemprop="keywords">moss</span><span itemprop="keywords">green</span>
        </article></body></html>"#,
    );
    assert_eq!(
        f["structured"]["microdata"],
        json!([{
            "type": "https://schema.org/BlogPosting",
            "id": "urn:post:7",
            "properties": {
                "headline": "Notes on moss",
                "author": {"type": "https://schema.org/Person", "properties": {
                    "url": "http://news.test/people/ann", "name": "Ann Lee"}},
                "datePublished": "2024-03-05",
                "dateModified": "2024-03-07",
                "image": "http://news.test/2024/03/moss.jpg",
                "articleBody": "Moss grows.",
                "keywords": ["moss", "green"]
            }
        }])
    );
    assert_eq!(f["headline"], "Notes on moss");
    assert_eq!(f["authors"], json!(["Ann Lee"]));
    assert_eq!(f["published"], "2024-03-05");
    assert_eq!(f["modified"], "2024-03-07");
    assert_eq!(f["image"], "http://news.test/2024/03/moss.jpg");
}

#[test]
fn the_site_name_glued_to_the_title_is_cut_off() {
    for (head, want) in [
        (
            r#"<title>How rivers meander — The Planet</title><meta property="og:site_name" content="The Planet">"#,
            "How rivers meander",
        ),
        (
            r#"<title>The Planet | How rivers meander</title><meta name="application-name" content="The Planet">"#,
            "How rivers meander",
        ),
        (
            "<title>How rivers meander - Science - The Planet</title>",
            "How rivers meander",
        ),
        ("<title>Rust - Wikipedia</title>", "Rust - Wikipedia"),
    ] {
        let f = fields(&format!(
            "<html><head>{head}</head><body><h1>How rivers meander</h1><p>x</p></body></html>"
        ));
        assert_eq!(f["headline"], want, "{head}");
    }
}

#[test]
fn dates_in_several_forms_are_iso_8601_or_kept_as_written() {
    for (tag, published) in [
        (
            r#"<meta name="date" content="March 5, 2024">"#,
            "2024-03-05",
        ),
        (
            r#"<meta name="DC.date.issued" content="2024/03/05">"#,
            "2024-03-05",
        ),
        (
            r#"<meta name="citation_publication_date" content="2024-03-05 14:30:00 +0000">"#,
            "2024-03-05T14:30:00Z",
        ),
        (
            r#"<meta property="article:published_time" content="Tue, 5 Mar 2024 14:30:00 +0100">"#,
            "2024-03-05T14:30:00+01:00",
        ),
        (r#"<meta name="pubdate" content="yesterday">"#, "yesterday"),
        (
            r#"</head><body><p>On <time datetime="2024-03-05T14:30">5 March</time></p>"#,
            "2024-03-05T14:30:00",
        ),
        (
            r#"</head><body><time datetime="2020-01-01">old</time><time pubdate datetime="2024-03-05">new</time>"#,
            "2024-03-05",
        ),
    ] {
        let f = fields(&format!("<html><head><title>T</title>{tag}<p>x</p></html>"));
        assert_eq!(f["published"], published, "{tag}");
    }
}

#[test]
fn bylines_are_the_last_resort_for_authors() {
    let f = fields(
        r#"<html><head><title>T</title></head><body><article><h1>T</h1>
        <div class="post-byline">By Bo Chen</div><a rel="author" href="/ann">Ann Lee</a>
        <p>Text</p></article></body></html>"#,
    );
    assert_eq!(f["authors"], json!(["Bo Chen"]));
    let f = fields(
        r#"<html><head><title>T</title><meta name="author" content="Cy Dee"></head>
        <body><span class="author">Somebody Else</span></body></html>"#,
    );
    assert_eq!(f["authors"], json!(["Cy Dee"]), "<meta> before the page");
}

#[test]
fn a_page_without_metadata_has_none_of_the_fields() {
    for html in [
        "<html><body><p>Hello</p></body></html>",
        "<p>no head at all",
        "<html><head><script type=application/ld+json></script></head><body>x</body></html>",
    ] {
        let f = fields(html);
        for k in META_FIELDS {
            assert!(f.get(k).is_none(), "{k} on {html}: {f}");
        }
    }
    let f = fields("<html><head><title>Just a title</title></head><body><p>x</p></body></html>");
    assert_eq!(f["headline"], "Just a title");
}

#[test]
fn right_to_left_and_non_latin_pages() {
    let f = fields(
        r#"<html lang="ar" dir="rtl"><head><title>عنوان المقال | الموقع</title>
        <meta property="og:site_name" content="الموقع"><meta name="author" content="كاتب المقال">
        <meta name="description" content="وصف قصير للمقال."></head>
        <body><h1>عنوان المقال</h1><p>نص.</p></body></html>"#,
    );
    assert_eq!(f["lang"], "ar");
    assert_eq!(f["headline"], "عنوان المقال");
    assert_eq!(f["siteName"], "الموقع");
    assert_eq!(f["authors"], json!(["كاتب المقال"]));
    assert_eq!(f["excerpt"], "وصف قصير للمقال.");

    let f = fields(
        r#"<html lang="ja"><head><title>川が蛇行する理由 - 地球新聞</title>
        <script type="application/ld+json">{"@type":"Article","headline":"川が蛇行する理由",
        "author":{"@type":"Person","name":"山田 花子"},"datePublished":"2024-03-05T09:00:00+09:00"}</script>
        </head><body><h1>川が蛇行する理由</h1></body></html>"#,
    );
    assert_eq!(f["headline"], "川が蛇行する理由");
    assert_eq!(f["authors"], json!(["山田 花子"]));
    assert_eq!(f["published"], "2024-03-05T09:00:00+09:00");

    let f = fields(
        "<html lang=ru><head><title>Почему реки петляют — Планета</title></head><body><h1>Почему реки петляют</h1></body></html>",
    );
    assert_eq!(f["headline"], "Почему реки петляют");
}

#[test]
fn a_long_description_is_cut_to_a_short_excerpt() {
    let long = "word ".repeat(100);
    let f = fields(&format!(
        r#"<html><head><meta name="description" content="{long}"></head><body></body></html>"#
    ));
    let e = f["excerpt"].as_str().unwrap();
    assert!(e.chars().count() <= 301 && e.ends_with("word…"), "{e}");
    assert_eq!(
        f["description"],
        long.trim(),
        "the description itself is whole"
    );
}

/// A product page whose facts are in JSON-LD (an `@graph`, the brand by reference).
fn product_page(json_ld: &str) -> Value {
    let body = format!(
        r#"<html><head><title>Lamp | Shop</title>
        <script type="application/ld+json">{json_ld}</script></head>
        <body><h1>Lamp</h1><p class="tagline">Bright.</p></body></html>"#
    );
    crate::support::page(
        "http://shop.test/products/lamp-7.html",
        "text/html",
        body.as_bytes(),
        false,
    )
}

#[test]
fn rules_read_fields_from_json_ld_in_both_paths() {
    let rules = crate::support::testdata("parse/rules/shop-jsonld.toml");
    let good = product_page(
        r##"{"@context":"https://schema.org","@graph":[{"@type":"Product","name":"Lamp",
        "sku":7,"color":["red","blue"],"brand":{"@id":"#luxo"},
        "offers":{"@type":"Offer","price":"12.50","priceCurrency":"EUR"}},
        {"@type":"Brand","@id":"#luxo","name":"Luxo"}]}"##,
    );
    let broken = product_page(r#"{"@type":"Product","name":"Lamp","offers":{"price":}}"#);
    let input = crate::support::ndjson(&[good, broken]);
    let mut outs = Vec::new();
    for args in [&[][..], &["--no-stream"][..]] {
        let mut a = vec!["--rules", rules.to_str().unwrap()];
        a.extend_from_slice(args);
        let r = crate::support::run(&a, &input);
        assert_eq!(r.code, 2, "partial: the broken page fails: {}", r.stderr);
        let out = r.values();
        let doc = &out[0];
        assert_eq!(doc["concept"], "product", "{doc}");
        assert_eq!(doc["id"], "lamp-7");
        assert_eq!(doc["name"], "Lamp");
        assert_eq!(doc["price"], 12.5);
        assert_eq!(doc["currency"], "EUR");
        assert_eq!(doc["sku"], "7");
        assert_eq!(doc["brand"], "Luxo");
        assert_eq!(doc["colours"], json!(["red", "blue"]));
        assert_eq!(doc["tagline"], "Bright.");
        let failure = &out[1];
        assert_eq!(failure["_type"], "failure");
        assert_eq!(failure["errors"][0]["code"], "parse.rule");
        let message = failure["errors"][0]["message"].as_str().unwrap();
        assert!(
            message.contains("jsonld `Product.offers.price`"),
            "{message}"
        );
        outs.push(out[..2].to_vec());
    }
    let strip = |v: &Value| {
        let mut v = v.clone();
        for k in ["elapsedMs", "failedAt"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v
    };
    let [a, b] = [&outs[0], &outs[1]].map(|o| o.iter().map(strip).collect::<Vec<_>>());
    assert_eq!(a, b, "streamed and tree docs agree");
}

#[test]
fn a_declared_headline_the_page_does_not_show_loses_to_one_it_does() {
    // Wikipedia's JSON-LD gives the subject's description as its `headline`.
    let f = fields(
        r#"<html><head><title>New Zealand - Wikipedia</title>
        <script type="application/ld+json"><![CDATA[{"@type":"Article","name":"New Zealand",
        "headline":"constitutional monarchy in Oceania"}]]></script></head>
        <body><h1>New Zealand</h1></body></html>"#,
    );
    assert_eq!(f["headline"], "New Zealand");
    // Nothing shown: the first declared, in the order of trust.
    let f = fields(
        r#"<html><head><title>Site</title><meta property="og:title" content="Social title">
        <meta name="twitter:title" content="Card title"></head><body></body></html>"#,
    );
    assert_eq!(f["headline"], "Social title");
}

#[test]
fn a_declared_headline_that_is_the_sites_name_is_passed_over() {
    // `og:title` left at the site's default, the site's `application-name`: the story's
    // headline is in the <title> and the <h1>.
    let f = fields(
        r#"<html><head><title>Russia: Space ship breaks up over Siberia</title>
        <meta name="application-name" content="Daily News - Latest News &amp; Headlines">
        <meta property="og:title" content="Daily News - Latest News &amp; Headlines"></head>
        <body><h1>Russia: Space ship breaks up over Siberia</h1></body></html>"#,
    );
    assert_eq!(f["headline"], "Russia: Space ship breaks up over Siberia");
    assert_eq!(f["siteName"], "Daily News - Latest News & Headlines");
}

#[test]
fn a_declared_headline_is_cut_to_the_heading_the_page_shows() {
    // `og:title` with the author glued on; the <h1> is the headline alone.
    let f = fields(
        r#"<html><head><title>Whale strandings | Ann Lee | Environment | The Planet</title>
        <meta property="og:title" content="Whale strandings | Ann Lee"></head>
        <body><h1>Whale strandings</h1></body></html>"#,
    );
    assert_eq!(f["headline"], "Whale strandings");
}

#[test]
fn a_meta_tag_may_give_several_properties_and_dublin_core_any_prefix() {
    let f = fields(
        r#"<html><head><title>Title Element</title>
        <meta property="x:title dc:title" content="Preferred title">
        <meta property="dc:creator twitter:site_name" content="Creator Name">
        <meta name="DCTERMS.issued" content="2024-03-05"></head><body></body></html>"#,
    );
    assert_eq!(f["headline"], "Preferred title");
    assert_eq!(f["authors"], json!(["Creator Name"]));
    assert_eq!(f["published"], "2024-03-05");
    assert_eq!(
        f["structured"]["twitter"]["twitter:site_name"],
        "Creator Name"
    );
}

#[test]
fn a_byline_is_its_first_line_with_a_name_not_an_avatars_initials() {
    let f = fields(
        r#"<html><head><title>T</title></head><body>
        <div class="author"><span class="avatar">J</span><br>J</div>
        <div class="byline"><p>By Ben Silverman</p><p>Games Editor</p></div></body></html>"#,
    );
    assert_eq!(f["authors"], json!(["Ben Silverman"]));
    let f = fields(
        r#"<html><head><title>T</title></head><body><cite class="byline vcard">
        <span>By </span><span class="fn">GILLIAN MOHNEY</span></cite></body></html>"#,
    );
    assert_eq!(f["authors"], json!(["GILLIAN MOHNEY"]), "a <cite> byline");
}

#[test]
fn an_h1_that_is_all_a_link_is_a_logo_not_a_hint() {
    let f = fields(
        r#"<html><head><title>Shared Mutable History — evolve extension for Mercurial</title></head>
        <body><div class="header"><h1><a href="index.html"><span>evolve extension for Mercurial</span></a></h1>
        <h2>Shared Mutable History</h2></div><p>Text.</p></body></html>"#,
    );
    assert_eq!(
        f["headline"],
        "Shared Mutable History — evolve extension for Mercurial"
    );
    let f = fields(
        "<html><head><title>Moss - Notes</title></head><body><h1><a href=/>Notes</a></h1>\
         <h1>Moss <a href=/tags/moss>#</a></h1></body></html>",
    );
    assert_eq!(
        f["headline"], "Moss",
        "the next <h1>, with text outside its link"
    );
    // Sphinx's headings: a link back to the contents, then the heading's own anchor.
    let f = fields(
        r##"<html><head><title>Evolve: Shared Mutable History — evolve extension for Mercurial</title></head>
        <body><h1><a href="index.html"><span>evolve extension for Mercurial</span></a></h1>
        <h1><a class="toc-backref" href="#id4">Evolve: Shared Mutable History</a><a class="headerlink"
        href="#evolve-shared-mutable-history">¶</a></h1><p>Text.</p></body></html>"##,
    );
    assert_eq!(
        f["headline"], "Evolve: Shared Mutable History",
        "an <h1> whose links go to places in the page is a heading"
    );
}

#[test]
fn every_author_a_meta_key_lists_is_kept() {
    let f = fields(
        r#"<html><head><title>RFC</title><meta name="creator" content="rfcmarkup">
        <meta name="DC.Creator" content="Kooman, F."><meta name="DC.Creator" content="Jong, Michiel de">
        <meta name="author" content="Somebody"></head><body></body></html>"#,
    );
    assert_eq!(f["authors"], json!(["Kooman, F.", "Jong, Michiel de"]));
    let f = fields(
        r#"<html><head><meta name="citation_author" content="Lee, Ann">
        <meta name="citation_author" content="Chen, Bo"></head><body></body></html>"#,
    );
    assert_eq!(f["authors"], json!(["Lee, Ann", "Chen, Bo"]));
}

#[test]
fn an_itemprop_author_element_is_a_byline() {
    // An author item of its own (no item around it), so no microdata `author`.
    let f = fields(
        r#"<html lang="ar" dir="rtl"><head><title>عنوان</title></head><body><article>
        <span class="writer" itemprop="author" itemscope itemtype="http://schema.org/Person">
        <span itemprop="name">سارة أحمد</span></span><p>نص المقال.</p></article></body></html>"#,
    );
    assert_eq!(f["authors"], json!(["سارة أحمد"]));
}

#[test]
fn a_commenters_name_is_no_byline_the_articles_is() {
    let para = "Слова статьи, много слов, и ещё больше слов, чтобы это было статьёй. ".repeat(4);
    let f = fields(&format!(
        r#"<html lang="ru"><head><title>Заголовок</title></head><body>
        <ul class="comments-list"><li class="comment"><div class="byline">Иван Петров</div>
        <p>Комментарий</p></li></ul>
        <div class="story"><div class="author-name">Наталья Васильева</div>
        <p>{para}</p><p>{para}</p><p>{para}</p></div></body></html>"#
    ));
    assert_eq!(f["authors"], json!(["Наталья Васильева"]));
    // A byline only in the comments: none.
    let f = fields(&format!(
        r#"<html><head><title>T</title></head><body><div class="story"><p>{para}</p>
        <p>{para}</p></div><div id="comments"><span class="byline">Ann Lee</span>
        <p>Nice.</p></div></body></html>"#
    ));
    assert!(f.get("authors").is_none(), "{f}");
}

#[test]
fn a_byline_in_the_article_wins_over_one_around_it() {
    let para = "Words of the article, many words, and more of them, to make it one. ".repeat(4);
    let f = fields(&format!(
        r#"<html><head><title>T</title></head><body>
        <div class="teaser"><a href="/other">Other story</a><span class="byline">Joe Other</span></div>
        <div class="story"><h1>T</h1><span class="byline">By Ann Lee</span>
        <p>{para}</p><p>{para}</p><p>{para}</p></div></body></html>"#
    ));
    assert_eq!(f["authors"], json!(["Ann Lee"]));
}

#[test]
fn an_accounts_handle_is_no_authors_name() {
    let f = fields(
        r#"<html><head><title>T</title><script type="application/ld+json">
        {"@type":"NewsArticle","headline":"T","creator":"CC7567"}</script>
        <meta name="author" content="@ann"></head>
        <body><div class="byline"><a href="/u/CC7567"><img src="a.png">
        <span class="author-name">James Akinaka</span></a> • 8h</div></body></html>"#,
    );
    assert_eq!(f["authors"], json!(["James Akinaka"]));
}

#[test]
fn a_by_line_at_the_top_of_the_article_is_the_last_resort() {
    let f = fields(
        r#"<html lang="he" dir="rtl"><head><title>כותרת</title></head><body><main>
        <h1>כותרת</h1><p>מאת דנה לוי</p><p>טקסט הכתבה.</p></main></body></html>"#,
    );
    assert_eq!(f["authors"], json!(["דנה לוי"]));
    let f = fields(
        "<html><head><title>T</title></head><body><main><h1>T</h1>\
         <p>By and large, rivers meander.</p></main></body></html>",
    );
    assert!(f.get("authors").is_none(), "a sentence is no byline: {f}");
}

#[test]
fn a_key_given_as_property_and_as_name_is_read_from_its_property() {
    let f = fields(
        r#"<html><head><title>Title Element</title>
        <meta name="og:title" content="Open Graph name title">
        <meta property="og:title" content="Open Graph property title">
        <meta name="DC.creator" content="Dublin Core name author">
        <meta property="dc:creator" content="Dublin Core property author"></head>
        <body></body></html>"#,
    );
    assert_eq!(f["headline"], "Open Graph property title");
    assert_eq!(f["authors"], json!(["Dublin Core property author"]));
}

#[test]
fn a_byline_in_the_articles_header_is_the_articles() {
    // The header is named as boilerplate ("header"), but it holds the headline.
    let para = "Λέξεις του άρθρου, πολλές λέξεις, και άλλες ακόμη, για να γίνει άρθρο. ".repeat(4);
    let f = fields(&format!(
        r#"<html lang="el"><head><title>Τίτλος</title></head><body>
        <div class="sidebar"><a rel="author" href="/author/nikos">Νίκος Οικονόμου</a></div>
        <article class="post">
        <header class="entry-header"><h1>Τίτλος</h1><address class="vcard">
        <a href="/author/maria" rel="author">Μαρία Παπαδοπούλου</a></address></header>
        <div class="entry-content"><p>{para}</p><p>{para}</p><p>{para}</p></div>
        </article></body></html>"#
    ));
    assert_eq!(f["authors"], json!(["Μαρία Παπαδοπούλου"]));
}

#[test]
fn of_the_bylines_above_the_article_the_nearest_is_its() {
    // Teasers of other stories (each with its byline: more than the walk once kept)
    // above the article, in a part not named as boilerplate; the article's byline in its
    // header, outside its text.
    let para = "Palabras del artículo, muchas palabras, y más todavía, para que lo sea. ".repeat(4);
    let teaser = |n: u32| {
        format!(
            r#"<li><a href="/n/{n}">Otra historia {n}</a> <span class="byline">Juan Otro</span></li>"#
        )
    };
    let teasers: String = (0..20).map(teaser).collect();
    let f = fields(&format!(
        r#"<html lang="es"><head><title>Título</title></head><body>
        <ul class="teasers">{teasers}</ul>
        <div class="nota"><div class="cabecera"><h2>Título</h2>
        <p class="byline">Por Ana López</p></div></div>
        <div class="cuerpo"><p>{para}</p><p>{para}</p><p>{para}</p></div></body></html>"#
    ));
    assert_eq!(f["authors"], json!(["Ana López"]));
}
