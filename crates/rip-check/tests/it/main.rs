//! The stream guarantees every stage shares, shown on `rip-check`: pass-through byte for
//! byte, malformed lines reported by number with the rest processed, exit codes, and a
//! quiet exit 0 when the reader downstream goes away.

mod plain_urls;

use rip_core::{Kind, Line, Status};
use rip_testkit::{Ran, Stage};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;

/// `rip-check args…` with `input` on stdin.
fn run(args: &[&str], input: &str) -> Ran {
    Stage::new("rip-check").args(args).stdin(input).run()
}

const MIXED: &str = concat!(
    r#"{"_type":"ref","url":"http://h/a","depth":0,"attempt":0}"#,
    "\n",
    r#"{"_type":"ledger","stage":"rip-x","entered":["http://h/a"],"weird":[1,2,{"deep":true}],"n":1.50}"#,
    "\n",
    r#"{"_type":"page","url":"http://h/a","finalUrl":"http://h/a","status":200,"fetchedAt":"2026-12-01T09:00:00Z","body":"<p>é ✓</p>","truncated":false,"futureField":{"x":1},"attempt":0}"#,
    "\n",
    r#"{ "_type" : "doc" , "url":"http://h/a","concept":"item","name":"A","price":3}"#,
    "\n",
    r#"{"_type":"expected","url":"http://h/p","reason":"disallowed by robots.txt","zzz":null}"#,
    "\n",
);

#[test]
fn unknown_fields_pass_through_byte_for_byte() {
    let r = run(&[], MIXED);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "");
    let summary = r.summary();
    let input: Vec<&str> = MIXED.lines().collect();
    assert_eq!(r.lines(), input);
    assert_eq!(summary.stage, "rip-check");
    assert_eq!(summary.status, Status::Complete);
    assert_eq!(summary.input.values().sum::<u64>(), 5);
    assert_eq!(summary.output.get("ledger"), Some(&1));
}

#[test]
fn an_unknown_kind_and_urls_that_are_not_http_are_contract_breaks_named_by_line_and_field() {
    let breaks = [
        r#"{"_type":"telemetry","url":"http://h/t"}"#,
        r#"{"_type":"ref","url":"not a url","depth":0,"attempt":0}"#,
        r#"{"_type":"ref","url":"ftp://h/file.txt","depth":0,"attempt":0}"#,
        r#"{"_type":"ref","url":"http://h/b","parent":"/relative.html","depth":1,"attempt":0}"#,
        r#"{"_type":"page","url":"http://h/a","finalUrl":"ftp://h/a","status":200,"fetchedAt":"2026-12-01T09:00:00Z","body":"","truncated":false,"attempt":0}"#,
        r#"{"_type":"ledger","stage":"rip-fetch","entered":["http://h/a","mailto:x@h"]}"#,
    ];
    let input: Vec<&str> = MIXED.lines().chain(breaks).collect();
    let r = run(&[], &(input.join("\n") + "\n"));
    assert_eq!(r.code, 2, "partial: {}", r.stderr);
    let errors: Vec<&str> = r.stderr.lines().collect();
    let expected = [
        "-:6: unknown record kind in field `_type`: `telemetry`",
        "-:7: bad `ref` record: field `url`: `not a url` is not a URL",
        "-:8: bad `ref` record: field `url`: `ftp://h/file.txt` is a `ftp` URL, not http(s)",
        "-:9: bad `ref` record: field `parent`: `/relative.html` is not a URL",
        "-:10: bad `page` record: field `finalUrl`: `ftp://h/a` is a `ftp` URL",
        "-:11: bad `ledger` record: field `entered`: `mailto:x@h` is a `mailto` URL",
    ];
    assert_eq!(errors.len(), expected.len(), "{}", r.stderr);
    for (line, start) in errors.iter().zip(expected) {
        assert!(line.starts_with(start), "{line}\nnot: {start}");
    }
    assert_eq!(
        r.lines(),
        MIXED.lines().collect::<Vec<_>>(),
        "the good lines, the bad ones dropped"
    );
    assert_eq!(r.summary().bad_lines, 6);
}

#[test]
fn a_malformed_line_is_reported_by_number_and_the_rest_is_processed() {
    let mut input: Vec<&str> = MIXED.lines().collect();
    input.insert(2, r#"{"_type":"ref","url":"http://h/b""#); // truncated object: line 3
    input.insert(4, r#"{"_type":"page","url":"http://h/c"}"#); // a page without its fields: line 5
    let text = input.join("\n") + "\n";
    let r = run(&["--input", "-"], &text);
    assert_eq!(r.code, 2, "partial");
    let errors: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(errors.len(), 2, "{}", r.stderr);
    assert!(errors[0].starts_with("-:3: not JSON"), "{}", errors[0]);
    assert!(
        errors[1].starts_with("-:5: bad `page` record: missing field"),
        "{}",
        errors[1]
    );
    let summary = r.summary();
    assert_eq!(
        r.lines(),
        MIXED.lines().collect::<Vec<_>>(),
        "every good line, in order"
    );
    assert_eq!(summary.bad_lines, 2);
    assert_eq!(summary.status, Status::Partial);
}

#[test]
fn an_input_file_is_named_in_messages_and_strict_stops() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.ndjson");
    std::fs::write(&path, format!("{MIXED}[1]\n{MIXED}")).unwrap();
    let r = run(&["--input", path.to_str().unwrap()], "");
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with(&format!("{}:6: not a JSON object", path.display())),
        "{}",
        r.stderr
    );
    assert_eq!(r.lines().len(), 10);

    let r = run(&["--strict", "--input", path.to_str().unwrap()], "");
    assert_eq!(r.code, 1, "strict makes a bad line fatal");
    assert!(r.stderr.contains(":6: not a JSON object"), "{}", r.stderr);
    assert_eq!(
        r.stdout.lines().count(),
        5,
        "the lines before it were written"
    );
}

#[test]
fn missing_input_file_is_a_fatal_error_naming_it() {
    let r = run(&["--input", "/nonexistent/records.ndjson"], "");
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("/nonexistent/records.ndjson"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_reader_that_goes_away_ends_the_stage_quietly_with_zero() {
    // As in `rip-check < big | head -1`: read one line, close the pipe.
    let mut child = Stage::new("rip-check")
        .command()
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let line = format!("{}\n", r#"{"_type":"ref","url":"http://h/a"}"#);
        for _ in 0..200_000 {
            if stdin.write_all(line.as_bytes()).is_err() {
                break;
            }
        }
    });
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(
        Line::from_text(first.trim_end()).unwrap().kind(),
        &Kind::Ref
    );
    drop(stdout);
    let status = child.wait().unwrap();
    writer.join().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(stderr, "", "no error message on a broken pipe");
}

#[test]
fn output_is_flushed_while_input_is_still_open() {
    // A downstream stage must not starve while this one waits for more input.
    let mut child = Stage::new("rip-check")
        .command()
        .stdin(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"_type\":\"ref\",\"url\":\"http://h/a\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap(); // would hang if output waited for end of input
    assert!(first.contains("http://h/a"));
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
