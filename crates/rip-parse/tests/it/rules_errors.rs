//! Bad rules files are refused before any input is read, with `file:line:column`, the
//! concept and field, and the offending line quoted.

use crate::support::*;

/// Each file under `testdata/parse/bad-rules/` starts with `# expect: <text>`: the
/// first line of the error must contain it. The input named on the command line
/// does not exist, so an error about anything but the rules would show the input was
/// looked at first.
#[test]
fn every_bad_rules_file_names_file_line_and_field() {
    let dir = testdata("parse/bad-rules");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10);
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{}: no `# expect:` line", file.display()));
        let r = run(
            &[
                "--rules",
                file.to_str().unwrap(),
                "--input",
                "/nonexistent/input.ndjson",
            ],
            b"",
        );
        assert_eq!(r.code, 1, "{}: {}", file.display(), r.stderr);
        assert_eq!(r.stdout, "", "nothing written, not even a summary");
        let first = r.stderr.lines().next().unwrap_or("");
        assert!(
            first.starts_with("rip-parse: error: ")
                && first.contains(&format!("{}:", file.display())),
            "{}: the error names the file: {first}",
            file.display()
        );
        assert!(
            first.contains(expect),
            "{}:\nexpected: {expect}\nstderr:\n{}",
            file.display(),
            r.stderr
        );
        assert!(
            !r.stderr.contains("nonexistent"),
            "input not opened: {}",
            r.stderr
        );
        // The offending line is quoted under the message.
        let line_no: usize = expect.split(':').nth(1).unwrap().parse().unwrap();
        let quoted = text.lines().nth(line_no - 1).unwrap();
        assert!(
            r.stderr.contains(&format!("{line_no} | {quoted}")),
            "{}: quote\n{}",
            file.display(),
            r.stderr
        );
    }
}

#[test]
fn all_problems_of_a_file_are_reported_at_once() {
    let file = testdata("parse/bad-rules/many-problems.toml");
    let r = run(&["--rules", file.to_str().unwrap(), "--check-rules"], b"");
    assert_eq!(r.code, 1);
    let located: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.contains("many-problems.toml:"))
        .collect();
    assert_eq!(located.len(), 3, "{}", r.stderr);
    assert!(
        located[1].contains(":8:") && located[1].contains("field `price`: bad CSS selector `>>`"),
        "{}",
        located[1]
    );
    assert!(
        located[2].contains(":9:")
            && located[2].contains("field `attr`: `extract = \"attr\"` needs `attr`"),
        "{}",
        located[2]
    );
    assert!(r.stderr.contains("3 problems in"), "{}", r.stderr);
}

#[test]
fn valid_example_rules_pass_check_rules() {
    for name in [
        "emberfall-by-url.toml",
        "gloomhollow-by-content.toml",
        "emberfall-wiki.toml",
    ] {
        let file = testdata("parse/rules").join(name);
        let r = run(&["--rules", file.to_str().unwrap(), "--check-rules"], b"");
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert_eq!(r.stdout, "");
    }
}

#[test]
fn a_missing_rules_file_is_a_clear_error() {
    let r = run(&["--rules", "/nonexistent/rules.toml"], b"");
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("cannot read rules file /nonexistent/rules.toml"),
        "{}",
        r.stderr
    );
}
