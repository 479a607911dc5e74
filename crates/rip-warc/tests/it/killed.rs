//! A process writing WARC killed with SIGKILL: every closed file is whole, the torn one is
//! the `.open` file and is named so.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rip_warc::write::http::{self, HttpResponse};
use rip_warc::write::{WarcWriter, WriterConfig};
use url::Url;

use crate::warcio;
use rip_testkit::files_ending;

const CHILD_DIR: &str = "RIP_WARC_TEST_CHILD_DIR";

/// Not a test on its own: the child the test below starts (and kills). Writes 200 KB
/// incompressible responses into 1 MB files until killed.
#[test]
fn child_writes_until_killed() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let mut cfg = WriterConfig::new(PathBuf::from(dir));
    cfg.max_file_size = 1_000_000;
    let mut w = WarcWriter::new(cfg).expect("writer");
    let head = vec![(
        "content-type".to_owned(),
        "application/octet-stream".to_owned(),
    )];
    for i in 0..100_000 {
        let url = Url::parse(&format!("http://127.0.0.1/{i}")).expect("url");
        let body: Vec<u8> = (0..200_000).map(|_| fastrand::u8(..)).collect();
        let res = HttpResponse {
            url: &url,
            status: 200,
            headers: &head,
            body: &body,
            decoded: false,
            truncated: false,
            ip: None,
        };
        w.write(&[http::response(&res).expect("record")])
            .expect("write");
    }
}

#[test]
fn a_killed_writer_leaves_whole_closed_files_and_one_open_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "killed::child_writes_until_killed",
            "--exact",
            "--nocapture",
        ])
        .env(CHILD_DIR, dir.path())
        .stdout(Stdio::null())
        .spawn()
        .expect("child starts");
    let deadline = Instant::now() + Duration::from_secs(120);
    while files_ending(dir.path(), ".warc.gz").len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the child closed no two files in 120 s"
        );
        assert!(
            child.try_wait().expect("wait").is_none(),
            "the child ended early"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(fastrand::u64(0..200)));
    child.kill().expect("SIGKILL"); // std's kill is SIGKILL on Unix
    child.wait().expect("reaped");
    let closed = files_ending(dir.path(), ".warc.gz");
    for f in &closed {
        warcio::check(f);
        let index = warcio::index(f);
        assert_eq!(index[0].kind, "warcinfo", "{}", f.display());
        assert!(index.len() >= 2, "{}: {index:?}", f.display());
    }
    let open = files_ending(dir.path(), ".warc.gz.open");
    assert!(open.len() <= 1, "{open:?}");
    let pid = child.id();
    for f in &open {
        let name = f.file_name().and_then(|n| n.to_str()).expect("name");
        assert!(
            name.starts_with("rip-") && name.contains(&format!("-{pid}~")),
            "{name}"
        );
    }
}
