//! Flags renamed so that one name means one thing on every binary: the new spelling works
//! without a word, the old one still works and says the new name on stderr.

use crate::{Ran, run};
use std::path::Path;

const DOC: &str = r#"{"_type":"doc","url":"http://127.0.0.1:9/items/a.html","concept":"page","id":"a","name":"A","depth":0,"attempt":0}"#;

fn page(body: &str) -> String {
    serde_json::json!({
        "_type": "page", "url": "http://127.0.0.1:9/p.html", "finalUrl": "http://127.0.0.1:9/p.html",
        "status": 200, "contentType": "text/html", "fetchedAt": "2026-12-01T09:00:00Z",
        "body": body, "depth": 0, "attempt": 0,
    })
    .to_string()
        + "\n"
}

fn warned(r: &Ran, old: &str, new: &str) -> bool {
    r.stderr
        .lines()
        .any(|l| l.contains("warning") && l.contains(old) && l.contains(new))
}

fn assert_quiet_about(r: &Ran, what: &str) {
    assert!(!r.stderr.contains("warning"), "{what}: {}", r.stderr);
}

/// The kinds (and, for failures, codes) of a run's records, summary left out.
fn outcomes(r: &Ran) -> Vec<String> {
    r.stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["_type"] != "summary")
        .map(|v| match v["_type"].as_str().unwrap() {
            "failure" => format!("failure {}", v["errors"][0]["code"].as_str().unwrap_or("")),
            kind => kind.to_owned(),
        })
        .collect()
}

#[test]
fn rip_write_names_the_subfolder_with_name_and_target_still_works() {
    for (flag, warns) in [("--name", false), ("--target", true), ("-t", true)] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        let r = run("rip-write", &["--out", out, flag, "site"], DOC.as_bytes());
        assert_eq!(r.code, 0, "{flag}: {}", r.stderr);
        assert!(
            dir.path().join("site/items-a.html.json").is_file(),
            "{flag}: {}",
            r.stderr
        );
        if warns {
            assert!(warned(&r, flag, "--name"), "{flag}: {}", r.stderr);
        } else {
            assert_quiet_about(&r, flag);
        }
    }
}

fn report_target(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    report["target"].as_str().unwrap().to_owned()
}

