//! ARCHITECTURE.md against the workspace as cargo sees it.
//!
//! The crate table must list exactly the packages of `cargo metadata --no-deps`, and every
//! `[dependencies]` entry of every package must keep the page's rules: a workspace crate
//! depends on a lower layer only (test support on layer 0 at most), unless the exceptions
//! table allows the pair; the external crates of the "only in" table are in those crates
//! alone; no crate depends on what its "never" row names. An exception no crate needs any
//! more fails too, so the page cannot keep a rule nothing obeys. The README's table of
//! programs lists exactly the `[[bin]]` targets.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// One package as cargo sees it: its name, its normal and build dependencies, its programs.
struct Package {
    name: String,
    deps: BTreeSet<String>,
    bins: BTreeSet<String>,
}

fn packages() -> Vec<Package> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(rip_testkit::repo())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    let list = meta["packages"].as_array().expect("packages");
    list.iter()
        .map(|p| Package {
            name: p["name"].as_str().expect("a name").to_owned(),
            deps: p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].is_null() || d["kind"] == "build")
                .filter_map(|d| d["name"].as_str().map(str::to_owned))
                .collect(),
            bins: p["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|t| {
                    t["kind"]
                        .as_array()
                        .is_some_and(|k| k.contains(&"bin".into()))
                })
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect(),
        })
        .collect()
}

/// A table: its header's cells and its rows' cells, each trimmed and its backticks dropped.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

/// Every table in the section under `## {heading}`.
fn tables(doc: &str, heading: &str) -> Vec<Table> {
    let start = doc
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("the document has no `## {heading}` section"));
    let body = &doc[start + heading.len() + 5..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut out: Vec<Table> = Vec::new();
    let mut in_table = false;
    for line in body.lines() {
        let Some(inner) = line.trim().strip_prefix('|') else {
            in_table = false;
            continue;
        };
        if inner.starts_with("---") {
            continue;
        }
        let cells = inner.trim_end_matches('|').split('|');
        let cells: Vec<String> = cells.map(|c| c.trim().replace('`', "")).collect();
        if std::mem::replace(&mut in_table, true) {
            out.last_mut().expect("a table").rows.push(cells);
        } else {
            out.push(Table {
                header: cells,
                rows: Vec::new(),
            });
        }
    }
    out
}

/// The names of a cell listing crates: `a, b`.
fn names(cell: &str) -> Vec<String> {
    cell.split(',').map(|n| n.trim().to_owned()).collect()
}

/// The page's rules, read from its tables.
struct Rules {
    layers: BTreeMap<String, String>,
    exceptions: BTreeSet<(String, String)>,
    only_in: BTreeMap<String, Vec<String>>,
    never: Vec<(String, String)>,
}

fn rules(doc: &str) -> Rules {
    let mut layers = BTreeMap::new();
    for table in tables(doc, "The crates") {
        for row in table.rows {
            let prev = layers.insert(row[0].clone(), row[1].clone());
            assert!(prev.is_none(), "ARCHITECTURE.md lists {} twice", row[0]);
        }
    }
    let (mut exceptions, mut only_in, mut never) = (BTreeSet::new(), BTreeMap::new(), Vec::new());
    for table in tables(doc, "Rules") {
        for row in table.rows {
            assert!(
                row.len() == 3 && !row[2].is_empty(),
                "ARCHITECTURE.md Rules: a row needs what, which and why: {row:?}"
            );
            let (from, to) = (row[0].clone(), names(&row[1]));
            match table.header[1].as_str() {
                "may also depend on" => {
                    exceptions.extend(to.into_iter().map(|t| (from.clone(), t)))
                }
                "only in" => drop(only_in.insert(from, to)),
                "never depends on" => never.extend(to.into_iter().map(|t| (from.clone(), t))),
                other => panic!("ARCHITECTURE.md Rules: a table of `{other}`"),
            }
        }
    }
    Rules {
        layers,
        exceptions,
        only_in,
        never,
    }
}

/// Why `from` may not depend on `to` by the layers, or None when it may.
fn layer_breach(rules: &Rules, from: &str, to: &str) -> Option<String> {
    let (a, b) = (&rules.layers[from], &rules.layers[to]);
    let allowed = match (a.as_str(), b.as_str()) {
        (_, "test") => false,
        ("test", b) => b == "0",
        (a, b) => b < a,
    };
    (!allowed).then(|| format!("{from} (layer {a}) depends on {to} (layer {b})"))
}

