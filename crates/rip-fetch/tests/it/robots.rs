//! robots.txt failures as rip-fetch reports them: a host that does not answer fails its
//! refs with its own cause; robots.txt is named only when robots.txt itself failed.

use rip_core::{ErrorCategory, Failure, Record};
use rip_testserver::{Fault, Rule, TestServer};

use crate::{HTML, refs, rip_fetch};

fn failures(out: &rip_testkit::Ran) -> Vec<&Failure> {
    out.records()
        .iter()
        .filter_map(|r| match r {
            Record::Failure(f) => Some(f),
            _ => None,
        })
        .collect()
}

#[test]
fn a_host_that_refuses_is_a_network_failure_not_a_robots_one() {
    // A port nothing listens on: bind, learn the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let urls = [
        format!("http://127.0.0.1:{port}/a"),
        format!("http://127.0.0.1:{port}/b"),
    ];
    let cache = tempfile::tempdir().unwrap();
    let out = rip_fetch(&["--attempts", "1"], cache.path(), &refs(&urls));
    assert_eq!(out.code, 2, "{}", out.stderr);
    let f = failures(&out);
    assert_eq!(f.len(), 2, "{}", out.stdout);
    for f in f {
        assert_eq!(f.category, ErrorCategory::Network, "{f:?}");
        assert_eq!(f.errors[0].code, "network.refused", "{f:?}");
    }
    assert_eq!(out.counter("failed.NETWORK"), 2, "{}", out.stderr);
}

#[test]
fn a_robots_txt_that_fails_while_pages_answer_is_robots_unreachable() {
    let server = TestServer::builder()
        .file("/p", HTML)
        .rule(Rule::path("/robots.txt").always(Fault::status(500)))
        .start_background()
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let out = rip_fetch(
        &["--attempts", "1"],
        cache.path(),
        &refs(&[server.url("/p")]),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    let f = failures(&out);
    assert_eq!(f.len(), 1, "{}", out.stdout);
    assert_eq!(f[0].errors[0].code, "robots.unreachable", "{:?}", f[0]);
    assert_eq!(f[0].category, ErrorCategory::Transient);
    assert_eq!(server.count("/p"), 0, "not fetched without its robots.txt");
}
