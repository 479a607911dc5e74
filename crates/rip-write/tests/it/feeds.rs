//! `--format csv` and `--format parquet`: tables per concept, read back with Python's
//! `csv` module and pyarrow (PyPI, `scripts/setup test`) equal to the docs.

use crate::support::*;
use serde_json::{Map, Value, json};
use std::path::Path;

const RULES: &str = r#"
[[concept]]
name = "entry"
abstract = true
fields.name = { selector = "h1", required = true }
fields.traits = { selector = "li", list = true }

[[concept]]
name = "item"
extends = "entry"
match.url = '/items/item-(?P<id>\d+)\.html$'
fields.level = { selector = "dd.level", type = "integer" }
fields.price = { selector = "dd.price", type = "number" }
fields.magic = { selector = ".magic", extract = "exists" }
fields.stats = { selector = "dl", extract = "html" }

[[concept]]
name = "spell"
extends = "entry"
match.url = '/spells/(?P<id>\d+)\.html$'
fields.ranks = { selector = "dd.rank", type = "integer", list = true }
"#;

/// Docs of two concepts whose values try the quoting and the types: commas, quotes,
/// new lines, a field missing, a null, an empty list, text that is not ASCII, and one
/// field no rule declares (`extra`, an object).
fn docs() -> Vec<Value> {
    let mut docs = Vec::new();
    for i in 0..7 {
        docs.push(json!({
            "_type": "doc", "url": format!("http://h/items/item-{i}.html"), "concept": "item",
            "id": i.to_string(), "name": format!("Rope, \"silk\" {i}\nsecond line é"),
            "depth": 2, "attempt": 0,
            "traits": if i % 3 == 0 { json!([]) } else { json!(["a,b", "c\"d"]) },
            "level": i * 10, "price": 1.5 * i as f64,
            "magic": i % 2 == 0,
            "stats": if i == 4 { Value::Null } else { json!(format!("<b>{i}</b>, \r\n")) },
        }));
    }
    docs[5].as_object_mut().unwrap().remove("price");
    for i in 0..3 {
        docs.push(json!({
            "_type": "doc", "url": format!("http://h/spells/{i}.html"), "concept": "spell",
            "id": i.to_string(), "name": format!("Fireball {i}"), "attempt": 0,
            "traits": ["fire"], "ranks": [i, i + 1],
            "extra": {"nested": [1, {"x": "y"}]},
        }));
    }
    docs
}

fn input(docs: &[Value]) -> String {
    let mut lines: Vec<String> = docs.iter().map(Value::to_string).collect();
    lines.push(ERROR.to_owned());
    lines.push(EXPECTED.to_owned());
    lines.join("\n") + "\n"
}

/// `python3 -c script args…` from the test venv: its stdout as JSON.
fn python(script: &str, args: &[&Path]) -> Value {
    let out = std::process::Command::new(rip_testkit::test_tool("python3"))
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "python failed (hint: `scripts/setup test` installs pyarrow): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("python printed JSON")
}

fn of_concept<'a>(docs: &'a [Value], concept: &str) -> Vec<&'a Map<String, Value>> {
    docs.iter()
        .filter(|d| d["concept"] == concept)
        .map(|d| d.as_object().unwrap())
        .collect()
}

fn run_format(format: &str, extra: &[&str], rules: &Path) -> (tempfile::TempDir, Ran) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut args = vec![
        "--out",
        out.to_str().unwrap(),
        "--format",
        format,
        "--rules",
        rules.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let r = write(&args, &input(&docs()));
    (dir, r)
}

fn rules_file() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("site.rules.toml");
    std::fs::write(&path, RULES).unwrap();
    (dir, path)
}

const READ_CSV: &str = r#"
import csv, json, sys
with open(sys.argv[1], newline='', encoding='utf-8') as f:
    rows = list(csv.reader(f))
print(json.dumps(rows))
"#;

#[test]
fn csv_tables_read_back_with_pythons_csv_module_equal_the_docs() {
    let (_r, rules) = rules_file();
    let (dir, r) = run_format("csv", &[], &rules);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = dir.path().join("out");
    assert_eq!(
        files_below(&out),
        [
            "errors.jsonl",
            "expected.jsonl",
            "failures.json",
            "item.csv",
            "spell.csv"
        ]
    );
    let docs = docs();
    for (concept, header) in [
        (
            "item",
            &[
                "url", "id", "name", "traits", "level", "price", "magic", "stats",
            ][..],
        ),
        ("spell", &["url", "id", "name", "traits", "ranks"][..]),
    ] {
        let rows = python(READ_CSV, &[&out.join(format!("{concept}.csv"))]);
        let rows = rows.as_array().unwrap();
        assert_eq!(rows[0], json!(header), "{concept}: the header");
        let want = of_concept(&docs, concept);
        assert_eq!(rows.len() - 1, want.len(), "{concept}: a row per doc");
        for (row, doc) in rows[1..].iter().zip(want) {
            for (i, column) in header.iter().enumerate() {
                let cell = row[i].as_str().unwrap();
                match doc.get(*column) {
                    None | Some(Value::Null) => assert_eq!(cell, "", "{column}"),
                    Some(Value::String(s)) => assert_eq!(cell, s, "{column}: as it is"),
                    Some(v) => assert_eq!(
                        &serde_json::from_str::<Value>(cell).unwrap(),
                        v,
                        "{column}: as JSON"
                    ),
                }
            }
        }
    }
    assert!(
        r.stderr
            .contains("field `extra` of a `spell` doc has no column"),
        "the field no rule declares is named: {}",
        r.stderr
    );
    assert_eq!(r.counter("fieldsLeftOut"), 3, "one per spell doc");
    let errors = std::fs::read_to_string(out.join("errors.jsonl")).unwrap();
    assert_eq!(errors.trim(), ERROR, "error documents as JSONL");
}

