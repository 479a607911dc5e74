//! The on-disk cache: hits make no request, stale entries are revalidated, read-only never
//! touches the network, concurrent writers leave no corrupt entry.

use std::time::Duration;

use rip_core::ErrorCategory;
use rip_http::cache::{DiskCache, Lookup};
use rip_http::{CacheMode, Fetcher, HttpConfig};
use rip_testserver::{Fault, RetryAfter, Rule, TestServer};

use crate::{HTML, config, fail, page};

fn cached(dir: &std::path::Path, mode: CacheMode) -> HttpConfig {
    let mut c = config();
    c.cache.dir = Some(dir.to_owned());
    c.cache.mode = mode;
    c
}

#[tokio::test]
async fn a_second_run_makes_no_request() {
    let server = TestServer::builder()
        .file("/c", HTML)
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let first = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite)).unwrap();
    let got = first.fetch(&server.url("/c")).await;
    assert!(!got.stats.from_cache);
    let second = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite)).unwrap();
    let got = second.fetch(&server.url("/c")).await;
    assert!(got.stats.from_cache);
    assert_eq!(got.stats.http_attempts, 0);
    assert_eq!(page(&got).body, HTML.as_bytes());
    assert_eq!(server.count("/c"), 1);
    assert_eq!(second.stats().cache_hits, 1);
    assert_eq!(second.stats().requests, 0);
}

#[tokio::test]
async fn a_url_the_caller_parsed_is_checked_and_cached_as_given() {
    let server = TestServer::builder().file("/", HTML).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // As given, without the path the parser adds: the cache key is this string.
    let given = server.url("/").trim_end_matches('/').to_owned();
    let parsed = url::Url::parse(&given).unwrap();
    assert_ne!(parsed.as_str(), given);
    let f = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite)).unwrap();
    let got = f.fetch_parsed(&given, &parsed, &Default::default()).await;
    assert_eq!(page(&got).final_url, parsed.as_str());
    assert!(f.cached(&given).await.is_some());
    assert!(f.cached(parsed.as_str()).await.is_none());
    let again = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite)).unwrap();
    assert!(again.fetch(&given).await.stats.from_cache);
    assert_eq!(server.count("/"), 1);

    // The checks are those of a fetch that parses: length, scheme, host.
    let mut short = cached(dir.path(), CacheMode::ReadWrite);
    short.client.max_url_len = 20;
    let short = Fetcher::new(short).unwrap();
    for given in [given.as_str(), "ftp://127.0.0.1/x"] {
        let parsed = url::Url::parse(given).unwrap();
        let checked = short
            .fetch_parsed(given, &parsed, &Default::default())
            .await;
        let parsing = short.fetch(given).await;
        assert_eq!(fail(&checked).class, fail(&parsing).class);
        assert_eq!(fail(&checked).class.code, "validation.url");
    }
}

#[tokio::test]
async fn a_cache_hit_carries_the_fetch_that_went_to_the_site() {
    // rip-discover fetches a slow page after a 503, a reset and a 429; rip-fetch reads it
    // from the cache: its page must say what the site did, not "0 requests, 0 ms".
    let slow = Duration::from_millis(150);
    let server = TestServer::builder()
        .file("/s", HTML)
        .rule(
            Rule::path("/s")
                .once(Fault::status(503))
                .once(Fault::reset())
                .once(Fault::retry_after(429, RetryAfter::Seconds(1)))
                .then(Fault::serve().delay(slow)),
        )
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = cached(dir.path(), CacheMode::ReadWrite);
    c.retry.max_attempts = 4;
    let discover = Fetcher::new(HttpConfig {
        stage: "rip-discover".into(),
        ..c.clone()
    })
    .unwrap();
    let url = server.url("/s");
    let got = discover.fetch(&url).await;
    page(&got);
    let site = got
        .stats
        .site
        .clone()
        .expect("a network fetch records itself");
    assert_eq!(site.fetched_by, "rip-discover");
    assert_eq!(site.http_attempts, 4);
    assert_eq!(site.statuses, [Some(503), None, Some(429), Some(200)]);
    assert_eq!(
        site.faults,
        [
            "httpError.transient",
            "network.reset",
            "httpError.throttled"
        ]
    );
    assert!(site.waited_ms >= 1000, "the Retry-After second: {site:?}");
    assert!(site.latency_ms >= slow.as_millis() as u64, "{site:?}");
    assert!(site.latency_ms < site.elapsed_ms, "{site:?}");

    let fetch = Fetcher::new(HttpConfig {
        stage: "rip-fetch".into(),
        ..c
    })
    .unwrap();
    let hit = fetch.fetch(&url).await;
    assert!(hit.stats.from_cache && hit.stats.http_attempts == 0);
    assert_eq!(hit.stats.site.as_ref(), Some(&site), "carried by the entry");
    let r = rip_core::Ref::new(url.clone());
    let rec = rip_http::records::page_record(&r, page(&hit), &hit.stats);
    assert_eq!((rec.from_cache, rec.http_attempts), (true, 0));
    assert_eq!(rec.site_fetch, Some(site));
    assert_eq!(server.count("/s"), 4);
}

