//! The on-disk response cache, shared by every stage and process using one folder.
//!
//! An entry is a JSON line of metadata (URL, final URL, status, headers, redirects,
//! validators, when stored, body length and SHA-256, and the site fetch that got the
//! response: see [`CacheMeta::site_fetch`]), then the body bytes. Entries live in
//! `<dir>/v2/`, appended to pack files and found through one shared index (`cache/pack.rs`
//! explains the layout); several processes may fill one cache at once, and a reader sees
//! an old entry or a new one, never half of one. An entry whose metadata does not parse,
//! whose URL differs, or whose body does not match its length and hash is *corrupt*: a
//! miss, reported, never a crash.
//!
//! Caches written by earlier versions (one file per URL at `<dir>/v1/<aa>/<sha256(url)>`)
//! are still read: an entry not in `v2` is looked up there when that folder exists.
//! New entries always go to `v2`.
//!
//! The cache stores final successes (2xx) only; failures are data for the next round, not
//! something to replay.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use rip_core::SiteFetch;
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
    /// Body XXH3-128, hex: what an entry's body is checked against when read. A check
    /// for torn or damaged files, not against tampering (the cache is the user's own
    /// folder); it costs 3.5 µs for a 58 KB page where SHA-256 cost 60, on every write and
    /// every read (issue 19: a third of `rip-fetch`'s CPU in the pipeline on the Rust docs).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body_xxh3: String,
    /// Body SHA-256, hex, in entries of earlier versions (checked when there is no
    /// [`body_xxh3`](Self::body_xxh3)); not written any more.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body_sha256: String,
    /// The fetch that went to the site for this response (attempts, statuses, faults,
    /// waits, latency, and the stage that made it), so that a stage served from the cache
    /// can report what the site did. Absent in entries of earlier versions, which are
    /// still read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site_fetch: Option<SiteFetch>,
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
    /// Something stored, but unusable; the error says why.
    Corrupt(CorruptEntry),
}

/// Why a stored entry cannot be used (it is then a miss).
#[derive(Debug, thiserror::Error)]
pub enum CorruptEntry {
    /// The pack store could not read it (the message names the pack or the index).
    #[error(transparent)]
    Store(io::Error),
    /// The file of an entry of the previous layout could not be read.
    #[error("{}: {source}", path.display())]
    File {
        /// The entry's file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The bytes stored for `url` at `place` are not its entry.
    #[error("{place}: {why}")]
    Bytes {
        /// The URL looked up.
        url: String,
        /// Where the bytes are: a pack file and offset, or a file.
        place: String,
        /// What is wrong with them.
        why: BadEntry,
    },
}

/// What is wrong with the bytes of an entry.
#[derive(Debug, thiserror::Error)]
pub enum BadEntry {
    /// No newline ends a metadata line.
    #[error("no metadata line")]
    NoMetadata,
    /// The metadata line is not [`CacheMeta`] JSON.
    #[error("bad metadata: {0}")]
    Metadata(#[source] serde_json::Error),
    /// The entry is another URL's (two keys met in the index).
    #[error("entry is for another URL ({found})")]
    OtherUrl {
        /// The URL the metadata names.
        found: String,
    },
    /// The body is not as long as the metadata says.
    #[error("body is {found} bytes, expected {expected} (half-written?)")]
    BodyLength {
        /// Bytes there.
        found: u64,
        /// Bytes the metadata says.
        expected: u64,
    },
    /// The body's hash is not the metadata's.
    #[error("body does not match its hash")]
    BodyHash,
}

mod maintain;
mod pack;

pub use maintain::{
    CacheStats, CompactOptions, CompactPhase, CompactReport, EntryProblem, MaintainError,
    VerifyReport,
};

/// The cache folder. Clones share one view of it.
#[derive(Debug, Clone)]
pub struct DiskCache {
    packs: Arc<pack::PackStore>,
    /// `<dir>/v1`, when a cache of the previous layout is there to read.
    legacy: Option<PathBuf>,
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
    /// A cache under `dir` (entries in `dir/v2/`; `dir/v1/` read when present).
    pub fn new(dir: impl AsRef<Path>) -> Self {
        let legacy = dir.as_ref().join("v1");
        Self {
            packs: Arc::new(pack::PackStore::new(dir.as_ref().join("v2"))),
            legacy: legacy.is_dir().then_some(legacy),
        }
    }