/// Every dependency that breaks the rules, said in a sentence, and the exceptions used.
fn breaches(rules: &Rules, packages: &[Package]) -> (Vec<String>, BTreeSet<(String, String)>) {
    let mut breaches = Vec::new();
    let mut used = BTreeSet::new();
    for p in packages {
        for dep in &p.deps {
            let pair = (p.name.clone(), dep.clone());
            let by_layer = rules
                .layers
                .contains_key(dep)
                .then(|| layer_breach(rules, &p.name, dep))
                .flatten();
            if let Some(why) = by_layer {
                if rules.exceptions.contains(&pair) {
                    used.insert(pair.clone());
                } else {
                    breaches.push(why);
                }
            }
            if let Some(only) = rules.only_in.get(dep).filter(|o| !o.contains(&p.name)) {
                breaches.push(format!(
                    "{} depends on {dep}, which only {only:?} may",
                    p.name
                ));
            }
            if rules.never.contains(&pair) {
                breaches.push(format!("{} depends on {dep}, which it never may", p.name));
            }
        }
    }
    (breaches, used)
}

#[test]
fn architecture_md_lists_every_crate_and_every_dependency_keeps_its_rules() {
    let doc = std::fs::read_to_string(rip_testkit::repo().join("ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md");
    let rules = rules(&doc);
    let packages = packages();

    let listed: BTreeSet<&String> = rules.layers.keys().collect();
    let real: BTreeSet<&String> = packages.iter().map(|p| &p.name).collect();
    let unlisted: Vec<_> = real.difference(&listed).collect();
    let gone: Vec<_> = listed.difference(&real).collect();
    assert!(
        unlisted.is_empty() && gone.is_empty(),
        "ARCHITECTURE.md's crate table against cargo metadata: packages it does not list \
         {unlisted:?} (add a row: crate, layer, job), rows of no package {gone:?} (remove or \
         rename them)"
    );

    let (breaches, used) = breaches(&rules, &packages);
    assert!(
        breaches.is_empty(),
        "dependencies against ARCHITECTURE.md's rules (change the code, or the page with the \
         reason):\n{}",
        breaches.join("\n")
    );
    let unused: Vec<_> = rules.exceptions.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "exceptions in ARCHITECTURE.md that no dependency needs any more (remove them): \
         {unused:?}"
    );
}

#[test]
fn the_rules_are_read_from_the_tables() {
    let doc = "x\n## The crates\n\n| crate | layer | job |\n|---|---|---|\n\
               | `a` | 0 | A. |\n| `b` | 1 | B, with a comma. |\n| `t` | test | T. |\n\n\
               ## Rules\n\n| crate | may also depend on | why |\n|---|---|---|\n\
               | `a` | `b` | because |\n\n| external crate | only in | why |\n|---|---|---|\n\
               | `clap` | `a`, `b` | parsing |\n\n| crate | never depends on | why |\n\
               |---|---|---|\n| `b` | `x`, `y` | no |\n\n## Next\n| `z` | 9 | not read |\n";
    let r = rules(doc);
    assert_eq!(r.layers.len(), 3);
    assert_eq!(r.layers["b"], "1");
    assert!(r.exceptions.contains(&("a".into(), "b".into())));
    assert_eq!(r.only_in["clap"], ["a", "b"]);
    assert_eq!(
        r.never,
        [("b".into(), "x".into()), ("b".into(), "y".into())]
    );
    assert!(layer_breach(&r, "b", "a").is_none());
    assert!(layer_breach(&r, "a", "b").is_some());
    assert!(layer_breach(&r, "t", "a").is_none());
    assert!(layer_breach(&r, "b", "t").is_some());
}

/// A program's name from its cell in the README's table: `name` or `[name](its guide page)`.
fn program(cell: &str) -> String {
    let name = cell
        .strip_prefix('[')
        .map_or(cell, |c| c.split(']').next().unwrap_or(c));
    name.trim().to_owned()
}

#[test]
fn the_readme_lists_every_program() {
    let readme = std::fs::read_to_string(rip_testkit::repo().join("README.md")).expect("README.md");
    let listed: BTreeSet<String> = tables(&readme, "The programs")
        .into_iter()
        .flat_map(|t| t.rows)
        .map(|row| program(&row[0]))
        .collect();
    let real: BTreeSet<String> = packages().into_iter().flat_map(|p| p.bins).collect();
    assert!(
        real.len() > 10,
        "cargo metadata lists {} programs",
        real.len()
    );
    assert_eq!(
        listed, real,
        "the README's `## The programs` table against the [[bin]] targets of the workspace \
         (a program added, removed or renamed changes its row)"
    );
    assert_eq!(program("[ripperoni](docs/guide/ripperoni.md)"), "ripperoni");
    assert_eq!(program("rip-check"), "rip-check");
}
