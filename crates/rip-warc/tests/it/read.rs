//! `rip-warc read` as a program, on files the ecosystem's tools wrote: wget's
//! `--warc-file` of the demo site gives the pages rip-fetch gives on the same URLs, and a
//! file written by warcio (chunked and gzip bodies, an error status, a revisit) reads as
//! rip-fetch's contract says; a damaged file is failures with offsets, the rest read.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use rip_core::{BodyEncoding, Record, Status};
use rip_testkit::{Ran, Stage};
use rip_testserver::TestServer;

/// `(url, status, body)` of every page.
type Pages = BTreeSet<(String, u16, String)>;

fn pages(ran: &Ran) -> Pages {
    ran.records()
        .iter()
        .filter_map(|r| match r {
            Record::Page(p) => Some((p.url.clone(), p.status, p.body.clone())),
            _ => None,
        })
        .collect()
}

fn read(args: &[&str]) -> Ran {
    Stage::new("rip-warc").arg("read").args(args).run()
}

pub(crate) fn wget_warc(url: &str, dir: &Path) -> std::path::PathBuf {
    let out = Command::new("wget")
        .args([
            "-q",
            "-r",
            "-l",
            "1",
            "-e",
            "robots=off",
            "--warc-file=site",
            "-P",
            "mirror",
        ])
        .arg(url)
        .current_dir(dir)
        .output()
        .expect("wget runs (hint: `scripts/setup test` installs Debian's wget)");
    // wget exits 8 when a link answered an error status; the archive is written anyway.
    assert!(matches!(out.status.code(), Some(0 | 8)), "wget: {out:?}");
    dir.join("site.warc.gz")
}

#[test]
fn wget_s_archive_of_the_demo_site_gives_the_pages_rip_fetch_gives() {
    let server = TestServer::builder()
        .dir(rip_testkit::testdata("site"))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let warc = wget_warc(&server.url("/"), dir.path());
    let archived = read(&["--mime", "text/html", warc.to_str().unwrap()]);
    assert_eq!(archived.code, 0, "{}", archived.stderr);
    let from_warc = pages(&archived);
    assert!(from_warc.len() >= 5, "{from_warc:?}");
    let refs: String = from_warc.iter().map(|(u, _, _)| format!("{u}\n")).collect();
    let cache = dir.path().join("cache");
    let fetched = Stage::new("rip-fetch")
        .args(["--delay", "0ms", "--jitter", "0ms", "--cache-dir"])
        .arg(&cache)
        .stdin(refs)
        .run();
    assert_eq!(fetched.code, 0, "{}", fetched.stderr);
    assert_eq!(from_warc, pages(&fetched));
    let summary = archived.summary();
    assert_eq!(summary.status, Status::Complete);
    assert_eq!(summary.made("page") as usize, from_warc.len());
}

/// A warcio script writing `file`: pages, a chunked gzip body, a 404, a revisit.
const WARCIO_WRITER: &str = r#"
import gzip, sys
from io import BytesIO
from warcio.warcwriter import WARCWriter
from warcio.statusandheaders import StatusAndHeaders as H
def resp(w, url, status, body, headers):
    h = H(status, headers, protocol='HTTP/1.1')
    r = w.create_warc_record(url, 'response', payload=BytesIO(body), http_headers=h)
    w.write_record(r)
    return r
with open(sys.argv[1], 'wb') as out:
    w = WARCWriter(out, gzip=sys.argv[2] == 'gz')
    w.write_record(w.create_warcinfo_record('t.warc', {'software': 'test'}))
    plain = '<title>Café</title><p>plain</p>'.encode()
    first = resp(w, 'http://t.test/plain', '200 OK', plain, [('Content-Type', 'text/html; charset=utf-8')])
    z = gzip.compress(b'<p>zipped and chunked</p>')
    chunked = b'%x\r\n' % len(z) + z + b'\r\n0\r\n\r\n'
    resp(w, 'http://t.test/zipped', '200 OK', chunked, [('Content-Type', 'text/html'), ('Content-Encoding', 'gzip'), ('Transfer-Encoding', 'chunked')])
    resp(w, 'http://t.test/gone', '404 Not Found', b'<p>no</p>', [('Content-Type', 'text/html')])
    h = H('200 OK', [('Content-Type', 'text/html; charset=utf-8')], protocol='HTTP/1.1')
    w.write_record(w.create_revisit_record('http://t.test/again', digest=first.rec_headers.get_header('WARC-Payload-Digest'), refers_to_uri='http://t.test/plain', refers_to_date=first.rec_headers.get_header('WARC-Date'), http_headers=h))
