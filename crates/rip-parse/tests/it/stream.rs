//! The stream guarantees: pass-through byte for byte, input order (or not, with
//! `--unordered`), context carried onto docs and failures, results written while the
//! input is idle, halting, the summary.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::*;

const OTHER: &[&str] = &[
    r#"{"_type":"ref","url":"http://h/r","depth":1,"attempt":0}"#,
    r#"{"_type":"telemetry", "odd" : [1, 2.50, {"x":null}]}"#,
    r#"{"_type":"ledger","stage":"rip-fetch","entered":["http://h/r"]}"#,
    r#"{"_type":"failure","url":"http://h/f","category":"PERMANENT","retryable":false,"attempt":1,"phase":"fetch","errors":[]}"#,
];

/// A page that takes a while to parse when `slow` (many elements), else a tiny one.
fn numbered(i: usize, slow: bool) -> Value {
    let filler = if slow {
        "<p>filler <b>text</b></p>".repeat(4000)
    } else {
        String::new()
    };
    let body = format!("<title>page {i}</title>{filler}");
    page(
        &format!("http://h/{i}"),
        "text/html",
        body.as_bytes(),
        false,
    )
}

fn mixed_input(n: usize) -> (Vec<u8>, Vec<String>) {
    let mut input = Vec::new();
    let mut expected = Vec::new();
    for i in 0..n {
        input.extend(ndjson(&[numbered(i, i % 7 == 0)]));
        expected.push(format!("http://h/{i}"));
        if i % 5 == 0 {
            let other = OTHER[i / 5 % OTHER.len()];
            input.extend_from_slice(other.as_bytes());
            input.push(b'\n');
            expected.push(other.to_owned());
        }
    }
    (input, expected)
}

fn describe(line: &str) -> String {
    let v: Value = serde_json::from_str(line).unwrap();
    if v["_type"] == "doc" {
        v["url"].as_str().unwrap().to_owned()
    } else {
        line.to_owned()
    }
}

/// Each output line but the closing summary, as [`describe`] tells it.
fn described(stdout: &str) -> Vec<String> {
    let lines: Vec<&str> = stdout.lines().collect();
    lines[..lines.len() - 1]
        .iter()
        .map(|l| describe(l))
        .collect()
}

#[test]
fn output_keeps_input_order_and_passes_other_records_through_byte_for_byte() {
    let (input, expected) = mixed_input(120);
    let r = run(&["--threads", "2", "--window", "6"], &input);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(described(&r.stdout), expected);
    let (_, summary) = (r.records(), r.summary());
    assert_eq!(summary.stage, "rip-parse");
    assert_eq!(summary.input.get("page"), Some(&120));
    assert_eq!(summary.output.get("doc"), Some(&120));
    assert_eq!(summary.output.get("telemetry"), Some(&6));
    assert_eq!(summary.counters.get("concept.page"), Some(&120));
}

/// With the default window (128 pages on 2 threads) pages go to the workers in batches
/// of 8 while input is at hand; order and pass-through are as with batches of one.
#[test]
fn pages_sent_in_batches_keep_input_order() {
    let (input, expected) = mixed_input(203);
    for threads in ["1", "2"] {
        let r = run(&["--threads", threads], &input);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(described(&r.stdout), expected, "{threads} threads");
        assert_eq!(r.summary().output.get("doc"), Some(&203));
    }
}

#[test]
fn unordered_writes_everything_once() {
    let (input, expected) = mixed_input(120);
    let r = run(&["--threads", "2", "--unordered"], &input);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let mut got: Vec<String> = lines[..lines.len() - 1]
        .iter()
        .map(|l| describe(l))
        .collect();
    let mut expected = expected;
    got.sort();
    expected.sort();
    assert_eq!(got, expected);
}

#[test]
fn one_thread_and_a_window_of_one_work_too() {
    let (input, expected) = mixed_input(30);
    let r = run(&["--threads", "1", "--window", "1"], &input);
    assert_eq!(described(&r.stdout), expected);
}

#[test]
fn context_attempt_and_error_history_stay_on_docs_and_failures() {
    let history = json!([{"code":"httpError.transient","message":"HTTP 503","operation":"rip-fetch","attempt":1}]);
    let context = |mut p: Value| {
        p["depth"] = json!(3);
        p["parent"] = json!("http://h/list");
        p["linkText"] = json!("Item 7");
        p["raw"] = json!({"price": "12 gp", "row": [1, 2]});
        p["title"] = json!("Item_7");
        p["resolves"] = json!("http://h/old/7");
        p["attempt"] = json!(1);
        p["httpAttempts"] = json!(2);
        p["errors"] = history.clone();
        p
    };
    let ok = context(page(
        "http://h/7",
        "text/html",
        b"<title>Seven</title>",
        false,
    ));
    let bad = context(page(
        "http://h/8",
        "text/html",
        format!("<body>{}", "<div>".repeat(3000)).as_bytes(),
        false,
    ));
    let r = run(&[], &ndjson(&[ok, bad]));
    let out = r.values();
    for v in &out {
        assert_eq!(v["depth"], 3);
        assert_eq!(v["parent"], "http://h/list");
        assert_eq!(v["linkText"], "Item 7");
        assert_eq!(v["raw"], json!({"price": "12 gp", "row": [1, 2]}));
        assert_eq!(v["title"], "Item_7");
        assert_eq!(v["resolves"], "http://h/old/7");
        assert_eq!(v["httpAttempts"], 2);
        assert_eq!(v["errors"][0], history[0]);
    }
    assert_eq!(
        (
            out[0]["_type"].as_str(),
            out[0]["attempt"].as_u64(),
            out[0]["name"].as_str()
        ),
        (Some("doc"), Some(1), Some("Seven"))
    );
    assert_eq!(out[0]["errors"].as_array().unwrap().len(), 1);
    // A failure's attempt is its 1-based round: the page came from round 2.
    assert_eq!(
        (out[1]["_type"].as_str(), out[1]["attempt"].as_u64()),
        (Some("failure"), Some(2))
    );
    assert_eq!(out[1]["errors"].as_array().unwrap().len(), 2);
    assert_eq!(out[1]["errors"][1]["attempt"], 2);
    assert_eq!(out[1]["status"], 200);
    assert_eq!(out[1]["finalUrl"], "http://h/8");
}

