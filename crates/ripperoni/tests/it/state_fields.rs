//! Every field of a state file reaches the stages it is meant for: set to a distinctive
//! value, it shows in the flags of each of them in the printed pipeline (`ripperoni
//! pipeline`). The fields are read from the published schema, so a new one must be listed
//! here: with its stages, or among the fields without a stage effect, saying why.

use crate::support::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The stages that fetch, which take the HTTP flags (rip_cli::http::HttpArgs).
const FETCHING: &[&str] = &["rip-discover", "rip-fetch", "rip-render"];

/// Fields that change no stage's flags, and why.
const NO_STAGE_EFFECT: &[(&str, &str)] = &[
    ("$schema", "for editors; ripperoni ignores it"),
    (
        "output.pretty",
        "only the value `format` implies is accepted (JSON files are pretty, JSONL lines \
         compact); another is refused before anything runs",
    ),
    ("crawler", "an object: its fields are listed"),
    ("cache", "an object: its fields are listed"),
    ("network", "an object: its fields are listed"),
    ("output", "an object: its fields are listed"),
    (
        "queue",
        "an object: its fields are listed (its presence adds the relay and the workers)",
    ),
    (
        "render",
        "an object: its fields are listed (its presence adds rip-render to each round)",
    ),
];

/// A state file's change and what it must show: each stage of each program listed has the
/// text among its arguments (and there is at least one such stage); with `any: ` before the
/// text, one of them has it.
struct Case {
    field: &'static str,
    edit: Box<dyn Fn(&mut Value)>,
    want: Vec<(&'static str, String)>,
}

fn case(
    field: &'static str,
    edit: impl Fn(&mut Value) + 'static,
    want: &[(&'static [&'static str], &str)],
) -> Case {
    let want = want
        .iter()
        .flat_map(|(programs, text)| programs.iter().map(|p| (*p, text.to_string())))
        .collect();
    Case {
        field,
        edit: Box::new(edit),
        want,
    }
}

/// Sets `path` (dotted) of the state to `value`.
fn set(v: &mut Value, path: &str, value: Value) {
    let mut at = v;
    let parts: Vec<&str> = path.split('.').collect();
    for p in &parts[..parts.len() - 1] {
        if !at[*p].is_object() {
            at[*p] = json!({});
        }
        at = &mut at[*p];
    }
    at[parts[parts.len() - 1]] = value;
}

