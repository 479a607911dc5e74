//! The script-built demo site (testdata/site-js): what the server sends has no items;
//! the rendered DOM has every one. And a rerun replays the renders from the cache.

use std::os::unix::process::ExitStatusExt;

use rip_core::Record;
use rip_testkit::{Ran, Stage, testdata};
use rip_testserver::{Fault, Rule, TestServer};
use serde_json::Value;

use crate::{one_each, refs, stage};

fn json(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(testdata(path)).unwrap()).unwrap()
}

/// The names the JSON endpoint holds under `key`, as the page shows them.
fn names(path: &str, key: &str, line: impl Fn(&Value) -> String) -> Vec<String> {
    json(path)[key]
        .as_array()
        .unwrap()
        .iter()
        .map(line)
        .collect()
}

/// The docs rip-parse makes of `pages` with the market's rules, by URL.
fn parse(pages: &str, dir: &std::path::Path) -> Vec<Value> {
    let rules = testdata("render/market.rules.toml");
    let ran = Stage::new("rip-parse")
        .arg("--rules")
        .arg(rules)
        .arg("-q")
        .current_dir(dir)
        .stdin(pages)
        .run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    ran.values()
        .into_iter()
        .filter(|v| v["_type"] == "doc")
        .collect()
}

/// A stage's output saved by `tee`, read as a run of `program`.
fn saved(program: &str, stdout: String) -> Ran {
    let status = std::process::ExitStatus::from_raw(0);
    let stdout = stdout.into_bytes();
    Ran::from_output(
        program,
        std::process::Output {
            status,
            stdout,
            stderr: Vec::new(),
        },
    )
}

fn list(doc: &Value, field: &str) -> Vec<String> {
    doc[field]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn fetch_misses_the_script_built_items_and_render_extracts_every_one() {
    let server = TestServer::builder()
        .dir(testdata("site-js"))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = ["/market/", "/app/?view=caravans", "/app/?view=guilds"]
        .iter()
        .map(|p| server.url(p))
        .collect();
    let products = names("site-js/api/products.json", "products", |p| {
        p["name"].as_str().unwrap().to_owned()
    });
    let caravans = names("site-js/api/caravans.json", "caravans", |c| {
        format!("{} ({} stops)", c["name"].as_str().unwrap(), c["stops"])
    });
    let guilds = names("site-js/api/guilds.json", "guilds", |g| {
        format!("{}, founded {}", g["name"].as_str().unwrap(), g["founded"])
    });

    let fetched = stage("rip-fetch", dir.path(), &[], &refs(&urls)).run();
    assert_eq!(fetched.code, 0, "{}", fetched.stderr);
    let docs = parse(&fetched.stdout, dir.path());
    assert_eq!(docs.len(), 3);
    for doc in &docs {
        assert!(
            list(doc, "products").is_empty() && list(doc, "entries").is_empty(),
            "{doc}"
        );
    }

    let rendered = stage("rip-render", dir.path(), &["-c", "3"], &refs(&urls)).run();
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    for record in one_each(&rendered, &urls) {
        let Record::Page(page) = record else {
            panic!("{record:?}")
        };
        let render = page.render.as_ref().expect("a render object");
        assert_eq!(render.wait, "settled");
        assert!(render.browser.contains("156") || !render.browser.is_empty());
        assert!(render.requests >= 2, "the script and its JSON: {render:?}");
        assert!(render.console_errors.is_empty(), "{render:?}");
    }
    let docs = parse(&rendered.stdout, dir.path());
    let by_url = |u: &str| docs.iter().find(|d| d["url"] == u).unwrap();
    assert_eq!(list(by_url(&urls[0]), "products"), products);
    assert_eq!(list(by_url(&urls[1]), "entries"), caravans);
    assert_eq!(list(by_url(&urls[2]), "entries"), guilds);
    assert_eq!(by_url(&urls[2])["name"], "Guilds");
    let banner = server.count("/images/banner.png");
    assert_eq!(banner, 0, "images are not fetched by default");

    // A rerun replays the renders from the cache: no browser, no request.
    let before = server.total();
    let again = stage("rip-render", dir.path(), &[], &refs(&urls)).run();
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.counter("renderCacheHits"), 3);
    assert_eq!(again.counter("browserStarts"), 0);
    assert_eq!(server.total(), before, "nothing asked of the site");
    assert_eq!(list(by_url(&urls[0]), "products").len(), products.len());
    let replayed = parse(&again.stdout, dir.path());
    assert_eq!(replayed.len(), 3);
    for doc in &replayed {
        let fresh = by_url(doc["url"].as_str().unwrap());
        assert_eq!(doc["products"], fresh["products"]);
        assert_eq!(doc["entries"], fresh["entries"]);
    }
}

