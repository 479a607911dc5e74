//! Keeping the cache: `rip-cache` (stats, verify, compact, prune) run as a process on
//! folders that other handles read and write at the same time, killed mid-way, and
//! handed corrupted bytes.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use rip_http::cache::{CacheMeta, DiskCache, Lookup};
use serde_json::Value;

fn meta(url: &str, stored_at_ms: u64) -> CacheMeta {
    CacheMeta {
        url: url.into(),
        final_url: url.into(),
        status: 200,
        headers: vec![("content-type".into(), "text/html".into())],
        redirects: vec![],
        fetched_at: Utc::now(),
        stored_at_ms,
        etag: None,
        last_modified: None,
        truncated: false,
        body_len: 0,
        body_xxh3: String::new(),
        body_sha256: String::new(),
        site_fetch: None,
    }
}

fn now_ms() -> u64 {
    Utc::now().timestamp_millis() as u64
}

fn put(cache: &DiskCache, url: &str, body: &str) {
    cache.put(meta(url, now_ms()), body.as_bytes()).unwrap();
}

/// The body stored for `url`, or why there is none.
fn body(cache: &DiskCache, url: &str) -> Result<String, String> {
    match cache.get(url) {
        Lookup::Hit(e) => Ok(String::from_utf8(e.body.to_vec()).unwrap()),
        Lookup::Miss => Err(format!("{url}: miss")),
        Lookup::Corrupt(why) => Err(format!("{url}: corrupt: {why}")),
    }
}

/// A cache of `n` URLs, each written three times (two replaced entries per URL), with
/// bodies of ~1 KB; returns each URL's latest body.
fn filled(dir: &Path, n: usize) -> HashMap<String, String> {
    let cache = DiskCache::new(dir);
    let mut latest = HashMap::new();
    for round in 0..3 {
        for i in 0..n {
            let url = format!("http://host{}.test/page/{i}", i % 7);
            let body = format!("<p>page {i} round {round}</p>{}", "x".repeat(1000));
            put(&cache, &url, &body);
            latest.insert(url, body);
        }
    }
    latest
}

fn every_entry_reads(dir: &Path, latest: &HashMap<String, String>) {
    let cache = DiskCache::new(dir);
    for (url, want) in latest {
        assert_eq!(body(&cache, url).as_ref(), Ok(want), "{url}");
    }
}

/// Runs `rip-cache <args>` on `dir`: its exit code and its JSON report.
fn rip_cache(dir: &Path, args: &[&str]) -> (i32, Value) {
    let out = Command::new(rip_testkit::bin("rip-cache"))
        .arg("--cache-dir")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "rip-cache {args:?}: {e}; stdout {:?}, stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), report)
}

fn stats(dir: &Path) -> Value {
    let (code, report) = rip_cache(dir, &["stats"]);
    assert_eq!(code, 0, "{report}");
    report
}

