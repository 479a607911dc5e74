//! `rip-warc index` against `cdxj-indexer` (PyPI, pywb's indexer): the same lines, in the
//! same order, on wget's archive of the demo site and on a file warcio wrote.

use std::path::Path;
use std::process::Command;

use rip_testkit::Stage;
use rip_testserver::TestServer;

use crate::read::{warcio_file, wget_warc};

/// `(key, timestamp, JSON)` of each line, the JSON parsed (its spacing differs).
fn lines(text: &str) -> Vec<(String, String, serde_json::Value)> {
    text.lines()
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let mut next = || parts.next().unwrap_or_else(|| panic!("not CDXJ: {l}"));
            let (key, ts, json) = (next().to_owned(), next().to_owned(), next());
            (
                key,
                ts,
                serde_json::from_str(json).unwrap_or_else(|e| panic!("{l}: {e}")),
            )
        })
        .collect()
}

fn cdxj_indexer(file: &Path) -> String {
    let prog = rip_testkit::test_tool("cdxj-indexer");
    let out = Command::new(prog).arg("--sort").arg(file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn same_as_cdxj_indexer(file: &Path) {
    let ours = Stage::new("rip-warc").args(["index", "-q"]).arg(file).run();
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    let theirs = lines(&cdxj_indexer(file));
    assert!(theirs.len() >= 4, "{theirs:?}");
    assert_eq!(lines(&ours.stdout), theirs, "{}", file.display());
}

#[test]
fn the_index_of_wget_s_and_warcio_s_files_is_cdxj_indexer_s() {
    let server = TestServer::builder()
        .dir(rip_testkit::testdata("site"))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    same_as_cdxj_indexer(&wget_warc(&server.url("/"), dir.path()));
    same_as_cdxj_indexer(&warcio_file(dir.path(), true));
    same_as_cdxj_indexer(&warcio_file(dir.path(), false));
}

#[test]
fn a_damaged_record_is_named_and_left_out_of_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let file = warcio_file(dir.path(), true);
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&file, &bytes).unwrap();
    let ran = Stage::new("rip-warc").arg("index").arg(&file).run();
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains(&format!("{}: record at offset ", file.display())),
        "{}",
        ran.stderr
    );
    let urls: Vec<String> = lines(&ran.stdout)
        .into_iter()
        .map(|(_, _, j)| j["url"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(urls.len(), 3, "{urls:?}");
    assert!(!urls.iter().any(|u| u.ends_with("/again")), "{urls:?}");
}