/// A case setting one field, with render on for URLs matching `r` (so that rip-render and
/// rip-fetch both run).
fn field(path: &'static str, value: Value, want: &[(&'static [&'static str], &str)]) -> Case {
    case(
        path,
        move |v| {
            set(v, "render.urls", json!("render-me"));
            set(v, path, value.clone());
        },
        want,
    )
}

/// The same field on the MediaWiki source (rip-discover --mediawiki).
fn wiki_field(path: &'static str, value: Value, want: &[(&'static [&'static str], &str)]) -> Case {
    case(
        path,
        move |v| {
            set(v, "apiUrl", json!("http://127.0.0.1:9/w/api.php"));
            set(v, path, value.clone());
        },
        want,
    )
}

#[expect(
    clippy::too_many_lines,
    reason = "a table of cases, one entry after another"
)]
fn cases(dir: &std::path::Path) -> Vec<Case> {
    let demo = repo().join("testdata/demo");
    let file = |name: &str| demo.join(name).canonicalize().unwrap();
    let schema = dir.join("doc.schema.json");
    std::fs::write(&schema, r#"{"type":"object"}"#).unwrap();
    let creds = dir.join("broker.creds");
    std::fs::write(&creds, "crawler:secret\n").unwrap();
    let (schema, creds) = (schema.display().to_string(), creds.display().to_string());
    let cache = dir.join("the-cache").display().to_string();
    let out = dir.join("elsewhere").display().to_string();
    let discover: &[&str] = &["rip-discover"];
    let parse: &[&str] = &["rip-parse"];
    let write: &[&str] = &["rip-write"];
    let render: &[&str] = &["rip-render"];
    let queue: &[&str] = &["rip-queue"];
    let mut all = vec![
        field(
            "baseUrl",
            json!("http://127.0.0.1:7/b/"),
            &[(discover, " http://127.0.0.1:7/b/")],
        ),
        wiki_field(
            "apiUrl",
            json!("http://127.0.0.1:7/api.php"),
            &[(discover, "--mediawiki http://127.0.0.1:7/api.php")],
        ),
        wiki_field(
            "categories",
            json!(["Kittens"]),
            &[(discover, "--category Kittens")],
        ),
        // The listed pages enter as the refs of the source's input file.
        case(
            "urls",
            |v| {
                v.as_object_mut().unwrap().remove("crawler");
                set(v, "urls", json!(["/listed-page"]));
            },
            &[(&["rip-check"], "-i /")],
        ),
        field(
            "crawler.startUrls",
            json!(["/start-here"]),
            &[(discover, "/start-here")],
        ),
        field(
            "crawler.domain",
            json!("dom-regex"),
            &[(discover, "--domain dom-regex")],
        ),
        field(
            "crawler.delimiter",
            json!("del-regex"),
            &[(discover, "--follow del-regex")],
        ),
        field(
            "crawler.target",
            json!("tgt-regex"),
            &[(discover, "--target tgt-regex")],
        ),
        field(
            "crawler.maxPages",
            json!(4242),
            &[(discover, "--max-pages 4242")],
        ),
        wiki_field(
            "crawler.maxPages",
            json!(4243),
            &[(discover, "--max-pages 4243")],
        ),
        field(
            "crawler.maxDepth",
            json!(17),
            &[(discover, "--max-depth 17")],
        ),
        field(
            "crawler.concurrency",
            json!(13),
            &[(discover, "-c 13 --per-host 13")],
        ),
        field(
            "crawler.rateLimitMs",
            json!(3131),
            &[(discover, "--delay 3131ms")],
        ),
        field(
            "crawler.jitterMs",
            json!(3232),
            &[(discover, "--jitter 3232ms")],
        ),
        field("crawler.sitemaps", json!(true), &[(discover, "--sitemaps")]),
        field(
            "crawler.followNofollow",
            json!(true),
            &[(discover, "--follow-nofollow")],
        ),
        field("rateLimitMs", json!(2121), &[(FETCHING, "--delay 2121ms")]),
        wiki_field("rateLimitMs", json!(2122), &[(discover, "--delay 2122ms")]),
        field("jitterMs", json!(2323), &[(FETCHING, "--jitter 2323ms")]),
        field(
            "maxRetries",
            json!(4),
            &[(&["rip-route"], "--max-retries 4")],
        ),
        field(
            "retryBaseDelayMs",
            json!(242),
            &[(FETCHING, "--retry-base 242ms")],
        ),
        field(
            "retryMaxDelayMs",
            json!(2525),
            &[(FETCHING, "--retry-max 2525ms")],
        ),
        wiki_field(
            "retryMaxDelayMs",
            json!(2526),
            &[(discover, "--retry-max 2526ms")],
        ),
        field(
            "headers",
            json!({"X-Mine": "yes"}),
            &[(FETCHING, "-H 'X-Mine: yes'")],
        ),
        field(
            "cache.dir",
            json!(cache),
            &[(FETCHING, &format!("--cache-dir {cache}"))],
        ),
        field(
            "cache.mode",
            json!("read-only"),
            &[(FETCHING, "--cache read-only")],
        ),
        field("cache.ttlMs", json!(2626), &[(FETCHING, "--ttl 2626ms")]),
        field(
            "network.allow",
            json!(["10.26.0.0/16"]),
            &[(FETCHING, "--allow-network 10.26.0.0/16")],
        ),
        field(
            "network.deny",
            json!(["198.51.100.26"]),
            &[(FETCHING, "--deny-network 198.51.100.26")],
        ),
        field(
            "network.resolve",
            json!({"wiki.lan": ["192.168.26.5", "::1"]}),
            &[(FETCHING, "--resolve wiki.lan=192.168.26.5,::1")],
        ),
        field(
            "output.basePath",
            json!(out),
            &[
                (write, &format!("--out {out}/")),
                (&["rip-reconcile", "rip-health"], &format!("--dir {out}/")),
            ],
        ),
        field("output.format", json!("jsonl"), &[(write, "--jsonl")]),
        field(
            "output.layout",
            json!("sharded"),
            &[(write, "--layout sharded")],
        ),
        field(
            "output.warc",
            json!("/archive-of-the-run"),
            &[(FETCHING, "--warc /archive-of-the-run")],
        ),
        // One rip-write keeps the raw bodies (the other writes the records).
        field(
            "includeRawContent",
            json!(true),
            &[(write, "any: --raw --no-failures-file")],
        ),
        field(
            "rules",
            json!(file("emberfall.rules.toml")),
            &[(parse, "--rules /")],
        ),
        field(
            "policy",
            json!(file("emberfall.policy.toml")),
            &[(&["rip-route"], "-p /")],
        ),
        field(
            "reconciler",
            json!(file("emberfall.reconciler.json")),
            &[(&["rip-reconcile"], "--config /")],
        ),
        field(
            "outputSchema",
            json!(schema),
            &[(parse, &format!("--output-schema {schema}"))],
        ),
        case(
            "onSchemaError",
            move |v| {
                set(v, "outputSchema", json!(schema.clone()));
                set(v, "onSchemaError", json!("halt"));
            },
            &[(parse, "--on-schema-error halt")],
        ),
        field(
            "parallelWorkers",
            json!(19),
            &[(&["rip-fetch"], "-c 19 --per-host 19")],
        ),
        field(
            "render.urls",
            json!("only-these"),
            &[(render, "--only only-these")],
        ),
        field(
            "render.wait",
            json!("settled"),
            &[(render, "--wait settled")],
        ),
        field("render.tabs", json!(7), &[(render, "-c 7")]),
        field(
            "render.pageTimeoutMs",
            json!(2727),
            &[(render, "--page-timeout 2727ms")],
        ),
        field("render.session", json!(true), &[(render, "--session")]),
        case(
            "render.auto",
            |v| set(v, "render", json!({"auto": true})),
            &[
                (&["rip-route"], "any: --render auto"),
                (render, "--only-marked"),
            ],
        ),
    ];
    for (path, value, text) in [
        (
            "queue.broker",
            json!("nats://127.0.0.1:4999"),
            "--broker nats://127.0.0.1:4999",
        ),
        ("queue.credentialsFile", json!(creds), "--creds /"),
        ("queue.prefix", json!("pfx"), "--prefix pfx"),
        ("queue.partitions", json!(5), "--partitions 5"),
    ] {
        all.push(case(
            path,
            move |v| {
                set(v, "queue.broker", json!("nats://127.0.0.1:4998"));
                set(v, path, value.clone());
            },
            &[(queue, text)],
        ));
    }
    // The rest of a `rip-queue` worker's pipeline is checked as a local one's.
    all
}

/// The stages of a printed pipeline, each as its program and its text: the pipeline's,
/// the steps after it, and a worker's (`rip-queue … work … -- sh -c '<stages>'`).
fn stages(printed: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for line in printed.lines() {
        let line = line.trim_start_matches("# ").trim_start_matches("  | ");
        for part in line.split(" -- sh -c '").flat_map(|p| p.split(" | ")) {
            let part = part.trim_end_matches(" \\").trim_end_matches('\'');
            let program = part.split_whitespace().next().unwrap_or_default();
            if program.starts_with("rip-") {
                found.push((program.to_owned(), part.to_owned()));
            }
        }
    }
    found
}

/// Every field path of the published schema (`crawler.maxPages`), objects included.
fn schema_fields() -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo().join("docs/schemas/state.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    let defs = schema
        .get("$defs")
        .or(schema.get("definitions"))
        .cloned()
        .unwrap_or_default();
    let mut fields = BTreeSet::new();
    walk(&schema, "", &defs, &mut fields);
    fields
}

fn walk(node: &Value, prefix: &str, defs: &Value, fields: &mut BTreeSet<String>) {
    if let Some(r) = node["$ref"].as_str() {
        let name = r.rsplit('/').next().unwrap();
        return walk(&defs[name], prefix, defs, fields);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for n in node[key].as_array().into_iter().flatten() {
            walk(n, prefix, defs, fields);
        }
    }
    for (name, sub) in node["properties"].as_object().into_iter().flatten() {
        let path = format!("{prefix}{name}");
        fields.insert(path.clone());
        walk(sub, &format!("{path}."), defs, fields);
    }
}

#[test]
fn every_field_is_tested_or_said_to_have_no_stage_effect() {
    let dir = tempfile::tempdir().unwrap();
    let mut listed: BTreeSet<String> = cases(dir.path())
        .iter()
        .map(|c| c.field.to_owned())
        .collect();
    listed.extend(NO_STAGE_EFFECT.iter().map(|(f, _)| (*f).to_owned()));
    let fields = schema_fields();
    assert!(fields.len() > 40, "{fields:?}");
    let unlisted: Vec<_> = fields.difference(&listed).collect();
    let unknown: Vec<_> = listed.difference(&fields).collect();
    assert!(
        unlisted.is_empty(),
        "fields of the schema not listed here: {unlisted:?}"
    );
    assert!(
        unknown.is_empty(),
        "listed here, not in the schema: {unknown:?}"
    );
}

#[test]
fn every_field_shows_on_every_stage_it_is_meant_for() {
    let dir = tempfile::tempdir().unwrap();
    let mut problems = Vec::new();
    for (i, c) in cases(dir.path()).into_iter().enumerate() {
        let sub = dir.path().join(format!("case-{i}"));
        std::fs::create_dir_all(&sub).unwrap();
        let state = demo_state(&sub, "http://127.0.0.1:9", |v| (c.edit)(v));
        let o = run(&["pipeline", state.to_str().unwrap()]);
        if !o.status.success() {
            problems.push(format!("{}: pipeline refused: {}", c.field, stderr(&o)));
            continue;
        }
        let printed = String::from_utf8_lossy(&o.stdout);
        let stages = stages(&printed);
        for (program, text) in &c.want {
            let mine: Vec<&String> = stages
                .iter()
                .filter(|(p, _)| p == program)
                .map(|(_, s)| s)
                .collect();
            if mine.is_empty() {
                problems.push(format!("{}: no {program} in the pipeline", c.field));
            }
            if let Some(text) = text.strip_prefix("any: ") {
                if !mine.iter().any(|s| s.contains(text)) {
                    problems.push(format!("{}: no {program} has `{text}`", c.field));
                }
                continue;
            }
            for s in mine.iter().filter(|s| !s.contains(text.as_str())) {
                problems.push(format!("{}: {program} lacks `{text}`: {s}", c.field));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
