//! Credentials in the broker's URL (`--broker` or `RIP_BROKER`): used, never printed, and a
//! refusal said as one (naming the user) in the program's own words.

use super::refs;
use rip_testkit::{NatsServer, Ran, Stage};
use std::time::{Duration, Instant};

const AUTH: &str = "authorization { user: alice, password: \"s3cret-pw\" }";

/// The server's URL with `secret` (`user:password` or a token) in it.
fn url_with(nats: &NatsServer, secret: &str) -> String {
    nats.url()
        .replacen("nats://", &format!("nats://{secret}@"), 1)
}

fn push_one(stage: Stage, url: &str) -> Ran {
    stage
        .args(["push", "refs"])
        .stdin(refs(&[url.to_owned()]))
        .run()
}

/// Only the program's own lines on stderr: no tracing line of the NATS client.
fn only_own_lines(ran: &Ran) {
    for line in ran.stderr.lines() {
        assert!(line.starts_with("rip-queue: "), "{}", ran.stderr);
    }
}

#[test]
fn a_user_and_password_in_the_url_or_rip_broker_open_a_broker_that_asks_for_them() {
    let nats = NatsServer::start_with(AUTH);
    let url = url_with(&nats, "alice:s3cret-pw");
    let flag = push_one(
        Stage::new("rip-queue").args(["--broker", &url]),
        "http://h/a",
    );
    assert_eq!(flag.code, 0, "{}", flag.stderr);
    let env = push_one(
        Stage::new("rip-queue").env("RIP_BROKER", &url),
        "http://h/b",
    );
    assert_eq!(env.code, 0, "{}", env.stderr);
    for ran in [&flag, &env] {
        assert!(!ran.stderr.contains("s3cret"), "{}", ran.stderr);
        only_own_lines(ran);
    }
    let (pulled, n) = pull_with(&url);
    assert_eq!(n, 2, "{}", pulled.stderr);
}

#[test]
fn a_wrong_password_is_refused_at_once_naming_the_user_not_the_password() {
    let nats = NatsServer::start_with(AUTH);
    let start = Instant::now();
    let ran = push_one(
        Stage::new("rip-queue").args(["--broker", &url_with(&nats, "alice:wrong-pw")]),
        "http://h/a",
    );
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    assert!(
        ran.stderr.contains("refused the user alice"),
        "{}",
        ran.stderr
    );
    assert!(!ran.stderr.contains("cannot reach"), "{}", ran.stderr);
    assert!(!ran.stderr.contains("wrong-pw"), "{}", ran.stderr);
    only_own_lines(&ran);
    let none = push_one(
        Stage::new("rip-queue").args(["--broker", &nats.url()]),
        "http://h/a",
    );
    assert_eq!(none.code, 1, "{}", none.stderr);
    assert!(
        none.stderr.contains("refused no credentials") && none.stderr.contains("hint"),
        "{}",
        none.stderr
    );
}

#[test]
fn a_token_in_the_url_opens_a_broker_that_asks_for_one() {
    let nats = NatsServer::start_with("authorization { token: \"t0ken-xyz\" }");
    let ran = push_one(
        Stage::new("rip-queue").args(["--broker", &url_with(&nats, "t0ken-xyz")]),
        "http://h/a",
    );
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(!ran.stderr.contains("t0ken"), "{}", ran.stderr);
    let (pulled, n) = pull_with(&url_with(&nats, "t0ken-xyz"));
    assert_eq!(n, 1, "{}", pulled.stderr);
}

fn pull_with(url: &str) -> (Ran, usize) {
    let ran = Stage::new("rip-queue")
        .args(["--broker", url, "pull", "refs"])
        .run();
    let n = ran.stdout.lines().count();
    (ran, n)
}
