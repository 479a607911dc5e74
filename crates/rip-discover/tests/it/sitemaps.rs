//! Sitemap seeding: robots.txt `Sitemap:` lines, indexes, gzipped sitemaps, text
//! sitemaps, and hostile sitemaps (self-referencing, too deep) bounded.

use std::collections::BTreeSet;

use rip_testserver::{Fault, LinkGraph, Rule, TestServer};

use crate::*;

const NO_LINKS: &str = "<!doctype html><html><body><p>Nothing to see.</p></body></html>";

/// A graph whose home page links nowhere: only the sitemaps can find its pages.
fn orphan_graph(pages: u32, chunk: u32, gzip: bool) -> (LinkGraph, TestServer) {
    let g = LinkGraph::new(pages)
        .sitemap_chunk(chunk)
        .gzip_sitemaps(gzip);
    let server = TestServer::builder()
        .graph(g.clone())
        .file("/", NO_LINKS)
        .start_background()
        .unwrap();
    (g, server)
}

#[test]
fn sitemap_index_of_gzipped_sitemaps_seeds_the_crawl() {
    let (g, server) = orphan_graph(120, 25, true);
    let r = run(&[&server.url("/")]);
    assert_eq!(r.refs().len(), 1, "without --sitemaps only the start page");

    let (g2, server) = orphan_graph(120, 25, true);
    assert_eq!(g, g2);
    let r = run(&[&server.url("/"), "--sitemaps"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want: std::collections::BTreeSet<String> = g.paths().collect();
    assert_eq!(r.paths(), want);
    assert_eq!(r.counter("sitemaps"), 6, "the index and its 5 sitemaps");
    let log = requests(&server);
    assert_eq!(log.get("/sitemap.xml.gz"), Some(&1));
    for k in 0..5 {
        assert_eq!(
            log.get(&format!("/sitemap-{k}.xml.gz")),
            Some(&1),
            "{log:?}"
        );
    }
    assert!(log.values().all(|&n| n == 1), "{log:?}");
    // Sitemap URLs enter at depth 1, their parent the sitemap that listed them.
    let one = r
        .refs()
        .into_iter()
        .find(|x| path_of(&x.url) == g.path(7))
        .unwrap();
    assert_eq!(one.context.depth, 1);
    assert!(one.context.parent.as_deref().unwrap().contains("/sitemap-"));
}

#[test]
fn without_a_sitemap_line_the_guess_is_sitemap_xml_and_text_sitemaps_work() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(10).robots(false))
        .file("/", NO_LINKS)
        .start_background()
        .unwrap();
    // The text sitemap lists absolute URLs of this server.
    server.add_rule(rip_testserver::Rule::path("/sitemap.xml").always(
        rip_testserver::Fault::body(
            "text/plain",
            format!("{}\n{}\n\n", server.url("/item-3"), server.url("/item-4")),
        ),
    ));
    // Depth 1 at most: the sitemap's URLs, not what they link to.
    let r = run(&[&server.url("/"), "--sitemaps", "--max-depth", "1"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let paths: Vec<String> = r.paths().into_iter().collect();
    assert_eq!(paths, ["/", "/item-3", "/item-4"].map(String::from));
    assert_eq!(server.count("/sitemap.xml"), 1);
}

/// An index that lists itself and nests deeper than allowed: every file is read at most
/// once, nothing past the depth limit is read, and the crawl ends.
#[test]
fn hostile_sitemap_indexes_are_bounded() {
    let index = |locs: &[&str]| {
        let mut s = String::from("<?xml version=\"1.0\"?><sitemapindex>");
        for l in locs {
            s.push_str(&format!(
                "<sitemap><loc>http://SITE_ORIGIN{l}</loc></sitemap>"
            ));
        }
        s.push_str("</sitemapindex>");
        s
    };
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| std::fs::write(dir.path().join(name), body).unwrap();
    write("index.html", NO_LINKS);
    write(
        "robots.txt",
        "User-agent: *\nDisallow:\nSitemap: http://SITE_ORIGIN/s0.xml\n",
    );
    write("s0.xml", &index(&["/s0.xml", "/s1.xml"]));
    write("s1.xml", &index(&["/s2.xml", "/s0.xml"]));
    write("s2.xml", &index(&["/s3.xml"]));
    write(
        "s3.xml",
        "<urlset><url><loc>http://SITE_ORIGIN/deep.html</loc></url></urlset>",
    );
    write("deep.html", NO_LINKS);
    let server = TestServer::builder()
        .dir(dir.path())
        .start_background()
        .unwrap();
    let r = run(&[&server.url("/"), "--sitemaps", "--sitemap-depth", "2"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let log = requests(&server);
    for s in ["/s0.xml", "/s1.xml", "/s2.xml"] {
        assert_eq!(log.get(s), Some(&1), "{s}: {log:?}");
    }
    assert!(!log.contains_key("/s3.xml"), "deeper than --sitemap-depth");
    assert!(!log.contains_key("/deep.html"));
    assert!(
        r.summary().notes.iter().any(|n| n.contains("nests deeper")),
        "{:?}",
        r.summary().notes
    );
    // With a deeper limit the same site is read to the end.
    let r = run(&[&server.url("/"), "--sitemaps", "--sitemap-depth", "3"]);
    assert!(r.paths().contains("/deep.html"));
}

/// A sitemap named by robots.txt that fails is a discover failure (the run is partial);
/// a guessed /sitemap.xml that is missing is only a note.
#[test]
fn failing_sitemaps() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("index.html"), NO_LINKS).unwrap();
    let server = TestServer::builder()
        .dir(dir.path())
        .start_background()
        .unwrap();
    let r = run(&[&server.url("/"), "--sitemaps"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.summary()
            .notes
            .iter()
            .any(|n| n.contains("no sitemap at")),
        "{:?}",
        r.summary().notes
    );

    std::fs::write(
        dir.path().join("robots.txt"),
        "User-agent: *\nSitemap: http://SITE_ORIGIN/missing.xml\n",
    )
    .unwrap();
    let server = TestServer::builder()
        .dir(dir.path())
        .start_background()
        .unwrap();
    let r = run(&[&server.url("/"), "--sitemaps"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let f = r.failures();
    assert_eq!(f.len(), 1);
    assert_eq!(path_of(&f[0].url), "/missing.xml");
    assert_eq!(f[0].status, Some(404));
}

/// Hostile sitemaps over HTTP: a billion-laughs urlset (entities never expanded: only its
/// plain URL is used) and a gzip bomb (1 GiB of zeros behind `Content-Encoding: gzip`,
/// cut by the size bound). The crawl ends promptly, reads what is sound, and says why.
#[test]
fn entity_expansion_and_gzip_bomb_sitemaps_are_bounded() {
    let mut laughs =
        String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE urlset [\n<!ENTITY lol \"lol\">\n");
    for i in 1..=9 {
        let prev = if i == 1 {
            "lol".to_owned()
        } else {
            format!("lol{}", i - 1)
        };
        laughs.push_str(&format!(
            "<!ENTITY lol{i} \"{}\">\n",
            format!("&{prev};").repeat(10)
        ));
    }
    laughs.push_str(
        "]>\n<urlset><url><loc>http://SITE_ORIGIN/&lol9;</loc></url>\
         <url><loc>http://SITE_ORIGIN/ok.html</loc></url></urlset>",
    );
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| std::fs::write(dir.path().join(name), body).unwrap();
    write("index.html", NO_LINKS);
    write("ok.html", NO_LINKS);
    write("laughs.xml", &laughs);
    write(
        "robots.txt",
        "User-agent: *\nDisallow:\nSitemap: http://SITE_ORIGIN/laughs.xml\n\
         Sitemap: http://SITE_ORIGIN/bomb.xml\n",
    );
    let server = TestServer::builder()
        .dir(dir.path())
        .rule(Rule::path("/bomb.xml").always(Fault::gzip_bomb(1 << 30)))
        .start_background()
        .unwrap();
    let started = std::time::Instant::now();
    let r = run(&[&server.url("/"), "--sitemaps"]);
    // Promptly: not the hours that expanding a billion laughs or a GiB of zeros would take.
    // Generous, because the test server compresses its GiB in a debug build, and a full
    // test run on two cores took this test from 19 s alone to 64 s.
    assert!(started.elapsed() < std::time::Duration::from_secs(180));
    assert!(r.code == 0 || r.code == 2, "{}", r.stderr);
    let notes = r.summary().notes.join("\n");
    assert_eq!(
        r.paths(),
        BTreeSet::from(["/".to_owned(), "/ok.html".to_owned()]),
        "{notes}\n{:?}\n{:?}",
        r.failures(),
        requests(&server)
    );
    assert!(notes.contains("not expanded"), "{notes}");
    // The bomb is a failure of a declared sitemap or a note: either way it is said.
    let said =
        r.failures().iter().any(|f| f.url.ends_with("/bomb.xml")) || notes.contains("bomb.xml");
    assert!(said, "{notes}\n{:?}", r.failures());
    // Asked once; twice when the first read timed out (a loaded CI machine inflating the
    // bomb up to its bound: a timeout is retryable). Never more: the bound ends it.
    let asked = requests(&server).get("/bomb.xml").copied().unwrap_or(0);
    assert!((1..=2).contains(&asked), "{asked} requests for the bomb");
}
