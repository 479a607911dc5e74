//! A cache hit is what a fetch under the reader's limits makes of the stored response:
//! the body cut at `max_body` and marked `truncated`, the redirect chain checked against
//! `max_redirects` and the redirect scope, as a fresh fetch with those limits would be.

use rip_http::{CacheMode, Fetcher, HttpConfig, Outcome, RedirectScope};
use rip_testserver::{Fault, Rule, TestServer};

use crate::{HTML, config, fail, page};

fn cached(dir: &std::path::Path, mode: CacheMode, max_body: usize) -> HttpConfig {
    let mut c = config();
    c.cache.dir = Some(dir.to_owned());
    c.cache.mode = mode;
    c.client.max_body = max_body;
    c
}

/// The same fetch with no cache: what the limits make of the site itself.
fn fresh(max_body: usize) -> HttpConfig {
    let mut c = config();
    c.client.max_body = max_body;
    c
}

const WHOLE: usize = 16 << 20;

/// A server of one page, `/big`, and its body.
async fn big_page() -> (TestServer, String) {
    let body = HTML.repeat(50);
    let server = TestServer::builder()
        .file("/big", body.clone())
        .start()
        .await
        .unwrap();
    (server, body)
}

#[tokio::test]
async fn a_cache_hit_is_cut_at_the_body_limit_as_a_fresh_fetch_is() {
    let (server, body) = big_page().await;
    let url = server.url("/big");
    let dir = tempfile::tempdir().unwrap();
    let fill = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite, WHOLE)).unwrap();
    assert!(!page(&fill.fetch(&url).await).truncated);

    let network = Fetcher::new(fresh(10)).unwrap().fetch(&url).await;
    let network = page(&network);
    assert_eq!((network.body.len(), network.truncated), (10, true));
    for mode in [CacheMode::ReadWrite, CacheMode::ReadOnly] {
        let small = Fetcher::new(cached(dir.path(), mode, 10)).unwrap();
        let got = small.fetch(&url).await;
        assert!(got.stats.from_cache, "{mode:?}");
        assert_eq!(page(&got).body, network.body, "{mode:?}");
        assert!(page(&got).truncated, "{mode:?}");
        assert_eq!(small.stats().truncated, 1, "{mode:?}");
        let (hit, _) = small.cached(&url).await.expect("a fresh entry");
        assert_eq!((hit.body, hit.truncated), (network.body.clone(), true));
    }
    // The entry keeps its whole body for a reader with a larger limit.
    let whole = Fetcher::new(cached(dir.path(), CacheMode::ReadOnly, WHOLE)).unwrap();
    let got = whole.fetch(&url).await;
    assert_eq!(page(&got).body, body.as_bytes());
    assert!(!page(&got).truncated);
    assert_eq!(server.count("/big"), 2, "the fill and the fresh fetch");
}

#[tokio::test]
async fn an_entry_cut_shorter_than_the_limit_is_fetched_again_unless_read_only() {
    let (server, body) = big_page().await;
    let url = server.url("/big");
    let dir = tempfile::tempdir().unwrap();
    let fill = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite, 10)).unwrap();
    assert!(page(&fill.fetch(&url).await).truncated);

    // Read-only: no request; the cut body is all there is, and says so.
    let ro = Fetcher::new(cached(dir.path(), CacheMode::ReadOnly, WHOLE)).unwrap();
    let got = ro.fetch(&url).await;
    assert_eq!((page(&got).body.len(), page(&got).truncated), (10, true));
    assert_eq!(server.count("/big"), 1);

    // Read-write: a fetch with this limit reads the whole page, as a fresh one does.
    let rw = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite, WHOLE)).unwrap();
    assert!(rw.cached(&url).await.is_none());
    let got = rw.fetch(&url).await;
    assert!(!got.stats.from_cache);
    assert_eq!(page(&got).body, body.as_bytes());
    assert!(!page(&got).truncated);
    assert_eq!(server.count("/big"), 2);
}

