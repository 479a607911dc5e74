//! A bare URL line is the `ref` of that URL (rip-core's reader, shared by every stage);
//! a URL line that is not a URL is a bad line.

use rip_testkit::Stage;

#[test]
fn a_bare_url_line_is_checked_as_its_ref() {
    let input = "https://example.com/a?b=1\nhttp://a:99999/\n";
    let r = Stage::new("rip-check").stdin(input).run();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.lines(),
        [r#"{"_type":"ref","url":"https://example.com/a?b=1","depth":0,"attempt":0}"#]
    );
    assert!(
        r.stderr
            .contains("-:2: not a URL: http://a:99999/: invalid port number"),
        "{}",
        r.stderr
    );
    assert_eq!(r.summary().bad_lines, 1);
}

#[test]
fn a_bare_url_of_another_scheme_is_said_to_be_one() {
    let r = Stage::new("rip-check")
        .stdin("ftp://h/file.txt\nhttp://h/\n")
        .run();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "-:1: `ftp://h/file.txt` is a `ftp` URL, but only http and https are fetched"
        ),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("not JSON"), "{}", r.stderr);
    assert_eq!(r.lines().len(), 1, "the http line is its ref");
    assert_eq!(r.summary().bad_lines, 1);
}
