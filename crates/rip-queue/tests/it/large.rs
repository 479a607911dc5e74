//! Records over the broker's largest message go through in chunks and come out whole, byte
//! for byte; the chunks of a record published twice are stored once; a head whose chunks are
//! lost (a producer killed mid-record) becomes a failure of its URL, and the reader goes on.

use super::{messages_in, pull, queue, wait_for};
use rip_testkit::{NatsServer, path_with_bins};
use std::time::Duration;

/// A `page` of `url` whose body is `size` bytes of varied text (escapes and multi-byte
/// characters included), on one line.
fn big_page(url: &str, size: usize, seed: u64) -> String {
    let mut body = String::with_capacity(size);
    let mut n = seed;
    while body.len() < size {
        n = n
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        body.push_str(match n >> 61 {
            0 => "é",
            1 => "\\\"",
            2 => "\\n",
            3 => "字",
            _ => "abc ",
        });
    }
    format!(
        "{{\"_type\":\"page\",\"url\":\"{url}\",\"attempt\":0,\"status\":200,\"body\":\"{body}\"}}"
    )
}

fn small(url: &str) -> String {
    format!("{{\"_type\":\"ref\",\"url\":\"{url}\",\"attempt\":0}}")
}

#[test]
fn a_record_over_the_brokers_largest_message_comes_out_whole_and_is_stored_once() {
    let nats = NatsServer::start_with("max_payload: 64KB");
    let big = big_page("http://h/big", 1 << 20, 1);
    let input = format!("{}\n{big}\n{}\n", small("http://h/a"), small("http://h/b"));
    let ran = queue(&nats).args(["push", "pages"]).stdin(&input).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("3 stored, 0 already there (1 over the broker's largest message, in chunks)"),
        "{}",
        ran.stderr
    );
    let (pulled, _) = pull(&nats, "pages");
    assert_eq!(pulled.stdout, input, "byte for byte, in order");
    let held = messages_in(&nats, "pages");
    assert!(
        held > 20,
        "the record in chunks of under 64 KB: {held} messages"
    );

    // Published again (a worker that did its work again): stored once, chunks included.
    let again = queue(&nats).args(["push", "pages"]).stdin(&input).run();
    assert!(
        again.stderr.contains("0 stored, 3 already there"),
        "{}",
        again.stderr
    );
    assert_eq!(messages_in(&nats, "pages"), held);
    // Done again with another outcome (a page fetched anew): the record stored first stays,
    // and the second one's chunks are deleted.
    let other = big_page("http://h/big", 1 << 20, 2);
    let third = queue(&nats)
        .args(["push", "pages"])
        .stdin(format!("{other}\n"))
        .run();
    assert!(
        third.stderr.contains("0 stored, 1 already there"),
        "{}",
        third.stderr
    );
    assert_eq!(messages_in(&nats, "pages"), held, "no chunk left behind");
    assert_eq!(pull(&nats, "pages").0.stdout, input);
}

/// Pushes `big` and a small record to `pages` (with `push_args`), runs a worker on them whose
/// program writes each record back with its length, and checks that the program got `big`
/// whole and that it comes out of `out` byte for byte.
fn through_a_worker(nats: &NatsServer, big: &str, push_args: &[&str], work_args: &[&str]) {
    let input = format!("{big}\n{}\n", small("http://h/a"));
    let pushed = queue(nats)
        .args(["push", "pages"])
        .args(push_args)
        .stdin(&input)
        .run();
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    let program = "while IFS= read -r line; do echo \"$line\"; \
                   echo \"{\\\"_type\\\":\\\"x-length\\\",\\\"n\\\":${#line}}\"; done";
    let worked = queue(nats)
        .env("PATH", path_with_bins())
        .env("LC_ALL", "C")
        .args([
            "work",
            "pages",
            "out",
            "--idle-exit",
            "2s",
            "--linger",
            "50ms",
        ])
        .args(work_args)
        .args(["--", "bash", "-c", program])
        .run();
    assert_eq!(worked.code, 0, "{}", worked.stderr);
    let (ran, values) = pull(nats, "out");
    let lines: Vec<&str> = ran.stdout.lines().collect();
    assert!(lines.contains(&big), "the page whole, byte for byte");
    let lengths: Vec<u64> = values
        .iter()
        .filter(|v| v["_type"] == "x-length")
        .filter_map(|v| v["n"].as_u64())
        .collect();
    assert!(lengths.contains(&(big.len() as u64)), "{lengths:?}");
    assert_eq!(values.iter().filter(|v| v["_type"] == "page").count(), 1);
}

