//! Plain URLs as input: a line that is a bare URL, and URLs given as arguments, are refs.

use super::{fetch_stage, server};
use rip_core::Record;
use rip_testkit::Ran;

/// The URLs of the pages fetched, in order of output.
fn pages(out: &Ran) -> Vec<String> {
    let mut urls: Vec<String> = out
        .of("page")
        .into_iter()
        .filter_map(|r| match r {
            Record::Page(p) => Some(p.url.clone()),
            _ => None,
        })
        .collect();
    urls.sort();
    urls
}

#[test]
fn a_bare_url_line_is_fetched_and_a_bad_one_named() {
    let server = server(2).start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = format!(
        "{}\nhttp://exa mple.com/\n{}\n",
        server.url("/p0"),
        server.url("/p1")
    );
    let out = fetch_stage(&[], dir.path(), &input).run();
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert_eq!(pages(&out), vec![server.url("/p0"), server.url("/p1")]);
    assert!(
        out.stderr
            .contains("-:2: not a URL: http://exa mple.com/: it contains white space"),
        "{}",
        out.stderr
    );
    assert_eq!(out.summary().bad_lines, 1);
}

#[test]
fn urls_as_arguments_are_fetched_without_reading_stdin() {
    let server = server(2).start_background().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (p0, p1) = (server.url("/p0"), server.url("/p1"));
    // stdin holds a ref that must not be read: the arguments are the input.
    let unread = format!("{}\n", server.url("/missing"));
    let out = fetch_stage(&[&p0, &p1], dir.path(), &unread).run();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(pages(&out), vec![p0, p1]);
    assert_eq!(out.of("failure").len(), 0, "{}", out.stdout);

    let bad = fetch_stage(&["not-a-url"], dir.path(), "").run();
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert!(
        bad.stderr.contains("not a URL: not-a-url"),
        "{}",
        bad.stderr
    );
}
