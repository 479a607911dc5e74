//! [`LinkGraph`]: a deterministic site of N generated pages, computed per request.

use html_escape::encode_quoted_attribute as escape;
use std::fmt::Write as _;

use super::Resource;
use crate::gzip::gzip;
use crate::urlpath::relative_reference;

/// How links are written in generated pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinkStyle {
    /// `/section-1/item-9` (the default).
    #[default]
    Root,
    /// `http://HOST/section-1/item-9`, HOST being the request's `Host` header.
    Absolute,
    /// `../section-1/item-9`, relative to the linking page.
    Relative,
}

/// A generated site: `pages` pages computed on the fly from a seed, so 100,000 pages cost
/// nothing until requested.
///
/// # Shape
///
/// - Page 0 is the home page, `/`. Page `i ≥ 1` is `/item-{i}`, or
///   `/section-{i % sections}/item-{i}` when there is more than one section. With
///   [`pad`](Self::pad) the number is zero-padded (`item-00009`); without, `item-9` sorts
///   after `item-10`, as numbered names do.
/// - Page `i` links, in this order, to: the home page (except the home page itself), its
///   children `d·i+1 ..= d·i+d` below `pages` (`d` = [`tree_degree`](Self::tree_degree),
///   so every page is reachable from `/`), then `fan_out` pages picked by a hash of
///   `(seed, i, k)` (duplicates and self-links happen, as on real sites). [`links`](Self::links)
///   returns this list, for assertions.
/// - Every page is `text/html; charset=utf-8` with a `<title>` and `<h1>` (`Home`, `Item 9`),
///   a paragraph of `filler` words, and a `<ul>` of links whose text is the target's title.
/// - `/robots.txt` (unless [`robots`](Self::robots) is off): `User-agent: *`, a `Disallow:`
///   line per [`disallow`](Self::disallow) prefix (an empty `Disallow:` when none), an
///   optional `Crawl-delay:`, and `Sitemap: http://HOST/sitemap.xml` (`.xml.gz` with
///   [`gzip_sitemaps`](Self::gzip_sitemaps)).
/// - `/sitemap.xml` lists every page when there are at most
///   [`sitemap_chunk`](Self::sitemap_chunk) pages; otherwise it is a sitemap index of
///   `/sitemap-{k}.xml`, each listing `sitemap_chunk` pages. Every sitemap is also served
///   gzipped at the same path plus `.gz` (`application/gzip`, a gzip *file*, not a
///   `Content-Encoding`).
/// - Anything else is 404. Pages are served for any `Host`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkGraph {
    pages: u32,
    seed: u64,
    fan_out: u32,
    tree_degree: u32,
    sections: u32,
    pad: usize,
    link_style: LinkStyle,
    filler: usize,
    home_links: Vec<String>,
    robots: bool,
    disallow: Vec<String>,
    crawl_delay: Option<String>,
    sitemap_chunk: u32,
    gzip_sitemaps: bool,
}

impl LinkGraph {
    /// A graph of `pages` pages (at least 1) with seed 0, fan-out 3, tree degree 2, one
    /// section, root-relative links, 12 filler words, robots.txt and sitemaps of 50,000 URLs.
    pub fn new(pages: u32) -> Self {
        LinkGraph {
            pages: pages.max(1),
            seed: 0,
            fan_out: 3,
            tree_degree: 2,
            sections: 1,
            pad: 0,
            link_style: LinkStyle::Root,
            filler: 12,
            home_links: Vec::new(),
            robots: true,
            disallow: Vec::new(),
            crawl_delay: None,
            sitemap_chunk: 50_000,
            gzip_sitemaps: false,
        }
    }

    /// The seed of the hashed links.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Hashed links per page, besides home and children.
    pub fn fan_out(mut self, fan_out: u32) -> Self {
        self.fan_out = fan_out;
        self
    }

    /// Children per page in the spanning tree (at least 1).
    pub fn tree_degree(mut self, degree: u32) -> Self {
        self.tree_degree = degree.max(1);
        self
    }

    /// Number of sections (`/section-k/` prefixes); 1 means no prefix.
    pub fn sections(mut self, sections: u32) -> Self {
        self.sections = sections.max(1);
        self
    }

    /// Zero-pad page numbers to this width (`0` = no padding).
    pub fn pad(mut self, width: usize) -> Self {
        self.pad = width.min(20);
        self
    }

    /// How hrefs are written.
    pub fn link_style(mut self, style: LinkStyle) -> Self {
        self.link_style = style;
        self
    }

