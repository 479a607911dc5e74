//! robots.txt over the network: fetched once per origin, disallowed URLs skipped with the
//! rule named and never requested, Crawl-delay applied, unreachable robots.txt handled.

use std::time::Duration;

use rip_core::{ErrorCategory, ExpectedSource, Phase, Record, Ref};
use rip_http::{Fetcher, Outcome, records};
use rip_testserver::{Fault, Rule, TestServer, min_gap};

use crate::{HTML, config, fail, page};

#[tokio::test]
async fn disallowed_urls_are_skipped_naming_the_rule() {
    let server = TestServer::builder()
        .file("/robots.txt", "User-agent: *\nDisallow: /private/\n")
        .file("/public", HTML)
        .file("/private/secret", HTML)
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.robots = true;
    let f = Fetcher::new(c).unwrap();
    page(&f.fetch(&server.url("/public")).await);
    let url = server.url("/private/secret");
    let got = f.fetch(&url).await;
    let Outcome::Skipped(s) = &got.outcome else {
        panic!("{got:?}")
    };
    assert_eq!(s.source, ExpectedSource::Robots);
    assert_eq!(s.rule.as_deref(), Some("Disallow: /private/"));
    assert_eq!(server.count("/private/secret"), 0);
    assert_eq!(server.count("/robots.txt"), 1, "fetched once per origin");
    let Record::Expected(e) = records::record_for(&Ref::new(url), &got, Phase::Fetch, "rip-fetch")
    else {
        panic!()
    };
    assert_eq!(e.reason, "disallowed by robots.txt");
    assert_eq!(f.stats().robots_denied, 1);
}

#[tokio::test]
async fn crawl_delay_spaces_requests() {
    let mut b =
        TestServer::builder().file("/robots.txt", "User-agent: ripperoni\nCrawl-delay: 0.3\n");
    for i in 0..3 {
        b = b.file(format!("/p{i}"), HTML);
    }
    let server = b.start().await.unwrap();
    let mut c = config();
    c.robots = true;
    let f = Fetcher::new(c).unwrap();
    let mut tasks = Vec::new();
    for i in 0..3 {
        let f = f.clone();
        let url = server.url(&format!("/p{i}"));
        tasks.push(tokio::spawn(async move { f.fetch(&url).await }));
    }
    for t in tasks {
        page(&t.await.unwrap());
    }
    let reqs: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.path != "/robots.txt")
        .collect();
    let g = min_gap(&reqs).unwrap();
    assert!(
        g >= Duration::from_millis(285),
        "Crawl-delay not applied: {g:?}"
    );
}

#[tokio::test]
async fn robots_404_allows_and_robots_503_fails_retryably() {
    let server = TestServer::builder()
        .file("/x", HTML)
        .start()
        .await
        .unwrap();
    let mut c = config();
    c.robots = true;
    let f = Fetcher::new(c.clone()).unwrap();
    page(&f.fetch(&server.url("/x")).await);

    let down = TestServer::builder()
        .file("/x", HTML)
        .rule(Rule::path("/robots.txt").always(Fault::status(503)))
        .start()
        .await
        .unwrap();
    let f = Fetcher::new(c).unwrap();
    let got = f.fetch(&down.url("/x")).await;
    let x = fail(&got);
    assert_eq!(x.class.code, "robots.unreachable");
    assert_eq!(x.class.category, ErrorCategory::Transient);
    assert!(x.class.retryable);
    assert_eq!(
        down.count("/x"),
        0,
        "not fetched while robots.txt is unreachable"
    );
}

#[tokio::test]
async fn a_crawler_asks_the_check_a_fetch_makes() {
    let server = TestServer::builder()
        .file(
            "/robots.txt",
            "User-agent: *\nDisallow: /private/\nDisallow: /*.txt\n",
        )
        .file("/public", HTML)
        .start()
        .await
        .unwrap();
    let at = |path: &str| url::Url::parse(&server.url(path)).unwrap();
    // Asked of a fetcher that does not obey robots.txt itself: the answer is robots.txt's.
    let asking = Fetcher::new(config()).unwrap();
    assert_eq!(
        asking.disallowed_by_robots(&at("/public")).await.unwrap(),
        None
    );
    let skip = asking
        .disallowed_by_robots(&at("/private/x?y=1"))
        .await
        .unwrap()
        .expect("disallowed");
    assert_eq!(skip.source, ExpectedSource::Robots);
    assert_eq!(skip.rule.as_deref(), Some("Disallow: /private/"));
    assert_eq!(skip.reason, "disallowed by robots.txt");
    // robots.txt itself is always allowed (RFC 9309), whatever its rules say.
    assert_eq!(
        asking
            .disallowed_by_robots(&at("/robots.txt"))
            .await
            .unwrap(),
        None
    );
    assert_eq!(server.count("/robots.txt"), 1, "read once per origin");

    // A fetch that obeys robots.txt skips with the same answer.
    let mut c = config();
    c.robots = true;
    let fetching = Fetcher::new(c).unwrap();
    let got = fetching.fetch(&server.url("/private/x?y=1")).await;
    let Outcome::Skipped(fetched) = &got.outcome else {
        panic!("{got:?}")
    };
    assert_eq!(fetched, &skip);
    assert_eq!(server.count("/private/x"), 0);

    let down = TestServer::builder()
        .rule(Rule::path("/robots.txt").always(Fault::status(503)))
        .start()
        .await
        .unwrap();
    let unreachable = asking
        .disallowed_by_robots(&url::Url::parse(&down.url("/x")).unwrap())
        .await
        .unwrap_err();
    assert_eq!(unreachable.class.code, "robots.unreachable");
    assert!(unreachable.class.retryable);
}

/// A loopback port nothing listens on: bound, then let go (a connection is refused).
fn refusing_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn a_host_that_refuses_is_a_network_failure_not_a_robots_one() {
    let mut c = config();
    c.robots = true;
    c.retry.max_attempts = 1;
    let f = Fetcher::new(c).unwrap();
    let url = format!("http://127.0.0.1:{}/x", refusing_port());
    let got = f.fetch(&url).await;
    let x = fail(&got);
    assert_eq!(x.class.code, "network.refused", "{x:?}");
    assert_eq!(x.class.category, ErrorCategory::Network);
    assert!(x.class.retryable);
    let host = url.trim_start_matches("http://").trim_end_matches("/x");
    let said = format!("{host} did not answer: ");
    assert!(x.class.message.starts_with(&said), "{}", x.class.message);
    let asked = f
        .disallowed_by_robots(&url::Url::parse(&url).unwrap())
        .await
        .unwrap_err();
    assert_eq!(asked.class.code, "network.refused");

    // A host that answers, but not for robots.txt: that is robots.txt's failure.
    let server = TestServer::builder()
        .file("/x", HTML)
        .rule(Rule::path("/robots.txt").always(Fault::status(500)))
        .start()
        .await
        .unwrap();
    let got = f.fetch(&server.url("/x")).await;
    let x = fail(&got);
    assert_eq!(x.class.code, "robots.unreachable");
    assert_eq!(x.class.category, ErrorCategory::Transient);
    assert!(
        x.class.message.contains("robots.txt"),
        "{}",
        x.class.message
    );
    assert_eq!(server.count("/x"), 0, "not fetched without its robots.txt");
}
