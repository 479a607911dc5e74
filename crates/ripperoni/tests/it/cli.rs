//! State files, the schema, the printed pipeline and the scaffold.

use crate::support::*;
use serde_json::json;

#[test]
fn the_committed_schema_is_the_generated_one() {
    let want = ripperoni::state::json_schema();
    let path = repo().join("docs/schemas/state.schema.json");
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/schemas/state.schema.json is stale (hint: `ripperoni schema > \
         docs/schemas/state.schema.json`, or UPDATE_SCHEMA=1 cargo test -p ripperoni schema)"
    );
    let o = run(&["schema"]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stdout), want);
}

#[test]
fn the_demo_state_file_is_valid() {
    let p = repo().join("testdata/demo/emberfall.state.json");
    let o = run(&["check", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("target `emberfall`, 3 fetch round(s)"),
        "{out}"
    );
}

#[test]
fn a_bad_state_file_is_refused_before_anything_starts_with_every_problem_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.state.json");
    std::fs::write(
        &p,
        json!({
            "baseUrl": "http://127.0.0.1:1/",
            "crawler": {"maxPages": "ten", "maxDeph": 2},
            "output": {"format": "xml"},
        })
        .to_string(),
    )
    .unwrap();
    let o = run(&["run", "-q", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("has 3 problems"), "{err}");
    assert!(
        err.contains("`crawler.maxPages`: expected") && err.contains("found \"ten\" (a string)"),
        "{err}"
    );
    assert!(
        err.contains("unknown field `maxDeph` in `crawler` (did you mean `maxDepth`?)"),
        "{err}"
    );
    assert!(
        err.contains("`output.format`: expected one of \"json\", \"jsonl\", found \"xml\""),
        "{err}"
    );
    assert!(
        !dir.path().join("out").exists(),
        "nothing may be written for a refused state file"
    );
}

#[test]
fn contradictions_and_unsupported_modes_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.state.json");
    std::fs::write(
        &p,
        json!({
            "baseUrl": "http://127.0.0.1:1/",
            "includeRawContent": true,
            "cache": {"mode": "off"},
            "rules": "missing.toml",
        })
        .to_string(),
    )
    .unwrap();
    let o = run(&["pipeline", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    for want in [
        "`includeRawContent`: raw content is wanted but `cache.mode` is off",
        "`cache.mode`: is `off`",
        "`rules`: expected a readable file, found nothing at",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}

#[test]
fn the_state_file_and_the_policy_may_not_disagree_on_max_retries() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("p.toml");
    std::fs::write(&policy, "maxRetries = 1\n").unwrap();
    let p = dir.path().join("r.state.json");
    let write = |v: serde_json::Value| std::fs::write(&p, v.to_string()).unwrap();
    write(json!({"baseUrl": "http://127.0.0.1:1/", "policy": "p.toml", "maxRetries": 3}));
    let o = run(&["pipeline", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("`maxRetries`: is 3, but the policy file"),
        "{}",
        stderr(&o)
    );
    // Said once, in the policy: two rounds.
    write(json!({"baseUrl": "http://127.0.0.1:1/", "policy": "p.toml"}));
    let o = run(&["pipeline", p.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(text.matches("rip-fetch").count(), 2, "{text}");
    assert_eq!(text.matches("--max-retries 1").count(), 3, "{text}");
}

#[test]
fn pipeline_prints_the_stages_with_rounds_unrolled() {
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), "http://127.0.0.1:9", |_| {});
    let o = run(&["pipeline", state.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let stages: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            l.trim_start_matches("  | ")
                .split_whitespace()
                .next()
                .filter(|w| w.starts_with("rip-"))
        })
        .collect();
    assert_eq!(
        stages,
        [
            "rip-discover",
            "rip-fetch",
            "rip-route",
            "rip-fetch",
            "rip-route",
            "rip-fetch",
            "rip-route",
            "rip-parse",
            "rip-route",
            "rip-write",
            "rip-reconcile",
            "rip-health"
        ],
        "{text}"
    );
    assert_eq!(text.matches("--max-retries 2").count(), 4, "{text}");
    // No rip-fetch follows the last round's rip-route nor the one after rip-parse: they
    // capture what they would retry, so no retry ref is left unfetched.
    let finals: Vec<&str> = text.lines().filter(|l| l.contains("--final")).collect();
    assert_eq!(finals.len(), 2, "{text}");
    assert!(finals.iter().all(|l| l.contains("rip-route")), "{text}");
    assert!(text.contains("rip-discover http://127.0.0.1:9/ --max-depth 5 -c 4 --per-host 4"));
    assert!(
        text.contains(" --delay 10ms --jitter 5ms --retry-base 50ms"),
        "{text}"
    );
    assert!(text.contains("--state "), "{text}");
    // Each flag spelled as it means the same on every binary: rip-write's subfolder is
    // --name (--target is rip-discover's regex), rip-reconcile's file --config (-c is
    // concurrency).
    assert!(
        text.contains("--name emberfall > ") && text.contains("emberfall/stream.ndjson"),
        "{text}"
    );
    assert!(text.contains("rip-reconcile --config "), "{text}");
    assert!(text.contains("rip-health --dir "), "{text}");
}

#[test]
fn scaffold_writes_files_that_check_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let o = run(&["scaffold", "mysite", "--dir", d]);
    assert!(o.status.success(), "{}", stderr(&o));
    let state = dir.path().join("mysite.state.json");
    assert!(dir.path().join("mysite.rules.toml").is_file());
    assert!(dir.path().join("mysite.policy.toml").is_file());
    let o = run(&["check", state.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["scaffold", "mysite", "--dir", d]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
}

#[test]
fn a_scaffold_runs_as_it_is_against_the_demo_site() {
    let server = rip_testserver::TestServer::builder()
        .dir(repo().join("testdata/site"))
        .start_background()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let base = format!("{}/", server.origin());
    let o = run(&["scaffold", "starter", "--dir", d, "--base-url", &base]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "run",
        "-q",
        dir.path().join("starter.state.json").to_str().unwrap(),
    ]);
    // The two broken links of the site are missing (the default reconciler): partial.
    // The logo (not HTML) is a known gap by the scaffold's policy, not an error.
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let health = read_json(dir.path().join("out/starter/crawl-health.json"));
    assert_eq!(health["totals"]["concepts"], 47, "47 pages");
    assert_eq!(health["totals"]["missing"], 2, "{:#}", health["totals"]);
    assert_eq!(
        health["expected"]["byReason"]["not HTML: images and downloads are not scraped"], 1,
        "{:#}",
        health["expected"]
    );
    assert_eq!(health["ledger"]["complete"], true, "{:#}", health["ledger"]);
    let items = std::fs::read_dir(dir.path().join("out/starter"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .contains("item-1")
        })
        .count();
    assert!(items >= 1, "item docs are written");
}

#[test]
fn a_target_name_must_be_a_plain_name_not_an_option() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for bad in ["-r", ".hidden", "a/b", "a b", ""] {
        let o = run(&["scaffold", "--dir", d, "--", bad]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{bad:?}: {err}");
        assert!(
            err.contains(&format!("`{bad}` cannot name a target"))
                && err.contains("letters, digits, `-`, `_` and `.`")
                && err.contains("not starting with `-` or `.`"),
            "{bad:?}: {err}"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
    for good in ["a", "my-site_2", "docs.v2", "R2"] {
        let o = run(&["scaffold", "--dir", d, good]);
        assert!(o.status.success(), "{good}: {}", stderr(&o));
    }
    // A state file whose name gives such a target is refused the same way.
    let p = dir.path().join("-r.state.json");
    std::fs::write(&p, json!({"baseUrl": "http://127.0.0.1:1/"}).to_string()).unwrap();
    let o = run(&["check", "--", p.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not starting with `-` or `.`"), "{err}");
}

#[test]
fn a_url_listed_twice_is_refused_naming_both_places() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("dup.state.json");
    std::fs::write(
        &p,
        json!({
            "baseUrl": "http://127.0.0.1:1/",
            "urls": [
                "items/item-1.html",
                "/items/item-2.html",
                "http://127.0.0.1:1/items/item-1.html",
                "items/item-2.html#stats",
                "items/item-3.html",
            ],
        })
        .to_string(),
    )
    .unwrap();
    for cmd in ["check", "run"] {
        let o = run(&[cmd, p.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
        assert!(err.contains("has 2 problems"), "{cmd}: {err}");
        assert!(
            err.contains(
                "`urls[2]`: `http://127.0.0.1:1/items/item-1.html` is listed already, as \
                 `urls[0]` (`items/item-1.html`)"
            ),
            "{cmd}: {err}"
        );
        assert!(
            err.contains(
                "`urls[3]`: `items/item-2.html#stats` is the same page as `urls[1]` \
                 (`/items/item-2.html`) once canonicalised (`http://127.0.0.1:1/items/item-2.html`)"
            ),
            "{cmd}: {err}"
        );
    }
    assert!(!dir.path().join("out").exists(), "nothing ran");
}

/// A password in `queue.broker` is refused (credentials never go in the state file), and the
/// refusal does not print it back: it names `credentialsFile` instead of a regex.
#[test]
fn a_password_in_the_broker_url_is_refused_without_being_printed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("spread.state.json");
    std::fs::write(
        &p,
        json!({
            "baseUrl": "http://127.0.0.1:1/",
            "queue": {"broker": "nats://alice:s3cret@127.0.0.1:4222"}
        })
        .to_string(),
    )
    .unwrap();
    let o = run(&["check", p.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("`queue.broker`"), "{err}");
    assert!(err.contains("credentialsFile"), "{err}");
    assert!(!err.contains("s3cret"), "the password is printed: {err}");
}
