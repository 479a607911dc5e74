//! `--layout sharded`: each record's files in the shard of its readable name; a folder
//! keeps its layout.

use crate::support::*;
use rip_write::layout::shard;
use std::path::Path;

/// `<shard>/<name>` for a file name of the flat layout (raw bodies: `raw/<shard>/<name>`;
/// the reports stay at the top).
fn sharded(flat: &str) -> String {
    if flat == "failures.json" {
        return flat.to_owned();
    }
    let (raw, name) = match flat.strip_prefix("raw/") {
        Some(name) => ("raw/", name),
        None => ("", flat),
    };
    let slug = name.rsplit_once('.').map_or(name, |(s, _)| s);
    format!("{raw}{}/{name}", shard(slug))
}

fn write_in(dir: &Path, layout: Option<&str>, extra: &[&str], input: &str) -> Ran {
    let mut args = vec!["--out", dir.to_str().unwrap()];
    if let Some(l) = layout {
        args.extend(["--layout", l]);
    }
    args.extend(extra);
    write(&args, input)
}

#[test]
fn sharded_files_are_the_flat_files_in_the_shards_of_their_names() {
    let (flat, sharded_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let extra = ["--markdown", "--raw"];
    let r = write_in(flat.path(), None, &extra, &all_kinds());
    assert_eq!(r.code, 2, "the unrouted failure: {}", r.stderr);
    let r = write_in(sharded_dir.path(), Some("sharded"), &extra, &all_kinds());
    assert_eq!(r.code, 2, "{}", r.stderr);
    let flat_files = files_below(flat.path());
    let mut want: Vec<String> = flat_files.iter().map(|f| sharded(f)).collect();
    want.sort();
    assert_eq!(files_below(sharded_dir.path()), want);
    assert!(
        want.contains(&format!(
            "{}/items-item-7.html.json",
            shard("items-item-7.html")
        )),
        "{want:?}"
    );
    assert!(
        want.contains(&format!(
            "raw/{}/images-logo.png.png",
            shard("images-logo.png")
        )),
        "{want:?}"
    );
    for f in &flat_files {
        let (a, b) = (flat.path().join(f), sharded_dir.path().join(sharded(f)));
        if f.ends_with(".json") && f != "failures.json" {
            assert_eq!(read_json(&a), read_json(&b), "{f}");
        }
    }
    // failures.json names each error document's file relative to the folder.
    let report = read_json(sharded_dir.path().join("failures.json"));
    let file = report["captured"][0]["file"].as_str().unwrap();
    assert_eq!(file, sharded("items-item-99.html.json"));
    assert!(sharded_dir.path().join(file).is_file());
}

#[test]
fn sharded_names_do_not_depend_on_the_order_records_arrive_in() {
    let doc = |url: &str| format!(r#"{{"_type":"doc","url":"{url}","concept":"x"}}"#);
    // Three URLs share the readable name `a-b`, so its shard; `/c` shares it with nobody.
    let urls = SHARING;
    let run = |order: &[usize]| {
        let dir = tempfile::tempdir().unwrap();
        let input: String = order.iter().map(|&i| doc(urls[i]) + "\n").collect();
        let r = write_in(dir.path(), Some("sharded"), &["--markdown"], &input);
        assert_eq!(r.code, 0, "{}", r.stderr);
        (files_below(dir.path()), dir)
    };
    let (forward, _a) = run(&[0, 1, 2, 3]);
    let (backward, _b) = run(&[3, 2, 1, 0]);
    assert_eq!(forward, backward);
    let ab = shard("a-b");
    let in_ab: Vec<&String> = forward
        .iter()
        .filter(|f| f.starts_with(&format!("{ab}/a-b~")))
        .collect();
    assert_eq!(
        in_ab.len(),
        6,
        "three hashed names, json and md: {forward:?}"
    );
    assert!(forward.contains(&format!("{}/c.json", shard("c"))));
    assert_eq!(forward.len(), 6 + 2 + 1, "{forward:?}");
}

#[test]
fn a_folder_keeps_its_layout_and_refuses_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let a = r#"{"_type":"doc","url":"http://h/a","concept":"x"}"#;
    let b = r#"{"_type":"doc","url":"http://h/b","concept":"x"}"#;
    let r = write_in(dir.path(), Some("sharded"), &[], &format!("{a}\n"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Without --layout, the folder's own: b goes to its shard too, a is rewritten in place.
    let r = write_in(dir.path(), None, &[], &format!("{a}\n{b}\n"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut want = vec![
        format!("{}/a.json", shard("a")),
        format!("{}/b.json", shard("b")),
        "failures.json".to_owned(),
    ];
    want.sort();
    assert_eq!(files_below(dir.path()), want);
    let r = write_in(dir.path(), Some("flat"), &[], &format!("{a}\n"));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("holds sharded record files") && r.stderr.contains("--layout flat"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty(), "nothing read: {}", r.stdout);
    assert_eq!(files_below(dir.path()), want, "nothing written");

    let flat = tempfile::tempdir().unwrap();
    write_in(flat.path(), None, &[], &format!("{a}\n"));
    let r = write_in(flat.path(), Some("sharded"), &[], &format!("{a}\n"));
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("holds flat record files"), "{}", r.stderr);
    assert_eq!(files_below(flat.path()), ["a.json", "failures.json"]);
}
