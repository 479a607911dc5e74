#![allow(clippy::print_stdout)] // a measuring tool: its report is its output
//! Times link extraction alone over every `.html` file under a folder:
//! `cargo run --release -p rip-discover --example extract_speed -- DIR [ORIGIN]`.

use std::time::Instant;

use rip_url::{Canonicalizer, Url};

fn main() {
    let dir = std::env::args().nth(1).expect("a folder of .html files");
    let origin = std::env::args()
        .nth(2)
        .unwrap_or_else(|| "http://127.0.0.1:1".into());
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(dir)];
    while let Some(p) = stack.pop() {
        for e in std::fs::read_dir(&p).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "html") {
                let rel = path.strip_prefix(&p).unwrap().to_owned();
                files.push((std::fs::read(&path).unwrap(), rel));
            }
        }
    }
    let canon = Canonicalizer::default();
    let page = Url::parse(&format!("{origin}/s1/item-1.html")).unwrap();
    let t = Instant::now();
    let mut links = 0usize;
    for (body, _) in &files {
        let e = rip_discover::links::extract(body, encoding_rs::UTF_8);
        links += e.links.len();
    }
    let parse = t.elapsed();
    let t = Instant::now();
    let mut ok = 0usize;
    for (body, _) in &files {
        let e = rip_discover::links::extract(body, encoding_rs::UTF_8);
        let base = e.base_url(&page);
        for l in e.links {
            if let Ok(u) = canon.resolve(&base, &l.href) {
                ok += u.as_str().len() & 1;
            }
        }
    }
    let both = t.elapsed();
    let n = files.len() as f64;
    for text in [false, true] {
        let t = Instant::now();
        let mut x = 0;
        for (body, _) in &files {
            x += variant(body, text);
        }
        println!(
            "lol_html a[href]{}: {:.1} µs/page ({x})",
            if text { " + text" } else { "" },
            t.elapsed().as_secs_f64() * 1e6 / n
        );
    }
    println!(
        "{} pages, {links} links: extract {:.1} µs/page, extract+resolve {:.1} µs/page ({ok})",
        files.len(),
        parse.as_secs_f64() * 1e6 / n,
        both.as_secs_f64() * 1e6 / n
    );
}

#[allow(dead_code)]
fn variant(body: &[u8], text: bool) -> usize {
    use lol_html::{HtmlRewriter, Settings, element, text};
    let mut n = 0usize;
    let mut t = 0usize;
    {
        let mut s = Settings::new()
            .with_strict(false)
            .append_element_content_handler(element!("a[href]", |el| {
                n += el.get_attribute("href").map_or(0, |h| h.len());
                Ok(())
            }));
        if text {
            s = s.append_element_content_handler(text!("a[href]", |c| {
                t += c.as_str().len();
                Ok(())
            }));
        }
        let mut r = HtmlRewriter::new(s, |_: &[u8]| {});
        r.write(body).unwrap();
        r.end().unwrap();
    }
    n + t
}
