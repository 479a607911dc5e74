//! `rip-reconcile` run as a binary on the golden streams of `testdata/health/` (see
//! `make_streams.py` there), its output read back with rip-core types.

mod dir;

use rip_core::{ErrorDoc, Line, Record, Resolution, Summary};
use rip_testkit::Stage;
pub use rip_testkit::{Ran, testdata};
use std::io::Write;
use std::process::Stdio;

/// `rip-reconcile args…`, with `stdin` on its stdin when given (else none).
pub fn run(args: &[&str], stdin: Option<&str>) -> Ran {
    Stage::new("rip-reconcile")
        .args(args)
        .maybe_stdin(stdin)
        .run()
}

/// The error documents of an output and its closing summary.
fn verdicts(r: &Ran) -> (Vec<ErrorDoc>, Summary) {
    let errors = r
        .records()
        .iter()
        .filter_map(|record| match record {
            Record::Error(e) => Some(e.clone()),
            _ => None,
        })
        .collect();
    (errors, r.summary().clone())
}

fn verdict<'a>(errors: &'a [ErrorDoc], url_tail: &str) -> &'a Resolution {
    let e = errors
        .iter()
        .find(|e| e.url.ends_with(url_tail))
        .unwrap_or_else(|| panic!("no error document for {url_tail}"));
    e.resolution.as_ref().expect("a resolution")
}

fn elsewhere(at: &str) -> Resolution {
    Resolution::CapturedElsewhere { at: at.into() }
}

const AON: &str = "https://2e.aonprd.com/";

