//! The writer's files, checked by warcio: every record kind, rotation, a process killed.

use std::path::{Path, PathBuf};

use rip_warc::read::{Item, Limits, read_archive};
use rip_warc::record::RecordType;
use rip_warc::write::http::{self, HttpRequest, HttpResponse, RefersTo};
use rip_warc::write::{Compression, Record, WarcWriter, WriterConfig};
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

/// Every record kind in one file, each written alone so that its offset is known; the
/// records written besides the `warcinfo`.
fn write_every_kind(
    dir: &Path,
    compression: Compression,
) -> (PathBuf, Vec<(RecordType, u64)>, Vec<Record>) {
    let cfg = WriterConfig {
        compression,
        ..WriterConfig::new(dir)
    };
    let mut w = WarcWriter::new(cfg).expect("writer");
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
    (path, expected, records)
}

#[test]
fn warcio_checks_and_indexes_every_record_kind() {
    for (compression, ext) in [
        (Compression::Gzip, ".warc.gz"),
        (Compression::None, ".warc"),
    ] {
        checked_and_indexed(compression, ext);
    }
}

fn checked_and_indexed(compression: Compression, ext: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, expected, _) = write_every_kind(dir.path(), compression);
    let name = path.file_name().and_then(|n| n.to_str()).expect("name");
    assert!(name.starts_with("rip-") && name.ends_with(ext), "{name}");
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
    // warcio's length of an uncompressed record leaves out the two CRLFs that end it.
    let end = if compression == Compression::None {
        4
    } else {
        0
    };
    assert_eq!(
        last.offset + last.length + end,
        len,
        "the last member ends the file"
    );
    assert_eq!(
        index[2].uri.as_deref(),
        Some("http://127.0.0.1:8080/a/page?q=1")
    );
}

/// An uncompressed file (`--warc-compression none`) is the records' bytes one after the
/// other, and reads back as what was written, block for block, as a gzip file does.
#[test]
fn uncompressed_files_read_back_byte_for_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (plain, _, records) = write_every_kind(&dir.path().join("none"), Compression::None);
    let bytes = std::fs::read(&plain).expect("read");
    assert!(
        bytes.starts_with(b"WARC/1.1\r\nWARC-Type: warcinfo\r\n"),
        "not compressed"
    );
    let read_back = |path: &Path| {
        let mut got = Vec::new();
        let file = std::fs::File::open(path).expect("open");
        read_archive(file, &Limits::default(), &mut |item| {
            match item {
                Item::Record(r) => got.push(r),
                Item::Damaged(d) => panic!("{}: {d:?}", path.display()),
            }
            true
        })
        .expect("read");
        got
    };
    let got = read_back(&plain);
    assert_eq!(got.len(), records.len() + 1, "warcinfo first");
    for (r, back) in records.iter().zip(&got[1..]) {
        assert_eq!(back.block, r.block(), "{:?}", r.kind());
        assert_eq!(back.header.get("WARC-Record-ID"), Some(r.id().as_str()));
        assert_eq!(
            back.header.get("WARC-Warcinfo-ID"),
            got[0].header.get("WARC-Record-ID")
        );
        let start = usize::try_from(back.offset).expect("offset");
        let end = start + usize::try_from(back.length).expect("length");
        // A record's length, as warcio's, leaves out the two CRLFs that end it.
        assert!(
            bytes[start..end].starts_with(b"WARC/1.1\r\n")
                && bytes[start..end].ends_with(r.block())
                && bytes[end..].starts_with(b"\r\n\r\n"),
            "{:?}: the record's bytes",
            r.kind()
        );
    }
    assert_eq!(
        got.last().map(|r| r.offset + r.length + 4),
        Some(bytes.len() as u64)
    );
    let (gz, _, gz_records) = write_every_kind(&dir.path().join("gzip"), Compression::Gzip);
    let gz_blocks: Vec<Vec<u8>> = read_back(&gz).into_iter().map(|r| r.block).collect();
    let want: Vec<&[u8]> = gz_records.iter().map(Record::block).collect();
    assert_eq!(
        gz_blocks[1..].iter().map(Vec::as_slice).collect::<Vec<_>>(),
        want
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
