//! The request log: one [`RequestRecord`] per request, in arrival order.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// One request as the server saw it. Serialized as one compact JSON object (the NDJSON log
/// line and the items of `GET /__rip/log`):
///
/// ```json
/// {"seq":0,"connection":0,"elapsed_us":1520,"time":"2026-12-01T10:00:00.001520Z",
///  "method":"GET","target":"/p?x=1","path":"/p","query":"x=1","host":"127.0.0.1:8080",
///  "headers":{"accept":"*/*","host":"127.0.0.1:8080","user-agent":"ripperoni/0.1"},
///  "peer":"127.0.0.1:50312","status":200,"fault":"respond","rule":0}
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Arrival order on this server, from 0.
    pub seq: u64,
    /// Which connection carried it (numbered from 0 in accept order): equal numbers mean a
    /// reused keep-alive connection.
    pub connection: u64,
    /// Monotonic arrival time since the server started (tokio's clock, so it follows
    /// `tokio::time::pause` when the server runs on the test's runtime). Serialized as
    /// `elapsed_us`, whole microseconds.
    #[serde(rename = "elapsed_us", with = "micros")]
    pub elapsed: Duration,
    /// Wall-clock arrival time, serialized as RFC 3339 with microseconds, UTC.
    #[serde(with = "rfc3339")]
    pub time: SystemTime,
    /// `GET`, `HEAD`, ...
    pub method: String,
    /// The request target as sent, in origin form: path and query.
    pub target: String,
    /// The path part of the target, still percent-encoded.
    pub path: String,
    /// The query part, without `?`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The `Host` header, with its port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Request headers, names in lower case; repeated headers are joined with `, `.
    pub headers: BTreeMap<String, String>,
    /// The client's address.
    pub peer: SocketAddr,
    /// The status sent, or `None` when the connection was reset or closed without a response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// What the server did: `respond`, `reset`, `close`, `stall` or `short_body`.
    pub fault: String,
    /// The index of the plan rule that chose the answer, if any matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<usize>,
}

impl RequestRecord {
    /// A request header by name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    /// The host name from `Host`, without the port, in lower case (`localhost`,
    /// `127.0.0.1`, `[::1]`).
    pub fn host_name(&self) -> Option<String> {
        self.host.as_deref().map(host_without_port)
    }

    /// Whether this request matches a pattern the way [`count`](crate::TestServer::count)
    /// does: a pattern with `?` is compared with the whole target, one without with the path.
    pub fn matches(&self, pattern: &str) -> bool {
        if pattern.contains('?') {
            self.target == pattern
        } else {
            self.path == pattern
        }
    }
}

/// `Host` header value without its port, in lower case.
pub(crate) fn host_without_port(host: &str) -> String {
    let host = host.trim();
    let name = if host.starts_with('[') {
        host.split_inclusive(']').next().unwrap_or(host)
    } else {
        host.rsplit_once(':').map_or(host, |(name, _)| name)
    };
    name.to_ascii_lowercase()
}

/// The smallest gap between successive arrivals among `records` (taken in `elapsed` order),
/// or `None` for fewer than two records. Filter first to check one host or one path:
/// `min_gap(log.iter().filter(|r| r.host_name().as_deref() == Some("localhost")))`.
pub fn min_gap<'a>(records: impl IntoIterator<Item = &'a RequestRecord>) -> Option<Duration> {
    gaps(records).into_iter().min()
}

/// The gaps between successive arrivals among `records`, in `elapsed` order.
pub fn gaps<'a>(records: impl IntoIterator<Item = &'a RequestRecord>) -> Vec<Duration> {
    let mut times: Vec<Duration> = records.into_iter().map(|r| r.elapsed).collect();
    times.sort_unstable();
    times.windows(2).map(|w| w[1] - w[0]).collect()
}

/// The shared log: records, an optional NDJSON file, and a counter to wait on.
pub(crate) struct RequestLog {
    inner: Mutex<Inner>,
    /// Total number of records pushed (never decreases, even when cleared).
    pushed: watch::Sender<u64>,
}

struct Inner {
    records: Vec<RequestRecord>,
    next_seq: u64,
    file: Option<BufWriter<File>>,
}

