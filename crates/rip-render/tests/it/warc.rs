//! `--warc DIR`: what the browser was given (the document, its scripts, their data) as
//! request/response records and each rendered DOM as a `resource` record, checked by warcio;
//! and pywb replaying a crawl of both demo sites, checked by headless Chromium.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rip_testkit::{files_ending, testdata, warcio, warcio_index, warcio_payload};
use rip_testserver::TestServer;
use serde_json::Value;

use crate::{refs, stage};

/// rip-render's page timeout here: a loaded machine (8 tests at once, each with a browser)
/// may take far longer than the default 30 s to settle a page.
const PATIENCE: &str = "120s";

/// The one closed WARC file in `dir` (none left `.open`).
fn the_file(dir: &Path) -> PathBuf {
    assert!(files_ending(dir, ".open").is_empty(), "every file closed");
    let files = files_ending(dir, ".warc.gz");
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

/// Every record of `file` as warcio indexes it.
fn index(file: &Path) -> Vec<Value> {
    let fields = "warc-type,warc-target-uri,warc-record-id,warc-concurrent-to,content-type,offset";
    warcio_index(file, fields)
}

/// The records of `kind` whose target URI is `uri`.
fn records<'a>(index: &'a [Value], kind: &str, uri: &str) -> Vec<&'a Value> {
    index
        .iter()
        .filter(|v| v["warc-type"] == kind && v["warc-target-uri"] == uri)
        .collect()
}