"#;

pub(crate) fn warcio_file(dir: &Path, gz: bool) -> std::path::PathBuf {
    let python = rip_testkit::test_tool("python");
    crate::warcio::program();
    let file = dir.join(if gz { "t.warc.gz" } else { "t.warc" });
    let out = Command::new(python)
        .args(["-c", WARCIO_WRITER])
        .arg(&file)
        .arg(if gz { "gz" } else { "plain" })
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    file
}

#[test]
fn a_file_warcio_wrote_reads_as_rip_fetch_s_pages() {
    let dir = tempfile::tempdir().unwrap();
    for gz in [true, false] {
        let file = warcio_file(dir.path(), gz);
        let ran = read(&[file.to_str().unwrap()]);
        assert_eq!(ran.code, 2, "the 404 makes the run partial: {}", ran.stderr);
        let expect: Pages = [
            ("http://t.test/again", "<title>Café</title><p>plain</p>"),
            ("http://t.test/plain", "<title>Café</title><p>plain</p>"),
            ("http://t.test/zipped", "<p>zipped and chunked</p>"),
        ]
        .into_iter()
        .map(|(u, b)| (u.to_owned(), 200, b.to_owned()))
        .collect();
        assert_eq!(pages(&ran), expect, "{}", file.display());
        let failure = ran.records().iter().find_map(|r| match r {
            Record::Failure(f) => Some(f),
            _ => None,
        });
        let failure = failure.expect("a failure for the 404");
        assert_eq!(
            (failure.url.as_str(), failure.status),
            ("http://t.test/gone", Some(404))
        );
        assert_eq!(failure.errors[0].code, "httpError.permanent");
        for r in ran.records() {
            if let Record::Page(p) = r {
                assert_eq!(
                    (p.body_encoding, p.charset.as_deref()),
                    (BodyEncoding::Text, Some("utf-8"))
                );
            }
        }
    }
}

#[test]
fn damaged_records_are_failures_with_offsets_and_the_rest_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = warcio_file(dir.path(), true);
    let index = crate::warcio::index(&file);
    let zipped = index
        .iter()
        .find(|e| e.uri.as_deref() == Some("http://t.test/zipped"))
        .unwrap();
    let mut bytes = std::fs::read(&file).unwrap();
    let mid = (zipped.offset + zipped.length / 2) as usize;
    for b in &mut bytes[mid..mid + 6] {
        *b ^= 0x5a;
    }
    bytes.truncate(bytes.len() - 10);
    std::fs::write(&file, &bytes).unwrap();
    let ran = read(&[file.to_str().unwrap()]);
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    let failures: Vec<(String, String, String)> = ran
        .records()
        .iter()
        .filter_map(|r| match r {
            Record::Failure(f) => Some((
                f.url.clone(),
                f.errors[0].code.clone(),
                f.errors[0].message.clone(),
            )),
            _ => None,
        })
        .collect();
    let name = file.display().to_string();
    let at = format!("record at offset {}:", zipped.offset);
    let gzip = failures
        .iter()
        .find(|(_, _, message)| message.contains(&at))
        .expect("the corrupted member");
    assert_eq!(gzip.1, "warc.gzip", "{gzip:?}");
    assert!(
        gzip.2
            .starts_with(&format!("{name}: record at offset {}:", zipped.offset)),
        "{gzip:?}"
    );
    let truncated = failures
        .iter()
        .find(|(u, _, _)| u == "http://t.test/again")
        .expect("the cut revisit");
    assert!(truncated.2.contains("record at offset"), "{truncated:?}");
    let read_on: Vec<String> = pages(&ran).into_iter().map(|(u, _, _)| u).collect();
    assert_eq!(read_on, ["http://t.test/plain"], "{failures:?}");
    assert!(failures.iter().any(|(u, _, _)| u == "http://t.test/gone"));
}

