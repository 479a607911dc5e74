//! Running the binary and reading back its stdout and its folder.

use rip_core::{Line, Record, Summary};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The `rip-write` binary (build it first: `cargo build --workspace --bins`; `make test` does).
pub fn bin() -> std::path::PathBuf {
    rip_testkit::bin("rip-write")
}

pub struct Run {
    pub code: i32,
    pub lines: Vec<String>,
    pub records: Vec<Record>,
    pub summary: Summary,
    pub stderr: String,
}

/// Runs `prefix… rip-write args…` with `input` on stdin.
pub fn write_with(prefix: &[String], args: &[&str], input: &str) -> Run {
    let mut cmd = match prefix.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(bin());
            c
        }
        None => Command::new(bin()),
    };
    let mut child = cmd
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
    let Record::Summary(summary) = decode(&last) else {
        panic!("last line is not a summary: {last}")
    };
    // Known kinds only (unknown ones pass through and are compared as lines).
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

pub fn write(args: &[&str], input: &str) -> Run {
    write_with(&[], args, input)
}

pub fn decode(line: &str) -> Record {
    Line::from_text(line.to_owned())
        .unwrap_or_else(|e| panic!("{e}: {line}"))
        .decode()
        .unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// Every file under `dir`, relative, sorted.
pub fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

pub fn read_json(path: PathBuf) -> serde_json::Value {
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// How to run a process that cannot write into a 0555 folder, even as root: root in the
/// init namespace ignores permissions, but root inside a new user namespace does not.
/// `None` when this machine can do neither.
pub fn unprivileged_prefix() -> Option<Vec<String>> {
    let uid = Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some(Vec::new());
    }
    let ok = Command::new("unshare")
        .args(["--user", "true"])
        .status()
        .ok()?
        .success();
    ok.then(|| vec!["unshare".to_owned(), "--user".to_owned()])
}

/// Makes `dir` read-only (0555).
pub fn make_read_only(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
}

pub const DOC: &str = r#"{"_type":"doc","url":"http://h/items/item-7.html","concept":"item","id":"7","name":"Rope","depth":2,"attempt":0,"price":"3 gp"}"#;
pub const RESOLVED_DOC: &str = r#"{"_type":"doc","url":"http://h/ancestries/77.html","concept":"ancestry","name":"Catfolk","resolves":"http://h/classes/77.html","attempt":1,"errors":[{"code":"httpError.permanent","message":"HTTP 404","operation":"rip-fetch","attempt":1}]}"#;
pub const ERROR: &str = r#"{"_type":"error","url":"http://h/items/item-99.html","errors":[{"code":"httpError.permanent","message":"HTTP 404","operation":"rip-fetch","attempt":1}],"status":404,"category":"PERMANENT","phase":"fetch","attempt":1,"depth":2,"linkText":"Dragonbone Lute"}"#;
pub const EXPECTED: &str = r#"{"_type":"expected","url":"http://h/private/secret.html","reason":"disallowed by robots.txt","source":"robots","attempt":0}"#;
pub const PAGE: &str = r#"{"_type":"page","url":"http://h/items/item-7.html","finalUrl":"http://h/items/item-7.html","status":200,"contentType":"text/html","fetchedAt":"2026-12-01T09:00:00Z","body":"<h1>Rope é</h1>","truncated":false,"attempt":0}"#;
pub const PNG_PAGE: &str = r#"{"_type":"page","url":"http://h/images/logo.png","finalUrl":"http://h/images/logo.png","status":200,"contentType":"image/png","fetchedAt":"2026-12-01T09:00:00Z","body":"iVBORw0KGgo=","bodyEncoding":"base64","truncated":false,"attempt":0}"#;
pub const UNROUTED: &str = r#"{"_type":"failure","url":"http://h/slow.html","status":503,"category":"TRANSIENT","retryable":true,"attempt":1,"phase":"fetch","errors":[{"code":"httpError.transient","message":"HTTP 503","operation":"rip-fetch"}]}"#;

pub fn all_kinds() -> String {
    [
        DOC,
        RESOLVED_DOC,
        ERROR,
        EXPECTED,
        PAGE,
        PNG_PAGE,
        UNROUTED,
        r#"{"_type":"telemetry","x":1}"#,
    ]
    .join("\n")
        + "\n"
}