    /// Where `url`'s entry is stored: its pack file, offset and length (for tools and
    /// tests that inspect the bytes).
    pub fn location(&self, url: &str) -> io::Result<Option<(PathBuf, u64, u64)>> {
        self.packs.location(url)
    }

    /// Reads `url`'s entry.
    pub fn get(&self, url: &str) -> Lookup {
        match self.packs.get(url) {
            Ok(Some(found)) => lookup(url, &found.bytes, &found.place),
            Ok(None) => match &self.legacy {
                Some(root) => legacy_get(root, url),
                None => Lookup::Miss,
            },
            Err(e) => Lookup::Corrupt(CorruptEntry::Store(e)),
        }
    }

    /// Stores an entry for `meta.url`. `meta`'s body length and hash are filled in here.
    pub fn put(&self, mut meta: CacheMeta, body: &[u8]) -> io::Result<()> {
        let data = encode(&mut meta, body)?;
        self.packs.put(&meta.url, &data)
    }

    /// Marks `url`'s entry fresh again after a `304 Not Modified`; `site` is the
    /// revalidating fetch, the entry's site fetch from now on (kept when `None`).
    pub fn refresh(&self, entry: &CacheEntry, site: Option<SiteFetch>) -> io::Result<()> {
        let mut meta = entry.meta.clone();
        meta.stored_at_ms = now_ms();
        if site.is_some() {
            meta.site_fetch = site;
        }
        self.put(meta, &entry.body)
    }
}

/// An entry's bytes, the same in both layouts: the metadata line (with the body's length
/// and hash filled in), then the body. One buffer, one write.
fn encode(meta: &mut CacheMeta, body: &[u8]) -> io::Result<Vec<u8>> {
    meta.body_len = body.len() as u64;
    meta.body_xxh3 = body_hash(body);
    meta.body_sha256.clear();
    let mut data = serde_json::to_vec(&meta).map_err(io::Error::other)?;
    data.reserve(body.len() + 1);
    data.push(b'\n');
    data.extend_from_slice(body);
    Ok(data)
}

/// `url`'s entry read from `data`, stored at `place` (named when it is corrupt).
fn lookup(url: &str, data: &[u8], place: &dyn std::fmt::Display) -> Lookup {
    match parse_entry(url, data) {
        Ok(entry) => Lookup::Hit(entry),
        Err(why) => Lookup::Corrupt(CorruptEntry::Bytes {
            url: url.to_owned(),
            place: place.to_string(),
            why,
        }),
    }
}

/// An entry of the previous layout: one file per URL under `root`.
fn legacy_get(root: &Path, url: &str) -> Lookup {
    let key = hex(&Sha256::digest(url.as_bytes()));
    let path = root.join(&key[..2]).join(key);
    match std::fs::read(&path) {
        Ok(data) => lookup(url, &data, &path.display()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Lookup::Miss,
        Err(source) => Lookup::Corrupt(CorruptEntry::File { path, source }),
    }
}

/// `url`'s entry read from its bytes: the metadata line, then a body of the length and
/// hash it says.
fn parse_entry(url: &str, data: &[u8]) -> Result<CacheEntry, BadEntry> {
    let (meta, body) = check_entry(data)?;
    if meta.url != url {
        return Err(BadEntry::OtherUrl { found: meta.url });
    }
    Ok(CacheEntry {
        meta,
        body: Bytes::copy_from_slice(body),
    })
}

/// The metadata and body of an entry's bytes, checked: a metadata line, then a body of
/// the length and hash it says.
fn check_entry(data: &[u8]) -> Result<(CacheMeta, &[u8]), BadEntry> {
    let nl = data
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(BadEntry::NoMetadata)?;
    let meta: CacheMeta = serde_json::from_slice(&data[..nl]).map_err(BadEntry::Metadata)?;
    let body = &data[nl + 1..];
    if body.len() as u64 != meta.body_len {
        return Err(BadEntry::BodyLength {
            found: body.len() as u64,
            expected: meta.body_len,
        });
    }
    let intact = if meta.body_xxh3.is_empty() {
        hex(&Sha256::digest(body)) == meta.body_sha256
    } else {
        body_hash(body) == meta.body_xxh3
    };
    if !intact {
        return Err(BadEntry::BodyHash);
    }
    Ok((meta, body))
}

/// The hash an entry's body is checked against ([`CacheMeta::body_xxh3`]).
fn body_hash(body: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(body))
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
            body_xxh3: String::new(),
            body_sha256: String::new(),
            site_fetch: None,
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
        c.refresh(&old, None).unwrap();
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
        std::fs::remove_dir_all(dir.path().join("v2")).unwrap();
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
        let (pack, offset, len) = c.location("http://a/").unwrap().unwrap();
        let data = std::fs::read(&pack).unwrap();
        assert_eq!((offset, len), (0, data.len() as u64));
        // Each damage is seen by a reader that did not write the entry.
        let damaged = |bytes: &[u8]| {
            std::fs::write(&pack, bytes).unwrap();
            match DiskCache::new(dir.path()).get("http://a/") {
                Lookup::Corrupt(why) => why.to_string(),
                other => panic!("{other:?}"),
            }
        };
        let mut flipped = data.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(damaged(&flipped).contains("hash"));
        let mut bad_meta = data.clone();
        bad_meta[..9].copy_from_slice(b"{not json");
        let why = damaged(&bad_meta);
        assert!(why.contains("metadata") && why.contains(".pack@0"), "{why}");
        // A pack cut short: the index names bytes that are not there.
        assert!(damaged(&data[..data.len() - 3]).contains("ends before the entry"));
    }

