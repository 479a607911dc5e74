//! `rip-fetch --warc` killed with SIGKILL mid-run, then run again: the killed process's
//! `.open` file is left as it is (its whole records readable, a torn tail a failure naming
//! its offset), and the run after it archives only what it fetches over the wire.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use rip_core::Record;
use rip_testkit::{Ran, Stage, checked_records, files_ending};
use rip_testserver::{Fault, Rule, TestServer};

use super::{fetch_stage, refs};

const PAGES: usize = 60;

/// `rip-warc read --every-capture FILE`.
fn warc_read(file: &Path) -> Ran {
    Stage::new("rip-warc")
        .args(["read", "--every-capture"])
        .arg(file)
        .run()
}

/// Path → the `page` and HTTP `failure` records of a `rip-warc read` (one per response
/// record read whole); and the damaged-record failures' messages.
fn responses(read: &Ran) -> (BTreeMap<String, usize>, Vec<String>) {
    let (mut by_path, mut damaged) = (BTreeMap::new(), Vec::new());
    for r in read.records() {
        let url = match r {
            Record::Page(p) => &p.url,
            Record::Failure(f) if f.errors.iter().any(|e| e.code.starts_with("warc.")) => {
                damaged.push(format!("{} {}", f.url, f.errors[0].message));
                continue;
            }
            Record::Failure(f) => &f.url,
            _ => continue,
        };
        let path = url::Url::parse(url).unwrap().path().to_owned();
        *by_path.entry(path).or_insert(0) += 1;
    }
    (by_path, damaged)
}

/// A copy of the `.open` file's `bytes` with its tail torn (as a kill inside a write leaves
/// it): one failure naming the offset of the record cut, and every record before it read.
fn torn_tail_is_one_failure_naming_its_offset(
    dir: &Path,
    bytes: &[u8],
    in_open: &BTreeMap<String, usize>,
) {
    let torn = dir.join("torn.warc.gz.open");
    std::fs::write(&torn, &bytes[..bytes.len() - 7]).unwrap();
    let (before_tear, damaged) = responses(&warc_read(&torn));
    assert_eq!(damaged.len(), 1, "{damaged:?}");
    let offset: usize = (damaged[0].split("#offset=").nth(1))
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("an offset: {damaged:?}"));
    assert!(offset > 0 && offset < bytes.len(), "{offset}");
    assert!(
        damaged[0].contains(&format!("record at offset {offset}")),
        "{damaged:?}"
    );
    assert!(
        before_tear.len() + 1 >= in_open.len(),
        "{before_tear:?} {in_open:?}"
    );
    std::fs::remove_file(&torn).unwrap();
}

/// [`PAGES`] pages, each its own body (no revisits), each answered after 30 ms.
fn slow_pages() -> TestServer {
    let mut b = TestServer::builder()
        .rule(Rule::prefix("/p").always(Fault::serve().delay(Duration::from_millis(30))));
    for i in 0..PAGES {
        b = b.file(format!("/p{i}"), format!("<!doctype html><p>page {i}</p>"));
    }
    b.start_background().unwrap()
}

#[test]
fn a_killed_fetch_leaves_its_open_file_and_the_next_run_archives_each_exchange_once() {
    let server = slow_pages();
    let cache = tempfile::tempdir().unwrap();
    let warc = tempfile::tempdir().unwrap();
    let input = refs(
        &(0..PAGES)
            .map(|i| server.url(&format!("/p{i}")))
            .collect::<Vec<_>>(),
    );
    let args = [
        "--warc",
        warc.path().to_str().unwrap(),
        "-c",
        "1",
        "--per-host",
        "1",
    ];
    let mut child = fetch_stage(&args, cache.path(), &input).spawn();
    let t0 = Instant::now();
    while server.total() < 20 {
        assert!(t0.elapsed() < Duration::from_secs(120), "no progress");
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let killed_after = server.total();
    assert!(
        killed_after < PAGES + 1,
        "killed mid-run: {killed_after} requests"
    );
    assert!(
        files_ending(warc.path(), ".warc.gz").is_empty(),
        "nothing closed"
    );
    let open = files_ending(warc.path(), ".warc.gz.open");
    assert_eq!(open.len(), 1, "{open:?}");
    let open = &open[0];
    let bytes = std::fs::read(open).unwrap();

    // The .open file reads as far as its records are whole.
    let (in_open, damaged) = responses(&warc_read(open));
    assert!(in_open.len() >= 15, "{in_open:?}");
    assert!(damaged.len() <= 1, "a torn tail at most: {damaged:?}");
    torn_tail_is_one_failure_naming_its_offset(warc.path(), &bytes, &in_open);

    // The same command again, to the end: what the killed run cached comes from the cache,
    // the rest over the wire; the .open file is left as it was.
    let again = fetch_stage(&args, cache.path(), &input).run();
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(
        std::fs::read(open).unwrap(),
        bytes,
        "the .open file untouched"
    );
    let closed = files_ending(warc.path(), ".warc.gz");
    assert_eq!(closed.len(), 1, "{closed:?}");
    let second = checked_records(&closed);
    // Each request the server saw has its response record in one of the files, but the
    // one in flight at the kill (answered, not written): each exchange archived once.
    let mut short = Vec::new();
    for i in 0..PAGES {
        let path = format!("/p{i}");
        let sent = server.count(&path);
        let url = server.url(&path);
        let archived = in_open.get(&path).copied().unwrap_or(0)
            + second
                .get(&("response".to_owned(), url))
                .copied()
                .unwrap_or(0);
        assert!(archived <= sent, "{path}: {archived} archived, {sent} sent");
        assert!(sent >= 1, "{path} fetched");
        if archived < sent {
            short.push(path);
        }
    }
    assert!(
        short.len() <= 1,
        "only the exchange in flight is lost: {short:?}"
    );
    // And the run after the kill archived every exchange it had, no other.
    let responses_again: usize = (second.iter())
        .filter(|((k, _), _)| k == "response")
        .map(|(_, n)| n)
        .sum();
    assert_eq!(responses_again, server.total() - killed_after, "{second:?}");
}