#[tokio::test]
async fn an_entry_of_an_earlier_version_is_read_without_a_site_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let url = "http://old.invalid/page";
    // The metadata line as versions before `siteFetch` wrote it.
    let meta = format!(
        r#"{{"url":"{url}","finalUrl":"{url}","status":200,"headers":[["content-type","text/html"]],"redirects":[],"fetchedAt":"2026-12-01T09:00:00Z","storedAtMs":{now},"etag":null,"lastModified":null,"truncated":false,"bodyLen":0,"bodySha256":""}}"#,
        now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    let old: rip_http::cache::CacheMeta = serde_json::from_str(&meta).unwrap();
    assert_eq!(old.site_fetch, None);
    DiskCache::new(dir.path())
        .put(old, HTML.as_bytes())
        .unwrap();
    let (pack, offset, _) = DiskCache::new(dir.path()).location(url).unwrap().unwrap();
    let bytes = std::fs::read(pack).unwrap();
    assert!(
        !String::from_utf8_lossy(&bytes[offset as usize..]).contains("siteFetch"),
        "no field written when there is nothing to say"
    );
    let f = Fetcher::new(cached(dir.path(), CacheMode::ReadOnly)).unwrap();
    let hit = f.fetch(url).await;
    assert_eq!(page(&hit).body, HTML.as_bytes());
    assert!(hit.stats.from_cache);
    assert_eq!(hit.stats.site, None);
    let rec = rip_http::records::page_record(&rip_core::Ref::new(url), page(&hit), &hit.stats);
    let json = serde_json::to_value(&rec).unwrap();
    assert!(json.get("siteFetch").is_none(), "{json}");
}

#[tokio::test]
async fn an_expired_entry_with_an_etag_is_revalidated_by_a_304() {
    let server = TestServer::builder()
        .file("/e", HTML)
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut c = cached(dir.path(), CacheMode::ReadWrite);
    c.cache.ttl = Some(Duration::from_millis(200));
    let f = Fetcher::new(c.clone()).unwrap();
    let got = f.fetch(&server.url("/e")).await;
    let etag = page(&got)
        .header("etag")
        .expect("the server sends an ETag")
        .to_owned();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let f = Fetcher::new(c).unwrap();
    let got = f.fetch(&server.url("/e")).await;
    assert!(got.stats.revalidated, "{got:?}");
    assert_eq!(page(&got).body, HTML.as_bytes());
    let reqs = server.requests_for("/e");
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[1].header("if-none-match"), Some(etag.as_str()));
    assert_eq!(reqs[1].status, Some(304));
    assert_eq!(f.stats().revalidated, 1);
    // The 304 was the fetch that went to the site: the entry carries it from now on.
    let site = got.stats.site.clone().expect("the revalidation");
    assert_eq!(site.statuses, [Some(304)]);
    // The 304 refreshed the entry: fresh again, no request.
    let got = f.fetch(&server.url("/e")).await;
    assert!(got.stats.from_cache);
    assert_eq!(got.stats.site, Some(site));
    assert_eq!(server.count("/e"), 2);
}