#[test]
fn rip_health_names_the_report_with_name_and_writes_it_with_json() {
    let input = format!("{DOC}\n");
    for (name_flag, file_flag, warns) in [
        ("--name", "--json", vec![]),
        ("--target", "--json", vec![("--target", "--name")]),
        ("--name", "--out", vec![("--out", "--json")]),
        ("--name", "-o", vec![("-o", "--json")]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("crawl-health.json");
        let args = [
            name_flag,
            "mysite",
            file_flag,
            file.to_str().unwrap(),
            "--no-ledger",
        ];
        let r = run("rip-health", &args, input.as_bytes());
        assert!(matches!(r.code, 0 | 2), "{args:?}: {}", r.stderr);
        assert_eq!(report_target(&file), "mysite", "{args:?}: {}", r.stderr);
        for (old, new) in &warns {
            assert!(warned(&r, old, new), "{args:?}: {}", r.stderr);
        }
        if warns.is_empty() {
            assert_quiet_about(&r, &format!("{args:?}"));
        }
    }
}

#[test]
fn rip_parse_bounds_nesting_with_max_nesting_and_max_depth_still_works() {
    let deep = page(&format!("<title>t</title>{}", "<div>".repeat(40)));
    for (flag, warns) in [("--max-nesting", false), ("--max-depth", true)] {
        let r = run("rip-parse", &[flag, "20"], deep.as_bytes());
        assert_eq!(r.code, 2, "{flag}: {}", r.stderr);
        assert_eq!(outcomes(&r), ["failure parse.html"], "{flag}: {}", r.stdout);
        if warns {
            assert!(warned(&r, "--max-depth", "--max-nesting"), "{}", r.stderr);
        } else {
            assert_quiet_about(&r, flag);
        }
        let r = run("rip-parse", &[flag, "100"], deep.as_bytes());
        assert_eq!(outcomes(&r), ["doc"], "{flag}: {}", r.stdout);
    }
}

#[test]
fn rip_parse_max_body_takes_sizes_as_rip_fetch_does() {
    let page = page(&format!("<title>t</title><p>{}</p>", "x".repeat(2000)));
    // The common syntax: 1k is cut, 16MiB is not, without a word.
    let r = run("rip-parse", &["--max-body", "1k"], page.as_bytes());
    assert_eq!(outcomes(&r), ["failure parse.body"], "{}", r.stdout);
    assert_quiet_about(&r, "1k");
    let r = run("rip-parse", &["--max-body", "16MiB"], page.as_bytes());
    assert_eq!(outcomes(&r), ["doc"], "{}", r.stdout);
    assert_quiet_about(&r, "16MiB");
    // A bare number is bytes, as in rip-fetch (it was MiB here once): said on stderr.
    let r = run("rip-parse", &["--max-body", "1000"], page.as_bytes());
    assert_eq!(outcomes(&r), ["failure parse.body"], "{}", r.stdout);
    assert!(
        r.stderr.contains("--max-body 1000 is 1000 bytes") && r.stderr.contains("write 1000MiB"),
        "{}",
        r.stderr
    );
    let r = run("rip-parse", &["--max-body", "1000000"], page.as_bytes());
    assert_eq!(outcomes(&r), ["doc"], "{}", r.stdout);
}

#[test]
fn rip_parse_threads_with_threads_and_j_still_works() {
    let page = page("<title>t</title><p>x</p>");
    for (flag, warns) in [("--threads", false), ("-j", true)] {
        let r = run("rip-parse", &[flag, "2"], page.as_bytes());
        assert_eq!(r.code, 0, "{flag}: {}", r.stderr);
        assert_eq!(outcomes(&r), ["doc"], "{flag}: {}", r.stdout);
        if warns {
            assert!(warned(&r, "-j", "--threads"), "{}", r.stderr);
        } else {
            assert_quiet_about(&r, flag);
        }
    }
    let both = run("rip-parse", &["--threads", "2", "-j", "2"], page.as_bytes());
    assert_eq!(both.code, 1, "{}", both.stderr);
}

#[test]
fn rip_render_caps_a_pages_requests_with_max_page_requests_and_max_requests_still_works() {
    for (flag, warns) in [("--max-page-requests", false), ("--max-requests", true)] {
        let r = run("rip-render", &[flag, "5"], b"");
        assert_eq!(r.code, 0, "{flag}: {}", r.stderr);
        if warns {
            assert!(
                warned(&r, "--max-requests", "--max-page-requests"),
                "{}",
                r.stderr
            );
        } else {
            assert_quiet_about(&r, flag);
        }
    }
}

/// The broker is absent: the flags are read (and the old one named) before it is reached.
#[test]
fn rip_queue_relay_reads_input_with_input_and_file_still_works() {
    let broker = "nats://127.0.0.1:1";
    for (flag, warns) in [("--input", false), ("-i", false), ("--file", true)] {
        let args = [
            "--broker",
            broker,
            "relay",
            "refs",
            "pages",
            flag,
            "/dev/null",
        ];
        let r = run("rip-queue", &args, b"");
        assert_eq!(r.code, 1, "{flag}: {}", r.stderr);
        assert!(r.stderr.contains("cannot reach the broker"), "{}", r.stderr);
        if warns {
            assert!(warned(&r, "--file", "--input"), "{}", r.stderr);
        } else {
            assert_quiet_about(&r, flag);
        }
    }
}

#[test]
fn rip_reconcile_reads_its_config_with_config_and_c_still_works() {
    let config = rip_testkit::testdata("reconcile/site.json");
    let config = config.to_str().unwrap();
    let input = format!("{DOC}\n");
    for (flag, warns) in [("--config", false), ("-c", true)] {
        let r = run("rip-reconcile", &[flag, config], input.as_bytes());
        assert_eq!(r.code, 0, "{flag}: {}", r.stderr);
        assert_eq!(outcomes(&r), ["doc"], "{flag}: {}", r.stdout);
        if warns {
            assert!(warned(&r, "-c", "--config"), "{}", r.stderr);
        } else {
            assert_quiet_about(&r, flag);
        }
    }
}