#[test]
fn a_multi_megabyte_record_goes_through_a_worker_under_the_default_limit() {
    let nats = NatsServer::start_with("max_payload: 1MB"); // the server's default
    through_a_worker(&nats, &big_page("http://h/big", 3 << 20, 3), &[], &[]);
}

#[test]
fn a_record_in_chunks_goes_through_a_worker_of_a_stream_partitioned_by_host() {
    let nats = NatsServer::start_with("max_payload: 64KB");
    let big = big_page("http://h/big", 1 << 20, 5);
    let handover = ["--handover-wait", "100ms"];
    through_a_worker(&nats, &big, &["--partitions", "4"], &handover);
}

#[test]
fn a_record_whose_chunks_are_lost_is_a_failure_of_its_url_and_the_reader_goes_on() {
    let nats = NatsServer::start_with("max_payload: 64KB");
    queue(&nats)
        .args(["push", "pages"])
        .stdin(format!("{}\n", small("http://h/a")))
        .run();
    // A producer killed mid-record: two chunks and no head. Then a head whose chunks are not
    // there (sequences 2 and 3 are the orphans, not its chunks: another digest).
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = async_nats::connect(nats.url()).await.expect("connect");
        let js = async_nats::jetstream::new(client);
        for i in 0..2 {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Rip-Chunk", format!("{:032x} {i}", 7).as_str());
            let ack = js.publish_with_headers("rip.pages", headers, "{\"_type\":\"pa".into());
            ack.await.unwrap().await.unwrap();
        }
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Rip-Chunks", format!("{:032x} 100 2-3", 8).as_str());
        let stand_in = "{\"_type\":\"page\",\"url\":\"http://h/lost\",\"attempt\":0}";
        let ack = js.publish_with_headers("rip.pages", headers, stand_in.into());
        ack.await.unwrap().await.unwrap();
    });
    queue(&nats)
        .args(["push", "pages"])
        .stdin(format!("{}\n", small("http://h/b")))
        .run();
    let (ran, values) = pull(&nats, "pages");
    assert_eq!(values.len(), 3, "{}", ran.stdout);
    assert_eq!(values[0]["url"], "http://h/a");
    assert_eq!(values[1]["_type"], "failure");
    assert_eq!(values[1]["url"], "http://h/lost");
    assert_eq!(values[1]["errors"][0]["code"], "queue.chunkLost");
    assert_eq!(values[2]["url"], "http://h/b");
}

#[test]
fn a_producer_killed_mid_record_leaves_nothing_half_read_nor_stored_after_its_redo() {
    let nats = NatsServer::start_with("max_payload: 64KB");
    queue(&nats)
        .args(["push", "pages"])
        .stdin(format!("{}\n", small("http://h/a")))
        .run();
    let big = big_page("http://h/big", 24 << 20, 4);
    let mut producer = queue(&nats)
        .args(["push", "pages"])
        .stdin(format!("{big}\n"))
        .spawn();
    wait_for("chunks stored", Duration::from_secs(60), || {
        messages_in(&nats, "pages") > 20
    });
    producer.kill().unwrap(); // SIGKILL, between chunks (~546 of them)
    producer.wait().unwrap();
    let (ran, values) = pull(&nats, "pages");
    assert_eq!(values[0]["url"], "http://h/a", "{}", ran.stderr);
    let mid_record = values.len() == 1; // else killed after its head: the record is whole
    if !mid_record {
        assert_eq!(ran.stdout.lines().nth(1), Some(big.as_str()));
    }
    // Done again, the page fetched anew (another body): it comes out once, whole.
    let other = big_page("http://h/big", 24 << 20, 5);
    let again = queue(&nats)
        .args(["push", "pages"])
        .stdin(format!("{other}\n"))
        .run();
    assert_eq!(again.code, 0, "{}", again.stderr);
    let (ran, values) = pull(&nats, "pages");
    assert_eq!(values.len(), 2, "{}", ran.stderr);
    let stored = if mid_record { &other } else { &big };
    assert_eq!(ran.stdout.lines().nth(1), Some(stored.as_str()));
    // No chunk is left that no head names: the stream holds what a broker that saw neither
    // the kill nor the other body holds.
    queue(&nats)
        .args(["push", "clean"])
        .stdin(format!("{stored}\n"))
        .run();
    assert_eq!(messages_in(&nats, "pages"), 1 + messages_in(&nats, "clean"));
}