impl RequestLog {
    pub fn new(file: Option<File>) -> Self {
        RequestLog {
            inner: Mutex::new(Inner {
                records: Vec::new(),
                next_seq: 0,
                file: file.map(BufWriter::new),
            }),
            pushed: watch::Sender::new(0),
        }
    }

    /// Appends a record, giving it its `seq`, and writes its NDJSON line (flushed).
    pub fn push(&self, mut record: RequestRecord) {
        {
            let mut inner = lock(&self.inner);
            record.seq = inner.next_seq;
            inner.next_seq += 1;
            if let Some(file) = &mut inner.file {
                // The log file is best effort: a full disk must not stop the server.
                if let Ok(line) = serde_json::to_string(&record) {
                    let _ = writeln!(file, "{line}").and_then(|()| file.flush());
                }
            }
            inner.records.push(record);
        }
        self.pushed.send_modify(|n| *n += 1);
    }

    pub fn snapshot(&self) -> Vec<RequestRecord> {
        lock(&self.inner).records.clone()
    }

    pub fn filtered(&self, keep: impl Fn(&RequestRecord) -> bool) -> Vec<RequestRecord> {
        lock(&self.inner)
            .records
            .iter()
            .filter(|r| keep(r))
            .cloned()
            .collect()
    }

    pub fn count(&self, keep: impl Fn(&RequestRecord) -> bool) -> usize {
        lock(&self.inner).records.iter().filter(|r| keep(r)).count()
    }

    /// Forgets the records (the file keeps its lines; `seq` keeps counting).
    pub fn clear(&self) {
        lock(&self.inner).records.clear();
        self.pushed.send_modify(|_| {});
    }

    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.pushed.subscribe()
    }
}

/// Locks a mutex, recovering from poisoning (a panicking test thread must not take the
/// server down with it).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

mod micros {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_micros)
    }
}

mod rfc3339 {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_rfc3339_micros(*t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_rfc3339(&text).map_err(D::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(elapsed_ms: u64, target: &str, host: &str) -> RequestRecord {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
            None => (target.to_owned(), None),
        };
        RequestRecord {
            seq: 0,
            connection: 0,
            elapsed: Duration::from_millis(elapsed_ms),
            time: SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456),
            method: "GET".into(),
            target: target.into(),
            path,
            query,
            host: Some(host.into()),
            headers: BTreeMap::from([("user-agent".into(), "t".into())]),
            peer: "127.0.0.1:5000".parse().unwrap(),
            status: Some(200),
            fault: "respond".into(),
            rule: None,
        }
    }

    #[test]
    fn round_trips_as_compact_json() {
        let r = record(12, "/p?x=1", "127.0.0.1:80");
        let line = serde_json::to_string(&r).unwrap();
        assert!(line.contains("\"elapsed_us\":12000"), "{line}");
        assert!(
            line.contains("\"time\":\"2023-11-14T22:13:20.123456Z\""),
            "{line}"
        );
        assert!(!line.contains("\"rule\""), "{line}");
        assert_eq!(serde_json::from_str::<RequestRecord>(&line).unwrap(), r);
    }

    #[test]
    fn matching_and_gaps() {
        let log = [
            record(0, "/a", "localhost:1"),
            record(250, "/a?x", "127.0.0.1:1"),
            record(100, "/b", "LOCALHOST:1"),
        ];
        assert!(log[1].matches("/a"));
        assert!(log[1].matches("/a?x"));
        assert!(!log[0].matches("/a?x"));
        assert_eq!(min_gap(&log), Some(Duration::from_millis(100)));
        assert_eq!(
            gaps(&log),
            vec![Duration::from_millis(100), Duration::from_millis(150)]
        );
        let local = log
            .iter()
            .filter(|r| r.host_name().as_deref() == Some("localhost"));
        assert_eq!(min_gap(local), Some(Duration::from_millis(100)));
        assert_eq!(min_gap(&log[..1]), None);
        assert_eq!(log[0].header("User-Agent"), Some("t"));
    }

    #[test]
    fn host_names() {
        assert_eq!(host_without_port("LocalHost:8080"), "localhost");
        assert_eq!(host_without_port("127.0.0.1"), "127.0.0.1");
        assert_eq!(host_without_port("[::1]:80"), "[::1]");
    }
}
