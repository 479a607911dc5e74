//! The last `rip-route` of a pipeline: `--final` says no `rip-fetch` follows, so nothing is
//! sent back to one; and refs that reach a `rip-route` unfetched are reported.

use crate::support::*;
use rip_core::{Record, Status};

fn policy(dir: &tempfile::TempDir, toml: &str) -> String {
    let path = dir.path().join("policy.toml");
    std::fs::write(&path, toml).unwrap();
    path.display().to_string()
}

fn kinds(r: &Ran) -> Vec<String> {
    r.records()
        .iter()
        .map(|r| r.kind().as_str().to_owned())
        .collect()
}

#[test]
fn final_captures_what_retry_would_send_to_a_fetch_that_never_comes() {
    let input = failure("http://h/items/7.html", 503, 1) + "\n";
    let r = route(&[], &input);
    assert!(matches!(r.records(), [Record::Ref(_)]), "{:?}", r.lines());

    let r = route(&["--final"], &input);
    let [Record::Error(e)] = r.records() else {
        panic!("{:?} {}", r.lines(), r.stderr)
    };
    assert_eq!((e.attempt, e.status), (1, Some(503)));
    assert_eq!(r.summary().status, Status::Partial);
    assert_eq!(r.summary().counters.get("captured"), Some(&1));
}

#[test]
fn final_overrides_a_rules_own_retries_and_the_resolve_route() {
    let dir = tempfile::tempdir().unwrap();
    let p = policy(
        &dir,
        "[[rules]]\nstatus = 503\nroute = \"retry\"\nmaxRetries = 9\n\n\
         [[rules]]\nstatus = 404\nroute = \"resolve\"\n\n\
         [resolve]\nstrategies = [\"crossLocator\"]\ncategorySet = [\"ancestries\", \"classes\"]\n",
    );
    let input = failure("http://h/items/7.html", 503, 4)
        + "\n"
        + &failure("http://h/classes/77.html", 404, 1)
        + "\n";
    let r = route(&["-p", &p], &input);
    assert_eq!(
        kinds(&r),
        ["ref", "failure", "ref"],
        "without --final: {:?}",
        r.lines()
    );

    let r = route(&["-p", &p, "--final"], &input);
    assert_eq!(
        kinds(&r),
        ["error", "error"],
        "{:?} {}",
        r.lines(),
        r.stderr
    );
}

#[test]
fn refs_that_reach_a_rip_route_unfetched_are_reported_and_passed_on() {
    let retry = r#"{"_type":"ref","url":"http://h/items/7.html","depth":2,"attempt":2}"#;
    let first = r#"{"_type":"ref","url":"http://h/a","depth":0,"attempt":0}"#;
    let input = format!("{first}\n{retry}\n");
    let r = route(&[], &input);
    assert_eq!(
        r.lines(),
        input.lines().collect::<Vec<_>>(),
        "passed on unchanged"
    );
    assert_eq!(r.summary().counters.get("unfetchedRefs"), Some(&1));
    for part in [
        "1 ref reached rip-route unfetched",
        "http://h/items/7.html",
        "hint",
    ] {
        assert!(r.stderr.contains(part), "{part}: {}", r.stderr);
    }
}
