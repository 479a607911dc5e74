//! Serving a directory (and never escaping it), in-memory files, and link graphs.

use std::collections::{HashSet, VecDeque};
use std::io::Read;
use std::time::{Duration, Instant};

use rip_testserver::{LinkGraph, LinkStyle, TestServer};

use crate::support::{client, raw, split};

/// `root/` with a few files, and `secret.txt` beside it.
fn site_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("docs/deep")).unwrap();
    std::fs::write(root.join("index.html"), "<h1>home</h1>").unwrap();
    std::fs::write(root.join("docs/index.html"), "<h1>docs</h1>").unwrap();
    std::fs::write(root.join("docs/deep/notes.txt"), "notes").unwrap();
    std::fs::write(root.join("style.css"), "body{}").unwrap();
    std::fs::write(root.join("data.json"), "{}").unwrap();
    std::fs::write(root.join("logo.png"), b"\x89PNG\r\n").unwrap();
    std::fs::write(root.join("caf\u{e9}.html"), "caf\u{e9}").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "TOP SECRET").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("link.txt")).unwrap();
    dir
}

#[tokio::test]
async fn serves_files_with_content_types_and_index_pages() {
    let dir = site_dir();
    let server = TestServer::builder()
        .dir(dir.path().join("root"))
        .start()
        .await
        .unwrap();
    let client = client();
    let get = |path: &str| client.get(server.url(path)).send();
    let cases = [
        ("/", 200, "text/html", "<h1>home</h1>"),
        ("/index.html", 200, "text/html", "<h1>home</h1>"),
        ("/docs/", 200, "text/html", "<h1>docs</h1>"),
        (
            "/docs/deep/notes.txt",
            200,
            "text/plain; charset=utf-8",
            "notes",
        ),
        ("/style.css", 200, "text/css; charset=utf-8", "body{}"),
        ("/data.json?x=1", 200, "application/json", "{}"),
        ("/caf%C3%A9.html", 200, "text/html", "caf\u{e9}"),
    ];
    for (path, status, content_type, body) in cases {
        let response = get(path).await.unwrap();
        assert_eq!(response.status().as_u16(), status, "{path}");
        assert_eq!(response.headers()["content-type"], content_type, "{path}");
        assert_eq!(response.text().await.unwrap(), body, "{path}");
    }
    let png = get("/logo.png").await.unwrap();
    assert_eq!(png.headers()["content-type"], "image/png");

    let missing = get("/nope.html").await.unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let no_index = get("/docs/deep/").await.unwrap();
    assert_eq!(no_index.status().as_u16(), 404);
    let directory = get("/docs?x=1").await.unwrap();
    assert_eq!(directory.status().as_u16(), 301);
    assert_eq!(directory.headers()["location"], "/docs/?x=1");
}

#[tokio::test]
async fn paths_never_escape_the_root() {
    let dir = site_dir();
    let server = TestServer::builder()
        .dir(dir.path().join("root"))
        .start()
        .await
        .unwrap();
    // Raw requests: a client would normalize `..` away before sending.
    let attacks = [
        "/../secret.txt",
        "/docs/../../secret.txt",
        "/%2e%2e/secret.txt",
        "/%2E%2E%2Fsecret.txt",
        "/docs/..%2f..%2fsecret.txt",
        "/.%2e/secret.txt",
        "/secret.txt%00.html",
        "/..%5csecret.txt",
        "http://x/../secret.txt",
        "/link.txt",
        "//etc/passwd",
        "/%",
    ];
    for target in attacks {
        let request = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let (head, body) = split(&raw(server.addr(), request.as_bytes()).await);
        let status_line = head.lines().next().unwrap_or_default().to_owned();
        assert!(
            status_line.starts_with("HTTP/1.1 400") || status_line.starts_with("HTTP/1.1 404"),
            "{target}: {status_line}"
        );
        assert!(
            !String::from_utf8_lossy(&body).contains("SECRET"),
            "{target}"
        );
    }
    // An absolute filesystem path in the target is refused before parsing paths.
    let (head, _) = split(&raw(server.addr(), b"GET C:/secret.txt HTTP/1.1\r\n\r\n").await);
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
}

#[tokio::test]
async fn a_missing_root_is_an_error_not_a_panic() {
    let error = TestServer::builder()
        .dir("/definitely/not/here")
        .start()
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("/definitely/not/here"),
        "{error}"
    );
}