#[test]
fn compaction_reclaims_replaced_entries_and_keeps_the_latest() {
    let dir = tempfile::tempdir().unwrap();
    let latest = filled(dir.path(), 300);
    let before = stats(dir.path());
    assert_eq!(before["entries"], 300);
    assert_eq!(before["indexLines"], 900);
    let reclaimable = before["reclaimableBytes"].as_u64().unwrap();
    assert!(
        reclaimable > before["liveBytes"].as_u64().unwrap(),
        "{before}"
    );

    let (code, report) = rip_cache(dir.path(), &["compact"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["entriesBefore"], 300);
    assert_eq!(report["kept"], 300);
    let (bytes_before, bytes_after) = (
        report["bytesBefore"].as_u64(),
        report["bytesAfter"].as_u64(),
    );
    assert!(bytes_after.unwrap() * 2 < bytes_before.unwrap(), "{report}");
    every_entry_reads(dir.path(), &latest);

    let after = stats(dir.path());
    assert_eq!(
        (&after["entries"], &after["indexLines"], &after["packs"]),
        (&Value::from(300), &Value::from(300), &Value::from(1)),
        "{after}"
    );
    assert_eq!(after["reclaimableBytes"], 0, "{after}");
    assert_eq!(after["liveBytes"], before["liveBytes"]);
}

/// The folder's files and their sizes.
fn files(dir: &Path) -> Vec<(String, u64)> {
    let mut all: Vec<_> = std::fs::read_dir(dir.join("v2"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    all.sort();
    all
}

#[test]
fn compacting_a_compacted_cache_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let latest = filled(dir.path(), 150);
    let (code, report) = rip_cache(dir.path(), &["compact"]);
    assert_eq!(code, 0, "{report}");
    let compacted = files(dir.path());
    for _ in 0..2 {
        let (code, report) = rip_cache(dir.path(), &["compact"]);
        assert_eq!(code, 0, "{report}");
        assert_eq!(report["kept"], 150, "{report}");
        assert_eq!(report["bytesAfter"], report["bytesBefore"], "{report}");
        assert_eq!(files(dir.path()), compacted, "{report}");
    }
    every_entry_reads(dir.path(), &latest);
}

#[test]
fn prune_drops_entries_older_than_asked() {
    let dir = tempfile::tempdir().unwrap();
    let cache = DiskCache::new(dir.path());
    let day = 24 * 3600 * 1000;
    cache
        .put(meta("http://a.test/old", now_ms() - 40 * day), b"old")
        .unwrap();
    cache
        .put(meta("http://a.test/new", now_ms() - day), b"new")
        .unwrap();
    let (code, report) = rip_cache(dir.path(), &["prune", "--older-than", "30d"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        (&report["kept"], &report["droppedOld"]),
        (&Value::from(1), &Value::from(1))
    );
    let cache = DiskCache::new(dir.path());
    assert!(matches!(cache.get("http://a.test/old"), Lookup::Miss));
    assert_eq!(body(&cache, "http://a.test/new").as_deref(), Ok("new"));
}

#[test]
fn verify_finds_a_corrupted_entry_and_compaction_drops_it() {
    let dir = tempfile::tempdir().unwrap();
    let latest = filled(dir.path(), 50);
    let (code, report) = rip_cache(dir.path(), &["verify"]);
    assert_eq!(
        (code, &report["ok"], &report["corrupt"]),
        (0, &Value::from(50), &Value::from(0))
    );

    let victim = "http://host3.test/page/10";
    let (pack, offset, len) = DiskCache::new(dir.path())
        .location(victim)
        .unwrap()
        .unwrap();
    let mut bytes = std::fs::read(&pack).unwrap();
    bytes[(offset + len - 5) as usize] ^= 0x20; // one bit of the body's end
    std::fs::write(&pack, bytes).unwrap();

    let (code, report) = rip_cache(dir.path(), &["verify"]);
    assert_eq!(code, 2, "{report}");
    assert_eq!(
        (&report["ok"], &report["corrupt"]),
        (&Value::from(49), &Value::from(1))
    );
    let problem = &report["problems"][0];
    assert_eq!(problem["url"], victim, "{report}");
    assert!(
        problem["why"].as_str().unwrap().contains("hash"),
        "{report}"
    );
    let place = format!("{}@{offset}", pack.display());
    assert_eq!(problem["place"], place.as_str());

    // A compaction drops it (and says so); the rest is kept, and verify is clean again.
    let (code, report) = rip_cache(dir.path(), &["compact"]);
    assert_eq!(
        (code, &report["kept"], &report["droppedCorrupt"]),
        (2, &Value::from(49), &Value::from(1))
    );
    let cache = DiskCache::new(dir.path());
    assert!(matches!(cache.get(victim), Lookup::Miss));
    let rest: HashMap<_, _> = latest.into_iter().filter(|(u, _)| u != victim).collect();
    every_entry_reads(dir.path(), &rest);
    assert_eq!(rip_cache(dir.path(), &["verify"]).0, 0);
}

/// Starts `rip-cache compact` told to stop at `phase`, and waits until it is there.
fn compaction_paused_at(dir: &Path, phase: &str) -> Child {
    let mut child = Command::new(rip_testkit::bin("rip-cache"))
        .arg("--cache-dir")
        .arg(dir)
        .arg("compact")
        .env("RIP_CACHE_TEST_PAUSE", phase)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains(&format!("paused at {phase}")), "{line}");
    child
}

#[test]
fn a_compaction_killed_at_any_step_leaves_a_cache_that_reads_every_entry() {
    for phase in ["copying", "locked", "renamed"] {
        let dir = tempfile::tempdir().unwrap();
        let mut latest = filled(dir.path(), 200);
        let mut child = compaction_paused_at(dir.path(), phase);
        // A writer in another process of the folder: while the compaction holds the index's
        // lock it waits, and its entry is kept whatever happens next.
        let writer = std::thread::spawn({
            let dir = dir.path().to_owned();
            move || {
                let started = Instant::now();
                put(
                    &DiskCache::new(&dir),
                    "http://late.test/",
                    "written meanwhile",
                );
                started.elapsed()
            }
        });
        std::thread::sleep(Duration::from_millis(300));
        child.kill().unwrap();
        child.wait().unwrap();
        let waited = writer.join().unwrap();
        if phase == "locked" {
            assert!(waited >= Duration::from_millis(250), "{phase}: {waited:?}");
        } else {
            assert!(waited < Duration::from_millis(250), "{phase}: {waited:?}");
        }
        latest.insert("http://late.test/".into(), "written meanwhile".into());
        every_entry_reads(dir.path(), &latest);
        assert!(
            stats(dir.path())["unreferencedPacks"].as_u64().unwrap() >= 1,
            "{phase}"
        );

        // The next compaction removes what the killed one left.
        let (code, report) = rip_cache(dir.path(), &["compact"]);
        assert_eq!(
            (code, &report["kept"]),
            (0, &Value::from(201)),
            "{phase}: {report}"
        );
        every_entry_reads(dir.path(), &latest);
        let after = stats(dir.path());
        assert_eq!(
            (&after["packs"], &after["unreferencedPacks"]),
            (&Value::from(1), &Value::from(0)),
            "{phase}: {after}"
        );
        assert!(!dir.path().join("v2/index.compact").exists(), "{phase}");
    }
}

#[test]
fn compactions_while_other_handles_read_and_write_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let stable = filled(dir.path(), 300);
    let stop = Arc::new(AtomicBool::new(false));
    // Readers: every entry written before is found, whole, all the time.
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (dir, stable, stop) = (dir.path().to_owned(), stable.clone(), stop.clone());
            std::thread::spawn(move || {
                let cache = DiskCache::new(&dir);
                let mut reads = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for (url, want) in stable.iter().skip(r).step_by(7) {
                        assert_eq!(
                            body(&cache, url).as_ref(),
                            Ok(want),
                            "reader {r} after {reads} reads"
                        );
                        reads += 1;
                    }
                }
                reads
            })
        })
        .collect();
    // A writer: new URLs, each replaced once; every write is kept.
    let writer = {
        let (dir, stop) = (dir.path().to_owned(), stop.clone());
        std::thread::spawn(move || {
            let cache = DiskCache::new(&dir);
            let mut latest = HashMap::new();
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                for version in 0..2 {
                    let (url, text) = (
                        format!("http://new.test/{i}"),
                        format!("new {i} v{version}"),
                    );
                    put(&cache, &url, &text);
                    latest.insert(url, text);
                }
                i += 1;
            }
            latest
        })
    };
    let mut meanwhile = 0;
    for _ in 0..5 {
        let (code, report) = rip_cache(dir.path(), &["compact"]);
        assert_eq!(code, 0, "{report}");
        meanwhile += report["appendedMeanwhile"].as_u64().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let reads: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    let written = writer.join().unwrap();
    assert!(
        reads > 1000 && written.len() > 100,
        "{reads} reads, {} written",
        written.len()
    );
    assert!(meanwhile > 0, "no write landed during a compaction");
    every_entry_reads(dir.path(), &stable);
    every_entry_reads(dir.path(), &written);
    let (code, report) = rip_cache(dir.path(), &["verify"]);
    assert_eq!((code, &report["corrupt"]), (0, &Value::from(0)), "{report}");
}

