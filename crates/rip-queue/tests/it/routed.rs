//! A failure the queue itself makes (a record a worker gave up) comes out of the relay as a
//! `failure` of its URL, which the coordinator's last `rip-route --final` turns into an error
//! document as it does any failure: the URL is accounted for, not left unaccounted.

use super::queue;
use rip_testkit::{NatsServer, path_with_bins, run_shell};
use std::process::Child;

/// A worker whose program echoes its records as `expected` ones and fails on the poison one.
fn poisoned_worker(nats: &NatsServer) -> Child {
    let program = "while IFS= read -r line; do case \"$line\" in *poison*) exit 1;; esac; \
                   echo \"$line\" | sed 's/\"ref\"/\"expected\"/'; done";
    queue(nats)
        .env("PATH", path_with_bins())
        .args([
            "work",
            "refs",
            "out",
            "--idle-exit",
            "3s",
            "--max-deliver",
            "2",
        ])
        .args([
            "--ack-wait",
            "1s",
            "--linger",
            "50ms",
            "--",
            "bash",
            "-c",
            program,
        ])
        .spawn()
}

#[test]
fn a_record_a_worker_gave_up_is_routed_after_the_relay_as_any_failure() {
    let nats = NatsServer::start();
    let worker = poisoned_worker(&nats);
    let input = "{\"_type\":\"ref\",\"url\":\"http://h/1\",\"attempt\":0}\n\
                 {\"_type\":\"ref\",\"url\":\"http://h/poison\",\"attempt\":0}\n";
    let script = format!(
        "printf '%s' '{input}' | rip-queue --broker {} relay refs out | rip-route --final",
        nats.url()
    );
    let out = run_shell(&script, None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let values: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let of = |url: &str| {
        values
            .iter()
            .filter(|v| v["url"] == url && v["_type"] != "ref")
            .collect::<Vec<_>>()
    };
    let poison = of("http://h/poison");
    assert_eq!(poison.len(), 1, "{stdout}");
    assert_eq!(poison[0]["_type"], "error", "{stdout}");
    assert!(
        poison[0].to_string().contains("queue.workFailed"),
        "{stdout}"
    );
    assert_eq!(of("http://h/1")[0]["_type"], "expected", "{stdout}");
    let worked = rip_testkit::Ran::wait("rip-queue work", worker);
    assert_eq!(worked.code, 2, "{}", worked.stderr);
}
