//! The on-disk response cache, shared by every stage and process using one folder.
//!
//! One file per URL at `<dir>/v1/<aa>/<sha256(url)>`: a JSON line of metadata (URL, final
//! URL, status, headers, redirects, validators, when stored, body length and SHA-256),
//! then the body bytes. Writers write a temporary file in the same folder and rename it
//! over the entry, so a reader sees an old entry or a new one, never half of one; several
//! processes may fill one cache at once. An entry whose metadata does not parse, whose URL
//! differs, or whose body does not match its length and hash is *corrupt*: a miss,
//! reported, never a crash.
//!
//! The cache stores final successes (2xx) only; failures are data for the next round, not
//! something to replay.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The metadata line of an entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheMeta {
    /// The requested URL (the key).
    pub url: String,
    /// Where redirects led.
    pub final_url: String,
    /// The final status.
    pub status: u16,
    /// Response headers, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The redirect chain.
    #[serde(default)]
    pub redirects: Vec<String>,
    /// When the response was fetched.
    pub fetched_at: DateTime<Utc>,
    /// When the entry was stored or last revalidated (Unix ms): freshness counts from here.
    pub stored_at_ms: u64,
    /// The `ETag`, for `If-None-Match`.
    #[serde(default)]
    pub etag: Option<String>,
    /// The `Last-Modified`, for `If-Modified-Since`.
    #[serde(default)]
    pub last_modified: Option<String>,
    /// The body was cut at the size limit.
    #[serde(default)]
    pub truncated: bool,
    /// Body length in bytes.
    pub body_len: u64,
    /// Body SHA-256, hex.
    pub body_sha256: String,
}

/// A cache entry read back.
#[derive(Debug, Clone)]
pub struct CacheEntry {
    /// Its metadata.
    pub meta: CacheMeta,
    /// Its body.
    pub body: Bytes,
}

impl CacheEntry {
    /// True when stored less than `ttl` ago (always, without a TTL).
    pub fn is_fresh(&self, ttl: Option<Duration>) -> bool {
        match ttl {
            None => true,
            Some(ttl) => now_ms().saturating_sub(self.meta.stored_at_ms) < ttl.as_millis() as u64,
        }
    }

    /// True when the response had a validator to revalidate with.
    pub fn has_validators(&self) -> bool {
        self.meta.etag.is_some() || self.meta.last_modified.is_some()
    }
}

/// The result of a lookup.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per lookup, consumed at once
pub enum Lookup {
    /// An entry (fresh or not: the caller checks).
    Hit(CacheEntry),
    /// Nothing stored.
    Miss,
    /// Something stored, but unusable; the message says why.
    Corrupt(String),
}

/// The cache folder.
#[derive(Debug, Clone)]
pub struct DiskCache {
    root: PathBuf,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

impl DiskCache {
    /// A cache under `dir` (entries in `dir/v1/`).
    pub fn new(dir: impl AsRef<Path>) -> Self {
        Self {
            root: dir.as_ref().join("v1"),
        }
    }

    /// The file of `url`'s entry.
    pub fn path_for(&self, url: &str) -> PathBuf {
        let key = hex(&Sha256::digest(url.as_bytes()));
        self.root.join(&key[..2]).join(key)
    }

    /// Reads `url`'s entry.
    pub fn get(&self, url: &str) -> Lookup {
        let path = self.path_for(url);
        let data = match std::fs::read(&path) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Lookup::Miss,
            Err(e) => return Lookup::Corrupt(format!("{}: {e}", path.display())),
        };
        match parse_entry(url, &data) {
            Ok(entry) => Lookup::Hit(entry),
            Err(why) => Lookup::Corrupt(format!("{}: {why}", path.display())),
        }
    }

