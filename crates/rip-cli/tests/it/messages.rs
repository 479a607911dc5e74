//! Error messages say each thing once, name the input, and point at nothing in the
//! source tree: `<program>: error: <what>: <why>`.

use crate::run;

/// The message's parts (`a: b: c`) that come twice.
fn repeated(message: &str) -> Vec<String> {
    let parts: Vec<&str> = message.split(": ").map(str::trim).collect();
    let mut twice: Vec<String> = parts
        .iter()
        .enumerate()
        .filter(|(i, p)| p.len() > 2 && parts[..*i].contains(p))
        .map(|(_, p)| (*p).to_owned())
        .collect();
    twice.dedup();
    twice
}

fn assert_fatal_and_clean(bin: &str, args: &[&str], input: &[u8], names: &str) {
    let r = run(bin, args, input);
    assert_eq!(r.code, 1, "{bin} {args:?}: {}", r.stderr);
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with(&format!("{bin}: error: ")))
        .unwrap_or_else(|| panic!("{bin} {args:?}: no error line in {:?}", r.stderr));
    assert!(line.contains(names), "{bin} {args:?}: {line}");
    assert!(
        repeated(line).is_empty(),
        "{bin} {args:?} says {:?} twice: {line}",
        repeated(line)
    );
    assert!(
        !line.contains(&format!("error: {bin}")),
        "{bin} {args:?}: the program named twice: {line}"
    );
    for source_path in ["crates/", "docs/schemas", ".rs:"] {
        assert!(
            !r.stderr.contains(source_path),
            "{bin} {args:?}: points into the source tree: {}",
            r.stderr
        );
    }
}

#[test]
fn a_missing_file_is_named_once_with_its_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let m = missing.to_str().unwrap();
    for (bin, args) in [
        ("rip-fetch", vec!["-i", m]),
        ("rip-check", vec!["-i", m]),
        ("rip-route", vec!["-p", m]),
        ("rip-parse", vec!["--rules", m]),
        ("rip-parse", vec!["--output-schema", m]),
        ("rip-reconcile", vec!["--config", m]),
        ("rip-health", vec!["--dir", m]),
        ("rip-discover", vec!["--wiki-config", m]),
        ("ripperoni", vec!["check", m]),
        ("ripperoni", vec!["run", m]),
    ] {
        assert_fatal_and_clean(bin, &args, b"", m);
    }
}

#[test]
fn a_stopped_stage_does_not_repeat_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for (bin, args) in [
        ("rip-route", vec!["--strict"]),
        ("rip-write", vec!["--strict", "--out", out]),
        ("rip-check", vec!["--strict"]),
    ] {
        assert_fatal_and_clean(bin, &args, b"{oops\n", "-:1:");
    }
}

#[test]
fn bad_config_files_point_at_the_binary_not_the_source_tree() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, "[[rules]]\nroute = 7\n").unwrap();
    assert_fatal_and_clean(
        "rip-route",
        &["-p", policy.to_str().unwrap()],
        b"",
        "policy.toml",
    );
    let config = dir.path().join("reconciler.json");
    std::fs::write(&config, "{\"key\": 7}\n").unwrap();
    assert_fatal_and_clean(
        "rip-reconcile",
        &["--config", config.to_str().unwrap()],
        b"",
        "reconciler.json",
    );
}

#[test]
fn the_schemas_the_hints_name_are_printed_by_the_binaries() {
    let root = rip_testkit::repo();
    for (bin, flag, file) in [
        (
            "rip-route",
            "--policy-schema",
            "docs/schemas/policy.schema.json",
        ),
        (
            "rip-reconcile",
            "--config-schema",
            "docs/schemas/reconciler.schema.json",
        ),
        (
            "rip-parse",
            "--rules-schema",
            "docs/schemas/rules.schema.json",
        ),
    ] {
        let r = run(bin, &[flag], b"");
        assert_eq!(r.code, 0, "{bin} {flag}: {}", r.stderr);
        let want = std::fs::read_to_string(root.join(file)).unwrap();
        assert_eq!(r.stdout, want, "{bin} {flag}");
    }
}

/// Lines of binary junk: many "lines", none a record.
fn junk(lines: usize) -> Vec<u8> {
    // No byte of a line but the last is a newline.
    let mut bytes = Vec::new();
    for _ in 0..lines {
        bytes.extend_from_slice(&[0x7f, b'E', b'L', b'F', 0, 2, 0xff, b'\n']);
    }
    bytes
}

#[test]
fn binary_input_reports_ten_bad_lines_then_how_many_more() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for (bin, args) in [
        ("rip-fetch", vec!["--cache", "off"]),
        ("rip-route", vec![]),
        ("rip-check", vec![]),
        ("rip-parse", vec![]),
        ("rip-write", vec!["--out", out]),
        ("rip-discover", vec!["-i", "-", "--cache", "off"]),
        ("rip-health", vec![]),
    ] {
        let r = run(bin, &args, &junk(500));
        let reported = r.stderr.lines().filter(|l| l.starts_with("-:")).count();
        assert_eq!(reported, 10, "{bin}: {}", r.stderr);
        assert!(
            r.stderr.contains("… and 490 more bad lines"),
            "{bin}: {}",
            r.stderr
        );
        assert!(r.stderr.lines().count() < 20, "{bin}: {}", r.stderr);
    }
}

#[test]
fn a_bad_field_of_a_ref_is_named_with_its_line() {
    let input = concat!(
        "{\"_type\":\"ref\",\"url\":\"http://127.0.0.1:9/a\"}\n",
        "\n",
        "{\"_type\":\"ref\",\"url\":\"http://127.0.0.1:9/b\",\"notBefore\":\"soon\"}\n",
    );
    let r = run(
        "rip-fetch",
        &["--cache", "off", "--delay", "0"],
        input.as_bytes(),
    );
    let line = r
        .stderr
        .lines()
        .find(|l| l.starts_with("-:3:"))
        .unwrap_or_else(|| panic!("line 3 reported: {}", r.stderr));
    assert!(line.contains("field `notBefore`"), "{line}");
    assert!(line.contains("\"soon\""), "{line}");
}