#[test]
fn only_the_matching_refs_are_rendered_and_rip_fetch_takes_the_rest() {
    let server = TestServer::builder()
        .dir(testdata("site-js"))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = [
        "/market/",
        "/index.html",
        "/app/?view=guilds",
        "/robots.txt",
    ]
    .iter()
    .map(|p| server.url(p))
    .collect();
    let only = ["--only", "/(market|app)/"];
    let rendered = stage("rip-render", dir.path(), &only, &refs(&urls)).run();
    assert_eq!(rendered.code, 0, "{}", rendered.stderr);
    assert_eq!(rendered.summary().passed_through.get("ref"), Some(&2));
    assert_eq!(rendered.counter("rendered"), 2);
    let fetched = stage("rip-fetch", dir.path(), &[], &rendered.stdout).run();
    assert_eq!(fetched.code, 0, "{}", fetched.stderr);
    let got = one_each(&fetched, &urls);
    for (i, record) in got.iter().enumerate() {
        let Record::Page(page) = record else {
            panic!("{record:?}")
        };
        let by_browser = i == 0 || i == 2;
        assert_eq!(page.render.is_some(), by_browser, "{}", page.url);
    }
    assert_eq!(server.count("/index.html"), 1, "fetched once, by rip-fetch");
    assert_eq!(
        server.count("/api/products.json"),
        1,
        "the market's script ran"
    );
}

/// `rip-fetch | rip-route | rip-fetch | rip-render --only-marked | rip-route --final |
/// rip-parse`, as a shell pipeline: the policy's render rules send the two empty shells
/// to the browser (one by its body, one by its URL), the round's rip-fetch passes them
/// by and retries the 503, rip-render renders only them, and the books balance.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn a_route_rule_sends_the_empty_shells_to_the_browser() {
    let server = TestServer::builder()
        .dir(testdata("site-js"))
        .file("/flaky.html", "<!doctype html><title>f</title><p>ok</p>")
        .rule(Rule::path("/flaky.html").times(1, Fault::status(503)))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = [
        "/market/",
        "/index.html",
        "/app/?view=guilds",
        "/flaky.html",
    ]
    .iter()
    .map(|p| server.url(p))
    .collect();
    std::fs::write(dir.path().join("refs.ndjson"), refs(&urls)).unwrap();
    let policy = testdata("render/shells.policy.toml");
    let rules = testdata("render/market.rules.toml");
    let http = "-q --delay 0ms --jitter 0ms --attempts 1 --cache-dir cache";
    let script = format!(
        "rip-fetch {http} < refs.ndjson | rip-route -q -p {policy} \
         | tee routed.ndjson | rip-fetch {http} | rip-render {http} --only-marked \
         | rip-route -q -p {policy} --final | tee out.ndjson \
         | rip-parse -q --rules {rules} > docs.ndjson; echo ${{PIPESTATUS[@]}}; \
         rip-reconcile -q < docs.ndjson | rip-health -q > health.json",
        policy = policy.display(),
        rules = rules.display()
    );
    let out = rip_testkit::run_shell(&script, Some(dir.path()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let codes = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        codes.trim(),
        "2 0 0 0 0 0 0 0",
        "first fetch partial (503): {stderr}"
    );

    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let routed = saved("rip-route", read("routed.ndjson"));
    assert_eq!(routed.counter("sentToBrowser"), 2, "{stderr}");
    assert_eq!(routed.counter("retried"), 1);
    let mut marked: Vec<&str> = routed
        .records()
        .iter()
        .filter_map(|r| match r {
            Record::Ref(r) if r.context.needs_browser => Some(r.url.as_str()),
            _ => None,
        })
        .collect();
    marked.sort();
    assert_eq!(
        marked,
        [urls[2].as_str(), urls[0].as_str()],
        "/app/ sorts first"
    );

    let out = saved("rip-route", read("out.ndjson"));
    for (i, record) in one_each(&out, &urls).into_iter().enumerate() {
        let Record::Page(page) = record else {
            panic!("{record:?}")
        };
        assert_eq!(page.render.is_some(), i == 0 || i == 2, "{}", page.url);
        assert_eq!(page.attempt, u32::from(i == 3), "{}", page.url);
    }
    let entered: usize = out
        .of("ledger")
        .iter()
        .map(|l| match l {
            Record::Ledger(l) => l.entered.len(),
            _ => 0,
        })
        .sum();
    assert_eq!(entered, 4, "each URL entered once, by the first rip-fetch");
    let round: Vec<u64> = out
        .of("summary")
        .iter()
        .filter_map(|s| match s {
            Record::Summary(s) if s.stage == "rip-fetch" => {
                Some(s.counters.get("passedToBrowser").copied().unwrap_or(0))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        round,
        [0, 2],
        "the round's rip-fetch passed the marked refs by"
    );
    assert_eq!(
        server.count("/market/"),
        1,
        "the browser's document came from the cache"
    );
    assert_eq!(server.count("/flaky.html"), 2, "503, then 200 in the round");
    assert_eq!(
        server.count("/api/products.json"),
        1,
        "the market's script ran"
    );

    let docs: Vec<Value> = read("docs.ndjson")
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["_type"] == "doc")
        .collect();
    let market = docs.iter().find(|d| d["url"] == urls[0].as_str()).unwrap();
    let products = names("site-js/api/products.json", "products", |p| {
        p["name"].as_str().unwrap().to_owned()
    });
    assert_eq!(list(market, "products"), products);
    let health: Value = serde_json::from_str(&read("health.json")).unwrap();
    assert_eq!(health["complete"], true, "{health:#}");
}
