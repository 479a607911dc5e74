//! rip-queue as a binary against a real nats-server (JetStream, file storage in a temporary
//! folder) on a free loopback port; workers run the real stages against rip-testserver.

mod away;
mod cluster;
mod credentials;
mod frontier;
mod large;
mod opening;
mod partitions;
mod pipe;
mod plain_urls;
mod restart;
mod routed;
mod work;

pub use rip_testkit::wait_for;
use rip_testkit::{NatsServer, Ran, Stage};
use rip_testserver::{Fault, Rule, TestServer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// `rip-queue --broker <the server>`.
pub fn queue(nats: &NatsServer) -> Stage {
    Stage::new("rip-queue").arg("--broker").arg(nats.url())
}

/// The messages the broker holds in the stream `name` (under the prefix `rip`).
pub fn messages_in(nats: &NatsServer, name: &str) -> u64 {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = async_nats::connect(nats.url()).await.expect("connect");
        let js = async_nats::jetstream::new(client);
        let mut stream = js.get_stream(format!("rip_{name}")).await.expect("stream");
        stream.info().await.expect("info").state.messages
    })
}

/// One `ref` line per URL.
pub fn refs(urls: &[String]) -> String {
    urls.iter()
        .map(|u| format!("{{\"_type\":\"ref\",\"url\":\"{u}\",\"depth\":1}}\n"))
        .collect()
}

/// The records of `stream`, as `rip-queue pull` writes them.
pub fn pull(nats: &NatsServer, stream: &str) -> (Ran, Vec<Value>) {
    let ran = queue(nats).args(["pull", stream]).run();
    assert_eq!(ran.code, 0, "pull: {}", ran.stderr);
    let values = ran
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (ran, values)
}

/// For each URL, the kinds of the records of it among `values` that are outcomes of one
/// stage: `page`, `failure`, `doc`, `error`, `expected`.
pub fn outcomes(values: &[Value]) -> BTreeMap<String, Vec<String>> {
    let mut by_url: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for v in values {
        let kind = v["_type"].as_str().unwrap_or_default();
        if ["page", "failure", "doc", "error", "expected"].contains(&kind) {
            let url = v["url"].as_str().unwrap_or_default().to_owned();
            by_url.entry(url).or_default().push(kind.to_owned());
        }
    }
    by_url
}

/// The URLs the `ledger` records among `values` name, with how often each is named.
pub fn entered(values: &[Value]) -> BTreeMap<String, usize> {
    let mut urls = BTreeMap::new();
    for v in values.iter().filter(|v| v["_type"] == "ledger") {
        for url in v["entered"].as_array().into_iter().flatten() {
            *urls
                .entry(url.as_str().unwrap_or_default().to_owned())
                .or_default() += 1;
        }
    }
    urls
}

const HTML: &str = "<!doctype html><title>t</title><h1>Item</h1><p>hello</p>";

/// A site (one host: its port) of `n` pages `/p0…`, each answered after `delay`.
pub fn site(n: usize, delay: Duration) -> (TestServer, Vec<String>) {
    let mut builder = TestServer::builder()
        .file("/robots.txt", "User-agent: *\nAllow: /\n")
        .rule(Rule::prefix("/p").always(Fault::serve().delay(delay)));
    for i in 0..n {
        builder = builder.file(format!("/p{i}"), HTML);
    }
    let server = builder.start_background().unwrap();
    let urls = (0..n).map(|i| server.url(&format!("/p{i}"))).collect();
    (server, urls)
}
