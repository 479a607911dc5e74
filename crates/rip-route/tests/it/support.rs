//! Running the binary on a stream and reading its output back with rip-core types.

use rip_core::{Line, Record, Summary};
use std::io::Write;
use std::process::{Command, Stdio};

/// The `rip-route` binary (build it first: `cargo build --workspace --bins`; `make test` does).
pub fn bin() -> std::path::PathBuf {
    rip_testkit::bin("rip-route")
}

pub struct Run {
    pub code: i32,
    pub lines: Vec<String>,
    pub records: Vec<Record>,
    pub summary: Summary,
    pub stderr: String,
}

impl Run {
    /// Records of one kind (the closing summary excluded).
    pub fn of(&self, kind: &str) -> Vec<&Record> {
        self.records
            .iter()
            .filter(|r| r.kind().as_str() == kind)
            .collect()
    }
}

pub fn route(args: &[&str], input: &str) -> Run {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let mut lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
    let last = lines
        .pop()
        .unwrap_or_else(|| panic!("no output; stderr: {stderr}"));
    let summary = match decode(&last) {
        Record::Summary(s) => s,
        other => panic!("last line is not a summary: {other:?}"),
    };
    let records = lines
        .iter()
        .filter_map(|l| Line::from_text(l.clone()).ok()?.decode().ok())
        .collect();
    Run {
        code: out.status.code().unwrap_or(-1),
        lines,
        records,
        summary,
        stderr,
    }
}

pub fn decode(line: &str) -> Record {
    Line::from_text(line.to_owned())
        .unwrap_or_else(|e| panic!("{e}: {line}"))
        .decode()
        .unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// The workspace's `testdata/` folder.
pub fn testdata(path: &str) -> String {
    format!("{}/../../testdata/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// A fetch failure of `url` in `round` as rip-fetch writes it.
pub fn failure(url: &str, status: u16, round: u32) -> String {
    let (category, retryable, code) = match status {
        429 => ("THROTTLED", true, "httpError.throttled"),
        500..=599 => ("TRANSIENT", true, "httpError.transient"),
        _ => ("PERMANENT", false, "httpError.permanent"),
    };
    serde_json::json!({
        "_type": "failure", "url": url, "status": status, "category": category,
        "retryable": retryable, "attempt": round, "httpAttempts": 1, "phase": "fetch",
        "depth": 2, "parent": "http://h/classes/", "linkText": "Catfolk",
        "errors": [{"code": code, "message": format!("HTTP {status}"), "operation": "rip-fetch", "attempt": round}],
        "failedAt": "2026-12-01T09:00:00Z"
    })
    .to_string()
}

/// What a rip-fetch would write for a ref line: a page (200) or a failure.
pub fn fetched(ref_line: &str, status: u16) -> String {
    let Record::Ref(r) = decode(ref_line) else {
        panic!("not a ref: {ref_line}")
    };
    let mut v = serde_json::to_value(&r).unwrap();
    let obj = v.as_object_mut().unwrap();
    obj.insert("_type".into(), "page".into());
    if status == 200 {
        obj.insert("finalUrl".into(), r.url.clone().into());
        obj.insert("status".into(), 200.into());
        obj.insert("fetchedAt".into(), "2026-12-01T09:00:01Z".into());
        obj.insert("body".into(), format!("<h1>{}</h1>", r.url).into());
        obj.insert("truncated".into(), false.into());
        obj.remove("notBefore");
        return v.to_string();
    }
    let round = r.attempt + 1;
    let mut f: serde_json::Value = serde_json::from_str(&failure(&r.url, status, round)).unwrap();
    let fo = f.as_object_mut().unwrap();
    let mut errors = r.errors.clone();
    errors.push(serde_json::from_value(fo["errors"][0].clone()).unwrap());
    fo.insert("errors".into(), serde_json::to_value(errors).unwrap());
    if let Some(res) = &r.context.resolves {
        fo.insert("resolves".into(), res.clone().into());
    }
    f.to_string()
}

/// The URL a terminal record accounts for: `resolves` when set, else `url`.
pub fn accounts_for(r: &Record) -> Option<String> {
    let (url, resolves) = match r {
        Record::Doc(d) => (&d.url, &d.context.resolves),
        Record::Error(e) => (&e.url, &e.context.resolves),
        Record::Expected(e) => (&e.url, &e.context.resolves),
        Record::Page(p) => (&p.url, &p.context.resolves),
        _ => return None,
    };
    Some(resolves.clone().unwrap_or_else(|| url.clone()))
}
