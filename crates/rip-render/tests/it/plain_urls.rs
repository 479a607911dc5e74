//! Plain URLs as input: a bare URL line, and URLs given as arguments, are refs.

use rip_core::Record;
use rip_testserver::TestServer;

use crate::{one_each, stage};

const HTML: &str = "<!doctype html><title>t</title><p id=x>hello</p>\
                    <script>document.getElementById('x').textContent = 'rendered'</script>";

#[test]
fn bare_url_lines_and_url_arguments_are_rendered() {
    let server = TestServer::builder()
        .file("/a", HTML)
        .file("/b", HTML)
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (server.url("/a"), server.url("/b"));
    let rendered = |record: &Record| match record {
        Record::Page(p) => p.body.contains("rendered"),
        _ => false,
    };

    let input = format!("{a}\nhttp://exa mple.com/\n");
    let ran = stage("rip-render", dir.path(), &["--wait", "load"], &input).run();
    assert_eq!(ran.code, 2, "{}", ran.stderr);
    assert!(
        one_each(&ran, std::slice::from_ref(&a))
            .into_iter()
            .all(rendered)
    );
    assert!(
        ran.stderr.contains("-:2: not a URL: http://exa mple.com/"),
        "{}",
        ran.stderr
    );

    // The arguments are the input: stdin's ref is not read.
    let unread = format!("{}\n", server.url("/missing"));
    let ran = stage("rip-render", dir.path(), &["--wait", "load", &b], &unread).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert!(one_each(&ran, &[b]).into_iter().all(rendered));
    assert_eq!(ran.records().len(), 2, "ledger and page: {}", ran.stdout);
}
