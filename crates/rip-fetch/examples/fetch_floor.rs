//! The benchmark floor for `scripts/bench/fetch`: the same URLs fetched with the bare
//! HTTP client under rip-http (reqwest, same features and allocator as rip-fetch), with
//! the same number of requests in flight, and nothing else: no politeness, no retries,
//! no classification, no cache, no charset decoding.
//!
//! By default each body is read and dropped. With `--json`, each body is also written to
//! stdout as one NDJSON line holding the URL, status and body (what any fetch stage that
//! writes pages must do at the least). With `--files DIR`, each body is written to a file
//! of its own under DIR (256 folders), on the runtime thread: what a crawler that keeps
//! every page as a file (wget -r, a cache of one file per URL) must do at the least.
//! Prints one JSON line on stderr: pages, bytes, seconds.
//!
//!   cargo run --release -p rip-fetch --example fetch_floor -- urls.txt [-c 16] [--json] [--files DIR]

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// One output line: borrowed, so writing it costs the escaping and the write, no copy.
#[derive(serde::Serialize)]
struct Line<'a> {
    url: &'a str,
    status: u16,
    body: &'a str,
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: fetch_floor <urls.txt> [-c N] [--json | --files DIR]");
    let concurrency = args
        .iter()
        .position(|a| a == "-c")
        .and_then(|i| args.get(i + 1))
        .map_or(16, |n| n.parse().expect("a request count"));
    let json = args.iter().any(|a| a == "--json");
    let files: Option<Arc<std::path::PathBuf>> = args
        .iter()
        .position(|a| a == "--files")
        .and_then(|i| args.get(i + 1))
        .map(|d| Arc::new(d.into()));
    if let Some(dir) = &files {
        for i in 0..256 {
            std::fs::create_dir_all(dir.join(format!("{i:02x}"))).expect("the files folder");
        }
    }
    let urls: Arc<Vec<String>> = Arc::new(
        std::fs::read_to_string(path)
            .expect("the URL list")
            .lines()
            .map(str::to_owned)
            .collect(),
    );
    let client = reqwest::Client::builder().build().expect("a client");
    let next = Arc::new(AtomicUsize::new(0));
    let out = Arc::new(std::sync::Mutex::new(std::io::BufWriter::new(
        std::io::stdout(),
    )));
    let start = Instant::now();
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (client, urls, next, out) =
                (client.clone(), urls.clone(), next.clone(), out.clone());
            let files = files.clone();
            tokio::spawn(async move {
                let mut bytes = 0usize;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(url) = urls.get(i) else { break };
                    let resp = client.get(url).send().await.expect("a response");
                    if let Some(dir) = &files {
                        let body = resp.bytes().await.expect("a body");
                        bytes += body.len();
                        std::fs::write(dir.join(format!("{:02x}/{i}", i % 256)), &body)
                            .expect("a page file");
                    } else if json {
                        let status = resp.status().as_u16();
                        let body = resp.text().await.expect("a body");
                        bytes += body.len();
                        let line = Line {
                            url,
                            status,
                            body: &body,
                        };
                        let mut out = out.lock().expect("stdout");
                        serde_json::to_writer(&mut *out, &line).expect("stdout");
                        out.write_all(b"\n").expect("stdout");
                    } else {
                        bytes += resp.bytes().await.expect("a body").len();
                    }
                }
                bytes
            })
        })
        .collect();
    let mut bytes = 0;
    for w in workers {
        bytes += w.await.expect("a worker");
    }
    out.lock().expect("stdout").flush().expect("stdout");
    eprintln!(
        "{{\"pages\":{},\"bytes\":{bytes},\"seconds\":{:.3}}}",
        urls.len(),
        start.elapsed().as_secs_f64()
    );
}
