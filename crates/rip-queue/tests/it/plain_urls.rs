//! `push` reads a bare URL line as the `ref` of that URL, as every stage does.

use super::{pull, queue};
use rip_testkit::NatsServer;

#[test]
fn a_pushed_bare_url_is_stored_as_its_ref() {
    let nats = NatsServer::start();
    let input = "http://127.0.0.1:9/a\nhttp://exa mple.com/\nhttp://127.0.0.1:9/b\n";
    let pushed = queue(&nats).args(["push", "urls"]).stdin(input).run();
    assert_eq!(pushed.code, 2, "the bad line: {}", pushed.stderr);
    assert!(
        pushed
            .stderr
            .contains(":2: not a URL: http://exa mple.com/"),
        "{}",
        pushed.stderr
    );
    let (ran, values) = pull(&nats, "urls");
    let got: Vec<(&str, &str)> = values
        .iter()
        .map(|v| (v["_type"].as_str().unwrap(), v["url"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("ref", "http://127.0.0.1:9/a"),
            ("ref", "http://127.0.0.1:9/b")
        ],
        "{}",
        ran.stderr
    );
}

#[test]
fn urls_given_to_push_are_stored_as_their_refs() {
    let nats = NatsServer::start();
    let pushed = queue(&nats)
        .args([
            "push",
            "args",
            "http://127.0.0.1:9/a",
            "http://127.0.0.1:9/b",
        ])
        .stdin("http://127.0.0.1:9/unread\n")
        .run();
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    let (ran, values) = pull(&nats, "args");
    let got: Vec<&str> = values.iter().map(|v| v["url"].as_str().unwrap()).collect();
    assert_eq!(
        got,
        ["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"],
        "{}",
        ran.stderr
    );
    assert!(values.iter().all(|v| v["_type"] == "ref"));
    let bad = queue(&nats).args(["push", "args", "nope"]).run();
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert!(bad.stderr.contains("not a URL: nope"), "{}", bad.stderr);
}
