//! A cache folder that is not there is an error naming it and where it was named, not an
//! empty cache; reading a cache (rip-cache, a read-only fetcher) creates no folder.

use std::path::Path;
use std::process::{Command, Output};

use rip_http::{BuildError, CacheMode, Fetcher};

use crate::config;

/// `rip-cache <args>` in `cwd`, with `RIP_CACHE_DIR` set to `env` (or unset).
fn rip_cache(cwd: &Path, env: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(rip_testkit::bin("rip-cache"));
    cmd.current_dir(cwd).args(args).env_remove("RIP_CACHE_DIR");
    if let Some(env) = env {
        cmd.env("RIP_CACHE_DIR", env);
    }
    cmd.output().unwrap()
}

fn refused(out: &Output, folder: &str, named_by: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "no report: {stderr}");
    let said = format!("the cache folder {folder} does not exist (cache folder {named_by})");
    assert!(stderr.contains(&said), "{stderr}");
    assert!(stderr.contains("hint: check the path"), "{stderr}");
}

#[test]
fn rip_cache_on_a_missing_folder_fails_naming_it_and_creates_nothing() {
    let cwd = tempfile::tempdir().unwrap();
    let nope = cwd.path().join("nope");
    let nope_text = nope.display().to_string();
    for command in [
        &["stats"][..],
        &["verify"],
        &["compact"],
        &["prune", "--older-than", "1d"],
    ] {
        let args: Vec<&str> = ["--cache-dir", nope_text.as_str()]
            .into_iter()
            .chain(command.iter().copied())
            .collect();
        let out = rip_cache(cwd.path(), None, &args);
        refused(&out, &nope_text, "given by --cache-dir");
        assert!(!nope.exists(), "{command:?} made the folder");
    }
    let out = rip_cache(cwd.path(), Some(&nope), &["stats"]);
    refused(&out, &nope_text, "from RIP_CACHE_DIR");
    let out = rip_cache(cwd.path(), None, &["verify"]);
    refused(
        &out,
        ".rip-cache",
        "the default (.rip-cache, in the working folder)",
    );
    assert!(!nope.exists() && !cwd.path().join(".rip-cache").exists());
}

#[test]
fn rip_cache_usage_lines_show_the_cache_folder_as_optional() {
    // `--cache-dir` has a default and RIP_CACHE_DIR: a usage error after it was given shows
    // the usage of --help, not the flags given as if they were required.
    let cwd = tempfile::tempdir().unwrap();
    for (args, usage) in [
        (
            &["--cache-dir", "x", "prune"][..],
            "Usage: rip-cache prune [OPTIONS] --older-than <DURATION>",
        ),
        (
            &["stats", "--cache-dir", "x", "--no-such-flag"],
            "Usage: rip-cache stats [OPTIONS]",
        ),
        (
            &["--cache-dir", "x"],
            "Usage: rip-cache [OPTIONS] <COMMAND>",
        ),
        (&["--help"], "Usage: rip-cache [OPTIONS] <COMMAND>"),
        (
            &["prune", "--help"],
            "Usage: rip-cache prune [OPTIONS] --older-than <DURATION>",
        ),
    ] {
        let out = rip_cache(cwd.path(), None, args);
        let help = args.contains(&"--help");
        assert_eq!(
            out.status.code(),
            Some(if help { 0 } else { 1 }),
            "{args:?}"
        );
        let text = String::from_utf8_lossy(if help { &out.stdout } else { &out.stderr });
        let line = text.lines().find(|l| l.starts_with("Usage:"));
        assert_eq!(line, Some(usage), "{args:?}: {text}");
    }
}

#[test]
fn rip_cache_on_a_folder_without_entries_reports_nothing_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    for command in ["stats", "verify", "compact"] {
        let out = rip_cache(dir.path(), None, &["--cache-dir", &d, command]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{command}: {stderr}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let entries = &report[if command == "compact" {
            "entriesBefore"
        } else {
            "entries"
        }];
        assert_eq!(entries, 0, "{command}: {report}");
    }
    let made: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(made.is_empty(), "{made:?}");
}

#[tokio::test]
async fn a_read_only_cache_needs_its_folder_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo");
    let mut c = config();
    c.cache.dir = Some(typo.clone());
    c.cache.mode = CacheMode::ReadOnly;
    c.cache.dir_from = Some("given by --cache-dir".into());
    let err = Fetcher::new(c.clone()).unwrap_err();
    assert!(matches!(err, BuildError::NoCacheFolder { .. }), "{err:?}");
    let text = err.to_string();
    let said = format!(
        "the cache folder {} does not exist (cache folder given by --cache-dir;",
        typo.display()
    );
    assert!(text.contains(&said), "{text}");
    assert!(!typo.exists());

    // A folder that is there is read; nothing is written in it, not even host schedules.
    std::fs::create_dir(&typo).unwrap();
    let f = Fetcher::new(c.clone()).unwrap();
    let got = f.fetch("http://127.0.0.1:9/x").await;
    assert_eq!(crate::fail(&got).class.code, "cache.miss");
    let made: Vec<_> = std::fs::read_dir(&typo).unwrap().collect();
    assert!(made.is_empty(), "{made:?}");

    // Writing modes make it, as before.
    std::fs::remove_dir(&typo).unwrap();
    for mode in [CacheMode::ReadWrite, CacheMode::WriteOnly] {
        c.cache.mode = mode;
        Fetcher::new(c.clone()).unwrap();
        assert!(typo.is_dir(), "{mode:?}");
        std::fs::remove_dir_all(&typo).unwrap();
    }
}
