//! Many URLs: past the point where the URL texts go to the temporary file and the URL
//! states to the sorted store (see `rip_health::urls`), the report still names exactly the
//! URLs with a problem, and reads what a small run reads.

use rip_testkit::Stage;

use crate::Reported;

/// URLs in the stream: the texts pass the 64 KiB buffer many times, the keys pass the
/// store's first merge (65,536).
const URLS: usize = 100_000;

fn url(i: usize) -> String {
    format!(
        "https://www.host-{}.example.org/section/page-number-{i}.html",
        i % 97
    )
}

/// A stream as a pipeline ends it: ledgers of 1,000 URLs, one doc each, with planted
/// problems (indexes far apart, so that they were seen long before the end):
/// - 3 unaccounted: no outcome (one last seen as a `page`, one as a `failure`);
/// - 2 duplicated: a doc and an error document, or two docs;
/// - 1 entered twice (and accounted once);
/// - 1 in flight: a `ref` no ledger names and nothing fetched.
fn stream() -> String {
    let mut s = String::new();
    for block in (0..URLS).step_by(1000) {
        let urls: Vec<String> = (block..block + 1000).map(url).collect();
        let mut entered = serde_json::to_string(&urls).unwrap();
        if block == 40_000 {
            entered = entered.replace(']', &format!(",\"{}\"]", url(7)));
        }
        s += &format!("{{\"_type\":\"ledger\",\"stage\":\"rip-fetch\",\"entered\":{entered}}}\n");
        for (i, u) in (block..).zip(&urls) {
            let doc =
                format!("{{\"_type\":\"doc\",\"url\":\"{u}\",\"attempt\":0,\"elapsedMs\":12}}\n");
            match i {
                11 | 70_001 | 99_998 => {}
                _ => s += &doc,
            }
            match i {
                11 => s += &format!("{{\"_type\":\"page\",\"url\":\"{u}\"}}\n"),
                70_001 => {
                    s += &format!(
                        "{{\"_type\":\"failure\",\"url\":\"{u}\",\"category\":\"PERMANENT\",\"retryable\":false,\"attempt\":0,\"phase\":\"parse\",\"errors\":[]}}\n"
                    )
                }
                2 => s += &doc,
                50_000 => {
                    s += &format!(
                        "{{\"_type\":\"error\",\"url\":\"{u}\",\"errors\":[],\"attempt\":1,\"resolution\":{{\"status\":\"missing\"}}}}\n"
                    )
                }
                _ => {}
            }
        }
    }
    s + &format!("{{\"_type\":\"ref\",\"url\":\"{}\"}}\n", url(URLS + 5))
}

#[test]
fn a_hundred_thousand_urls_name_exactly_the_planted_problems() {
    let r = Stage::new("rip-health").stdin(stream()).run();
    assert_eq!(r.code, 2, "{}", r.stderr);
    let report = r.report();
    let l = &report.ledger;
    assert!(l.checked && !report.complete);
    assert_eq!(l.entered, URLS as u64);
    let unaccounted: Vec<(&str, Option<&str>)> = l
        .unaccounted
        .iter()
        .map(|u| (u.url.as_str(), u.last_seen.as_deref()))
        .collect();
    let (u11, u70k, u99k) = (url(11), url(70_001), url(99_998));
    let mut want = vec![
        (u11.as_str(), Some("page")),
        (u70k.as_str(), Some("failure")),
        (u99k.as_str(), None),
    ];
    want.sort();
    assert_eq!(unaccounted, want);
    let duplicated: Vec<(&str, Vec<&str>)> = l
        .duplicated
        .iter()
        .map(|d| {
            (
                d.url.as_str(),
                d.records.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    let (u2, u50k) = (url(2), url(50_000));
    assert_eq!(
        duplicated,
        [
            (u2.as_str(), vec!["doc", "doc"]),
            (u50k.as_str(), vec!["doc", "error"])
        ]
    );
    assert_eq!(l.entered_twice, [url(7)]);
    assert_eq!(l.in_flight.len(), 1);
    assert_eq!(l.in_flight[0].url, url(URLS + 5));
    assert_eq!(l.in_flight[0].last_seen.as_deref(), Some("ref"));
    assert_eq!(
        l.accounted,
        URLS as u64 - 5,
        "all but 3 unaccounted and 2 twice"
    );
    let lat = report.latency.expect("docs carry elapsedMs");
    // One sample a doc: all but the 3 unaccounted, and the second doc of url(2).
    assert_eq!((lat.samples, lat.p50, lat.max), (URLS as u64 - 2, 12, 12));
}

/// The URL texts cannot be written: the run stops and says where they were going.
#[test]
fn a_temporary_folder_that_cannot_be_written_stops_the_run() {
    let r = Stage::new("rip-health")
        .env("TMPDIR", "/nonexistent/rip-health-test")
        .stdin(stream())
        .run();
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("cannot use the temporary file of URLs (hint: is $TMPDIR full?)"),
        "{}",
        r.stderr
    );
}
