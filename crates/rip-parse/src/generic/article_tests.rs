//! The main content on small pages written for each kind of boilerplate, read both ways
//! (the streaming pass and the tree), which must agree.

use url::Url;

use crate::dom::{ParseLimits, parse};
use crate::generic::{Generic, extract, extract_streaming};

/// A paragraph of prose about `topic`: long enough, with commas, to score as one.
fn prose(topic: &str) -> String {
    format!(
        "<p>The {topic} was studied at length, in the archive, by the river, and in the \
         old library, where the records of the {topic} had been kept for many years by \
         careful hands, so that anyone could read them.</p>"
    )
}

/// An article of `n` paragraphs, wrapped as `wrap` says (`{}` is the paragraphs).
fn article(n: usize) -> String {
    (0..n).map(|i| prose(&format!("lantern {i}"))).collect()
}

/// The generic fields of `html`, read both ways; they must be the same.
fn both(html: &str) -> Generic {
    let url = Url::parse("http://h/post.html").unwrap();
    let tree = extract(&parse(html, ParseLimits::default()).unwrap(), &url, true);
    let streamed =
        extract_streaming(html, &url, true, ParseLimits::default()).expect("the page streams");
    assert_eq!(streamed.text, tree.text, "text, streamed vs tree");
    assert_eq!(
        streamed.markdown, tree.markdown,
        "markdown, streamed vs tree"
    );
    assert_eq!(
        streamed.headings, tree.headings,
        "headings, streamed vs tree"
    );
    assert_eq!(streamed.content_from, tree.content_from);
    streamed
}

fn page(body: &str) -> String {
    format!("<!doctype html><html><head><title>T</title></head><body>{body}</body></html>")
}

#[track_caller]
fn keeps_article_without(g: &Generic, boilerplate: &[&str]) {
    for i in 0..4 {
        assert!(
            g.text.contains(&format!("lantern {i} was studied")),
            "{}",
            g.text
        );
    }
    for b in boilerplate {
        assert!(!g.text.contains(b), "{b:?} in the text: {}", g.text);
        let md = g.markdown.as_deref().unwrap_or_default();
        assert!(!md.contains(b), "{b:?} in the markdown: {md}");
    }
    let from = g.content_from.as_deref().unwrap();
    assert!(from.contains(": article"), "{from}");
}

