//! The state file's `output.warc`: every stage that fetches archives what it sent and what
//! came back into that folder, each process its own files.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::support::*;

/// `(WARC-Type, path of WARC-Target-URI)` → records, over `files`, each checked by warcio.
fn archived(files: &[PathBuf]) -> BTreeMap<(String, String), usize> {
    let mut m = BTreeMap::new();
    for ((kind, uri), n) in rip_testkit::checked_records(files) {
        let path = url::Url::parse(&uri).map_or(String::new(), |u| u.path().to_owned());
        *m.entry((kind, path)).or_insert(0) += n;
    }
    m
}

#[test]
fn output_warc_gives_every_fetching_stage_its_warc_flag() {
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), "http://127.0.0.1:1", |v| {
        v["output"]["warc"] = "archive".into();
    });
    let o = run(&["pipeline", state.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = String::from_utf8(o.stdout).unwrap();
    let flag = format!("--warc {}", dir.path().join("archive").display());
    let stages = |program: &str| {
        (script.split(['\n', '|']))
            .filter(|l| l.trim_start().starts_with(program))
            .collect::<Vec<_>>()
    };
    let (discover, fetch) = (stages("rip-discover"), stages("rip-fetch"));
    assert_eq!((discover.len(), fetch.len()), (1, 3), "{script}");
    for l in discover.iter().chain(&fetch) {
        assert!(l.contains(&flag), "{l}");
    }
    for program in ["rip-parse", "rip-route", "rip-write"] {
        for l in stages(program) {
            assert!(!l.contains("--warc"), "{l}");
        }
    }

    // A run that renders: the browser's stage archives too.
    let state = demo_state(dir.path(), "http://127.0.0.1:1", |v| {
        v["output"]["warc"] = "archive".into();
        v["render"] = serde_json::json!({});
    });
    let o = run(&["pipeline", state.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = String::from_utf8(o.stdout).unwrap();
    let render: Vec<&str> = (script.split(['\n', '|']))
        .filter(|l| l.trim_start().starts_with("rip-render"))
        .collect();
    assert_eq!(render.len(), 3, "{script}");
    assert!(render.iter().all(|l| l.contains(&flag)), "{script}");
}

#[test]
fn a_run_with_output_warc_archives_every_request_sent() {
    let server = demo_server();
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), &server.origin(), |v| {
        v["output"]["warc"] = "archive".into();
    });
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let folder = dir.path().join("archive");
    assert!(rip_testkit::files_ending(&folder, ".open").is_empty());
    let files = rip_testkit::files_ending(&folder, ".warc.gz");
    // rip-discover's and the first round's rip-fetch's at least (the rounds after it fetch
    // only what failed), each process its own file.
    assert!(files.len() >= 2, "{files:?}");
    // Named `rip-{time}-{serial}-{pid}~{host}.warc.gz`: no two processes share a file.
    let pids: std::collections::BTreeSet<String> = (files.iter())
        .map(|f| {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let (head, _host) = name.split_once('~').expect("~host");
            let parts: Vec<&str> = head.split('-').collect();
            assert_eq!(parts.len(), 4, "{name}");
            assert_eq!(
                (parts[0], parts[1].len(), parts[2]),
                ("rip", 17, "00001"),
                "{name}"
            );
            parts[3].to_owned()
        })
        .collect();
    assert_eq!(pids.len(), files.len(), "one file a process: {files:?}");
    let archived = archived(&files);
    let count =
        |kind: &str, path: &str| (archived.get(&(kind.to_owned(), path.to_owned()))).copied();
    // Every request the server saw, each attempt of each stage, is one request record.
    let sent = requests_per_path(&server);
    for (path, n) in &sent {
        assert_eq!(count("request", path), Some(*n), "{path}: {archived:?}");
    }
    let requests: usize = (archived.iter())
        .filter(|((k, _), _)| k == "request")
        .map(|(_, n)| n)
        .sum();
    assert_eq!(requests, server.total(), "{archived:?}");
    // Every page written has its response; the URL reset six times has one response (the
    // seventh attempt's) and a metadata record for each attempt.
    for page in ["/", "/items/item-3.html", "/blog/spell-roundup.html"] {
        assert!(count("response", page).is_some_and(|n| n >= 1), "{page}");
    }
    let reset = "/ancestries/23.html";
    assert_eq!(sent.get(reset), Some(&7), "{sent:?}");
    assert_eq!(count("response", reset), Some(1));
    assert_eq!(count("metadata", reset), Some(7));
}

#[test]
fn a_run_interrupted_and_resumed_archives_each_exchange_once() {
    use crate::interrupt::{interrupt, plain_server, slow};
    let server = plain_server();
    let dir = tempfile::tempdir().unwrap();
    let state = demo_state(dir.path(), &server.origin(), |v| {
        slow(v);
        v["output"]["warc"] = "archive".into();
    });
    // Ctrl-C once the server has answered 18 requests.
    assert_eq!(interrupt(&state, &server, 18, 1), Some(130));
    let folder = dir.path().join("archive");
    let first = rip_testkit::files_ending(&folder, ".warc.gz");
    assert!(!first.is_empty(), "the first run archived what it fetched");
    let o = run(&["run", "-q", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(runs(dir.path())[1]["resumed"], runs(dir.path())[0]["id"]);

    // The resumed run took the first run's pages from the cache and archived none of
    // them again: across both runs' files, each request the server saw is one request
    // record and one response record, and there are no others.
    assert!(rip_testkit::files_ending(&folder, ".open").is_empty());
    let files = rip_testkit::files_ending(&folder, ".warc.gz");
    assert!(files.len() > first.len(), "{first:?} then {files:?}");
    let archived = archived(&files);
    let sent = requests_per_path(&server);
    for (path, n) in &sent {
        for kind in ["request", "response"] {
            let got = archived.get(&(kind.to_owned(), path.clone()));
            assert_eq!(got, Some(n), "{kind} records of {path}: {archived:?}");
        }
    }
    let responses: usize = (archived.iter())
        .filter(|((k, _), _)| k == "response")
        .map(|(_, n)| n)
        .sum();
    assert_eq!(responses, server.total());
    assert_eq!(sent.get("/items/item-1.html"), Some(&1), "{sent:?}");
}