    /// Filler words in each page's paragraph (for benchmarks wanting bigger pages).
    pub fn filler_words(mut self, words: usize) -> Self {
        self.filler = words;
        self
    }

    /// Extra hrefs written as they are on the home page (e.g. another server's URL, to test
    /// scope).
    pub fn home_link(mut self, href: impl Into<String>) -> Self {
        self.home_links.push(href.into());
        self
    }

    /// Serve `/robots.txt` (default) or answer 404 for it.
    pub fn robots(mut self, serve: bool) -> Self {
        self.robots = serve;
        self
    }

    /// Add a `Disallow:` prefix to robots.txt (e.g. `/section-1/`).
    pub fn disallow(mut self, prefix: impl Into<String>) -> Self {
        self.disallow.push(prefix.into());
        self
    }

    /// Add `Crawl-delay: {seconds}` to robots.txt (written as given, e.g. `"0.5"`).
    pub fn crawl_delay(mut self, seconds: impl Into<String>) -> Self {
        self.crawl_delay = Some(seconds.into());
        self
    }

    /// URLs per sitemap file (at least 1); more pages make `/sitemap.xml` an index.
    pub fn sitemap_chunk(mut self, urls: u32) -> Self {
        self.sitemap_chunk = urls.max(1);
        self
    }

    /// Make robots.txt and the sitemap index point to the `.xml.gz` files.
    pub fn gzip_sitemaps(mut self, gzip: bool) -> Self {
        self.gzip_sitemaps = gzip;
        self
    }

    /// The number of pages.
    pub fn pages(&self) -> u32 {
        self.pages
    }

    /// The path of page `i` (`/` for 0). Numbers past the end still get a path, which is 404.
    pub fn path(&self, i: u32) -> String {
        if i == 0 {
            return "/".into();
        }
        let width = self.pad;
        if self.sections > 1 {
            format!("/section-{}/item-{i:0width$}", i % self.sections)
        } else {
            format!("/item-{i:0width$}")
        }
    }

