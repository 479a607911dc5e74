#![allow(clippy::print_stdout)] // a measuring tool: its report is its output
//! Times link extraction alone over every `.html` file under a folder:
//! `cargo run --release -p rip-links --example extract_speed -- DIR [ORIGIN]`.

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
        let e = rip_links::extract(body, encoding_rs::UTF_8);
        links += e.len();
    }
    let parse = t.elapsed();
    let t = Instant::now();
    let mut ok = 0usize;
    for (body, _) in &files {
        let e = rip_links::extract(body, encoding_rs::UTF_8);
        let base = e.base_url(&page);
        for l in e.links() {
            if let Ok(u) = canon.resolve(&base, l.href) {
                ok += u.as_str().len() & 1;
            }
        }
    }
    let both = t.elapsed();
    let n = files.len() as f64;
    println!(
        "{} pages, {links} links: extract {:.1} µs/page, extract+resolve {:.1} µs/page ({ok})",
        files.len(),
        parse.as_secs_f64() * 1e6 / n,
        both.as_secs_f64() * 1e6 / n
    );
}