#[test]
fn an_input_that_is_not_there_is_an_error_naming_it() {
    let ran = Stage::new("rip-warc")
        .args(["read", "/nonexistent/crawl.warc.gz"])
        .run();
    assert_eq!(ran.code, 1);
    assert!(
        ran.stderr.contains("/nonexistent/crawl.warc.gz"),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_wacz_reads_as_the_warc_files_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let warc = warcio_file(dir.path(), true);
    let wacz = dir.path().join("crawl.wacz");
    // Stored, as WACZ writers store their .warc.gz: the revisit's original is read again.
    let script = "import sys, zipfile\n\
                  with zipfile.ZipFile(sys.argv[1], 'w') as z:\n\
                  \x20   z.writestr('datapackage.json', '{}')\n\
                  \x20   z.write(sys.argv[2], 'archive/data.warc.gz', compress_type=zipfile.ZIP_STORED)\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .args([&wacz, &warc])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let from_warc = read(&[warc.to_str().unwrap()]);
    let from_wacz = read(&[wacz.to_str().unwrap()]);
    assert_eq!(from_wacz.code, 2, "{}", from_wacz.stderr);
    assert_eq!(pages(&from_wacz), pages(&from_warc));
    assert_eq!(pages(&from_wacz).len(), 3);

    std::fs::write(&wacz, b"PK\x03\x04 not really a zip").unwrap();
    let broken = read(&[wacz.to_str().unwrap()]);
    let Some(Record::Failure(f)) = broken.records().first() else {
        panic!("{:?}", broken.records())
    };
    assert_eq!(f.errors[0].code, "warc.wacz");
    assert!(f.errors[0].message.contains("crawl.wacz"), "{f:?}");
}

#[test]
fn a_url_archived_twice_has_one_outcome_unless_every_capture_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let file = warcio_file(dir.path(), true);
    let twice = dir.path().join("twice.warc.gz");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&twice, [bytes.clone(), bytes].concat()).unwrap();
    let once = read(&[twice.to_str().unwrap()]);
    let urls = |ran: &Ran| {
        let mut v: Vec<String> = ran
            .records()
            .iter()
            .filter_map(|r| match r {
                Record::Page(_) | Record::Failure(_) => r.url().map(str::to_owned),
                _ => None,
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(urls(&once).len(), 4, "{:?}", urls(&once));
    assert_eq!(once.summary().counters.get("duplicates"), Some(&4));
    let every = read(&["--every-capture", twice.to_str().unwrap()]);
    assert_eq!(urls(&every).len(), 8);
}

#[test]
fn stdin_is_read_and_a_revisit_there_is_an_expected_gap() {
    let dir = tempfile::tempdir().unwrap();
    let file = warcio_file(dir.path(), true);
    let ran = Stage::new("rip-warc")
        .args(["read", "-"])
        .stdin(std::fs::read(&file).unwrap())
        .run();
    assert_eq!(ran.code, 2, "the 404: {}", ran.stderr);
    assert_eq!(pages(&ran).len(), 2, "{:?}", ran.records());
    let expected = ran.records().iter().find_map(|r| match r {
        Record::Expected(e) => Some(e),
        _ => None,
    });
    let expected = expected.expect("the revisit, as expected");
    assert_eq!(expected.url, "http://t.test/again");
    assert_eq!(expected.rule.as_deref(), Some("warc.revisit"));
    assert!(expected.reason.contains("stdin"), "{expected:?}");
}

#[test]
fn rip_warc_read_pipes_into_rip_parse() {
    let dir = tempfile::tempdir().unwrap();
    let file = warcio_file(dir.path(), true);
    let script = format!(
        "rip-warc read -q --mime text/html {} | rip-parse -q | rip-check -q",
        file.display()
    );
    let out = rip_testkit::run_shell(&script, Some(dir.path()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let docs: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(r#""_type":"doc""#))
        .collect();
    assert_eq!(
        docs.len(),
        3,
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(r#""stage":"rip-warc""#),
        "rip-warc's summary passes through"
    );
    // Every record rip-warc writes keeps the contract (rip-check exits 0).
    let check = rip_testkit::run_shell(
        &format!("rip-warc read -q {} | rip-check", file.display()),
        None,
    );
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}
