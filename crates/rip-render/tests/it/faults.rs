//! Faults: pages that never settle, loop, allocate without end, open dialogs, navigate
//! away; a 503 then a 200; robots.txt; and the browser killed mid-run.

use std::time::Duration;

use rip_core::{ErrorCategory, Record};
use rip_testserver::{Fault, Rule, TestServer};

use crate::{one_each, refs, stage};

fn page(script: &str) -> String {
    format!(
        "<!doctype html><html><head><title>t</title></head><body><main><p>shell</p></main><script>{script}</script></body></html>"
    )
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "the faults served, one run, then a check per fault, read top to bottom"
)]
fn each_fault_ends_as_one_bounded_record() {
    let server = TestServer::builder()
        .dir(rip_testkit::testdata("site-js"))
        .file(
            "/never.html",
            "<!doctype html><title>n</title><p>before</p><script src=\"/never.js\"></script><p>after</p>",
        )
        .file("/never.js", "document.title = 'late';")
        .file("/loop.html", page("for (;;) {}"))
        .file(
            "/hog.html",
            page("const a = []; for (;;) { a.push(new Array(1e6).fill(1.5)); }"),
        )
        .file(
            "/dialog.html",
            page("alert('hello'); setTimeout(() => { location.href = '/away.html'; }, 10);"),
        )
        .file(
            "/console.html",
            page("console.error('the widget', 42); setTimeout(() => { null.x; }, 0);"),
        )
        .file("/flaky.html", page("document.body.dataset.ok = 'yes';"))
        .file("/down.html", page(""))
        .rule(Rule::path("/never.js").always(Fault::serve().stall(Duration::from_secs(60))))
        .rule(Rule::path("/flaky.html").times(1, Fault::status(503)))
        .rule(Rule::path("/down.html").always(Fault::status(503)))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let paths = [
        "/never.html",
        "/loop.html",
        "/hog.html",
        "/dialog.html",
        "/console.html",
        "/flaky.html",
        "/down.html",
        "/private/ledger.html",
        "/market/",
    ];
    let urls: Vec<String> = paths.iter().map(|p| server.url(p)).collect();
    let args = [
        "-c",
        "4",
        "--page-timeout",
        "8s",
        "--js-heap",
        "64",
        "--attempts",
        "2",
    ];
    let ran = stage("rip-render", dir.path(), &args, &refs(&urls)).run();
    assert_eq!(ran.code, 2, "some refs failed: {}", ran.stderr);
    let got = one_each(&ran, &urls);
    let failure = |i: usize| match got[i] {
        Record::Failure(f) => f,
        other => panic!("{}: {other:?}", urls[i]),
    };
    let page = |i: usize| match got[i] {
        Record::Page(p) => p,
        other => panic!("{}: {other:?}", urls[i]),
    };

    let never = failure(0);
    assert_eq!(never.category, ErrorCategory::Timeout);
    let error = never.errors.last().unwrap();
    assert_eq!(error.code, "render.timeout");
    assert!(error.message.contains("within 8s"), "{}", error.message);
    assert!(
        error.message.contains("/never.js"),
        "names what hung: {}",
        error.message
    );
    assert!(
        never.body.as_deref().unwrap_or("").contains("before"),
        "what was seen: {never:?}"
    );
    assert!(never.retryable);

    let looping = failure(1);
    assert_eq!(looping.errors.last().unwrap().code, "render.timeout");

    // Bounded either way: its renderer reaches the heap cap and crashes (see the next
    // test), or the page timeout ends it first.
    let hog = failure(2);
    let code = &hog.errors.last().unwrap().code;
    assert!(
        code == "render.crashed" || code == "render.timeout",
        "{hog:?}"
    );

    let dialog = page(3).render.clone().unwrap();
    assert_eq!(dialog.dialogs, 1);
    assert!(
        dialog
            .navigations_blocked
            .iter()
            .any(|u| u.ends_with("/away.html")),
        "{dialog:?}"
    );
    assert_eq!(
        server.count("/away.html"),
        0,
        "a navigation away is not followed"
    );

    let console = page(4).render.clone().unwrap();
    let kinds: Vec<&str> = console
        .console_errors
        .iter()
        .map(|e| e.kind.as_str())
        .collect();
    assert_eq!(kinds, ["console", "exception"], "{console:?}");
    assert_eq!(console.console_errors[0].text, "the widget 42");

    let flaky = page(5);
    assert_eq!(
        (flaky.status, flaky.http_attempts),
        (200, 2),
        "503 then 200"
    );
    assert!(
        flaky.body.contains("data-ok=\"yes\""),
        "rendered: {}",
        flaky.body
    );

    let down = failure(6);
    assert_eq!(
        (down.status, down.category),
        (Some(503), ErrorCategory::Transient)
    );
    assert!(down.retryable, "a rendered 503 is for another round");

    match got[7] {
        Record::Expected(e) => assert_eq!(e.rule.as_deref(), Some("Disallow: /private/")),
        other => panic!("{other:?}"),
    }
    assert_eq!(server.count("/private/ledger.html"), 0, "never opened");
    assert_eq!(server.count("/api/products.json?from=private"), 0);

    assert!(page(8).body.contains("Storm Bottle"));
    assert_eq!(
        ran.counter("browserStarts"),
        1,
        "one browser for every fault: {}",
        ran.stderr
    );
    assert_eq!(
        ran.counter("renderCrashes") + ran.counter("renderTimeouts"),
        3
    );
}