#[test]
fn reference_worked_example_catfolk_resolves_to_the_ancestry() {
    let input = testdata("health/aon.ndjson");
    let config = testdata("reconcile/aon.json");
    let r = run(
        &[
            "--config",
            config.to_str().unwrap(),
            "--input",
            input.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (errors, summary) = verdicts(&r);
    assert_eq!(
        verdict(&errors, "Classes.aspx?ID=77"),
        &elsewhere(&format!("{AON}Ancestries.aspx?ID=77")),
        "\"Catfolk\" + 77 is the ancestry, not the spell with id 77"
    );
    let missing = Resolution::Missing { candidates: vec![] };
    assert_eq!(verdict(&errors, "Equipment.aspx?ID=3611"), &missing);
    assert_eq!(verdict(&errors, "Monsters.aspx?ID=3542"), &missing);
    assert_eq!(
        verdict(&errors, "Ancestries.aspx?ID=9"),
        &Resolution::Dead {
            reason: "content removed from AON".into()
        }
    );
    assert_eq!(summary.stage, "rip-reconcile");
    assert_eq!(summary.counters.get("capturedElsewhere"), Some(&1));
    assert_eq!(summary.counters.get("missing"), Some(&2));
    assert_eq!(summary.counters.get("dead"), Some(&1));
    assert!(
        r.stderr
            .contains("4 failures: 1 captured elsewhere, 2 missing, 1 dead")
    );

    // Every other line passes through byte for byte, in order.
    let original = std::fs::read_to_string(&input).unwrap();
    let keep = |t: &str| !t.contains("\"_type\":\"error\"");
    let out_lines: Vec<&str> = r.stdout.lines().collect();
    let (body, last) = out_lines.split_at(out_lines.len() - 1);
    assert!(last[0].starts_with("{\"_type\":\"summary\",\"stage\":\"rip-reconcile\""));
    assert_eq!(
        body.iter().copied().filter(|t| keep(t)).collect::<Vec<_>>(),
        original.lines().filter(|t| keep(t)).collect::<Vec<_>>()
    );
    let kinds = |s: &str| -> Vec<String> {
        s.lines()
            .map(|t| Line::from_text(t).unwrap().kind().to_string())
            .collect()
    };
    assert_eq!(kinds(&body.join("\n")), kinds(&original), "order kept");
}

#[test]
fn a_same_id_page_with_another_name_does_not_match() {
    // Without the Catfolk ancestry in the stream, the only doc with id 77 is the spell
    // "Gust of Wind": the name does not match, so the failure is missing, not guessed.
    let original = std::fs::read_to_string(testdata("health/aon.ndjson")).unwrap();
    let without: String = original
        .lines()
        .filter(|t| !(t.contains("\"_type\":\"doc\"") && t.contains("Ancestries.aspx?ID=77")))
        .map(|t| format!("{t}\n"))
        .collect();
    let config = testdata("reconcile/aon.json");
    // From stdin: this also exercises the temporary copy of a one-time input.
    let r = run(&["--config", config.to_str().unwrap()], Some(&without));
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (errors, _) = verdicts(&r);
    assert_eq!(
        verdict(&errors, "Classes.aspx?ID=77"),
        &Resolution::Missing { candidates: vec![] }
    );

    // With the key alone, both docs with id 77 match: ambiguous, so missing with both
    // listed as candidates.
    let dir = tempfile::tempdir().unwrap();
    let key_only = dir.path().join("key-only.json");
    std::fs::write(&key_only, r#"{"key":{"urlPattern":"[?&]ID=(\\d+)"}}"#).unwrap();
    let r = run(
        &[
            "--config",
            key_only.to_str().unwrap(),
            "-i",
            testdata("health/aon.ndjson").to_str().unwrap(),
        ],
        None,
    );
    let (errors, _) = verdicts(&r);
    assert_eq!(
        verdict(&errors, "Classes.aspx?ID=77"),
        &Resolution::Missing {
            candidates: vec![
                format!("{AON}Ancestries.aspx?ID=77"),
                format!("{AON}Spells.aspx?ID=77")
            ]
        }
    );
}

const SITE: &str = "http://127.0.0.1:8080";

#[test]
fn demo_site_shape_key_from_path_tail_and_name_from_page_title() {
    let config = testdata("reconcile/site.json");
    let input = testdata("health/site.ndjson");
    let r = run(
        &[
            "--config",
            config.to_str().unwrap(),
            "-i",
            input.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (errors, _) = verdicts(&r);
    assert_eq!(errors.len(), 2);
    // /classes/77.html shares its id with /ancestries/77.html (Catfolk) and
    // /spells/77.html (Gust of Wind); the link text on /classes/ says "Catfolk".
    assert_eq!(
        verdict(&errors, "/classes/77.html"),
        &elsewhere(&format!("{SITE}/ancestries/77.html"))
    );
    assert_eq!(
        verdict(&errors, "/items/item-99.html"),
        &Resolution::Missing { candidates: vec![] }
    );
}

#[test]
fn stdin_and_file_give_the_same_stream() {
    let config = testdata("reconcile/site.json");
    let input = testdata("health/site.ndjson");
    let from_file = run(
        &[
            "--config",
            config.to_str().unwrap(),
            "-i",
            input.to_str().unwrap(),
        ],
        None,
    );
    let text = std::fs::read_to_string(&input).unwrap();
    let from_stdin = run(&["--config", config.to_str().unwrap()], Some(&text));
    let body = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("\"stage\":\"rip-reconcile\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(body(&from_file.stdout), body(&from_stdin.stdout));
}

#[test]
fn the_default_reconciler_marks_every_failure_missing() {
    let input = testdata("health/aon.ndjson");
    let r = run(&["-i", input.to_str().unwrap()], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (errors, summary) = verdicts(&r);
    assert_eq!(errors.len(), 4);
    assert!(
        errors
            .iter()
            .all(|e| e.resolution == Some(Resolution::Missing { candidates: vec![] }))
    );
    assert_eq!(summary.counters.get("missing"), Some(&4));
}

#[test]
fn bad_lines_and_bad_error_records_are_reported_and_the_rest_reconciled() {
    let original = std::fs::read_to_string(testdata("health/site.ndjson")).unwrap();
    let mut lines: Vec<&str> = original.lines().collect();
    lines.insert(1, "{not json");
    lines.insert(3, r#"{"_type":"error","url":"http://h/x"}"#); // no `errors`
    let text = lines.join("\n") + "\n";
    let config = testdata("reconcile/site.json");
    let r = run(&["--config", config.to_str().unwrap()], Some(&text));
    assert_eq!(r.code, 2, "partial: {}", r.stderr);
    assert!(r.stderr.contains("-:2: not JSON"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("-:4: bad `error` record: missing field `errors`"),
        "{}",
        r.stderr
    );
    let (errors, summary) = verdicts(&r);
    assert_eq!(summary.bad_lines, 2);
    assert_eq!(
        verdict(&errors, "/classes/77.html"),
        &elsewhere(&format!("{SITE}/ancestries/77.html"))
    );
    assert_eq!(r.stdout.lines().count(), original.lines().count() + 1);
}

#[test]
fn a_bad_config_names_the_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(
        &path,
        "{\n  \"key\": { \"pathTail\": true },\n  \"nmae\": {}\n}\n",
    )
    .unwrap();
    let r = run(&["--config", path.to_str().unwrap()], Some(""));
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains(&format!("{}:3:", path.display()))
            && r.stderr.contains("unknown field `nmae`"),
        "{}",
        r.stderr
    );
    std::fs::write(&path, r#"{"key":{"urlPattern":"ID=("}}"#).unwrap();
    let r = run(&["--config", path.to_str().unwrap()], Some(""));
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("`key.urlPattern`: bad regex `ID=(`"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_example_configs_follow_the_published_schema() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(rip_testkit::repo().join("docs/schemas/reconciler.schema.json"))
            .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("a valid schema");
    for name in ["aon.json", "site.json"] {
        let config: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(testdata(&format!("reconcile/{name}"))).unwrap(),
        )
        .unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&config)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    for bad in [
        r#"{"key":{"urlPattern":"x","pathTail":true}}"#,
        r#"{"name":{}}"#,
        r#"{"dead":[{"reason":"no condition"}]}"#,
        r#"{"kye":{}}"#,
    ] {
        let v: serde_json::Value = serde_json::from_str(bad).unwrap();
        assert!(!validator.is_valid(&v), "schema accepts {bad}");
    }
}

#[test]
fn the_reconciled_goldens_of_rip_health_are_current() {
    // rip-health's tests read `*.reconciled.ndjson`: rip-reconcile's output on the golden
    // streams. If this fails, run testdata/health/regenerate.
    for (stream, config) in [
        ("aon", "aon"),
        ("site", "site"),
        ("lost", "site"),
        ("unwritten", "site"),
    ] {
        let input = testdata(&format!("health/{stream}.ndjson"));
        let config = testdata(&format!("reconcile/{config}.json"));
        let r = run(
            &[
                "-q",
                "--config",
                config.to_str().unwrap(),
                "-i",
                input.to_str().unwrap(),
            ],
            None,
        );
        let golden =
            std::fs::read_to_string(testdata(&format!("health/{stream}.reconciled.ndjson")))
                .unwrap();
        let all_but_last = |s: &str| {
            let lines: Vec<String> = s.lines().map(str::to_owned).collect();
            lines[..lines.len() - 1].to_vec()
        };
        assert_eq!(
            all_but_last(&r.stdout),
            all_but_last(&golden),
            "{stream}.reconciled.ndjson is stale (hint: run testdata/health/regenerate)"
        );
    }
}

#[test]
fn ctrl_c_writes_what_was_read_unreconciled_and_exits_130() {
    let mut child = Stage::new("rip-reconcile")
        .args([
            "--config",
            testdata("reconcile/site.json").to_str().unwrap(),
        ])
        .command()
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let text = std::fs::read_to_string(testdata("health/site.ndjson")).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(text.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // Input stays open, as from a stage still running; then Ctrl-C.
    std::thread::sleep(std::time::Duration::from_millis(300));
    rip_testkit::interrupt(&child);
    let r = Ran::wait("rip-reconcile", child);
    drop(stdin);
    assert_eq!(r.code, 130);
    let (errors, summary) = verdicts(&r);
    assert_eq!(summary.status, rip_core::Status::Interrupted);
    assert_eq!(errors.len(), 2, "what was read is written");
    assert!(
        errors.iter().all(|e| e.resolution.is_none()),
        "but not judged on half the stream"
    );
    assert_eq!(r.stdout.lines().count(), text.lines().count() + 1);
}
