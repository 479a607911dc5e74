//! Running the binary (rip-testkit's [`Stage`]) and reading back its folder.

use rip_testkit::Stage;
pub use rip_testkit::{Ran, files_below, make_read_only, read_json, record, unprivileged_prefix};

/// `prefix… rip-write args…` with `input` on stdin.
pub fn write_with(prefix: &[String], args: &[&str], input: &str) -> Ran {
    Stage::new("rip-write")
        .wrapped_in(prefix)
        .args(args)
        .stdin(input)
        .run()
}

/// `rip-write args…` with `input` on stdin.
pub fn write(args: &[&str], input: &str) -> Ran {
    write_with(&[], args, input)
}

pub const DOC: &str = r#"{"_type":"doc","url":"http://h/items/item-7.html","concept":"item","id":"7","name":"Rope","depth":2,"attempt":0,"price":"3 gp"}"#;
pub const RESOLVED_DOC: &str = r#"{"_type":"doc","url":"http://h/ancestries/77.html","concept":"ancestry","name":"Catfolk","resolves":"http://h/classes/77.html","attempt":1,"errors":[{"code":"httpError.permanent","message":"HTTP 404","operation":"rip-fetch","attempt":1}]}"#;
pub const ERROR: &str = r#"{"_type":"error","url":"http://h/items/item-99.html","errors":[{"code":"httpError.permanent","message":"HTTP 404","operation":"rip-fetch","attempt":1}],"status":404,"category":"PERMANENT","phase":"fetch","attempt":1,"depth":2,"linkText":"Dragonbone Lute"}"#;
pub const EXPECTED: &str = r#"{"_type":"expected","url":"http://h/private/secret.html","reason":"disallowed by robots.txt","source":"robots","attempt":0}"#;
pub const PAGE: &str = r#"{"_type":"page","url":"http://h/items/item-7.html","finalUrl":"http://h/items/item-7.html","status":200,"contentType":"text/html","fetchedAt":"2026-12-01T09:00:00Z","body":"<h1>Rope é</h1>","truncated":false,"attempt":0}"#;
pub const PNG_PAGE: &str = r#"{"_type":"page","url":"http://h/images/logo.png","finalUrl":"http://h/images/logo.png","status":200,"contentType":"image/png","fetchedAt":"2026-12-01T09:00:00Z","body":"iVBORw0KGgo=","bodyEncoding":"base64","truncated":false,"attempt":0}"#;
pub const UNROUTED: &str = r#"{"_type":"failure","url":"http://h/slow.html","status":503,"category":"TRANSIENT","retryable":true,"attempt":1,"phase":"fetch","errors":[{"code":"httpError.transient","message":"HTTP 503","operation":"rip-fetch"}]}"#;

/// Three URLs sharing the readable name `a-b`, and `/c`, which shares it with nobody.
pub const SHARING: [&str; 4] = [
    "http://h/a?b",
    "http://h/a-b",
    "http://other/a-b",
    "http://h/c",
];

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