#[tokio::test]
async fn read_only_never_makes_a_request_and_write_only_never_reads() {
    let server = TestServer::builder()
        .file("/r", HTML)
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ro = Fetcher::new(cached(dir.path(), CacheMode::ReadOnly)).unwrap();
    let got = ro.fetch(&server.url("/r")).await;
    let x = fail(&got);
    assert_eq!(x.class.code, "cache.miss");
    assert_eq!(x.class.category, ErrorCategory::Resource);
    assert_eq!(server.count("/r"), 0);
    let wo = Fetcher::new(cached(dir.path(), CacheMode::WriteOnly)).unwrap();
    wo.fetch(&server.url("/r")).await;
    wo.fetch(&server.url("/r")).await;
    assert_eq!(server.count("/r"), 2, "write-only does not read");
    let got = ro.fetch(&server.url("/r")).await;
    assert!(got.stats.from_cache);
    assert_eq!(server.count("/r"), 2);
}

#[tokio::test]
async fn a_corrupt_entry_is_a_miss_not_a_crash() {
    let server = TestServer::builder()
        .file("/k", HTML)
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let c = cached(dir.path(), CacheMode::ReadWrite);
    Fetcher::new(c.clone())
        .unwrap()
        .fetch(&server.url("/k"))
        .await;
    let (pack, _, _) = DiskCache::new(dir.path())
        .location(&server.url("/k"))
        .unwrap()
        .unwrap();
    let data = std::fs::read(&pack).unwrap();
    std::fs::write(&pack, &data[..data.len() / 2]).unwrap();
    let f = Fetcher::new(c).unwrap();
    let got = f.fetch(&server.url("/k")).await;
    assert!(!got.stats.from_cache);
    assert_eq!(page(&got).body, HTML.as_bytes());
    assert_eq!(f.stats().cache_corrupt, 1);
    assert!(matches!(
        DiskCache::new(dir.path()).get(&server.url("/k")),
        Lookup::Hit(_)
    ));
}

#[test]
fn two_writers_filling_one_cache_leave_no_corrupt_entry() {
    let server = {
        let mut b = TestServer::builder();
        for i in 0..60 {
            b = b.file(format!("/w{i}"), HTML.repeat(i + 1));
        }
        b.start_background().unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let urls: Vec<String> = (0..60).map(|i| server.url(&format!("/w{i}"))).collect();
    // Two threads, each with its own runtime and fetcher in write-only mode, write every
    // entry at the same time as the other.
    std::thread::scope(|s| {
        for _ in 0..2 {
            let urls = urls.clone();
            let c = cached(dir.path(), CacheMode::WriteOnly);
            s.spawn(move || {
                let rt = tokio::runtime::Runtime::new().unwrap();
                rt.block_on(async {
                    let f = Fetcher::new(c).unwrap();
                    let mut tasks = Vec::new();
                    for u in urls {
                        let f = f.clone();
                        tasks.push(tokio::spawn(async move { f.fetch(&u).await }));
                    }
                    for t in tasks {
                        t.await.unwrap();
                    }
                });
            });
        }
    });
    let cache = DiskCache::new(dir.path());
    for (i, u) in urls.iter().enumerate() {
        match cache.get(u) {
            Lookup::Hit(e) => assert_eq!(e.body.len(), HTML.len() * (i + 1)),
            other => panic!("{u}: {other:?}"),
        }
    }
    // One index and one pack per writer, nothing else.
    let mut files: Vec<String> = walk(dir.path().join("v2"))
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort_by_key(|f| f != "index");
    assert_eq!(files.len(), 3, "{files:?}");
    assert_eq!(files[0], "index");
    assert!(files[1..].iter().all(|f| f.ends_with(".pack")), "{files:?}");
}

fn walk(dir: std::path::PathBuf) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(p));
        } else {
            out.push(p);
        }
    }
    out
}
