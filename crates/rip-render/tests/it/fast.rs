//! The faster renderer: the `settled` wait (the default) against late and failing
//! requests, a bundle many pages share fetched once, and pages still isolated.

use std::time::Duration;

use rip_core::{Page, Record};
use rip_testserver::{Fault, Rule, TestServer};

use crate::{one_each, refs, stage};

fn page_of<'a>(r: &'a Record, url: &str) -> &'a Page {
    match r {
        Record::Page(p) => p,
        other => panic!("{url}: {other:?}"),
    }
}

/// A shell whose script fills `ul.items` from `json` (`{"items": [..]}`), `delay_ms`
/// after the load event, and says `data-error` when the request fails.
fn late_list(json: &str, delay_ms: u32) -> String {
    format!(
        "<!doctype html><title>t</title><ul class=items></ul><script>\
         addEventListener('load', () => setTimeout(() => fetch('{json}')\
         .then(r => {{ if (!r.ok) throw new Error('status ' + r.status); return r.json(); }})\
         .then(d => {{ for (const it of d.items) {{ const li = document.createElement('li');\
         li.textContent = it; document.querySelector('ul').appendChild(li); }} }})\
         .catch(e => {{ document.body.dataset.error = e.message; }}), {delay_ms}));</script>"
    )
}

#[test]
fn the_settled_wait_keeps_late_content_and_fails_honestly() {
    let server = TestServer::builder()
        .file("/late.html", late_list("/late.json", 300))
        .file("/late.json", r#"{"items": ["one", "two", "three"]}"#)
        .file("/bad.html", late_list("/bad.json", 0))
        .file("/bad.json", "{}")
        .file("/slow.html", late_list("/slow.json", 0))
        .file("/slow.json", "{}")
        // The JSON answered 400 ms late, after the page went quiet.
        .rule(Rule::path("/late.json").always(Fault::serve().delay(Duration::from_millis(400))))
        .rule(Rule::path("/bad.json").always(Fault::status(500)))
        .rule(Rule::path("/slow.json").always(Fault::serve().stall(Duration::from_secs(60))))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = ["/late.html", "/bad.html", "/slow.html"]
        .iter()
        .map(|p| server.url(p))
        .collect();
    let args = ["-c", "3", "--page-timeout", "8s", "--attempts", "1"];
    let ran = stage("rip-render", dir.path(), &args, &refs(&urls)).run();
    let got = one_each(&ran, &urls);

    let late = page_of(got[0], &urls[0]);
    assert_eq!(late.render.as_ref().unwrap().wait, "settled");
    for item in ["<li>one</li>", "<li>two</li>", "<li>three</li>"] {
        assert!(late.body.contains(item), "{item} missing: {}", late.body);
    }

    let bad = page_of(got[1], &urls[1]);
    assert!(
        bad.body.contains("data-error=\"status 500\""),
        "the script saw the 500: {}",
        bad.body
    );
    let failed = &bad.render.as_ref().unwrap().failed_requests;
    assert!(failed.iter().any(|f| f.status == Some(500)), "{failed:?}");

    match got[2] {
        Record::Failure(f) => {
            let error = f.errors.last().unwrap();
            assert_eq!(error.code, "render.timeout", "{f:?}");
            assert!(error.message.contains("/slow.json"), "{}", error.message);
        }
        other => panic!("a stalled JSON is an honest timeout: {other:?}"),
    }
}

#[test]
fn a_bundle_many_pages_share_is_fetched_once() {
    // ~300 KB of script, as a site's framework bundle, then the page's own code.
    let mut bundle = String::from("var lib = {};\n");
    let mut k = 0;
    while bundle.len() < 300_000 {
        bundle.push_str(&format!("lib.f{k} = function (a) {{ return a + {k}; }};\n"));
        k += 1;
    }
    bundle.push_str(
        "fetch('/api/' + document.body.dataset.id + '.json').then(r => r.json()).then(d => {\
         document.querySelector('ul').innerHTML = d.items.map(i => '<li>' + i + '</li>').join(''); });",
    );
    let n = 12;
    let mut builder = TestServer::builder().file("/bundle.js", bundle);
    for i in 0..n {
        builder = builder
            .file(
                format!("/p/{i}.html"),
                format!(
                    "<!doctype html><title>{i}</title><script src=/bundle.js defer></script>\
                     <body data-id={i}><ul></ul></body>"
                ),
            )
            .file(
                format!("/api/{i}.json"),
                format!(r#"{{"items": ["item {i}-a", "item {i}-b"]}}"#),
            );
    }
    let server = builder.start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = (0..n)
        .map(|i| server.url(&format!("/p/{i}.html")))
        .collect();
    let ran = stage("rip-render", dir.path(), &["-c", "4"], &refs(&urls)).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    for (i, r) in one_each(&ran, &urls).into_iter().enumerate() {
        let p = page_of(r, &urls[i]);
        for item in [
            format!("<li>item {i}-a</li>"),
            format!("<li>item {i}-b</li>"),
        ] {
            assert!(p.body.contains(&item), "{item}: {}", p.body);
        }
    }
    assert_eq!(server.count("/bundle.js"), 1, "fetched once for {n} pages");
    for i in 0..n {
        assert_eq!(
            server.count(&format!("/api/{i}.json")),
            1,
            "each page's own data"
        );
    }
    assert_eq!(ran.counter("subrequestsShared"), n as u64 - 1);
}

#[test]
fn pages_ahead_in_fresh_contexts_share_nothing() {
    // Each page leaves a cookie and local storage, and says what it found: with tabs
    // opened ahead (two tabs, so contexts are readied while pages render), none sees
    // another's.
    let page = "<!doctype html><title>p</title><body><script>\
        document.body.dataset.seen = (localStorage.getItem('who') || 'nobody') + ' | ' + \
        (document.cookie || 'no cookie');\
        localStorage.setItem('who', location.pathname); document.cookie = 'p=' + location.pathname;\
        </script></body>";
    let mut builder = TestServer::builder();
    for i in 0..6 {
        builder = builder.file(format!("/{i}.html"), page);
    }
    let server = builder.start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = (0..6).map(|i| server.url(&format!("/{i}.html"))).collect();
    let ran = stage("rip-render", dir.path(), &["-c", "2"], &refs(&urls)).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    for (i, r) in one_each(&ran, &urls).into_iter().enumerate() {
        let p = page_of(r, &urls[i]);
        assert!(
            p.body.contains("data-seen=\"nobody | no cookie\""),
            "{}: {}",
            urls[i],
            p.body
        );
    }
}
