//! Where one thread's time goes on the streaming path, phase by phase, for
//! `scripts/bench/parse`: the same `page` records (loaded first, untimed) read back as
//! the stage reads them, each phase timed over all pages on this thread alone:
//! `check` (the input reader's look at a line: is it a record, of what kind), `decode`
//! (the `page` record's JSON), `extract` (generic extraction in the streaming pass),
//! `write` (the doc's line). Prints one JSON line of microseconds per page.
//!
//!   cargo run --release -p rip-parse --example stream_phases -- pages.ndjson [--markdown]

use std::io::BufRead;
use std::time::{Duration, Instant};

use rip_parse::dom::ParseLimits;
use rip_parse::generic;

fn timed<T>(total: &mut Duration, f: impl FnOnce() -> T) -> T {
    let started = Instant::now();
    let out = f();
    *total += started.elapsed();
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: stream_phases <pages.ndjson> [--markdown]");
    let markdown = args.iter().any(|a| a == "--markdown");
    let file = std::io::BufReader::new(std::fs::File::open(path).expect("the input file"));
    let lines: Vec<String> = file.lines().map(|l| l.expect("readable input")).collect();
    let opts = rip_parse::ExtractOptions {
        markdown,
        ..Default::default()
    };
    let [mut check, mut decode, mut extract, mut write, mut whole] = [Duration::ZERO; 5];
    let mut pages = 0u32;
    for text in &lines {
        let line = timed(&mut check, || rip_core::Line::from_text(text.clone())).expect("a record");
        let page: rip_core::Page =
            timed(&mut decode, || serde_json::from_str(line.text())).expect("a page");
        let url = rip_parse::page::page_url(&page).expect("a page URL");
        let g = timed(&mut extract, || {
            generic::extract_streaming(&page.body, &url, markdown, ParseLimits::default())
        });
        drop(g);
        let outcome = timed(&mut whole, || {
            rip_parse::process::page_line(&opts, line.text())
        });
        let rip_parse::Outcome::Doc { doc, typed, .. } = outcome else {
            panic!("not a doc: {}", line.text().get(..200).unwrap_or_default());
        };
        timed(&mut write, || rip_parse::output::doc_line(*doc, &typed));
        pages += 1;
    }
    let us = |d: Duration| (d.as_secs_f64() * 1e6 / f64::from(pages) * 10.0).round() / 10.0;
    let out = serde_json::json!({
        "pages": pages, "checkUs": us(check), "decodeUs": us(decode), "extractUs": us(extract),
        "decodeExtractUs": us(whole), "writeUs": us(write),
    });
    let text = format!("{out}\n");
    std::io::Write::write_all(&mut std::io::stdout(), text.as_bytes()).expect("stdout");
}