#[tokio::test]
async fn in_memory_files_override_the_site() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(5))
        .file("/robots.txt", "User-agent: *\nDisallow: /\n")
        .file("/page", "<p>hi</p>")
        .file_with_type("/blob", "application/x-thing", vec![1u8, 2, 3])
        .start()
        .await
        .unwrap();
    let client = client();
    let robots = client.get(server.url("/robots.txt")).send().await.unwrap();
    assert_eq!(
        robots.headers()["content-type"],
        "text/plain; charset=utf-8"
    );
    assert_eq!(robots.text().await.unwrap(), "User-agent: *\nDisallow: /\n");
    let page = client.get(server.url("/page")).send().await.unwrap();
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    let blob = client.get(server.url("/blob")).send().await.unwrap();
    assert_eq!(blob.headers()["content-type"], "application/x-thing");
    assert_eq!(&blob.bytes().await.unwrap()[..], [1, 2, 3]);
    assert_eq!(
        client
            .get(server.url("/item-4"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}

/// The hrefs of a generated page (they are simple enough for a string search).
fn hrefs(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn a_crawl_of_the_graph_reaches_every_page() {
    let graph = LinkGraph::new(300)
        .seed(3)
        .sections(3)
        .link_style(LinkStyle::Relative);
    let server = TestServer::builder()
        .graph(graph.clone())
        .start()
        .await
        .unwrap();
    let client = client();
    let base = reqwest::Url::parse(&server.url("/")).unwrap();
    let mut seen = HashSet::from([base.clone()]);
    let mut queue = VecDeque::from([base]);
    while let Some(url) = queue.pop_front() {
        let response = client.get(url.clone()).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200, "{url}");
        let html = response.text().await.unwrap();
        for href in hrefs(&html) {
            let next = url.join(&href).unwrap();
            if seen.insert(next.clone()) {
                queue.push_back(next);
            }
        }
    }
    let mut paths: Vec<String> = seen.iter().map(|u| u.path().to_owned()).collect();
    paths.sort();
    let mut expected: Vec<String> = graph.paths().collect();
    expected.sort();
    assert_eq!(paths, expected);
    assert_eq!(server.total(), 300, "one request per page");
    // Keep-alive: far fewer connections than requests.
    let connections: HashSet<u64> = server.requests().iter().map(|r| r.connection).collect();
    assert!(connections.len() <= 3, "{} connections", connections.len());
}

#[tokio::test]
async fn a_large_graph_costs_nothing_until_requested() {
    let started = Instant::now();
    let server = TestServer::builder()
        .graph(
            LinkGraph::new(100_000)
                .sitemap_chunk(50_000)
                .gzip_sitemaps(true),
        )
        .start()
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    let client = client();
    let last = client.get(server.url("/item-99999")).send().await.unwrap();
    assert_eq!(last.status().as_u16(), 200);
    assert!(
        last.text()
            .await
            .unwrap()
            .contains("<title>Item 99999</title>")
    );
    let past = client.get(server.url("/item-100000")).send().await.unwrap();
    assert_eq!(past.status().as_u16(), 404);

    let robots = client.get(server.url("/robots.txt")).send().await.unwrap();
    let robots = robots.text().await.unwrap();
    let sitemap_line = format!("Sitemap: {}", server.url("/sitemap.xml.gz"));
    assert!(robots.contains(&sitemap_line), "{robots}");

    let index = client
        .get(server.url("/sitemap.xml.gz"))
        .send()
        .await
        .unwrap();
    assert_eq!(index.headers()["content-type"], "application/gzip");
    assert!(index.headers().get("content-encoding").is_none());
    let mut xml = String::new();
    flate2::read::GzDecoder::new(&index.bytes().await.unwrap()[..])
        .read_to_string(&mut xml)
        .unwrap();
    assert!(xml.contains("<sitemapindex"), "{xml}");
    assert_eq!(xml.matches("<sitemap>").count(), 2);

    let chunk = client
        .get(server.url("/sitemap-1.xml"))
        .send()
        .await
        .unwrap();
    assert_eq!(chunk.headers()["content-type"], "application/xml");
    let xml = chunk.text().await.unwrap();
    assert_eq!(xml.matches("<url>").count(), 50_000);
    assert!(xml.contains(&format!("<loc>{}</loc>", server.url("/item-99999"))));
}

#[tokio::test]
async fn numbered_names_sort_as_text() {
    let server = TestServer::builder()
        .graph(LinkGraph::new(12).fan_out(0).tree_degree(12))
        .start()
        .await
        .unwrap();
    let home = client().get(server.url("/")).send().await.unwrap();
    let links = hrefs(&home.text().await.unwrap());
    assert_eq!(links.first().map(String::as_str), Some("/item-1"));
    assert!(links.contains(&"/item-9".to_owned()) && links.contains(&"/item-10".to_owned()));
    let mut sorted = links.clone();
    sorted.sort();
    assert!(
        sorted.iter().position(|l| l == "/item-10") < sorted.iter().position(|l| l == "/item-9")
    );
}

#[tokio::test]
async fn the_demo_site_gets_the_server_origin_in_place_of_its_placeholder() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/site");
    let server = TestServer::builder().dir(&root).start().await.unwrap();
    let client = client();
    let robots = client.get(server.url("/robots.txt")).send().await.unwrap();
    let robots = robots.text().await.unwrap();
    assert!(
        robots.contains(&format!("Sitemap: {}/sitemap.xml", server.origin())),
        "{robots}"
    );
    let sitemap = client.get(server.url("/sitemap.xml")).send().await.unwrap();
    let sitemap = sitemap.text().await.unwrap();
    assert!(!sitemap.contains("SITE_ORIGIN"), "{sitemap}");
    assert!(sitemap.contains(&format!("<loc>{}/orphan.html</loc>", server.origin())));
    // Through the other host name, the other origin.
    let other = server.url_for_host("localhost", "/sitemap.xml");
    let sitemap = client
        .get(other)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(sitemap.contains("http://localhost:"), "{sitemap}");
    // The windows-1252 page is served byte for byte, with no charset in the header.
    let cafe = client
        .get(server.url("/blog/a-night-at-the-cafe.html"))
        .send()
        .await
        .unwrap();
    assert_eq!(cafe.headers()["content-type"], "text/html");
    let bytes = cafe.bytes().await.unwrap();
    assert_eq!(
        &bytes[..],
        &std::fs::read(root.join("blog/a-night-at-the-cafe.html")).unwrap()[..]
    );
}
