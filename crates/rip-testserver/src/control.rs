//! The control endpoints under `/__rip/`, for other processes. They are not logged and no
//! fault applies to them.

use crate::http::{RequestHead, ResponseHead, percent_decode};
use crate::shared::Shared;

/// The response head and body for a control request.
pub(crate) fn answer(shared: &Shared, req: &RequestHead) -> (ResponseHead, Vec<u8>) {
    let name = req
        .path
        .strip_prefix(crate::CONTROL_PREFIX)
        .unwrap_or_default();
    let pattern = query_param(req.query.as_deref(), "path");
    let json = |value: serde_json::Value| {
        let mut head = ResponseHead::new(200);
        head.push("Content-Type", "application/json");
        (head, value.to_string().into_bytes())
    };
    match name {
        "log" => {
            let records = match &pattern {
                Some(p) => shared.log.filtered(|r| r.matches(p)),
                None => shared.log.snapshot(),
            };
            let mut head = ResponseHead::new(200);
            head.push("Content-Type", "application/json");
            // Serializing plain structs into a Vec cannot fail.
            let body = serde_json::to_vec(&records).unwrap_or_default();
            (head, body)
        }
        "count" => {
            let count = match &pattern {
                Some(p) => shared.log.count(|r| r.matches(p)),
                None => shared.log.count(|_| true),
            };
            json(serde_json::json!({ "count": count }))
        }
        "clear" => {
            shared.log.clear();
            json(serde_json::json!({ "cleared": true }))
        }
        "health" => json(serde_json::json!({ "ok": true, "addr": shared.addr })),
        _ => {
            let mut head = ResponseHead::new(404);
            head.push("Content-Type", "text/plain; charset=utf-8");
            (
                head,
                b"unknown control endpoint: try /__rip/log, /__rip/count, /__rip/clear, /__rip/health\n"
                    .to_vec(),
            )
        }
    }
}

/// The percent-decoded value of a query parameter (`+` is not a space here).
fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .and_then(|(_, value)| percent_decode(value))
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_params() {
        assert_eq!(
            query_param(Some("a=1&path=%2Fp%3Fx%3D1"), "path").as_deref(),
            Some("/p?x=1")
        );
        assert_eq!(query_param(Some("path"), "path"), None);
        assert_eq!(query_param(None, "path"), None);
    }
}
