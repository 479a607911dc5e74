//! `--session`: pages share cookies and storage only when asked.

use std::time::Duration;

use rip_core::Record;
use rip_testserver::{Fault, Rule, TestServer};

use super::{one_each, refs, stage};

/// What the account page's script found: `who` in local storage, and the cookies.
const ACCOUNT: &str = "<!doctype html><title>account</title><body><script>\
    document.body.dataset.seen = (localStorage.getItem('who') || 'nobody') + ' | ' + \
    (document.cookie || 'no cookie');</script></body>";

/// The sign-in page leaves a name in local storage and a cookie by script; its response
/// sets another cookie.
const SIGN_IN: &str = "<!doctype html><title>sign in</title><body><script>\
    localStorage.setItem('who', 'ann'); document.cookie = 'js=1; path=/';</script></body>";

/// `data-seen` of the account page, rendered after the sign-in page by rip-render with
/// `extra` arguments, in a cache folder of its own.
fn seen_by_account(server: &TestServer, extra: &[&str]) -> (String, u64) {
    let dir = tempfile::tempdir().unwrap();
    let urls = [server.url("/sign-in.html"), server.url("/account.html")];
    // One tab, and the account page's document answered 300 ms late: the sign-in page
    // takes the tab first.
    let mut args = vec!["-c", "1", "--wait", "load"];
    args.extend_from_slice(extra);
    let ran = stage("rip-render", dir.path(), &args, &refs(&urls)).run();
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let got = one_each(&ran, &urls);
    let Record::Page(account) = got[1] else {
        panic!("{:?}", got[1])
    };
    let at = account.body.find("data-seen=\"").expect("the script ran") + 11;
    let seen = &account.body[at..];
    let seen = seen[..seen.find('"').unwrap()].to_owned();
    (seen, ran.counter("browserStarts"))
}

#[test]
fn pages_share_cookies_and_storage_only_with_a_session() {
    let server = TestServer::builder()
        .file("/sign-in.html", SIGN_IN)
        .file("/account.html", ACCOUNT)
        .rule(
            Rule::path("/sign-in.html")
                .always(Fault::serve().header("Set-Cookie", "sid=s42; Path=/")),
        )
        .rule(Rule::path("/account.html").always(Fault::serve().delay(Duration::from_millis(300))))
        .start_background()
        .unwrap();

    let (fresh, _) = seen_by_account(&server, &[]);
    assert_eq!(fresh, "nobody | no cookie", "a fresh context per page");

    let (shared, starts) = seen_by_account(&server, &["--session"]);
    assert_eq!(starts, 1);
    let (who, cookies) = shared.split_once(" | ").unwrap();
    assert_eq!(who, "ann", "local storage kept: {shared}");
    let mut cookies: Vec<&str> = cookies.split("; ").collect();
    cookies.sort();
    assert_eq!(
        cookies,
        ["js=1", "sid=s42"],
        "the script's cookie and the response's Set-Cookie: {shared}"
    );
}
