//! Running the binary on a stream (rip-testkit's [`Stage`]) and hand-written records.

use rip_core::Record;
use rip_testkit::Stage;
pub use rip_testkit::{Ran, record};

/// `rip-route args…` with `input` on stdin.
pub fn route(args: &[&str], input: &str) -> Ran {
    Stage::new("rip-route").args(args).stdin(input).run()
}

/// A path under the workspace's `testdata/` folder, as text for a flag.
pub fn testdata(path: &str) -> String {
    rip_testkit::testdata(path).display().to_string()
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
    let Record::Ref(r) = record(ref_line) else {
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