#[test]
fn a_second_compaction_on_the_same_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    filled(dir.path(), 10);
    let mut first = compaction_paused_at(dir.path(), "copying");
    let out = Command::new(rip_testkit::bin("rip-cache"))
        .arg("--cache-dir")
        .arg(dir.path())
        .arg("compact")
        .output()
        .unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("another rip-cache compact or verify is running"),
        "{stderr}"
    );
}

#[test]
fn verify_names_a_corrupt_entry_by_url_beside_its_place() {
    let dir = tempfile::tempdir().unwrap();
    filled(dir.path(), 50); // each URL written three times: two earlier entries each
    let cache = DiskCache::new(dir.path());
    let damage = |url: &str, at: u64| {
        let (pack, offset, _) = cache.location(url).unwrap().unwrap();
        let mut bytes = std::fs::read(&pack).unwrap();
        bytes[(offset + at) as usize] = 0;
        std::fs::write(&pack, bytes).unwrap();
        format!("{}@{offset}", pack.display())
    };
    // Metadata damaged after its URL: the URL it starts with is read.
    let after_url = "http://host3.test/page/10";
    let place_a = damage(
        after_url,
        format!("{{\"url\":\"{after_url}\",").len() as u64 + 2,
    );
    // Damaged at its first byte: an earlier entry of the same key names the URL.
    let at_start = "http://host5.test/page/12";
    let place_b = damage(at_start, 0);

    for command in ["verify", "compact"] {
        let out = Command::new(rip_testkit::bin("rip-cache"))
            .arg("--cache-dir")
            .arg(dir.path())
            .arg(command)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}");
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut named: Vec<(String, String)> = report["problems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["url"].to_string(),
                    p["place"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        named.sort();
        let mut want = vec![
            (format!("\"{after_url}\""), place_a.clone()),
            (format!("\"{at_start}\""), place_b.clone()),
        ];
        want.sort();
        assert_eq!(named, want, "{command}: {report}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        for (url, place) in [(after_url, &place_a), (at_start, &place_b)] {
            let said = format!("  {url} at {place}: ");
            assert!(stderr.contains(&said), "{command}: {stderr}");
        }
    }
}