#[test]
fn a_script_that_allocates_without_end_crashes_only_its_own_page() {
    let server = TestServer::builder()
        .dir(rip_testkit::testdata("site-js"))
        .file(
            "/hog.html",
            page("const a = []; for (;;) { a.push(new Array(1e6).fill(1.5)); }"),
        )
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls = vec![server.url("/hog.html"), server.url("/market/")];
    let args = ["-c", "2", "--page-timeout", "40s", "--js-heap", "16"];
    let ran = stage("rip-render", dir.path(), &args, &refs(&urls)).run();
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    let got = one_each(&ran, &urls);
    let Record::Failure(hog) = got[0] else {
        panic!("{:?}", got[0])
    };
    assert_eq!(hog.category, ErrorCategory::Resource);
    let error = hog.errors.last().unwrap();
    assert_eq!(error.code, "render.crashed", "{hog:?}");
    assert!(error.message.contains("16 MiB"), "{}", error.message);
    assert!(!hog.retryable);
    let Record::Page(market) = got[1] else {
        panic!("{:?}", got[1])
    };
    assert!(
        market.body.contains("Storm Bottle"),
        "the other tab went on"
    );
    assert_eq!(ran.counter("browserStarts"), 1);
}

/// The process ids of `parent`'s children running `comm`.
fn children(parent: u32, comm: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let ppid = rest.split(' ').nth(1).and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(parent) && head.ends_with(&format!("({comm}")) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn a_killed_browser_is_started_again_and_every_ref_still_ends_once() {
    let mut builder = TestServer::builder()
        .rule(Rule::prefix("/api/").always(Fault::serve().delay(Duration::from_millis(400))));
    let n = 12;
    for i in 0..n {
        let script = format!(
            "fetch('/api/{i}.json').then(r => r.json()).then(j => {{ document.querySelector('main').dataset.n = j.n; }});"
        );
        builder = builder
            .file(format!("/p/{i}.html"), page(&script))
            .file_with_type(
                format!("/api/{i}.json"),
                "application/json",
                format!("{{\"n\":{i}}}"),
            );
    }
    let server = builder.start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = (0..n)
        .map(|i| server.url(&format!("/p/{i}.html")))
        .collect();
    let child = stage("rip-render", dir.path(), &["-c", "3"], &refs(&urls)).spawn();
    let pid = child.id();
    assert!(
        server.wait_for_count_blocking("/api/1.json", 1, Duration::from_secs(90)),
        "pages in flight"
    );
    let browsers = children(pid, "chromium");
    assert_eq!(browsers.len(), 1, "one browser: {browsers:?}");
    let killed = std::process::Command::new("kill")
        .args(["-9", &browsers[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let ran = rip_testkit::Ran::wait("rip-render", child);
    assert_eq!(
        ran.code, 0,
        "every page rendered in the end: {}",
        ran.stderr
    );
    // Every page rendered: its script's data is in the DOM, or (a page whose API request
    // the dying browser had in flight, on a loaded machine) the page says which request it
    // did not get. Never a page silently missing its data.
    let mut gaps = 0;
    for (i, record) in one_each(&ran, &urls).into_iter().enumerate() {
        let Record::Page(p) = record else {
            panic!("{record:?}")
        };
        if p.body.contains(&format!("data-n=\"{i}\"")) {
            continue;
        }
        let api = format!("/api/{i}.json");
        let render = p.render.as_ref();
        let said = render.is_some_and(|r| r.failed_requests.iter().any(|f| f.url.ends_with(&api)));
        assert!(
            said,
            "page {i}: no data and no failed request: {:?}\n{}",
            render, p.body
        );
        gaps += 1;
    }
    assert!(
        gaps <= 3,
        "{gaps} pages without their data: more than were in flight (-c 3)"
    );
    assert_eq!(ran.counter("browserStarts"), 2, "{}", ran.stderr);
    assert_eq!(ran.counter("browserLost"), 1, "{}", ran.stderr);
}

/// The process id of the one browser `pid` started, waiting until it runs.
fn browser_of(pid: u32) -> u32 {
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        let browsers = children(pid, "chromium");
        match browsers.as_slice() {
            [one] => return *one,
            [] if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => panic!("one browser: {browsers:?}"),
        }
    }
}

#[test]
fn pages_waiting_in_a_killed_browser_are_rendered_again_at_once() {
    // Each page waits for `.done`, which its script adds when its /api/N.json says (a
    // second after the answer). The first four pages' first answer says in ten minutes: in
    // the first browser, loaded and quiet, their selector never appears; asked again (in
    // the second browser) the answer says a second, late but well within the timeout.
    let n = 6;
    let held = 4;
    let mut builder = TestServer::builder();
    for i in 0..n {
        let script = format!(
            "fetch('/api/{i}.json').then(r => r.json()).then(j => setTimeout(() => {{ const p = document.createElement('p'); p.className = 'done'; p.textContent = 'n=' + j.n; document.querySelector('main').append(p); }}, j.after));"
        );
        let api = format!("/api/{i}.json");
        let json = |after: u32| format!("{{\"n\":{i},\"after\":{after}}}");
        builder = builder
            .file(format!("/p/{i}.html"), page(&script))
            .file_with_type(&api, "application/json", json(1000));
        if i < held {
            let never = Fault::body("application/json", json(600_000));
            builder = builder.rule(Rule::path(&api).once(never));
        }
    }
    let server = builder.start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = (0..n)
        .map(|i| server.url(&format!("/p/{i}.html")))
        .collect();
    // The page timeout is long, so that a page that waited for it is told from one that
    // was rendered again when its browser went. No cache: the API is asked again.
    let page_timeout = Duration::from_secs(180);
    let args = [
        "--cache",
        "off",
        "-c",
        "4",
        "--wait",
        "selector:.done",
        "--page-timeout",
        "180s",
    ];
    let child = stage("rip-render", dir.path(), &args, &refs(&urls)).spawn();
    let pid = child.id();
    for i in 0..held {
        assert!(
            server.wait_for_count_blocking(&format!("/api/{i}.json"), 1, Duration::from_secs(90)),
            "page {i} in flight"
        );
    }
    // The answers on their way into the pages: then nothing is in flight, the pages only
    // wait.
    std::thread::sleep(Duration::from_secs(1));
    let browser = browser_of(pid);
    let killed_at = std::time::Instant::now();
    let killed = std::process::Command::new("kill")
        .args(["-9", &browser.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let ran = rip_testkit::Ran::wait("rip-render", child);
    let took = killed_at.elapsed();
    assert_eq!(ran.code, 0, "every page rendered: {}", ran.stderr);
    for (i, record) in one_each(&ran, &urls).into_iter().enumerate() {
        let Record::Page(p) = record else {
            panic!("page {i}: {record:?}")
        };
        assert!(
            p.body.contains(&format!("class=\"done\">n={i}<")),
            "page {i}: {}",
            p.body
        );
    }
    assert!(
        took < page_timeout / 2,
        "the pages in flight were rendered again when the browser went, not at their \
         timeout: {took:?} from the kill to the end\n{}",
        ran.stderr
    );
    for i in 0..held {
        assert_eq!(server.count(&format!("/api/{i}.json")), 2, "page {i}");
    }
    assert_eq!(ran.counter("browserStarts"), 2, "{}", ran.stderr);
    assert_eq!(
        ran.counter("browserLost"),
        1,
        "one browser lost, under four pages: {}",
        ran.stderr
    );
    eprintln!("killed browser: {took:?} from the kill to the end");
}