    /// Stores an entry for `meta.url` atomically (temporary file, then rename). `meta`'s
    /// body length and hash are filled in here.
    pub fn put(&self, mut meta: CacheMeta, body: &[u8]) -> io::Result<()> {
        meta.body_len = body.len() as u64;
        meta.body_sha256 = hex(&Sha256::digest(body));
        let path = self.path_for(&meta.url);
        let dir = path.parent().expect("entry paths have a parent");
        let tmp = dir.join(format!(
            ".tmp.{}.{:016x}",
            std::process::id(),
            fastrand::u64(..)
        ));
        // One buffer, one write: the metadata line, then the body.
        let mut data = serde_json::to_vec(&meta).map_err(io::Error::other)?;
        data.reserve(body.len() + 1);
        data.push(b'\n');
        data.extend_from_slice(body);
        // The entry's folder is made when a write finds it missing (the first write to
        // it, or after it was removed), not asked for on every write.
        let create = || match std::fs::File::create(&tmp) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir)?;
                std::fs::File::create(&tmp)
            }
            other => other,
        };
        let result = (|| {
            let mut f = create()?;
            f.write_all(&data)?;
            drop(f);
            std::fs::rename(&tmp, &path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
    }

    /// Marks `url`'s entry fresh again after a `304 Not Modified`.
    pub fn refresh(&self, entry: &CacheEntry) -> io::Result<()> {
        let mut meta = entry.meta.clone();
        meta.stored_at_ms = now_ms();
        self.put(meta, &entry.body)
    }
}

fn parse_entry(url: &str, data: &[u8]) -> Result<CacheEntry, String> {
    let nl = data
        .iter()
        .position(|&b| b == b'\n')
        .ok_or("no metadata line")?;
    let meta: CacheMeta =
        serde_json::from_slice(&data[..nl]).map_err(|e| format!("bad metadata: {e}"))?;
    if meta.url != url {
        return Err(format!("entry is for another URL ({})", meta.url));
    }
    let body = &data[nl + 1..];
    if body.len() as u64 != meta.body_len {
        return Err(format!(
            "body is {} bytes, expected {} (half-written?)",
            body.len(),
            meta.body_len
        ));
    }
    if hex(&Sha256::digest(body)) != meta.body_sha256 {
        return Err("body does not match its hash".into());
    }
    Ok(CacheEntry {
        meta,
        body: Bytes::copy_from_slice(body),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(url: &str) -> CacheMeta {
        CacheMeta {
            url: url.into(),
            final_url: url.into(),
            status: 200,
            headers: vec![("content-type".into(), "text/html".into())],
            redirects: vec![],
            fetched_at: Utc::now(),
            stored_at_ms: now_ms(),
            etag: Some("\"v1\"".into()),
            last_modified: None,
            truncated: false,
            body_len: 0,
            body_sha256: String::new(),
        }
    }

    #[test]
    fn round_trip_and_freshness() {
        let dir = tempfile::tempdir().unwrap();
        let c = DiskCache::new(dir.path());
        assert!(matches!(c.get("http://a/"), Lookup::Miss));
        c.put(meta("http://a/"), b"hello").unwrap();
        let Lookup::Hit(e) = c.get("http://a/") else {
            panic!()
        };
        assert_eq!(&e.body[..], b"hello");
        assert!(e.is_fresh(Some(Duration::from_secs(60))));
        assert!(e.is_fresh(None));
        let mut old = e.clone();
        old.meta.stored_at_ms -= 120_000;
        assert!(!old.is_fresh(Some(Duration::from_secs(60))));
        c.refresh(&old).unwrap();
        let Lookup::Hit(e) = c.get("http://a/") else {
            panic!()
        };
        assert!(e.is_fresh(Some(Duration::from_secs(60))));
    }

    #[test]
    fn a_cache_folder_removed_while_in_use_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let c = DiskCache::new(dir.path());
        c.put(meta("http://a/"), b"one").unwrap();
        std::fs::remove_dir_all(dir.path().join("v1")).unwrap();
        c.put(meta("http://a/"), b"two").unwrap();
        c.put(meta("http://b/"), b"three").unwrap();
        for (url, body) in [("http://a/", &b"two"[..]), ("http://b/", b"three")] {
            let Lookup::Hit(e) = c.get(url) else {
                panic!("{url} not stored")
            };
            assert_eq!(&e.body[..], body);
        }
    }

    #[test]
    fn corrupt_entries_are_misses_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let c = DiskCache::new(dir.path());
        c.put(meta("http://a/"), b"hello world").unwrap();
        let path = c.path_for("http://a/");
        let data = std::fs::read(&path).unwrap();
        std::fs::write(&path, &data[..data.len() - 3]).unwrap();
        let Lookup::Corrupt(why) = c.get("http://a/") else {
            panic!()
        };
        assert!(why.contains("half-written"), "{why}");
        let mut flipped = data.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        std::fs::write(&path, &flipped).unwrap();
        assert!(matches!(c.get("http://a/"), Lookup::Corrupt(w) if w.contains("hash")));
        std::fs::write(&path, b"{not json\nbody").unwrap();
        assert!(matches!(c.get("http://a/"), Lookup::Corrupt(w) if w.contains("metadata")));
    }
}
