//! How a run ends: the exit codes (0 complete, 1 fatal; 2, 3 and 130 are in e2e and
//! interrupt), Ladon's summary on stderr, and the run history in `runs.ndjson` read with
//! the guide's `jq` line (docs/guide/ripperoni.md).

use crate::support::*;
use std::path::Path;

fn plain_server() -> rip_testserver::TestServer {
    rip_testserver::TestServer::builder()
        .dir(repo().join("testdata/site"))
        .start_background()
        .unwrap()
}

/// A URL-list state file: `urls` instead of the crawler.
fn listed(dir: &Path, origin: &str, urls: &[&str]) -> std::path::PathBuf {
    demo_state(dir, origin, |v| {
        v.as_object_mut().unwrap().remove("crawler");
        v["urls"] = serde_json::json!(urls);
    })
}

/// The guide's one line for "when did the last complete run end", for `target`
/// (docs/guide/ripperoni.md).
fn guide_jq_line(target: &str) -> String {
    let guide = std::fs::read_to_string(repo().join("docs/guide/ripperoni.md")).unwrap();
    let line = guide
        .lines()
        .find(|l| {
            l.starts_with("jq ")
                && l.contains(".status == \"complete\"")
                && l.contains("runs.ndjson")
        })
        .expect("docs/guide/ripperoni.md has the jq line for the last complete run");
    line.replace("mysite", target)
}

#[test]
fn a_complete_run_exits_0_and_the_guides_jq_line_finds_when_the_last_one_ended() {
    let server = plain_server();
    let dir = tempfile::tempdir().unwrap();
    let origin = server.origin();
    let jq = guide_jq_line("emberfall");
    let last_complete = || {
        let o = rip_testkit::shell(&jq, Some(dir.path())).output().unwrap();
        assert!(o.status.success(), "{jq}: {}", stderr(&o));
        String::from_utf8(o.stdout).unwrap().trim().to_owned()
    };

    // 1: partial (a page that does not exist): no complete run yet.
    let state = listed(dir.path(), &origin, &["items/item-1.html", "nowhere.html"]);
    let o = run(&["run", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(last_complete(), "");

    // 2: complete: every URL became a doc, nothing failed.
    let state = listed(
        dir.path(),
        &origin,
        &["items/item-1.html", "items/item-2.html"],
    );
    let o = run(&["run", state.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // Ladon's summary, last but for the report's path.
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[lines.len() - 2].contains("emberfall complete in ")
            && lines[lines.len() - 2].ends_with(": consumed 2, persisted 2, failed 0, errors 0"),
        "{err}"
    );
    assert!(lines[lines.len() - 1].starts_with("report: "), "{err}");
    let runs2 = runs(dir.path());
    assert_eq!(runs2.len(), 2);
    let r = &runs2[1];
    assert_eq!(r["status"], "complete");
    assert_eq!(r["exitCode"], 0);
    assert_eq!(r["errors"], serde_json::json!([]));
    for (k, n) in [
        ("consumed", 2),
        ("persisted", 2),
        ("failed", 0),
        ("entered", 2),
    ] {
        assert_eq!(r["counters"][k], n, "{k}: {r:#}");
    }
    assert!(r["start"].as_str().unwrap() < r["end"].as_str().unwrap());
    assert!(r["id"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(last_complete(), r["end"].as_str().unwrap());

    // 3: partial again: the last complete run is still the second. `-q` leaves out the
    // progress and the health summary, not the verdict: what is missing, and the report.
    let state = listed(dir.path(), &origin, &["nowhere.html"]);
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(runs(dir.path()).len(), 3);
    assert_eq!(last_complete(), r["end"].as_str().unwrap());
    assert!(err.contains("ripperoni: emberfall partial in "), "{err}");
    assert!(
        err.contains(&format!("  - missing: {origin}/nowhere.html")),
        "{err}"
    );
    assert!(
        err.lines()
            .last()
            .is_some_and(|l| l.starts_with("report: ")),
        "{err}"
    );
    assert!(!err.contains("crawl health"), "no health summary: {err}");

    // 4: complete with -q: nothing to say.
    let state = listed(dir.path(), &origin, &["items/item-1.html"]);
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
}

/// A stage that dies: the run is `failed`, exit 1, the record names the stage and what it
/// said last, and the previous output is kept.
#[test]
fn a_stage_that_fails_makes_the_run_failed_exit_1() {
    use std::os::unix::fs::PermissionsExt as _;
    let server = plain_server();
    let dir = tempfile::tempdir().unwrap();
    // The real stages, but a rip-parse that passes --check-rules and then dies.
    let bins = dir.path().join("bin");
    std::fs::create_dir(&bins).unwrap();
    for e in std::fs::read_dir(rip_testkit::bin_dir()).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("rip-") && !name.contains('.') && name != "rip-parse" {
            std::os::unix::fs::symlink(e.path(), bins.join(&name)).unwrap();
        }
    }
    let fake = bins.join("rip-parse");
    std::fs::write(
        &fake,
        "#!/bin/sh\ncase \"$*\" in *--check-rules*) exit 0;; esac\n\
         cat >/dev/null\necho 'rip-parse: out of cheese' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();

    let state = listed(dir.path(), &server.origin(), &["items/item-1.html"]);
    // A good run first: the failed one must leave its output as it was.
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = dir.path().join("out/emberfall");
    let doc = std::fs::read(out.join("items-item-1.html.json")).unwrap();
    let stream = std::fs::read(out.join("stream.ndjson")).unwrap();

    let o = ripperoni()
        .env("RIP_BIN_DIR", &bins)
        .args(["run", state.to_str().unwrap()])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(
        std::fs::read(out.join("items-item-1.html.json")).unwrap(),
        doc
    );
    assert_eq!(std::fs::read(out.join("stream.ndjson")).unwrap(), stream);
    assert!(
        err.contains(&format!("the previous output in {} is kept", out.display())),
        "{err}"
    );
    let r = &runs(dir.path())[1];
    assert_eq!(r["kept"], out.display().to_string(), "{r:#}");
    assert_eq!(r["status"], "failed", "{r:#}");
    assert_eq!(r["exitCode"], 1);
    let errors: Vec<&str> = r["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("rip-parse exited 1") && e.contains("out of cheese")),
        "{errors:?}"
    );
    assert!(err.contains("emberfall failed in "), "{err}");
}

/// The wrapper's own files (the run history, the stream, the logs, the source's input,
/// the lock, the folders) have the modes of the umask, as every other file: nothing
/// private.
#[test]
fn the_wrappers_files_have_the_umasks_modes() {
    use std::os::unix::fs::PermissionsExt as _;
    let server = plain_server();
    let dir = tempfile::tempdir().unwrap();
    let state = listed(dir.path(), &server.origin(), &["items/item-1.html"]);
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(r#"umask 022 && exec "$0" run -q "$1""#)
        .arg(rip_testkit::bin("ripperoni"))
        .arg(&state)
        .env("RIP_BIN_DIR", rip_testkit::bin_dir())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let base = dir.path().join("out");
    let out = base.join("emberfall");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for f in [
        base.join("runs.ndjson"),
        base.join(".emberfall.lock"),
        out.join("stream.ndjson"),
        out.join(".ripperoni/input.ndjson"),
        out.join(".ripperoni/logs/00-rip-check.log"),
    ] {
        assert_eq!(mode(&f), 0o644, "{}", f.display());
    }
    for d in [
        &base,
        &out,
        &out.join(".ripperoni"),
        &out.join(".ripperoni/logs"),
    ] {
        assert_eq!(mode(d), 0o755, "{}", d.display());
    }
}