#[test]
fn csv_with_fields_has_those_columns_for_every_concept() {
    let (_r, rules) = rules_file();
    let (dir, r) = run_format("csv", &["--fields", "url,extra,level"], &rules);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = dir.path().join("out");
    let rows = python(READ_CSV, &[&out.join("spell.csv")]);
    assert_eq!(rows[0], json!(["url", "extra", "level"]));
    assert_eq!(
        rows[1],
        json!(["http://h/spells/0.html", r#"{"nested":[1,{"x":"y"}]}"#, ""])
    );
    assert!(!r.stderr.contains("no column"), "{}", r.stderr);
}

const READ_PARQUET: &str = r#"
import json, sys
import pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
t = f.read()
print(json.dumps({
    "types": {field.name: str(field.type) for field in t.schema},
    "rowGroups": f.metadata.num_row_groups,
    "rows": t.to_pylist(),
}))
"#;

#[test]
fn parquet_tables_read_back_with_pyarrow_equal_the_docs() {
    let (_r, rules) = rules_file();
    let (dir, r) = run_format("parquet", &["--row-group-rows", "3"], &rules);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out = dir.path().join("out");
    let item = python(READ_PARQUET, &[&out.join("item.parquet")]);
    assert_eq!(
        item["types"],
        json!({
            "url": "string", "id": "string", "name": "string",
            "traits": "list<element: string not null>",
            "level": "int64", "price": "double", "magic": "bool", "stats": "string",
        })
    );
    assert_eq!(item["rowGroups"], 3, "7 rows, 3 a row group");
    let spell = python(READ_PARQUET, &[&out.join("spell.parquet")]);
    assert_eq!(spell["types"]["ranks"], "list<element: int64 not null>");
    let docs = docs();
    for (concept, table) in [("item", &item), ("spell", &spell)] {
        let rows = table["rows"].as_array().unwrap();
        let want = of_concept(&docs, concept);
        assert_eq!(rows.len(), want.len(), "{concept}: a row per doc");
        for (row, doc) in rows.iter().zip(want) {
            for (column, value) in row.as_object().unwrap() {
                let expected = doc.get(column).unwrap_or(&Value::Null);
                match (value, expected) {
                    (Value::Number(a), Value::Number(b)) => {
                        assert_eq!(a.as_f64(), b.as_f64(), "{concept}.{column}")
                    }
                    _ => assert_eq!(value, expected, "{concept}.{column}"),
                }
            }
        }
    }
}

#[test]
fn parquet_without_rules_has_json_columns_and_a_mistyped_value_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let docs = [
        json!({"_type":"doc","url":"http://h/1","concept":"thing","id":"1","size":{"w":2},"n":3}),
        json!({"_type":"doc","url":"http://h/2","concept":"thing","id":2,"size":[1,"a"],"n":"x"}),
    ];
    let r = write(
        &["--out", out.to_str().unwrap(), "--format", "parquet"],
        &input(&docs),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let t = python(READ_PARQUET, &[&out.join("thing.parquet")]);
    let rows = t["rows"].as_array().unwrap();
    assert_eq!(t["types"]["size"], "string", "no rules: JSON text");
    let size: Value = serde_json::from_str(rows[1]["size"].as_str().unwrap()).unwrap();
    assert_eq!(size, json!([1, "a"]));
    assert_eq!(rows[0]["n"], "3", "a JSON column");
    assert_eq!(rows[1]["id"], Value::Null, "`id` is text: 2 is mistyped");
    assert_eq!(r.counter("cellsMistyped"), 1);
    assert!(r.stderr.contains("were not of its type"), "{}", r.stderr);
}

#[test]
fn a_rules_file_that_is_not_toml_stops_rip_write_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("broken.toml");
    std::fs::write(&rules, "[[concept]\n").unwrap();
    let out = dir.path().join("out");
    let r = write(
        &[
            "--out",
            out.to_str().unwrap(),
            "--format",
            "csv",
            "--rules",
            rules.to_str().unwrap(),
        ],
        &input(&docs()),
    );
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("broken.toml"), "{}", r.stderr);
}
