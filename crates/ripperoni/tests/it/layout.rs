//! `output.layout: "sharded"`: the demo scrape's record files and raw bodies in shards,
//! reconciled and reported as the flat scrape's.

use crate::support::*;
use rip_testkit::files_below;
use serde_json::Value;

/// The demo scrape (with raw bodies) under `dir/<name>/out` in `layout`: the report and
/// the files of the output folder.
fn scrape(dir: &std::path::Path, name: &str, layout: &str) -> (Value, Vec<String>) {
    let server = demo_server();
    let dir = dir.join(name);
    std::fs::create_dir(&dir).unwrap();
    let state = demo_state(&dir, &server.origin(), |v| {
        v["output"]["layout"] = layout.into();
        v["includeRawContent"] = true.into();
    });
    let o = run(&["pipeline", state.to_str().unwrap()]);
    let script = String::from_utf8_lossy(&o.stdout);
    let writes = script.matches("rip-write ").count();
    assert_eq!(writes, 2, "raw bodies, then the records: {script}");
    let sharded = script.matches("--layout sharded").count();
    assert_eq!(sharded, if layout == "sharded" { 2 } else { 0 }, "{script}");
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "one URL is missing: {}",
        stderr(&o)
    );
    let out = dir.join("out/emberfall");
    let text = std::fs::read_to_string(out.join("crawl-health.json")).unwrap();
    let all: Value = serde_json::from_str(&text.replace(&server.origin(), "ORIGIN")).unwrap();
    // What the folder gives (the rest: timings, the stream's batches).
    let keys = [
        "totals",
        "capturedElsewhere",
        "missing",
        "dead",
        "complete",
        "expected",
    ];
    let report = keys
        .iter()
        .map(|&k| (k.to_owned(), all[k].clone()))
        .collect();
    (report, files_below(&out))
}

#[test]
fn a_sharded_scrape_is_the_flat_one_in_shards() {
    let dir = tempfile::tempdir().unwrap();
    let (flat_report, flat) = scrape(dir.path(), "flat", "flat");
    let (report, sharded) = scrape(dir.path(), "sharded", "sharded");
    assert_eq!(report, flat_report);
    assert_eq!(report["totals"]["concepts"], 46);
    assert_eq!(report["complete"], true);
    // Every record file and raw body of the flat scrape, in a shard; the rest as it was.
    let unsharded = |f: &String| -> String {
        let (raw, rest) = f
            .strip_prefix("raw/")
            .map_or(("", f.as_str()), |r| ("raw/", r));
        match rest.split_once('/') {
            Some((shard, name)) if rip_core::folder::is_shard(shard) => format!("{raw}{name}"),
            _ => f.clone(),
        }
    };
    let outside = |files: &[String]| -> Vec<String> {
        files
            .iter()
            .filter(|f| !f.starts_with(".ripperoni/"))
            .cloned()
            .collect()
    };
    let (flat, sharded) = (outside(&flat), outside(&sharded));
    let mut back: Vec<String> = sharded.iter().map(unsharded).collect();
    back.sort();
    assert_eq!(back, flat);
    let is_record = |f: &&String| f.ends_with(".json") && !f.starts_with("raw/");
    let in_shards = sharded
        .iter()
        .filter(|f| f.contains('/') && is_record(f))
        .count();
    let records = flat.iter().filter(is_record).count();
    assert_eq!(
        in_shards + 2,
        records,
        "all but failures.json and crawl-health.json"
    );
    assert_eq!(
        records,
        51 + 2,
        "46 docs, 3 error documents, 2 expected records"
    );
    let raw = sharded.iter().filter(|f| f.starts_with("raw/")).count();
    assert_eq!(raw, 47, "{sharded:?}");
}
