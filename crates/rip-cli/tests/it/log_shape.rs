//! One shape for every line a stage writes on stderr, `rip-x: …`: the stage's own lines
//! and tracing's alike, without timestamps unless `RIP_LOG_TIME` asks, and the libraries'
//! lines only with `-v` or `RUST_LOG`.

use rip_testkit::{Ran, Stage};

const DOC: &str = r#"{"_type":"doc","url":"http://h/a","concept":"page","attempt":0}"#;

/// A page whose markup needs a tree (misnested formatting, content a table moves): rip-parse
/// logs why at debug, and html5ever warns of the table.
const TANGLED: &str = r#"{"_type":"page","url":"http://h/t","finalUrl":"http://h/t","status":200,"contentType":"text/html","fetchedAt":"2026-12-01T09:00:00Z","body":"<p><b>x<i>y</b>z</i></p><table><tr>a</table>","truncated":false,"attempt":0}"#;

fn run(bin: &str, args: &[&str], env: &[(&str, &str)], input: &str) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let mut stage = Stage::new(bin)
        .args(args)
        .stdin(input)
        .current_dir(dir.path())
        .env("RUST_LOG", "")
        .env("RIP_LOG_TIME", "");
    for (k, v) in env {
        stage = stage.env(k, v);
    }
    stage.run()
}

#[track_caller]
fn assert_every_line_starts(r: &Ran, prefix: &str) {
    assert!(!r.stderr.is_empty(), "{}: nothing on stderr", r.program);
    for line in r.stderr.lines() {
        assert!(
            line.starts_with(prefix),
            "`{line}` does not start `{prefix}`:\n{}",
            r.stderr
        );
    }
}

#[test]
fn a_tracing_warning_is_a_line_of_the_stage() {
    // A second doc for one URL: rip-write's conflict warning (tracing).
    let r = run(
        "rip-write",
        &["--out", "o"],
        &[],
        &format!("{DOC}\n{DOC}\n"),
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_every_line_starts(&r, "rip-write: ");
    assert!(
        r.stderr
            .contains("rip-write: warning: conflict: a second terminal record"),
        "{}",
        r.stderr
    );
    let r = run(
        "rip-write",
        &["--out", "o"],
        &[("RUST_LOG", "debug")],
        &format!("{DOC}\n{DOC}\n"),
    );
    assert_every_line_starts(&r, "rip-write: ");
}

#[test]
fn verbose_lines_have_the_same_shape_and_libraries_speak_only_when_asked() {
    let quiet = run("rip-parse", &[], &[], TANGLED);
    assert_eq!(quiet.code, 0, "{}", quiet.stderr);
    assert_every_line_starts(&quiet, "rip-parse: ");
    assert!(
        !quiet.stderr.contains("foster parenting"),
        "html5ever's line: {}",
        quiet.stderr
    );
    let verbose = run("rip-parse", &["-v"], &[], TANGLED);
    assert_every_line_starts(&verbose, "rip-parse: ");
    assert!(
        verbose.stderr.contains(
            "rip-parse: debug: read from a tree: misnested formatting elements url=http://h/t"
        ),
        "{}",
        verbose.stderr
    );
}

#[test]
fn timestamps_only_when_asked() {
    let r = run(
        "rip-write",
        &["--out", "o"],
        &[("RIP_LOG_TIME", "1")],
        &format!("{DOC}\n{DOC}\n"),
    );
    let line = r.stderr.lines().find(|l| l.contains("conflict")).unwrap();
    let (time, rest) = line.split_once(' ').unwrap();
    assert!(
        time.starts_with("20") && time.ends_with('Z') && rest.starts_with("rip-write: warning: "),
        "{line}"
    );
}

/// With `RIP_LOG_TIME=1`, every line has the time in front: tracing's, and the stage's own
/// (a bad input line, named `input:line:` as a compiler names one, its summary,
/// `rip-x: error: …`).
#[test]
fn every_line_has_the_time_when_asked() {
    let timed = |r: &Ran, program: &str| {
        assert!(!r.stderr.is_empty(), "{}: nothing on stderr", r.program);
        for line in r.stderr.lines() {
            let (time, rest) = line.split_once(' ').unwrap_or_default();
            assert!(
                time.starts_with("20")
                    && time.ends_with('Z')
                    && (rest.starts_with(&format!("{program}: ")) || rest.starts_with("-:")),
                "`{line}` has no time in front:\n{}",
                r.stderr
            );
        }
    };
    let time = [("RIP_LOG_TIME", "1")];
    let r = run("rip-parse", &[], &time, &format!("not json\n{TANGLED}\n"));
    assert!(r.stderr.contains("not JSON"), "{}", r.stderr);
    timed(&r, "rip-parse");
    let r = run("rip-parse", &["--rules", "nope.toml"], &time, "");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("rip-parse: error: "), "{}", r.stderr);
    timed(&r, "rip-parse");
    let r = run(
        "rip-write",
        &["--out", "o"],
        &time,
        &format!("{DOC}\n{DOC}\n"),
    );
    timed(&r, "rip-write");
}
