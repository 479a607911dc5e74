//! The writer's files, checked by warcio: every record kind, rotation, a process killed.

use std::path::{Path, PathBuf};

use rip_warc::record::RecordType;
use rip_warc::write::http::{self, HttpRequest, HttpResponse, RefersTo};
use rip_warc::write::{Record, WarcWriter, WriterConfig};
use url::Url;

use crate::warcio;

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

fn response<'a>(
    url: &'a Url,
    status: u16,
    head: &'a [(String, String)],
    body: &'a [u8],
) -> HttpResponse<'a> {
    HttpResponse {
        url,
        status,
        headers: head,
        body,
        decoded: true,
        truncated: false,
        ip: Some("127.0.0.1".parse().expect("ip")),
    }
}

/// The records of one exchange: request, response, metadata.
fn exchange(url: &Url, status: u16, body: &[u8]) -> Vec<Record> {
    let sent = headers(&[("User-Agent", "ripperoni-test"), ("Accept", "*/*")]);
    let got = headers(&[
        ("content-type", "text/html; charset=utf-8"),
        ("content-encoding", "gzip"),
        ("transfer-encoding", "chunked"),
    ]);
    let res = http::response(&response(url, status, &got, body)).expect("response");
    let req = http::request(&HttpRequest {
        url,
        method: "GET",
        headers: &sent,
        body: b"",
    })
    .and_then(|r| r.concurrent_to(res.id()))
    .expect("request");
    let meta = http::metadata(
        url,
        res.id(),
        &[("attempt", "1"), ("failure", "http.5xx\r\nWARC-Type: x")],
    )
    .expect("metadata");
    vec![req, res, meta]
}

/// Every record kind in one file, each written alone so that its offset is known.
fn write_every_kind(dir: &Path) -> (PathBuf, Vec<(RecordType, u64)>) {
    let mut w = WarcWriter::new(WriterConfig::new(dir)).expect("writer");
    let url = Url::parse("http://127.0.0.1:8080/a/page?q=1").expect("url");
    let body = b"<html><body>Hello, archive</body></html>".to_vec();
    let mut records = exchange(&url, 200, &body);
    let got = headers(&[("content-type", "text/html")]);
    let res = records[1].clone();
    let refers = RefersTo {
        id: Some(res.id()),
        uri: url.as_str(),
        date: Some(res.date()),
    };
    let digest = res
        .header_value("WARC-Payload-Digest")
        .expect("payload digest");
    records
        .push(http::revisit(&response(&url, 200, &got, &body), &refers, digest).expect("revisit"));
    records.push(http::revisit(&response(&url, 304, &got, b""), &refers, digest).expect("304"));
    records.push(
        Record::new(RecordType::Resource, b"<html>rendered</html>".to_vec())
            .target_uri("urn:rip:dom:http://127.0.0.1:8080/a/page?q=1")
            .and_then(|r| r.content_type("text/html"))
            .expect("resource"),
    );
    // Nothing written opens the file with its warcinfo at 0; each record starts where the
    // file ended before it.
    w.write(&[]).expect("open");
    let mut expected = vec![(RecordType::Warcinfo, 0)];
    for r in &records {
        let start = std::fs::metadata(w.open_path().expect("open"))
            .expect("stat")
            .len();
        expected.push((r.kind(), start));
        w.write(std::slice::from_ref(r)).expect("write");
    }
    let path = w.close().expect("close").expect("a file");
    (path, expected)
}

#[test]
fn warcio_checks_and_indexes_every_record_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, expected) = write_every_kind(dir.path());
    let name = path.file_name().and_then(|n| n.to_str()).expect("name");
    assert!(
        name.starts_with("rip-") && name.ends_with(".warc.gz"),
        "{name}"
    );
    assert!(
        name.contains(&format!("-00001-{}~", std::process::id())),
        "{name}"
    );
    let report = warcio::check(&path);
    // Block digests of all but the revisits (whose payload is elsewhere), and the
    // response's payload digest, verified.
    assert_eq!(report.matches("digest pass").count(), 5, "{report}");
    assert!(!report.contains("fail"), "{report}");
    let index = warcio::index(&path);
    let got: Vec<(String, u64)> = index.iter().map(|e| (e.kind.clone(), e.offset)).collect();
    let want: Vec<(String, u64)> = expected
        .iter()
        .map(|(k, o)| (k.as_str().to_owned(), *o))
        .collect();
    assert_eq!(got, want);
    let len = std::fs::metadata(&path).expect("stat").len();
    let last = index.last().expect("records");
    assert_eq!(
        last.offset + last.length,
        len,
        "the last member ends the file"
    );
    assert_eq!(
        index[2].uri.as_deref(),
        Some("http://127.0.0.1:8080/a/page?q=1")
    );
}

#[test]
fn files_rotate_at_their_size_each_opening_with_warcinfo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cfg = WriterConfig::new(dir.path());
    cfg.max_file_size = 4_000;
    let mut w = WarcWriter::new(cfg).expect("writer");
    for i in 0..12 {
        let url = Url::parse(&format!("http://127.0.0.1/{i}")).expect("url");
        let body: Vec<u8> = (0..2_000).map(|_| fastrand::alphanumeric() as u8).collect();
        w.write(&exchange(&url, 200, &body)).expect("write");
    }
    w.close().expect("close");
    let files = w.closed().to_vec();
    assert!(files.len() >= 3, "{files:?}");
    let mut pages = 0;
    for f in &files {
        warcio::check(f);
        let index = warcio::index(f);
        assert_eq!(index[0].kind, "warcinfo", "{}", f.display());
        assert!(index[1..].iter().all(|e| e.kind != "warcinfo"));
        pages += index.iter().filter(|e| e.kind == "response").count();
    }
    assert_eq!(pages, 12, "every response in some file, once");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "open"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn warcio_check_catches_a_wrong_payload_digest() {
    // The check above is worth something only if warcio checks payload digests.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WarcWriter::new(WriterConfig::new(dir.path())).expect("writer");
    let block = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi".to_vec();
    let wrong = Record::new(RecordType::Response, block)
        .target_uri("http://127.0.0.1/")
        .and_then(|r| r.content_type("application/http;msgtype=response"))
        .and_then(|r| {
            r.header(
                "WARC-Payload-Digest",
                "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
            )
        })
        .expect("record");
    w.write(&[wrong]).expect("write");
    let path = w.close().expect("close").expect("file");
    let out = warcio::run(&["check", "-v"], &path);
    assert!(
        !out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_post_request_record_holds_the_form_it_sent() {
    let url = Url::parse("http://127.0.0.1/w/api.php").expect("url");
    let sent = headers(&[("Content-Type", "application/x-www-form-urlencoded")]);
    let req = http::request(&HttpRequest {
        url: &url,
        method: "POST",
        headers: &sent,
        body: b"action=query&titles=A|B",
    })
    .expect("request");
    let block = String::from_utf8(req.block().to_vec()).expect("utf-8");
    assert!(
        block.starts_with("POST /w/api.php HTTP/1.1\r\nHost: 127.0.0.1\r\n"),
        "{block}"
    );
    assert!(
        block.ends_with("\r\n\r\naction=query&titles=A|B"),
        "{block}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WarcWriter::new(WriterConfig::new(dir.path())).expect("writer");
    w.write(&[req]).expect("write");
    let path = w.close().expect("close").expect("file");
    assert!(!warcio::check(&path).contains("fail"));
}
