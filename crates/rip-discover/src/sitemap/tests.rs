use super::*;
use std::io::Write;

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> http://h/a?x=1&amp;y=2 </loc><lastmod>2024-01-01</lastmod></url>
  <url><loc><![CDATA[http://h/b]]></loc></url>
  <url><loc>http://h/caf&#xE9;</loc></url>
</urlset>"#;

#[test]
fn urlset_index_text_and_gzip() {
    let l = Limits::default();
    let m = parse(URLSET.as_bytes(), &l);
    assert_eq!(m.kind, Kind::UrlSet);
    assert_eq!(
        m.locs,
        ["http://h/a?x=1&y=2", "http://h/b", "http://h/café"]
    );
    assert!(m.problems.is_empty(), "{:?}", m.problems);

    let idx = r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <sitemap><loc>http://h/s1.xml.gz</loc></sitemap><sitemap><loc>http://h/s2.xml</loc></sitemap>
    </sitemapindex>"#;
    let m = parse(idx.as_bytes(), &l);
    assert_eq!(m.kind, Kind::Index);
    assert_eq!(m.locs, ["http://h/s1.xml.gz", "http://h/s2.xml"]);

    let m = parse(
        b"\xef\xbb\xbfhttp://h/1\n\n  https://h/2  \nnot a url\nftp://h/3\n",
        &l,
    );
    assert_eq!(m.kind, Kind::Text);
    assert_eq!(m.locs, ["http://h/1", "https://h/2"]);

    let m = parse(&gz(URLSET.as_bytes()), &l);
    assert_eq!(m.kind, Kind::UrlSet);
    assert_eq!(m.locs.len(), 3);
}

#[test]
fn html_error_pages_are_not_sitemaps() {
    let m = parse(
        b"<!doctype html><html><body>Not found</body></html>",
        &Limits::default(),
    );
    assert_eq!(m.kind, Kind::Unknown);
    assert!(m.locs.is_empty());
}

#[test]
fn billion_laughs_is_not_expanded() {
    let mut doc =
        String::from("<?xml version=\"1.0\"?>\n<!DOCTYPE urlset [\n<!ENTITY lol \"lol\">\n");
    for i in 1..=9 {
        let prev = if i == 1 {
            "lol".to_owned()
        } else {
            format!("lol{}", i - 1)
        };
        doc.push_str(&format!(
            "<!ENTITY lol{i} \"{}\">\n",
            format!("&{prev};").repeat(10)
        ));
    }
    doc.push_str("]>\n<urlset><url><loc>http://h/&lol9;</loc></url><url><loc>http://h/ok</loc></url></urlset>");
    let start = std::time::Instant::now();
    let m = parse(doc.as_bytes(), &Limits::default());
    assert!(start.elapsed() < std::time::Duration::from_secs(1));
    assert_eq!(m.locs, ["http://h/ok"]);
    assert!(
        m.problems.iter().any(|p| p.contains("not expanded")),
        "{:?}",
        m.problems
    );
}

#[test]
fn gzip_bombs_and_huge_files_are_cut() {
    let zeros = vec![b' '; 20 << 20];
    let bomb = gz(&zeros);
    assert!(bomb.len() < 100 << 10);
    let l = Limits {
        max_bytes: 1 << 20,
        ..Limits::default()
    };
    let (bytes, cut) = inflate(&bomb, l.max_bytes);
    assert!(cut);
    assert_eq!(bytes.len(), 1 << 20);
    let m = parse(&bomb, &l);
    assert!(
        m.problems.iter().any(|p| p.contains("cut at")),
        "{:?}",
        m.problems
    );
}

#[test]
fn url_count_and_nesting_are_bounded() {
    let mut doc = String::from("<urlset>");
    for i in 0..100 {
        doc.push_str(&format!("<url><loc>http://h/{i}</loc></url>"));
    }
    doc.push_str("</urlset>");
    let l = Limits {
        max_urls: 10,
        ..Limits::default()
    };
    let m = parse(doc.as_bytes(), &l);
    assert_eq!(m.locs.len(), 10);
    assert!(m.problems[0].contains("more than 10"));

    let deep = format!("<urlset>{}", "<x>".repeat(1000));
    let m = parse(deep.as_bytes(), &Limits::default());
    assert!(
        m.problems.iter().any(|p| p.contains("nested")),
        "{:?}",
        m.problems
    );
}

#[test]
fn broken_xml_keeps_what_came_before() {
    let m = parse(
        b"<urlset><url><loc>http://h/1</loc></url><url><loc>http://h/2</lo",
        &Limits::default(),
    );
    assert_eq!(m.locs, ["http://h/1"]);
}