    /// Every page's path, home first.
    pub fn paths(&self) -> impl Iterator<Item = String> + '_ {
        (0..self.pages).map(|i| self.path(i))
    }

    /// The page a path names, if it is one of this graph's pages (exactly its canonical path).
    pub fn page_of(&self, path: &str) -> Option<u32> {
        if path == "/" {
            return Some(0);
        }
        let (_, name) = path.rsplit_once("/item-")?;
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let i: u32 = name.parse().ok()?;
        (i > 0 && i < self.pages && self.path(i) == path).then_some(i)
    }

    /// The pages page `i` links to, in document order (see the type docs).
    pub fn links(&self, i: u32) -> Vec<u32> {
        let mut links = Vec::with_capacity((1 + self.tree_degree + self.fan_out) as usize);
        if i != 0 {
            links.push(0);
        }
        let d = u64::from(self.tree_degree);
        for c in 1..=d {
            let child = u64::from(i) * d + c;
            if child < u64::from(self.pages) {
                links.push(child as u32);
            }
        }
        for k in 0..self.fan_out {
            let h = splitmix64(self.seed ^ (u64::from(i) << 32) ^ u64::from(k));
            links.push((h % u64::from(self.pages)) as u32);
        }
        links
    }

    /// The title of page `i`: `Home` or `Item {i}`.
    pub fn title(&self, i: u32) -> String {
        if i == 0 {
            "Home".into()
        } else {
            format!("Item {i}")
        }
    }

    /// The sitemap files: `/sitemap.xml` alone, or the index plus `/sitemap-{k}.xml` chunks.
    fn sitemap_chunks(&self) -> u32 {
        self.pages.div_ceil(self.sitemap_chunk)
    }

    pub(crate) fn resolve(&self, path: &str, origin: &str) -> Resource {
        if let Some(i) = self.page_of(path) {
            return Resource::ok("text/html; charset=utf-8", self.page(i, origin));
        }
        if path == "/robots.txt" {
            return match self.robots {
                true => Resource::ok("text/plain; charset=utf-8", self.robots_txt(origin)),
                false => Resource::error(404),
            };
        }
        let (xml_path, gzipped) = match path.strip_suffix(".gz") {
            Some(p) => (p, true),
            None => (path, false),
        };
        let Some(xml) = self.sitemap(xml_path, origin) else {
            return Resource::error(404);
        };
        if gzipped {
            Resource::ok("application/gzip", gzip(xml.as_bytes()))
        } else {
            Resource::ok("application/xml", xml)
        }
    }

    fn href(&self, from: u32, to: u32, origin: &str) -> String {
        let path = self.path(to);
        match self.link_style {
            LinkStyle::Root => path,
            LinkStyle::Absolute => format!("{origin}{path}"),
            LinkStyle::Relative => relative_reference(&self.path(from), &path),
        }
    }

    fn page(&self, i: u32, origin: &str) -> String {
        let title = self.title(i);
        let mut html = String::with_capacity(512 + self.filler * 8);
        let _ = write!(
            html,
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <title>{title}</title></head>\n<body><h1>{title}</h1>\n<p>"
        );
        let mut h = splitmix64(self.seed.wrapping_add(u64::from(i)));
        for w in 0..self.filler {
            if w > 0 {
                html.push(' ');
            }
            h = splitmix64(h);
            html.push_str(WORDS[(h % WORDS.len() as u64) as usize]);
        }
        html.push_str("</p>\n<ul>\n");
        for to in self.links(i) {
            let _ = writeln!(
                html,
                "<li><a href=\"{}\">{}</a></li>",
                escape(&self.href(i, to, origin)),
                self.title(to)
            );
        }
        if i == 0 {
            for href in &self.home_links {
                let _ = writeln!(html, "<li><a href=\"{0}\">{0}</a></li>", escape(href));
            }
        }
        html.push_str("</ul>\n</body></html>\n");
        html
    }

    fn robots_txt(&self, origin: &str) -> String {
        let mut txt = String::from("User-agent: *\n");
        if self.disallow.is_empty() {
            txt.push_str("Disallow:\n");
        }
        for prefix in &self.disallow {
            let _ = writeln!(txt, "Disallow: {prefix}");
        }
        if let Some(delay) = &self.crawl_delay {
            let _ = writeln!(txt, "Crawl-delay: {delay}");
        }
        let gz = if self.gzip_sitemaps { ".gz" } else { "" };
        let _ = writeln!(txt, "\nSitemap: {origin}/sitemap.xml{gz}");
        txt
    }

    fn sitemap(&self, path: &str, origin: &str) -> Option<String> {
        let chunks = self.sitemap_chunks();
        let origin = escape(origin);
        let range = if path == "/sitemap.xml" {
            if chunks > 1 {
                return Some(self.sitemap_index(&origin));
            }
            0..self.pages
        } else {
            let k: u32 = path
                .strip_prefix("/sitemap-")?
                .strip_suffix(".xml")?
                .parse()
                .ok()?;
            if chunks < 2 || k >= chunks {
                return None;
            }
            let start = k * self.sitemap_chunk;
            start..start.saturating_add(self.sitemap_chunk).min(self.pages)
        };
        let mut xml = String::with_capacity(range.len() * 64 + 128);
        xml.push_str(XML_HEAD);
        xml.push_str("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
        for i in range {
            let _ = writeln!(xml, "<url><loc>{origin}{}</loc></url>", self.path(i));
        }
        xml.push_str("</urlset>\n");
        Some(xml)
    }

    fn sitemap_index(&self, origin: &str) -> String {
        let gz = if self.gzip_sitemaps { ".gz" } else { "" };
        let mut xml = String::from(XML_HEAD);
        xml.push_str("<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n");
        for k in 0..self.sitemap_chunks() {
            let _ = writeln!(
                xml,
                "<sitemap><loc>{origin}/sitemap-{k}.xml{gz}</loc></sitemap>"
            );
        }
        xml.push_str("</sitemapindex>\n");
        xml
    }
}

const XML_HEAD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

const WORDS: [&str; 16] = [
    "pepperoni",
    "crawl",
    "link",
    "page",
    "robot",
    "sitemap",
    "fetch",
    "cache",
    "polite",
    "retry",
    "graph",
    "seed",
    "record",
    "stream",
    "host",
    "delay",
];

