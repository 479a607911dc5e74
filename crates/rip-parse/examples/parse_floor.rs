//! The benchmark floor for `scripts/bench/parse`: the same `page` records merely
//! parsed into a DOM by the HTML parser rip-parse uses (scraper / html5ever), nothing
//! extracted, nothing written.
//!
//! By default bodies are read and decoded from the NDJSON file first (not timed); then
//! the timed part parses every body into a DOM and drops it, on `--threads` rayon
//! threads. With `--stream`, the timed part also reads each line and decodes the `page`
//! record (what any parse stage must do at the least). Prints one JSON line: pages,
//! bytes (HTML), seconds.
//!
//!   cargo run --release -p rip-parse --example parse_floor -- pages.ndjson --threads 2 [--stream]

use rayon::prelude::*;
use std::io::BufRead;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: parse_floor <pages.ndjson> [--threads N]");
    let threads = args
        .iter()
        .position(|a| a == "--threads")
        .and_then(|i| args.get(i + 1))
        .map_or(0, |n| n.parse().expect("a thread count"));
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("the input file"));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    // `--limits`: parse with rip-parse's own entry point (chunked, with the time budget
    // and the depth check), to see what those cost.
    let limits = args.iter().any(|a| a == "--limits");
    let parse = move |body: &str| {
        if limits {
            rip_parse::dom::parse(body, rip_parse::dom::ParseLimits::default())
                .map_or(0, |h| h.tree.nodes().len())
        } else {
            scraper::Html::parse_document(body).tree.nodes().len()
        }
    };
    if args.iter().any(|a| a == "--stream") {
        let started = Instant::now();
        let (pages, bytes) = pool.install(|| {
            file.lines()
                .par_bridge()
                .map(|line| {
                    let page: rip_core::Page =
                        serde_json::from_str(&line.expect("readable input")).expect("a page");
                    let _ = parse(&page.body);
                    (1usize, page.body.len())
                })
                .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        });
        let out = serde_json::json!({
            "pages": pages, "bytes": bytes, "seconds": started.elapsed().as_secs_f64(),
            "threads": pool.current_num_threads(), "stream": true,
        });
        let text = format!("{out}\n");
        std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes()).expect("stdout");
        return;
    }
    let mut bodies = Vec::new();
    for line in file.lines() {
        let line = line.expect("readable input");
        if let Ok(page) = serde_json::from_str::<rip_core::Page>(&line) {
            bodies.push(page.body);
        }
    }
    let started = Instant::now();
    let nodes: usize = pool.install(|| bodies.par_iter().map(|b| parse(b)).sum());
    let secs = started.elapsed().as_secs_f64();
    let bytes: usize = bodies.iter().map(String::len).sum();
    let out = serde_json::json!({
        "pages": bodies.len(), "bytes": bytes, "seconds": secs, "nodes": nodes,
        "threads": pool.current_num_threads(),
    });
    let text = format!("{out}\n");
    std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes()).expect("stdout");
}