/// The payload of the record at `offset` (warcio extract).
fn payload(file: &Path, offset: &Value) -> String {
    let offset = match offset {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    warcio_payload(file, &offset)
}

/// The product names of the market's data.
fn products() -> Vec<String> {
    let path = testdata("site-js/api/products.json");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    json["products"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_page_its_script_its_data_and_its_dom_are_archived() {
    let server = TestServer::builder()
        .dir(testdata("site-js"))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let market = server.url("/market/");
    let caravans = server.url("/app/?view=caravans");
    let urls = [market.clone(), caravans.clone()];
    let archive = dir.path().join("warc");
    let args = [
        "--warc",
        archive.to_str().unwrap(),
        "--page-timeout",
        PATIENCE,
        "--allow",
        "images",
    ];
    let ran = stage("rip-render", dir.path(), &args, &refs(&urls)).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(ran.counter("warcDoms"), 2, "{}", ran.stdout);
    let file = the_file(&archive);
    let report = warcio(&["check", "-v"], &file);
    assert!(!report.contains("fail"), "{report}");

    let index = index(&file);
    for path in ["/market/", "/js/market.js", "/api/products.json"] {
        let uri = server.url(path);
        for kind in ["request", "response", "metadata"] {
            assert_eq!(
                records(&index, kind, &uri).len(),
                1,
                "{kind} {uri}: {index:#?}"
            );
        }
    }
    // An image let through (--allow images) is archived too, its 404 as well: what the
    // browser was given, whatever it was.
    for path in ["/js/router.js", "/api/caravans.json", "/images/banner.png"] {
        assert_eq!(records(&index, "response", &server.url(path)).len(), 1);
    }
    let names = products();
    let response = records(&index, "response", &market)[0];
    let sent = payload(&file, &response["offset"]);
    assert!(
        !sent.contains(&names[0]),
        "the server sends no items: {sent}"
    );

    let dom = records(&index, "resource", &format!("urn:dom:{market}"));
    assert_eq!(dom.len(), 1, "{index:#?}");
    let dom = dom[0];
    assert_eq!(dom["content-type"], "text/html; charset=utf-8");
    assert_eq!(dom["warc-concurrent-to"], response["warc-record-id"]);
    let html = payload(&file, &dom["offset"]);
    for name in &names {
        assert!(
            html.contains(name.as_str()),
            "{name} written by the script: {html}"
        );
    }
    let dom = records(&index, "resource", &format!("urn:dom:{caravans}"));
    let html = payload(&file, &dom[0]["offset"]);
    assert!(html.contains("Amber Road Company (3 stops)"), "{html}");

    read_back_without_the_doms(&file, &server.url("/images/banner.png"));
}

/// `rip-warc read` of `file` gives the pages as they were sent, not the DOM records (not
/// HTTP URLs of a site; counted `notHttp`); the image's 404 (`image`), and the browser's
/// favicon's when it asked, are failures, so the run is partial.
fn read_back_without_the_doms(file: &Path, image: &str) {
    let read = rip_testkit::Stage::new("rip-warc")
        .args(["read", "-q"])
        .arg(file)
        .run();
    assert_eq!(read.code, 2, "{}", read.stderr);
    assert_eq!(read.counter("notHttp"), 2, "{}", read.stdout);
    let failed: Vec<&str> = read
        .records()
        .iter()
        .filter_map(|r| match r {
            rip_core::Record::Failure(f) => Some(f.url.as_str()),
            _ => None,
        })
        .collect();
    assert!(failed.contains(&image), "{}", read.stdout);
    let images = |u: &&str| u.ends_with(".png") || u.ends_with("/favicon.ico");
    assert!(failed.iter().all(images), "{}", read.stdout);
}

#[test]
fn a_dom_past_the_body_limit_is_cut_and_marked_truncated() {
    // A small document whose script writes 20,000 characters: the response is whole, the
    // DOM is cut at --max-body.
    let page = "<!doctype html><title>big</title><body><script>\
                document.body.append('x'.repeat(20000) + ['E', 'N', 'D'].join(''));</script></body>";
    let server = TestServer::builder()
        .file("/big.html", page)
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = server.url("/big.html");
    let archive = dir.path().join("warc");
    let args = [
        "--warc",
        archive.to_str().unwrap(),
        "--max-body",
        "4KiB",
        "--page-timeout",
        PATIENCE,
    ];
    let ran = stage(
        "rip-render",
        dir.path(),
        &args,
        &refs(std::slice::from_ref(&url)),
    )
    .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let file = the_file(&archive);
    let fields = "warc-type,warc-target-uri,warc-truncated,offset";
    let index = warcio_index(&file, fields);
    let response = records(&index, "response", &url);
    assert_eq!(response[0].get("warc-truncated"), None, "{index:#?}");
    let dom = records(&index, "resource", &format!("urn:dom:{url}"));
    assert_eq!(dom[0]["warc-truncated"], "length", "{index:#?}");
    let html = payload(&file, &dom[0]["offset"]);
    assert!(html.len() <= 4096 && html.len() > 2048, "{}", html.len());
    assert!(!html.contains("END"), "cut before the end");
    warcio(&["check"], &file);
}

/// A port free a moment ago on 127.0.0.1.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// `wayback` serving the collections under `root`, killed when dropped.
struct Wayback {
    child: Child,
    port: u16,
}

impl Drop for Wayback {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Wayback {
    /// Starts `wayback` on a free port and waits (up to two minutes: a loaded machine)
    /// until it answers for collection `coll`; another port when it could not listen.
    fn start(root: &Path, coll: &str) -> Self {
        let mut last = String::new();
        for _ in 0..3 {
            let port = free_port();
            let log = std::fs::File::create(root.join("wayback.log")).unwrap();
            let child = Command::new(rip_testkit::test_tool("wayback"))
                .args(["-b", "127.0.0.1", "-p", &port.to_string(), "-t", "8"])
                .current_dir(root)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .expect("wayback starts");
            let mut wayback = Self { child, port };
            if wayback.answers(coll) {
                return wayback;
            }
            last = std::fs::read_to_string(root.join("wayback.log")).unwrap_or_default();
        }
        panic!("wayback did not answer on 127.0.0.1: {last}");
    }

    fn answers(&mut self, coll: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(120);
        let addr = format!("127.0.0.1:{}", self.port);
        let ask = format!("GET /{coll}/ HTTP/1.0\r\nHost: {addr}\r\n\r\n");
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(mut conn) = std::net::TcpStream::connect(&addr) {
                use std::io::{Read as _, Write as _};
                let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
                let mut answer = String::new();
                if conn.write_all(ask.as_bytes()).is_ok()
                    && conn.read_to_string(&mut answer).is_ok()
                    && answer.starts_with("HTTP/1.")
                {
                    return true;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        false
    }

    fn url(&self, coll: &str, archived: &str) -> String {
        format!("http://127.0.0.1:{}/{coll}/2/{archived}", self.port)
    }
}

/// The DOM headless Chromium ends with on `url` (its scripts run: a virtual-time budget of
/// 10 s, the run bounded at 90 s), in a profile of its own.
fn dump_dom(url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut { stdout }, &mut s);
        s
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    reader.join().unwrap_or_default()
}

/// Loads `url` in Chromium until its DOM holds every one of `wanted` (three tries: a
/// loaded machine may run out the budget before the replayed data came).
fn replayed_with(url: &str, wanted: &[&str]) {
    let mut dom = String::new();
    for _ in 0..3 {
        dom = dump_dom(url);
        if wanted.iter().all(|w| dom.contains(w)) {
            return;
        }
    }
    let missing: Vec<&&str> = wanted.iter().filter(|w| !dom.contains(**w)).collect();
    panic!("{url}: {missing:?} not in the replayed DOM:\n{dom}");
}

#[test]
fn pywb_replays_fetched_and_rendered_pages_with_their_scripts() {
    let wb_manager = rip_testkit::test_tool("wb-manager");
    let dir = tempfile::tempdir().unwrap();
    let (fetched, rendered) = (dir.path().join("fetched"), dir.path().join("rendered"));

    let site = TestServer::builder()
        .dir(testdata("site"))
        .start_background()
        .unwrap();
    // rip-fetch has a cache of its own: pages rip-discover left in a shared one would be
    // cache hits, which are not archived (nothing went over the wire).
    let script = format!(
        "rip-discover -q --delay 0ms --jitter 0ms --cache-dir crawl {} \
         | rip-fetch -q --delay 0ms --jitter 0ms --cache-dir fetch --warc {} > pages.ndjson; \
         echo ${{PIPESTATUS[@]}}",
        site.url("/"),
        fetched.display()
    );
    let out = rip_testkit::run_shell(&script, Some(dir.path()));
    let codes = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The demo site's dead links (two 404s, on purpose) make rip-fetch's run partial.
    assert!(matches!(codes.trim(), "0 0" | "0 2"), "{codes}: {stderr}");
    let site_pages = [
        (site.url("/"), "Emberfall Compendium"),
        (site.url("/about.html"), "About the Compendium"),
        (site.url("/items/"), "Items"),
    ];

    let js = TestServer::builder()
        .dir(testdata("site-js"))
        .start_background()
        .unwrap();
    let (market, caravans) = (js.url("/market/"), js.url("/app/?view=caravans"));
    let args = [
        "--warc",
        rendered.to_str().unwrap(),
        "--page-timeout",
        PATIENCE,
    ];
    let urls = [market.clone(), caravans.clone()];
    let ran = stage("rip-render", dir.path(), &args, &refs(&urls)).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    // Nothing is served live from here on: what Chromium shows comes from the archive.
    drop((site, js));

    let root = dir.path().join("pywb");
    std::fs::create_dir(&root).unwrap();
    // Frameless replay: the page is the top document, so --dump-dom shows it.
    std::fs::write(root.join("config.yaml"), "framed_replay: false\n").unwrap();
    let wb = |args: &[&str]| {
        let out = Command::new(&wb_manager)
            .args(args)
            .current_dir(&root)
            .stdin(Stdio::null())
            .output()
            .expect("wb-manager runs");
        assert!(out.status.success(), "wb-manager {args:?}: {out:?}");
    };
    wb(&["init", "demo"]);
    let files = [the_file(&fetched), the_file(&rendered)];
    let mut add = vec!["add", "demo"];
    add.extend(files.iter().map(|f| f.to_str().unwrap()));
    wb(&add);
    let wayback = Wayback::start(&root, "demo");

    for (url, h1) in &site_pages {
        replayed_with(&wayback.url("demo", url), &[&format!("<h1>{h1}</h1>")]);
    }
    let names = products();
    let first_and_last = [names[0].as_str(), names[names.len() - 1].as_str()];
    replayed_with(&wayback.url("demo", &market), &first_and_last);
    let routed = [
        "Caravans",
        "Amber Road Company (3 stops)",
        "Duskwater Barges",
    ];
    replayed_with(&wayback.url("demo", &caravans), &routed);
}
