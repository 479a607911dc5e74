//! `--dir` over rip-write's two layouts (flat and sharded), a folder holding both, and a
//! copy whose files lie on the disk in another order: the same verdicts and the same
//! report from each (the record files are read in the order they lie on the disk).

use rip_testkit::{Stage, files_below};
use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Items on two hosts (the same path tail on each), error documents under `/legacy/`
/// whose tail both hosts' docs share (two candidates each), and robots gaps.
fn stream() -> String {
    let mut lines = Vec::new();
    for i in 0..30 {
        for host in ["h", "mirror"] {
            lines.push(format!(
                r#"{{"_type":"doc","url":"http://{host}/items/item-{i}.html","concept":"item","attempt":0}}"#
            ));
        }
        if i % 3 == 0 {
            lines.push(format!(
                r#"{{"_type":"error","url":"http://h/legacy/item-{i}.html","status":404,"category":"PERMANENT","phase":"fetch","attempt":1,"errors":[{{"code":"httpError.permanent","message":"HTTP 404","operation":"rip-fetch","attempt":1}}]}}"#
            ));
            lines.push(format!(
                r#"{{"_type":"expected","url":"http://h/private/p-{i}.html","reason":"disallowed by robots.txt","source":"robots","attempt":0}}"#
            ));
        }
    }
    lines.join("\n") + "\n"
}

/// An error document for a URL that has a doc: a URL with two outcomes in the folder.
const SECOND: &str = r#"{"_type":"error","url":"http://h/items/item-3.html","status":404,"category":"PERMANENT","phase":"fetch","attempt":1,"errors":[{"code":"httpError.permanent","message":"HTTP 404","operation":"rip-fetch","attempt":1}]}"#;

fn write(dir: &Path, layout: &str) {
    let r = Stage::new("rip-write")
        .args(["--out", dir.to_str().unwrap(), "--layout", layout, "-q"])
        .stdin(stream())
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Copies `from`'s files to `to` in reverse name order: new files, on the disk in another
/// order than their names'.
fn copy_backwards(from: &Path, to: &Path) {
    let mut files = files_below(from);
    files.reverse();
    for f in files {
        let target = to.join(&f);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), target).unwrap();
    }
}

/// Whether item 0's file lies before item 1's on the disk (by inode number) in `dir`.
fn item_0_first(dir: &Path) -> bool {
    let first = |prefix: &str| {
        let f = files_below(dir)
            .into_iter()
            .find(|f| f.starts_with(prefix))
            .unwrap();
        std::fs::metadata(dir.join(f)).unwrap().ino()
    };
    first("items-item-0.html~") < first("items-item-1.html~")
}

/// A copy of `flat` in a new folder under `parent`, its second outcome written first and
/// its files in the other order on the disk. The file system picks the inode numbers: right
/// after thousands of files were deleted, ext4 hands them out in no steady order, so a copy
/// that did not come out reversed is made again (it once failed a fresh-clone run).
fn reversed_copy(flat: &Path, parent: &Path) -> PathBuf {
    for attempt in 0..8 {
        let dir = parent.join(format!("backwards-{attempt}"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("zz-second.json"), SECOND).unwrap();
        copy_backwards(flat, &dir);
        if item_0_first(flat) != item_0_first(&dir) {
            return dir;
        }
    }
    panic!("eight copies all lie on the disk in the folder's own order: no reversed copy to test");
}

/// The verdict in each error document of `dir`, by URL.
fn verdicts(dir: &Path) -> BTreeMap<String, Value> {
    files_below(dir)
        .into_iter()
        .filter(|f| f.ends_with(".json") && !f.ends_with("failures.json"))
        .filter_map(|f| {
            let v: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join(f)).ok()?).ok()?;
            (v["_type"] == "error").then(|| {
                (
                    v["url"].as_str().unwrap().to_owned(),
                    v["resolution"].clone(),
                )
            })
        })
        .collect()
}

/// rip-reconcile --dir then rip-health --dir: the verdicts and the report (without its
/// time).
fn reconcile_and_report(dir: &Path, config: &Path) -> (BTreeMap<String, Value>, Value) {
    let d = dir.to_str().unwrap();
    let r = Stage::new("rip-reconcile")
        .args(["--config", config.to_str().unwrap(), "--dir", d, "-q"])
        .run();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let args = ["--dir", d, "--no-ledger", "--name", "site", "-q"];
    let r = Stage::new("rip-health").args(args).run();
    assert_eq!(
        r.code, 2,
        "missing pages and a URL with two outcomes: {}",
        r.stderr
    );
    let mut report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("crawl-health.json")).unwrap())
            .unwrap();
    report.as_object_mut().unwrap().remove("generatedAt");
    (verdicts(dir), report)
}

#[test]
fn both_layouts_and_any_order_on_the_disk_give_the_same_verdicts_and_report() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("reconciler.json");
    std::fs::write(&config, r#"{"key":{"pathTail":true}}"#).unwrap();
    let [flat, sharded] = ["flat", "sharded"].map(|n| tmp.path().join(n));
    write(&flat, "flat");
    write(&sharded, "sharded");
    // The second outcome lies first on the disk in one copy, last in the others; in the
    // sharded folder it lies flat beside the shards.
    let backwards = reversed_copy(&flat, tmp.path());
    for dir in [&flat, &sharded] {
        std::fs::write(dir.join("zz-second.json"), SECOND).unwrap();
    }
    assert!(
        files_below(&sharded)
            .iter()
            .all(|f| (f.len() > 3 && f.as_bytes()[2] == b'/') || !f.contains('/')),
        "sharded: {:?}",
        files_below(&sharded)
    );

    let (verdicts, report) = reconcile_and_report(&flat, &config);
    assert_eq!(
        verdicts.len(),
        11,
        "ten error documents and the second outcome"
    );
    let legacy = &verdicts["http://h/legacy/item-3.html"];
    assert_eq!(legacy["status"], "missing");
    assert_eq!(
        legacy["candidates"],
        serde_json::json!([
            "http://h/items/item-3.html",
            "http://mirror/items/item-3.html"
        ]),
        "candidates by URL"
    );
    assert_eq!(report["missing"].as_array().unwrap().len(), 10);
    assert_eq!(
        verdicts["http://h/items/item-3.html"]["at"],
        "http://mirror/items/item-3.html"
    );
    let gaps: Vec<&str> = report["expected"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["url"].as_str().unwrap())
        .collect();
    let mut sorted = gaps.clone();
    sorted.sort_unstable();
    assert_eq!(gaps, sorted);
    assert_eq!(gaps.len(), 10);
    assert_eq!(
        report["ledger"]["duplicated"],
        serde_json::json!([{"url": "http://h/items/item-3.html", "records": ["doc", "error"]}])
    );
    for dir in [&sharded, &backwards] {
        let (v, r) = reconcile_and_report(dir, &config);
        assert_eq!(v, verdicts, "{}", dir.display());
        assert_eq!(r, report, "{}", dir.display());
    }
}
