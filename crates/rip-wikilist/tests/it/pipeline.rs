//! Whole MediaWiki runs against the real test wiki, as a user types them: `rip-discover
//! --mediawiki | rip-fetch | rip-parse | rip-route | rip-write`, then `rip-reconcile |
//! rip-health`; every page is accounted for. Needs the other stages built in the same target
//! folder (`make test` does; alone: `cargo build --workspace --bins`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use rip_core::Record;
use rip_testwiki::{Manifest, Wiki};
use serde_json::Value;

const FETCH: &str = "rip-fetch -q --delay 0ms --jitter 0ms --cache off --no-shared-politeness \
    --attempts 2 --retry-base 10ms";
const DISCOVER: &str = "rip-discover -q --delay 0ms --jitter 0ms --cache off";
const REST: &str = "rip-parse -q --rules RULES | rip-route -q --max-retries 0 \
    | rip-write -q --out out --name wiki > stream.ndjson; p1=\"${PIPESTATUS[*]}\"; \
    rip-reconcile -q < stream.ndjson | rip-health -q > crawl-health.json; \
    echo \"$p1 ${PIPESTATUS[*]}\"";

fn rules() -> String {
    rip_testkit::testdata("parse/rules/emberfall-wiki.toml")
        .display()
        .to_string()
}

fn built() {
    for b in [
        "rip-fetch",
        "rip-parse",
        "rip-route",
        "rip-write",
        "rip-reconcile",
        "rip-health",
    ] {
        rip_testkit::bin(b);
    }
}

/// Runs `script` in `dir`, returns the exit codes it echoes.
fn shell(script: &str, dir: &Path) -> String {
    let script = script.replace("RULES", &rules());
    let out = rip_testkit::run_shell(&script, Some(dir));
    let codes = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    codes
}

fn records(path: &Path) -> Vec<Record> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| rip_core::Line::from_text(l).ok())
        .filter(|l| !matches!(l.kind(), rip_core::Kind::Other(_)))
        .map(|l| l.decode().unwrap())
        .collect()
}

fn health(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("crawl-health.json")).unwrap()).unwrap()
}

/// Docs by concept.
fn concepts(recs: &[Record]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in recs {
        if let Record::Doc(d) = r {
            *m.entry(d.concept.clone()).or_default() += 1;
        }
    }
    m
}