    #[test]
    fn bodies_are_checked_by_xxh3_and_entries_checked_by_sha256_still_read() {
        let body = b"<p>a page</p>";
        let data = encode(&mut meta("http://a/"), body).unwrap();
        let line = String::from_utf8_lossy(&data);
        assert!(
            line.contains(r#""bodyXxh3":""#) && !line.contains("bodySha256"),
            "{line}"
        );
        assert!(check_entry(&data).is_ok());
        // An entry as earlier versions wrote it: SHA-256 only.
        let mut old = meta("http://a/");
        old.body_len = body.len() as u64;
        old.body_sha256 = hex(&Sha256::digest(body));
        let mut old_data = serde_json::to_vec(&old).unwrap();
        old_data.push(b'\n');
        old_data.extend_from_slice(body);
        assert!(!String::from_utf8_lossy(&old_data).contains("bodyXxh3"));
        assert!(check_entry(&old_data).is_ok());
        // Damage is caught under either hash.
        for mut bytes in [data, old_data] {
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
            assert!(matches!(check_entry(&bytes), Err(BadEntry::BodyHash)));
        }
    }

    #[test]
    fn entries_of_the_previous_layout_are_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let body = b"old body";
        let key = hex(&Sha256::digest(b"http://old/"));
        let file = dir.path().join("v1").join(&key[..2]).join(&key);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, encode(&mut meta("http://old/"), body).unwrap()).unwrap();
        let c = DiskCache::new(dir.path());
        let Lookup::Hit(e) = c.get("http://old/") else {
            panic!()
        };
        assert_eq!(&e.body[..], body);
        assert!(matches!(c.get("http://new/"), Lookup::Miss));
        // A refresh writes the entry anew in the current layout.
        c.refresh(&e, None).unwrap();
        assert!(c.location("http://old/").unwrap().is_some());
    }
}
