//! A broker that stays away past `--patience` ends a relay with exit 1 while its input is
//! still open (the crawl before it still writing): the relay does not wait for its stdin.

use rip_testkit::{NatsServer, wait_for};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The messages stored in the stream `name` (prefix `rip`); 0 while it is not there.
fn stored(nats: &NatsServer, name: &str) -> u64 {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = async_nats::connect(nats.url()).await.expect("connect");
        let js = async_nats::jetstream::new(client);
        match js.get_stream(format!("rip_{name}")).await {
            Ok(mut stream) => stream.info().await.map_or(0, |i| i.state.messages),
            Err(_) => 0,
        }
    })
}

#[test]
fn a_broker_away_past_patience_ends_a_relay_whose_input_is_still_open() {
    let mut nats = NatsServer::start();
    let mut relay = Command::new(rip_testkit::bin("rip-queue"))
        .args(["--broker", &nats.url(), "--patience", "2s"])
        .args(["relay", "refs", "docs"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rip-queue starts");
    let mut input = relay.stdin.take().expect("stdin");
    input
        .write_all(b"{\"_type\":\"ref\",\"url\":\"http://127.0.0.1:9/a\"}\n")
        .unwrap();
    input.flush().unwrap();
    wait_for("the relay's first record", Duration::from_secs(60), || {
        stored(&nats, "refs") >= 1
    });
    nats.kill();
    let gone = Instant::now();
    let mut status = None;
    while gone.elapsed() < Duration::from_secs(90) {
        status = relay.try_wait().unwrap();
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if status.is_none() {
        relay.kill().unwrap();
    }
    let ran = relay.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(
        status.is_some(),
        "the relay still ran 90 s after the broker went (input open): {stderr}"
    );
    assert_eq!(ran.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("has not answered for 2s"), "{stderr}");
    drop(input);
}