/// The revision batches the wiki answered: their titles.
fn batches(wiki: &Wiki) -> Vec<Vec<String>> {
    wiki.requests()
        .unwrap()
        .into_iter()
        .filter(|r| r.param("prop").as_deref() == Some("revisions"))
        .map(|r| {
            r.param("titles")
                .unwrap()
                .split('|')
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

#[test]
fn a_full_wiki_run_accounts_for_every_page() {
    built();
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let script = format!(
        "{DISCOVER} --mediawiki '{}' --page-size 40 | {FETCH} | {REST}",
        wiki.api_url()
    );
    let codes = shell(&script, dir);
    assert_eq!(
        codes, "0 0 0 0 0 0 0",
        "discover fetch parse route write; reconcile health"
    );

    // Every title was fetched in batches of at most 50, each title once. The listing's
    // answers (40 titles) reach rip-fetch as they come, so a batch may close early when the
    // next answer is slow to come: at most one batch per answer.
    let b = batches(&wiki);
    assert!(
        (7..=8).contains(&b.len()),
        "ceil(306 / 50) to ceil(306 / 40): {}",
        b.len()
    );
    assert!(b.iter().all(|t| t.len() <= 50));
    let fetched: Vec<&String> = b.iter().flatten().collect();
    assert_eq!(fetched.len(), 306);
    let want: BTreeSet<&String> = manifest.articles.iter().collect();
    assert_eq!(fetched.into_iter().collect::<BTreeSet<_>>(), want);
    // Enumeration continued 7 times after its first answer (40 titles each).
    let lists = wiki
        .requests()
        .unwrap()
        .into_iter()
        .filter(|r| r.param("list").is_some())
        .count();
    assert_eq!(lists, 8);

    let recs = records(&dir.join("stream.ndjson"));
    assert_eq!(
        concepts(&recs),
        BTreeMap::from([
            ("creature".into(), 121),
            ("item".into(), 100),
            ("place".into(), 60),
            ("unknown".into(), 25)
        ])
    );
    let wyrm = recs
        .iter()
        .find_map(|r| match r {
            Record::Doc(d) if d.name.as_deref() == Some("Ash Wyrm") => Some(d),
            _ => None,
        })
        .unwrap();
    assert_eq!(wyrm.fields["hitPoints"], 790);
    assert_eq!(wyrm.fields["type"], "Dragon");
    assert_eq!(wyrm.context.title.as_deref(), Some("Ash Wyrm"));

    let h = health(dir);
    let l = &h["ledger"];
    assert_eq!(
        (l["entered"].as_u64(), l["accounted"].as_u64()),
        (Some(306), Some(306)),
        "{l:#}"
    );
    assert_eq!(h["complete"], true, "{h:#}");
    assert_eq!(h["totals"]["concepts"], 306);
    assert_eq!(h["totals"]["failures"], 0);
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
fn a_page_deleted_after_enumeration_is_an_error_document_and_is_retried_alone() {
    built();
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let api = wiki.api_url().to_string();
    let codes = shell(
        &format!("{DISCOVER} --mediawiki '{api}' > refs.ndjson; echo $?"),
        dir,
    );
    assert_eq!(codes, "0");
    let doomed = manifest.doomed.as_str();
    wiki.delete(&[doomed]).unwrap();
    let codes = shell(&format!("{FETCH} < refs.ndjson | {REST}"), dir);
    // fetch partial (one missing page); health says the run is not clean.
    let codes: Vec<&str> = codes.split(' ').collect();
    assert_eq!(
        codes[..5],
        ["2", "0", "2", "0", "0"],
        "fetch parse route write reconcile"
    );

    let recs = records(&dir.join("stream.ndjson"));
    let errors: Vec<&rip_core::ErrorDoc> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Error(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let e = errors[0];
    assert_eq!(e.context.title.as_deref(), Some(doomed));
    assert!(e.url.ends_with("/index.php/Vanishing_Wisp"), "{}", e.url);
    assert_eq!(e.category, Some(rip_core::ErrorCategory::Permanent));
    assert_eq!(e.errors.last().unwrap().code, "wiki.missing");
    assert_eq!(concepts(&recs).values().sum::<usize>(), 305);

    let h = health(dir);
    let l = &h["ledger"];
    assert_eq!(
        (l["entered"].as_u64(), l["accounted"].as_u64()),
        (Some(306), Some(306)),
        "{l:#}"
    );
    assert_eq!(
        (
            h["totals"]["concepts"].as_u64(),
            h["totals"]["failures"].as_u64()
        ),
        (Some(305), Some(1))
    );

    // The next run asks for the failed page alone, under the same URL.
    let failures = dir.join("out/wiki/failures.json");
    let codes = shell(
        &format!(
            "{DISCOVER} --mediawiki '{api}' --retry-failures '{}' > retry.ndjson; echo $?",
            failures.display()
        ),
        dir,
    );
    assert_eq!(codes, "0");
    let refs: Vec<rip_core::Ref> = records(&dir.join("retry.ndjson"))
        .into_iter()
        .filter_map(|r| match r {
            Record::Ref(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].url, e.url);
    assert_eq!(refs[0].context.title.as_deref(), Some(doomed));
    assert_eq!(refs[0].context.wiki_api.as_deref(), Some(api.as_str()));
    // Without --mediawiki, the wiki is the one the failures name: the same refs.
    let codes = shell(
        &format!(
            "{DISCOVER} --retry-failures '{}' > alone.ndjson; echo $?",
            failures.display()
        ),
        dir,
    );
    assert_eq!(codes, "0");
    let refs_of = |name: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        text.lines()
            .filter(|l| l.contains("\"_type\":\"ref\""))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(refs_of("alone.ndjson"), refs_of("retry.ndjson"));
    let before = batches(&wiki).len();
    let codes = shell(
        &format!("{FETCH} < retry.ndjson > again.ndjson; echo $?"),
        dir,
    );
    assert_eq!(codes, "2", "still missing");
    let b = batches(&wiki);
    assert_eq!(b[before..], [vec![doomed.to_owned()]]);
}