/// Escapes text for HTML/XML attribute values and text.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::io::Read;

    use super::*;

    const ORIGIN: &str = "http://127.0.0.1:9";

    #[test]
    fn paths_round_trip() {
        let g = LinkGraph::new(20).sections(3);
        assert_eq!(g.path(0), "/");
        assert_eq!(g.path(10), "/section-1/item-10");
        for i in 0..20 {
            assert_eq!(g.page_of(&g.path(i)), Some(i));
        }
        assert_eq!(g.page_of("/section-0/item-10"), None, "wrong section");
        assert_eq!(g.page_of("/section-1/item-010"), None, "not canonical");
        assert_eq!(g.page_of("/section-2/item-20"), None, "past the end");
        assert_eq!(g.page_of("/section-2/item-"), None);
        let padded = LinkGraph::new(20).pad(5);
        assert_eq!(padded.path(9), "/item-00009");
        assert_eq!(padded.page_of("/item-00009"), Some(9));
        assert_eq!(padded.page_of("/item-9"), None);
    }

    #[test]
    fn deterministic_and_seeded() {
        let a = LinkGraph::new(1000).seed(7);
        let b = LinkGraph::new(1000).seed(7);
        let c = LinkGraph::new(1000).seed(8);
        assert_eq!(a.links(5), b.links(5));
        assert_eq!(
            a.resolve("/item-5", ORIGIN).body,
            b.resolve("/item-5", ORIGIN).body
        );
        assert_ne!(a.links(5), c.links(5));
        assert_eq!(&a.links(5)[..3], &[0, 11, 12], "home, then children");
    }

    #[test]
    fn every_page_is_reachable_from_home() {
        let g = LinkGraph::new(25_000).fan_out(0).sections(7);
        let mut seen = HashSet::from([0u32]);
        let mut todo = vec![0u32];
        while let Some(i) = todo.pop() {
            for j in g.links(i) {
                if seen.insert(j) {
                    todo.push(j);
                }
            }
        }
        assert_eq!(seen.len(), 25_000);
    }

    #[test]
    fn page_html_has_the_links() {
        let g = LinkGraph::new(50)
            .sections(2)
            .link_style(LinkStyle::Relative);
        let page = g.resolve("/section-1/item-3", ORIGIN);
        assert_eq!(page.status, 200);
        let html = String::from_utf8(page.body.to_vec()).unwrap();
        assert!(html.contains("<title>Item 3</title>"));
        assert!(html.contains("<a href=\"../\">Home</a>"), "{html}");
        assert!(html.contains("<a href=\"item-7\">Item 7</a>"), "{html}");
        assert!(
            html.contains("<a href=\"../section-0/item-8\">Item 8</a>"),
            "{html}"
        );
        let abs = LinkGraph::new(50).link_style(LinkStyle::Absolute);
        let html = String::from_utf8(abs.resolve("/", ORIGIN).body.to_vec()).unwrap();
        assert!(
            html.contains("href=\"http://127.0.0.1:9/item-1\""),
            "{html}"
        );
    }

    #[test]
    fn robots_and_sitemaps() {
        let g = LinkGraph::new(25)
            .disallow("/private/")
            .crawl_delay("1")
            .sitemap_chunk(10)
            .gzip_sitemaps(true);
        let robots = String::from_utf8(g.resolve("/robots.txt", ORIGIN).body.to_vec()).unwrap();
        assert_eq!(
            robots,
            "User-agent: *\nDisallow: /private/\nCrawl-delay: 1\n\nSitemap: http://127.0.0.1:9/sitemap.xml.gz\n"
        );
        let index = g.resolve("/sitemap.xml", ORIGIN);
        let index = String::from_utf8(index.body.to_vec()).unwrap();
        assert!(index.contains("<sitemapindex"));
        assert!(index.contains("<loc>http://127.0.0.1:9/sitemap-2.xml.gz</loc>"));
        assert!(!index.contains("sitemap-3"));
        let last = g.resolve("/sitemap-2.xml.gz", ORIGIN);
        assert_eq!(last.content_type, "application/gzip");
        let mut xml = String::new();
        flate2::read::GzDecoder::new(&last.body[..])
            .read_to_string(&mut xml)
            .unwrap();
        assert_eq!(xml.matches("<url>").count(), 5);
        assert!(xml.contains("<loc>http://127.0.0.1:9/item-24</loc>"));
        assert_eq!(g.resolve("/sitemap-3.xml", ORIGIN).status, 404);
        assert_eq!(
            LinkGraph::new(5).resolve("/sitemap-0.xml", ORIGIN).status,
            404
        );
        let small = LinkGraph::new(3).resolve("/sitemap.xml", ORIGIN);
        assert_eq!(
            String::from_utf8(small.body.to_vec())
                .unwrap()
                .matches("<url>")
                .count(),
            3
        );
        assert_eq!(
            LinkGraph::new(3)
                .robots(false)
                .resolve("/robots.txt", ORIGIN)
                .status,
            404
        );
    }
}
