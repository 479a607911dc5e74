//! push and pull: records in and out of a stream, each stored once, none dropped.

use super::{pull, queue, refs};
use rip_testkit::NatsServer;

#[test]
fn pushed_records_come_back_in_order_and_a_second_push_stores_nothing_new() {
    let nats = NatsServer::start();
    let urls: Vec<String> = (0..200)
        .map(|i| format!("http://127.0.0.1:9/p{i}"))
        .collect();
    let input = refs(&urls) + "{\"_type\":\"x-mine\",\"note\":\"an unknown kind\"}\n";
    let first = queue(&nats).args(["push", "refs"]).stdin(&input).run();
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first
            .stderr
            .contains("201 records to refs: 201 stored, 0 already there"),
        "{}",
        first.stderr
    );
    // A worker that did its work again publishes the same records again.
    let again = queue(&nats).args(["push", "refs"]).stdin(&input).run();
    assert!(
        again.stderr.contains("0 stored, 201 already there"),
        "{}",
        again.stderr
    );
    let (ran, values) = pull(&nats, "refs");
    assert_eq!(values.len(), 201, "{}", ran.stderr);
    let got: Vec<&str> = values.iter().filter_map(|v| v["url"].as_str()).collect();
    assert_eq!(got, urls.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(values[200]["_type"], "x-mine", "unknown kinds pass through");
}

#[test]
fn an_empty_stream_pulls_nothing_and_one_nobody_wrote_is_an_error() {
    let nats = NatsServer::start();
    let pushed = queue(&nats).args(["push", "empty"]).stdin("").run();
    assert_eq!(pushed.code, 0, "{}", pushed.stderr);
    let (ran, values) = pull(&nats, "empty");
    assert!(values.is_empty());
    assert!(
        ran.stderr.contains("0 records from empty"),
        "{}",
        ran.stderr
    );
    let typo = queue(&nats).args(["pull", "emtpy"]).run();
    assert_eq!(typo.code, 1, "{}", typo.stderr);
    assert!(
        typo.stderr.contains("no stream emtpy under the prefix rip"),
        "{}",
        typo.stderr
    );
}

#[test]
fn bad_lines_are_reported_by_line_and_the_records_around_them_stored() {
    let nats = NatsServer::start();
    let input = "{\"_type\":\"ref\",\"url\":\"http://h/a\"}\nnot json\n{\"_type\":\"ref\",\"url\":\"http://h/b\"}\n";
    let ran = queue(&nats).args(["push", "refs"]).stdin(input).run();
    assert_eq!(ran.code, 2, "partial: {}", ran.stderr);
    assert!(
        ran.stderr.contains("-:2:"),
        "names the line: {}",
        ran.stderr
    );
    assert_eq!(pull(&nats, "refs").1.len(), 2);
}

#[test]
fn a_broker_that_is_not_there_is_a_clear_error_without_its_password() {
    let broker = rip_testkit::absent_broker("hunter2");
    let ran = rip_testkit::Stage::new("rip-queue")
        .args(["--broker", &broker, "push", "refs"])
        .stdin("{\"_type\":\"ref\",\"url\":\"http://h/a\"}\n")
        .run();
    rip_testkit::assert_broker_absent(&ran, "hunter2");
}

#[test]
fn credentials_from_a_file_open_a_broker_that_asks_for_them() {
    let nats = NatsServer::start_with("authorization { user: crawler, password: \"s3cret-pw\" }");
    let dir = tempfile::tempdir().unwrap();
    let creds = dir.path().join("creds");
    std::fs::write(&creds, "crawler:s3cret-pw\n").unwrap();
    let without = queue(&nats).args(["push", "refs"]).stdin("").run();
    assert_eq!(without.code, 1, "refused without: {}", without.stderr);
    let with = queue(&nats)
        .arg("--creds")
        .arg(&creds)
        .args(["push", "refs"])
        .stdin("{\"_type\":\"ref\",\"url\":\"http://h/a\"}\n")
        .run();
    assert_eq!(with.code, 0, "{}", with.stderr);
    assert!(!with.stderr.contains("s3cret"), "{}", with.stderr);
}

#[test]
fn a_bad_stream_name_is_a_usage_error() {
    let nats = NatsServer::start();
    let ran = queue(&nats).args(["push", "a.b"]).stdin("").run();
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr.contains("bad stream name `a.b`"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_following_pull_ends_with_exit_1_when_the_broker_stays_away() {
    let mut nats = NatsServer::start();
    queue(&nats)
        .args(["push", "s"])
        .stdin("{\"_type\":\"ref\",\"url\":\"http://h/a\"}\n")
        .run();
    let child = queue(&nats)
        .args(["--patience", "2s", "pull", "s", "--follow"])
        .spawn();
    std::thread::sleep(std::time::Duration::from_millis(800));
    nats.kill();
    let ran = rip_testkit::Ran::wait("rip-queue pull", child);
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert_eq!(ran.stdout.lines().count(), 1, "what was read is written");
    assert!(
        ran.stderr.contains("has not answered for 2s"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_broker_that_refuses_is_said_to_refuse_not_to_be_away() {
    let nats = NatsServer::start();
    // Another application's stream already takes the subjects of the stream `refs`.
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let client = async_nats::connect(nats.url()).await.expect("connect");
        async_nats::jetstream::new(client)
            .create_stream(async_nats::jetstream::stream::Config {
                name: "theirs".to_owned(),
                subjects: vec!["rip.refs".to_owned()],
                ..Default::default()
            })
            .await
            .expect("their stream");
    });
    let input = refs(&["http://127.0.0.1:9/a".to_owned()]);
    let start = std::time::Instant::now();
    let ran = queue(&nats)
        .args(["--patience", "2s", "push", "refs"])
        .stdin(&input)
        .run();
    assert_eq!(ran.code, 1, "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("the broker refused to open the stream refs (asked for 2s)")
            && ran.stderr.contains("overlap"),
        "{}",
        ran.stderr
    );
    assert!(!ran.stderr.contains("has not answered"), "{}", ran.stderr);
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
}