#[test]
fn site_navigation_in_plain_divs_is_left_out() {
    let g = both(&page(&format!(
        r#"<div class="site-menu"><a href="/">Home</a> <a href="/news">News</a> <a href="/shop">Shop</a></div>
        <div id="content"><h1>The lanterns</h1>{}</div>
        <div class="footer">© Lantern Weekly · <a href="/about">About</a></div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["Home", "Shop", "© Lantern Weekly", "About"]);
    assert_eq!(g.headings.len(), 1, "the article's heading is kept");
}

#[test]
fn a_share_bar_inside_the_article_is_left_out() {
    let g = both(&page(&format!(
        r#"<article>{}<div class="share-buttons"><a href="https://facebook.example/">Share on Facebook</a>
        <a href="https://x.example/">Post to X</a></div>{}</article>"#,
        article(2),
        (2..4)
            .map(|i| prose(&format!("lantern {i}")))
            .collect::<String>()
    )));
    keeps_article_without(&g, &["Share on Facebook", "Post to X"]);
}

#[test]
fn a_subscribe_box_is_left_out() {
    let g = both(&page(&format!(
        r#"<div class="story">{}<div class="newsletter-signup"><p>Subscribe to our newsletter</p>
        <form><input name="email"><button>Sign up</button></form></div></div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["Subscribe to our newsletter", "Sign up"]);
}

#[test]
fn a_related_list_is_left_out() {
    let g = both(&page(&format!(
        r#"<div class="post">{}<ul class="related-stories"><li><a href="/a">Ten lamps you must see</a></li>
        <li><a href="/b">The wick, explained</a></li></ul></div>
        <div class="most-read"><h3>Most read</h3><ol><li><a href="/c">Oil prices</a></li></ol></div>"#,
        article(4)
    )));
    keeps_article_without(
        &g,
        &[
            "Ten lamps",
            "The wick, explained",
            "Most read",
            "Oil prices",
        ],
    );
}

#[test]
fn a_comment_section_is_left_out() {
    let g = both(&page(&format!(
        r#"<div class="entry-content">{}</div><div id="comments"><h2>3 comments</h2>
        <div class="comment"><p>Great read, thanks, I loved it, really, it was the best thing I read this week, truly.</p></div>
        <div class="comment"><p>I disagree with most of it, sadly, and I say so here, at length, for all to see.</p></div></div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["3 comments", "Great read", "I disagree"]);
}

#[test]
fn a_cookie_banner_is_left_out() {
    let g = both(&page(&format!(
        r#"<div id="cookie-consent"><p>We use cookies to improve your experience. <a href="/privacy">Privacy</a></p>
        <button>Accept all</button></div><div class="article-body">{}</div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["We use cookies", "Accept all"]);
}

#[test]
fn what_belongs_to_the_article_is_kept() {
    let g = both(&page(&format!(
        r#"<div class="article">{}<h2>Kinds</h2><ul><li>Oil lantern</li><li>Candle lantern</li></ul>
        <table><tr><th>Kind</th><th>Hours</th></tr><tr><td>Oil</td><td>12</td></tr></table>
        <pre><code>light(lantern);</code></pre><blockquote>A light in the dark.</blockquote>
        <figure><img src="l.png" alt=""><figcaption>A brass lantern</figcaption></figure>{}</div>"#,
        article(2),
        (2..4)
            .map(|i| prose(&format!("lantern {i}")))
            .collect::<String>()
    )));
    keeps_article_without(&g, &[]);
    for kept in [
        "Kinds",
        "Candle lantern",
        "Hours",
        "light(lantern);",
        "A light in the dark.",
        "A brass lantern",
    ] {
        assert!(g.text.contains(kept), "{kept:?} left out: {}", g.text);
    }
}

#[test]
fn a_page_with_no_article_keeps_its_content() {
    let items: String = (0..30)
        .map(|i| format!(r#"<li><a href="/item/{i}">Item {i}</a> 12 gp</li>"#))
        .collect();
    let g = both(&page(&format!(
        r#"<nav><a href="/">Home</a></nav><h1>All items</h1><ul class="items">{items}</ul>"#
    )));
    assert!(
        g.text.contains("Item 0") && g.text.contains("Item 29"),
        "{}",
        g.text
    );
    assert!(
        !g.text.contains("Home"),
        "the nav element is still left out"
    );
    assert_eq!(g.content_from.as_deref(), Some("body: no article"));
}

#[test]
fn reference_documentation_in_main_keeps_its_content() {
    // Rustdoc's shape: a <main> with item tables of links and short descriptions, and
    // class names that read like boilerplate (`section-header`).
    let rows: String = (0..20)
        .map(|i| format!(r#"<dt><a href="fn.f{i}.html">f{i}</a></dt><dd>Does thing {i}.</dd>"#))
        .collect();
    let g = both(&page(&format!(
        r##"<nav class="sidebar"><a href="/">crate</a></nav><main><h1>Module <a href="#">m</a></h1>
        <p>Short module docs.</p><h2 id="functions" class="section-header">Functions</h2>
        <dl class="item-table">{rows}</dl></main>"##
    )));
    assert!(
        g.text.contains("Functions") && g.text.contains("Does thing 19."),
        "{}",
        g.text
    );
    assert_eq!(g.content_from.as_deref(), Some("main: no article"));
}

#[test]
fn right_to_left_and_non_latin_articles() {
    let arabic = "<p>كان الفانوس مضاءً طوال الليل، وكان الحارس يراقبه بعناية، ويكتب في دفتره كل ساعة، حتى طلع الفجر على المدينة القديمة وهدأت الشوارع.</p>";
    let g = both(&format!(
        r#"<!doctype html><html lang="ar" dir="rtl"><body><div class="menu"><a href="/">الرئيسية</a> <a href="/news">أخبار</a></div>
        <div class="content">{}</div><div class="share"><a href="/s">شارك</a></div></body></html>"#,
        arabic.repeat(5)
    ));
    assert!(g.text.contains("الفانوس"), "{}", g.text);
    assert!(
        !g.text.contains("الرئيسية") && !g.text.contains("شارك"),
        "{}",
        g.text
    );
    assert!(g.content_from.as_deref().unwrap().contains(": article"));

    let chinese = "<p>灯笼在夜里一直亮着，守夜人小心地看着它，每个小时都在本子上写下记录，直到黎明照亮了古老的城市，街道也安静了下来，人们开始新的一天。</p>";
    let g = both(&format!(
        r#"<!doctype html><html lang="zh"><body><div class="nav-menu"><a href="/">首页</a> <a href="/n">新闻</a></div>
        <div id="article">{}</div><ul class="related"><li><a href="/r">相关文章</a></li></ul></body></html>"#,
        chinese.repeat(6)
    ));
    assert!(g.text.contains("灯笼"), "{}", g.text);
    assert!(
        !g.text.contains("首页") && !g.text.contains("相关文章"),
        "{}",
        g.text
    );
}

#[test]
fn an_article_inside_an_element_named_like_a_sidebar_is_still_found() {
    // As Readability retries without passing over such names: a CMS's layout class
    // (`panel-two-col-sidebar-mix`) holding the article and nothing else.
    let g = both(&page(&format!(
        r#"<div class="site-menu"><a href="/">Home</a> <a href="/news">News</a></div>
        <div class="panel-two-col-sidebar-mix"><div class="inner">{}</div></div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["Home", "News"]);
}

#[test]
fn a_page_that_says_it_is_an_article_is_narrowed_inside_its_main() {
    // More of the <main> is a list of other stories than the article: kept whole on a
    // page that says nothing, narrowed on one whose og:type or JSON-LD says "article".
    let others: String = (0..40)
        .map(|i| {
            format!(
                r#"<li><a href="/s/{i}">Another story about lamps and wicks, number {i}</a></li>"#
            )
        })
        .collect();
    let body = format!(
        r#"<main><div class="story-body">{}</div><ul class="more-stories">{others}</ul></main>"#,
        article(4)
    );
    for head in [
        r#"<meta property="og:type" content="article">"#,
        r#"<script type="application/ld+json">{"@context":"https://schema.org","@type": "NewsArticle","headline":"L"}</script>"#,
    ] {
        let g = both(&format!(
            "<!doctype html><html><head>{head}</head><body>{body}</body></html>"
        ));
        keeps_article_without(&g, &["Another story"]);
    }
    let g = both(&page(&body));
    assert!(
        g.text.contains("Another story"),
        "no article said: main kept whole"
    );
}

#[test]
fn a_block_of_short_paragraphs_beside_the_article_is_kept() {
    // Readability keeps siblings that score well or are long paragraphs; a block of
    // short paragraphs (a table of facts, a note in three parts) scores little but is
    // prose all the same.
    let g = both(&page(&format!(
        r#"<div class="site-menu"><a href="/">Home</a> <a href="/news">News</a></div>
        <div class="wrap"><div class="main-text">{}</div>
        <div><p>The wick is made of cotton thread.</p><p>The glass is blown by hand here.</p>
        <p>The oil is pressed from rape seed.</p></div></div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["Home"]);
    assert!(g.text.contains("The oil is pressed"), "{}", g.text);
}

#[test]
fn text_hidden_by_style_or_aria_is_left_out() {
    // As Readability's `_isProbablyVisible`: an inline `display: none` or `visibility:
    // hidden`, or `aria-hidden="true"`, hides an element from readers (a MathML copy of
    // each formula kept for screen readers, a collapsed menu, a pop-up's text).
    let g = both(&page(&format!(
        r#"<div class="article">{}<div style="display:none"><p>A copy of the lamp's formula, in MathML, for screen readers, long enough, with commas, to score.</p></div>
        <span style="Visibility: Hidden !important">Unseen caption</span>
        <div aria-hidden="true"><p>A modal dialog's text, never shown to a reader of the page, but long and with commas.</p></div>
        {}</div>"#,
        article(2),
        (2..4)
            .map(|i| prose(&format!("lantern {i}")))
            .collect::<String>()
    )));
    keeps_article_without(&g, &["formula", "Unseen caption", "modal dialog"]);
}

#[test]
fn a_sibling_named_as_boilerplate_is_not_joined() {
    // Readability joins the siblings of the best element that score well or read as
    // prose, but never one it passed over for its name: comments here, as long as the
    // article's note beside them.
    let comments: String = (0..3)
        .map(|i| {
            format!(
                "<p>Reader {i} says the lamp fair was the best one they went to in years and \
                 they will come back next spring for sure</p>"
            )
        })
        .collect();
    let g = both(&page(&format!(
        r#"<div class="wrap"><div class="article-text">{}</div>
        <p>A note from the editors: the fair takes place each year in the old market square of the town, in May.</p>
        <div class="user-comments">{comments}</div></div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["Reader 0", "Reader 2"]);
    assert!(g.text.contains("A note from the editors"), "{}", g.text);
}

#[test]
fn an_article_under_a_name_of_boilerplate_is_found_past_a_weak_block() {
    // As Readability retries without passing over boilerplate names when what is left is
    // no article: the article sits in a layout element named `site_header`, and the
    // best element outside it is a block of links that scores too little to be one.
    let teasers: String = (0..8)
        .map(|i| {
            format!(r#"<p><a href="/fair/{i}">Read more about the lamp fair in the north of town, part {i}</a> today</p>"#)
        })
        .collect();
    let g = both(&page(&format!(
        r#"<div class="row site_header"><div class="inner">{}</div></div><div class="more">{teasers}</div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["Read more about"]);
}

#[test]
fn the_heading_that_repeats_the_title_is_left_out_of_an_article() {
    // As Readability's `_headerDuplicatesTitle`: the first h1 or h2 whose words are
    // nearly all the title's is the headline, which the doc gives apart (`headline`).
    let html = format!(
        r#"<!doctype html><html><head><title>The lanterns of the north | Lamp Weekly</title></head>
        <body><div class="site-menu"><a href="/">Home</a></div><div class="article">
        <h1>The Lanterns of the North</h1>{}<h2>Kinds of lanterns</h2>{}</div></body></html>"#,
        article(2),
        (2..4)
            .map(|i| prose(&format!("lantern {i}")))
            .collect::<String>()
    );
    let g = both(&html);
    keeps_article_without(&g, &["Lanterns of the North"]);
    assert!(g.text.contains("Kinds of lanterns"), "{}", g.text);
    let headings: Vec<&str> = g.headings.iter().map(|h| h.text.as_str()).collect();
    assert_eq!(headings, ["Kinds of lanterns"]);
    // A heading that says more than the title is kept, and so is a page's heading
    // when the page is no article.
    let g = both(&html.replace(
        "<h1>The Lanterns of the North</h1>",
        "<h1>Lanterns: how the north lit its long winter nights</h1>",
    ));
    assert!(g.text.contains("long winter nights"), "{}", g.text);
    let g = both(
        r#"<html><head><title>All items | Lamp Weekly</title></head><body><h1>All items</h1>
        <ul><li><a href="/1">Item 1</a></li></ul></body></html>"#,
    );
    assert!(g.text.starts_with("All items"), "{}", g.text);
}

#[test]
fn a_block_holding_a_list_of_things_is_kept() {
    // Readability leaves out a block for its list items only past a hundred more items
    // than paragraphs: a step's list of what you need, with no link, is the article's.
    let g = both(&page(&format!(
        r#"<div class="site-menu"><a href="/">Home</a> <a href="/news">News</a></div>
        <div class="how-to">{}<div class="step"><h3>What you need</h3><ul><li>A brass lantern</li>
        <li>Lamp oil</li><li>A cotton wick</li><li>Matches</li></ul></div>{}</div>"#,
        article(2),
        (2..4)
            .map(|i| prose(&format!("lantern {i}")))
            .collect::<String>()
    )));
    keeps_article_without(&g, &["Home"]);
    assert!(g.text.contains("A cotton wick"), "{}", g.text);
}

#[test]
fn a_block_of_teasers_beside_the_article_is_left_out() {
    // Short paragraphs beside the article stay, unless they are teasers: each under a
    // heading that links to another story (other columns, a promotion's cards).
    let teasers: String = (0..4)
        .map(|i| {
            format!(
                r#"<div class="card"><h4><a href="/op/{i}">Column {i} on the lamps</a></h4>
                <p>Teaser {i}: why the old lamps of the town still matter to us all today.</p></div>"#
            )
        })
        .collect();
    let g = both(&page(&format!(
        r#"<div class="site-menu"><a href="/">Home</a> <a href="/news">News</a></div>
        <div class="wrap"><div class="main-text">{}</div>
        <p>A note from the editors: the fair takes place each year in the old market square of the town, in May.</p>
        <div class="columns">{teasers}</div></div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["Teaser 0", "Teaser 3", "Column 1 on the lamps"]);
    assert!(g.text.contains("A note from the editors"), "{}", g.text);
}

#[test]
fn a_short_paragraph_beside_the_article_that_ends_a_sentence_is_kept() {
    // Readability joins a sibling <p> under 80 characters when it has no link and ends a
    // sentence (`/\.( |$)/`); a short label with no full stop stays out.
    let g = both(&page(&format!(
        r#"<div class="site-menu"><a href="/">Home</a> <a href="/news">News</a></div>
        <div class="wrap"><p>That said, the lamps work.</p><div class="main-text">{}</div>
        <p>Share this page</p></div>"#,
        article(4)
    )));
    keeps_article_without(&g, &["Home", "Share this page"]);
    assert!(g.text.contains("That said, the lamps work."), "{}", g.text);
}

#[test]
fn an_article_in_two_blocks_with_boilerplate_beside_each_is_read_whole() {
    // The story's lead and its body are each in a wrapper beside a small part named as
    // boilerplate (a `supplemental` box): Readability removes that part before it
    // looks, so the body is its wrapper's only child and the lead, in the wrapper
    // beside, joins it.
    let lead: String = (0..2).map(|i| prose(&format!("beacon {i}"))).collect();
    let g = both(&page(&format!(
        r#"<div class="site-menu"><a href="/">Home</a> <a href="/news">News</a></div>
        <article class="story">
        <div class="story-wrap"><div class="story-body-1">{lead}</div>
        <div class="supplemental"><a href="/r/1">Related: lamps of the north</a></div></div>
        <div class="ad-slot">Advertisement</div>
        <div class="story-wrap"><div class="story-body-2">{}</div>
        <div class="supplemental"><a href="/r/2">Most read: the wick</a></div></div>
        </article>"#,
        article(6)
    )));
    keeps_article_without(
        &g,
        &["Home", "Related: lamps", "Advertisement", "Most read"],
    );
    for i in 0..2 {
        let lead = format!("beacon {i} was studied");
        assert!(g.text.contains(&lead), "{lead:?} not in {}", g.text);
    }
}