#[test]
fn docs_are_written_while_the_input_is_idle() {
    let mut child = rip_testkit::Stage::new("rip-parse")
        .args(["--threads", "2"])
        .command()
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(&ndjson(&[numbered(1, false), numbered(2, true)]))
        .unwrap();
    stdin.flush().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let started = Instant::now();
    for want in ["http://h/1", "http://h/2"] {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["url"], want);
    }
    assert!(started.elapsed() < Duration::from_secs(20));
    drop(stdin); // only now does the input end
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(rest.starts_with("{\"_type\":\"summary\""), "{rest}");
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn on_schema_error_halt_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("halt.toml");
    std::fs::write(
        &rules,
        r#"
[[concept]]
name = "thing"
match.url = '/t/'
fields.n = { selector = "p.n", type = "integer" }
schema = { type = "object", properties.n = { maximum = 10 } }
onSchemaError = "halt"
"#,
    )
    .unwrap();
    let page_n = |i: usize, n: usize| {
        page(
            &format!("http://h/t/{i}"),
            "text/html",
            format!("<p class=n>{n}</p>").as_bytes(),
            false,
        )
    };
    let mut pages = vec![page_n(1, 5), page_n(2, 50)];
    pages.extend((3..200).map(|i| page_n(i, 1)));
    let r = run(
        &[
            "--rules",
            rules.to_str().unwrap(),
            "--threads",
            "1",
            "--window",
            "1",
        ],
        &ndjson(&pages),
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("halted at http://h/t/2"), "{}", r.stderr);
    let (records, summary) = (r.records(), r.summary());
    let urls: Vec<&str> = records.iter().filter_map(|r| r.url()).collect();
    assert_eq!(
        urls,
        ["http://h/t/1", "http://h/t/2"],
        "nothing after the halt"
    );
    let v = serde_json::to_value(&records[1]).unwrap();
    assert_eq!(
        (v["_type"].as_str(), v["category"].as_str()),
        (Some("failure"), Some("VALIDATION"))
    );
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("/n: 50 is greater than the maximum of 10"),
        "{v}"
    );
    assert_eq!(summary.status, rip_core::Status::Failed);
    assert!(summary.notes[0].contains("halted at http://h/t/2"));
}

#[test]
fn on_schema_error_skip_makes_a_validation_failure_and_the_rest_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("skip.toml");
    std::fs::write(
        &rules,
        "[[concept]]\nname = \"thing\"\nmatch.url = '/t/'\nfields.n = { selector = \"p.n\", type = \"integer\" }\n\
         schema = { required = [\"n\"] }\n",
    )
    .unwrap();
    let pages = [
        page("http://h/t/1", "text/html", b"<p class=n>1</p>", false),
        page("http://h/t/2", "text/html", b"<p>none</p>", false),
        page("http://h/t/3", "text/html", b"<p class=n>3</p>", false),
    ];
    let r = run(&["--rules", rules.to_str().unwrap()], &ndjson(&pages));
    assert_eq!(r.code, 2);
    let out = r.values();
    assert_eq!(
        out.iter()
            .map(|v| v["_type"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["doc", "failure", "doc"]
    );
    assert_eq!(out[1]["errors"][0]["code"], "parse.schema");
    assert!(
        r.stderr.contains("1 failures"),
        "summary line: {}",
        r.stderr
    );
}

#[test]
fn a_generic_doc_without_links_has_an_empty_list_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("any.schema.json");
    std::fs::write(&schema, "{}").unwrap();
    let schema = schema.to_str().unwrap();
    let with_one = page(
        "http://h/one",
        "text/html",
        b"<title>One</title><p>see <a href=/b>b</a></p>",
        false,
    );
    let without = page(
        "http://h/none",
        "text/html",
        b"<title>None</title><p>no links</p>",
        false,
    );
    let input = ndjson(&[with_one, without]);
    // The streaming pass, a tree, Markdown, and a doc made whole for a schema.
    for args in [
        vec![],
        vec!["--no-stream"],
        vec!["--markdown"],
        vec!["--output-schema", schema],
    ] {
        let r = run(&args, &input);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        let docs: Vec<Value> = r
            .values()
            .into_iter()
            .filter(|v| v["_type"] == "doc")
            .collect();
        assert_eq!(docs[0]["links"][0]["href"], "http://h/b", "{args:?}");
        assert_eq!(docs[1]["links"], json!([]), "{args:?}: {}", docs[1]);
        let line = r
            .lines()
            .iter()
            .find(|l| l.contains("http://h/none"))
            .unwrap();
        assert_eq!(line.matches("\"links\"").count(), 1, "{line}");
    }
}
