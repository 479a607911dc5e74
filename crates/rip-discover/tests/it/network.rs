//! The network policy across a resume: the networks a crawl was let into stay open to
//! the pages it left waiting, even when its start URL came on stdin and the rerun has none.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use rip_core::Record;
use rip_testkit::Stage;
use rip_testserver::{Fault, Rule, TestServer};

#[test]
fn a_resumed_crawl_started_on_stdin_still_reaches_its_own_network() {
    let server = TestServer::builder()
        .file("/", r#"<a href="/a">a</a> <a href="/held">held</a>"#)
        .file("/a", "<p>a</p>")
        .file("/held", "<p>held</p>")
        // Held far longer than the test the first time: the crawl is killed waiting.
        .rule(Rule::path("/held").once(Fault::serve().delay(Duration::from_secs(600))))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (state, cache) = (dir.path().join("state"), dir.path().join("cache"));
    let stage = || {
        Stage::new("rip-discover")
            .args(["--delay", "0", "--jitter", "0", "-q", "--state"])
            .arg(&state)
            .arg("--cache-dir")
            .arg(&cache)
            .command()
    };
    let mut first = stage()
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = first.stdin.take().unwrap();
    writeln!(stdin, "{}", server.url("/")).unwrap();
    drop(stdin);
    assert!(server.wait_for_count_blocking("/held", 1, Duration::from_secs(60)));
    // The journal is committed on a 100 ms timer: the waiting page is in it by now.
    std::thread::sleep(Duration::from_millis(1500));
    first.kill().unwrap();
    first.wait().unwrap();

    let second = stage().stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&second.stdout);
    let stderr = String::from_utf8_lossy(&second.stderr);
    let (records, _) = crate::record(&stdout);
    let held = server.url("/held");
    let denied: Vec<_> = (records.iter())
        .filter(|r| matches!(r, Record::Failure(f) if f.url == held))
        .collect();
    assert!(denied.is_empty(), "{denied:?}\n{stderr}");
    assert!(
        records
            .iter()
            .any(|r| matches!(r, Record::Ref(x) if x.url == held)),
        "{stdout}\n{stderr}"
    );
    assert_eq!(server.count("/held"), 2, "{stderr}");
}
