//! The network policy over real connections that stay on this machine even were the policy
//! broken: the "public" site listens on 127.0.0.1 (let through by an `--allow-network` of
//! that one address, as a public address would be), the "private" one on 127.0.0.2
//! (loopback outside it), which counts every request it gets: a refused URL must end as a
//! `network.denied` failure and the private server must see nothing.

use std::net::{IpAddr, SocketAddr};

use rip_core::{ErrorCategory, Phase, Record, Ref};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rip_http::{Fetcher, HttpConfig, NetworkConfig, WireExchange, WireTap, records};
use rip_testserver::{Fault, Rule, TestServer};

use crate::{HTML, config, fail, page};

/// A guarded policy letting 127.0.0.1 through, resolving `hosts` without DNS.
fn guarded(hosts: Vec<(String, Vec<IpAddr>)>) -> HttpConfig {
    let mut c = config();
    c.client.network = NetworkConfig {
        guard: true,
        allow: vec!["127.0.0.1/32".parse().unwrap()],
        deny: Vec::new(),
        hosts,
    };
    c
}

/// The private server: `/secret` on 127.0.0.2.
async fn private() -> TestServer {
    TestServer::builder()
        .bind(SocketAddr::from(([127, 0, 0, 2], 0)))
        .file("/secret", HTML)
        .start()
        .await
        .unwrap()
}

/// A "public" server whose `/go` redirects (302) to `target`.
async fn redirecting_to(target: &str) -> TestServer {
    TestServer::builder()
        .rule(Rule::path("/go").always(Fault::redirect(302, target)))
        .start()
        .await
        .unwrap()
}

/// Asserts `f` is a `network.denied` failure naming `addr`, sent once, never retried.
fn assert_denied(f: &rip_http::Fetched, addr: &str) {
    let x = fail(f);
    assert_eq!(x.class.code, "network.denied", "{x:?}");
    assert_eq!(x.class.category, ErrorCategory::Permanent);
    assert!(!x.class.retryable);
    assert!(x.class.message.contains(addr), "{}", x.class.message);
    assert_eq!(f.stats.retries, 0);
}

#[tokio::test]
async fn a_redirect_to_a_private_address_is_refused_and_never_connected() {
    let inside = private().await;
    let secret = inside.url("/secret");
    let public = redirecting_to(&secret).await;
    let f = Fetcher::new(guarded(Vec::new())).unwrap();
    let url = public.url("/go");
    let got = f.fetch(&url).await;
    assert_denied(&got, "127.0.0.2");
    assert_eq!(public.count("/go"), 1);
    assert_eq!(inside.total(), 0, "the private server got a request");
    let Record::Failure(r) = records::record_for(&Ref::new(&url), &got, Phase::Fetch, "rip-fetch")
    else {
        panic!("{got:?}")
    };
    assert_eq!(r.errors[0].code, "network.denied");
    assert!(!r.retryable);
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused_and_mixed_answers_are_filtered() {
    let inside = private().await;
    let public = TestServer::builder()
        .file("/page", HTML)
        .start()
        .await
        .unwrap();
    let lo = |s: &str| s.parse::<IpAddr>().unwrap();
    let f = Fetcher::new(guarded(vec![
        ("inside.test".into(), vec![lo("127.0.0.2")]),
        ("both.test".into(), vec![lo("127.0.0.2"), lo("127.0.0.1")]),
    ]))
    .unwrap();
    let port = inside.port();
    let got = f.fetch(&format!("http://inside.test:{port}/secret")).await;
    assert_denied(&got, "127.0.0.2");
    assert!(fail(&got).class.message.contains("inside.test"));
    // A name with an allowed and a refused address connects to the allowed one only.
    let got = f
        .fetch(&format!("http://both.test:{}/page", public.port()))
        .await;
    page(&got);
    assert_eq!(inside.total(), 0, "the private server got a request");
}

#[tokio::test]
async fn literals_in_any_spelling_are_refused_before_connecting() {
    let inside = private().await;
    let f = Fetcher::new(guarded(Vec::new())).unwrap();
    let port = inside.port();
    for url in [
        format!("http://127.0.0.2:{port}/secret"),
        format!("http://[::ffff:127.0.0.2]:{port}/secret"),
        format!("http://0x7f000002:{port}/secret"),
        format!("http://2130706434:{port}/secret"),
    ] {
        assert_denied(&f.fetch(&url).await, "127.0.0.2");
    }
    assert_eq!(inside.total(), 0, "the private server got a request");
}

#[tokio::test]
async fn a_start_url_admits_its_network_and_an_open_policy_admits_all() {
    let inside = private().await;
    let secret = inside.url("/secret");
    let f = Fetcher::new(guarded(Vec::new())).unwrap();
    assert_denied(&f.fetch(&secret).await, "127.0.0.2");
    f.admit_start(&secret.parse().unwrap());
    page(&f.fetch(&secret).await);
    // The library's default is open: every existing caller on 127.0.0.1 is unchanged.
    page(&Fetcher::new(config()).unwrap().fetch(&secret).await);
}

#[tokio::test]
async fn robots_txt_of_a_refused_host_is_not_fetched_either() {
    let inside = private().await;
    let mut c = guarded(Vec::new());
    c.robots = true;
    let f = Fetcher::new(c).unwrap();
    assert_denied(&f.fetch(&inside.url("/secret")).await, "127.0.0.2");
    assert_eq!(
        inside.total(),
        0,
        "robots.txt was asked of the private server"
    );
}

/// A tap counting the exchanges it is told of.
#[derive(Debug, Default)]
struct Count(AtomicUsize);

impl WireTap for Count {
    fn exchange(&self, _: &WireExchange<'_>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::test]
async fn a_refused_request_is_not_told_to_the_wire_tap_it_never_went_out() {
    let inside = private().await;
    let secret = inside.url("/secret");
    let public = redirecting_to(&secret).await;
    let f = Fetcher::new(guarded(Vec::new())).unwrap();
    let tap = Arc::new(Count::default());
    f.set_tap(tap.clone());
    assert_denied(&f.fetch(&public.url("/go")).await, "127.0.0.2");
    assert_denied(&f.fetch(&secret).await, "127.0.0.2");
    assert_eq!(
        tap.0.load(Ordering::Relaxed),
        1,
        "only the redirect went out"
    );
}

#[tokio::test]
async fn through_a_loopback_proxy_public_targets_pass_and_private_ones_do_not() {
    // rip-testserver on 127.0.0.1 answers an absolute-form request as a proxy would, from
    // its own files: the client connects only to it, never to the targets.
    let proxy = TestServer::builder()
        .file("/page", HTML)
        .start()
        .await
        .unwrap();
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    let mut c = config();
    c.client.proxy = Some(proxy.origin());
    c.client.network = NetworkConfig {
        guard: true,
        hosts: vec![
            ("public.test".into(), vec![ip("198.51.100.7")]),
            ("inside.test".into(), vec![ip("127.0.0.2")]),
        ],
        ..NetworkConfig::default()
    };
    let f = Fetcher::new(c).unwrap();
    page(&f.fetch("http://public.test/page").await);
    assert_denied(&f.fetch("http://inside.test/page").await, "127.0.0.2");
    assert_denied(&f.fetch("http://10.1.2.3/page").await, "10.1.2.3");
    assert_eq!(
        proxy.count("/page"),
        1,
        "only the public target reached the proxy"
    );
}