#[tokio::test]
async fn a_cached_redirect_chain_obeys_the_hop_limit() {
    let server = TestServer::builder()
        .file("/end", HTML)
        .rule(Rule::path("/r1").always(Fault::redirect(302, "/r2")))
        .rule(Rule::path("/r2").always(Fault::redirect(302, "/end")))
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fill = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite, WHOLE)).unwrap();
    assert_eq!(
        page(&fill.fetch(&server.url("/r1")).await).redirects.len(),
        2
    );

    let mut one_hop = fresh(WHOLE);
    one_hop.client.max_redirects = 1;
    let network = Fetcher::new(one_hop.clone()).unwrap();
    let network = fail(&network.fetch(&server.url("/r1")).await).clone();
    assert_eq!(network.class.code, "validation.tooManyRedirects");
    for mode in [CacheMode::ReadWrite, CacheMode::ReadOnly] {
        let mut c = cached(dir.path(), mode, WHOLE);
        c.client.max_redirects = 1;
        let f = Fetcher::new(c).unwrap();
        let got = f.fetch(&server.url("/r1")).await;
        assert_eq!(fail(&got).class, network.class, "{mode:?}");
        assert_eq!(fail(&got).final_url, network.final_url, "{mode:?}");
        assert!(f.cached(&server.url("/r1")).await.is_none());
    }
    assert_eq!(server.count("/r1"), 2, "the fill and the fresh fetch");
}

#[tokio::test]
async fn a_cached_redirect_out_of_scope_is_the_skip_a_fresh_fetch_makes() {
    // Another server, under another host name: out of a same-host scope.
    let other = TestServer::builder()
        .file("/end", HTML)
        .start()
        .await
        .unwrap();
    let elsewhere = other.url_for_host("localhost", "/end");
    let server = TestServer::builder()
        .rule(Rule::path("/away").always(Fault::redirect(302, elsewhere.clone())))
        .start()
        .await
        .unwrap();
    let url = server.url("/away");
    let dir = tempfile::tempdir().unwrap();
    let fill = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite, WHOLE)).unwrap();
    assert_eq!(page(&fill.fetch(&url).await).final_url, elsewhere);

    let mut same_host = fresh(WHOLE);
    same_host.client.redirect_scope = RedirectScope::SameHost;
    let network = Fetcher::new(same_host).unwrap().fetch(&url).await;
    let Outcome::Skipped(network) = network.outcome else {
        panic!("{network:?}")
    };
    let mut c = cached(dir.path(), CacheMode::ReadWrite, WHOLE);
    c.client.redirect_scope = RedirectScope::SameHost;
    let got = Fetcher::new(c).unwrap().fetch(&url).await;
    assert!(got.stats.from_cache);
    let Outcome::Skipped(skip) = got.outcome else {
        panic!("{got:?}")
    };
    assert_eq!((skip.reason, skip.rule), (network.reason, network.rule));
    assert_eq!(server.count("/away"), 2, "the fill and the fresh fetch");
}

#[tokio::test]
async fn an_entry_cut_at_a_character_boundary_under_this_limit_is_served() {
    // rip-render cuts a DOM at a character boundary: up to three bytes short of the limit.
    let dir = tempfile::tempdir().unwrap();
    let f = Fetcher::new(cached(dir.path(), CacheMode::ReadWrite, 100)).unwrap();
    let key = "rip-render:http://127.0.0.1:9/p";
    let mut resp = rip_http::Response {
        final_url: "http://127.0.0.1:9/p".into(),
        status: 200,
        headers: Vec::new(),
        body: "x".repeat(97).into(),
        truncated: true,
        redirects: Vec::new(),
        fetched_at: chrono::Utc::now(),
    };
    f.remember(key, &resp, None).await;
    let (hit, _) = f.cached(key).await.expect("cut at this limit");
    assert_eq!((hit.body.len(), hit.truncated), (97, true));
    resp.body = "x".repeat(96).into();
    f.remember(key, &resp, None).await;
    assert!(f.cached(key).await.is_none(), "cut at a smaller limit");
}
