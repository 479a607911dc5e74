//! `apiUrl`: a whole run over the real test MediaWiki (`rip-testwiki`): the wiki's pages listed
//! through its API, fetched in batches, parsed by the wiki rules; the books balance.

use crate::support::*;

#[test]
fn a_state_file_with_api_url_scrapes_the_wiki_through_its_api() {
    let wiki = rip_testwiki::Wiki::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rules = repo().join("testdata/parse/rules/emberfall-wiki.toml");
    let state = dir.path().join("wiki.state.json");
    let v = serde_json::json!({
        "apiUrl": wiki.api_url().as_str(),
        "crawler": {"maxPages": 200},
        "rateLimitMs": 0,
        "jitterMs": 0,
        "maxRetries": 1,
        "rules": rules.canonicalize().unwrap().display().to_string(),
        "output": {"basePath": dir.path().join("out").display().to_string()},
    });
    std::fs::write(&state, v.to_string()).unwrap();
    let o = run(&["run", state.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let h = read_json(dir.path().join("out/wiki/crawl-health.json"));
    assert_eq!(h["totals"]["concepts"], 200, "{h:#}");
    assert_eq!(h["totals"]["failures"], 0);
    assert_eq!(h["ledger"]["entered"], 200);
    assert_eq!(h["ledger"]["accounted"], 200);
    // 200 titles fetched in 4 batches of 50, the list in one answer.
    let batches: Vec<usize> = wiki
        .requests()
        .unwrap()
        .iter()
        .filter_map(|r| r.param("titles"))
        .map(|t| t.split('|').count())
        .collect();
    assert_eq!(batches, [50, 50, 50, 50]);
    let wyrm = read_json(dir.path().join("out/wiki/index.php-Ash_Wyrm.json"));
    assert_eq!(wyrm["concept"], "creature", "{wyrm:#}");
    assert_eq!(wyrm["hitPoints"], 790);
}

#[test]
fn a_state_file_with_categories_scrapes_their_pages_alone() {
    let wiki = rip_testwiki::Wiki::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("wiki.state.json");
    let v = serde_json::json!({
        "apiUrl": wiki.api_url().as_str(),
        "categories": ["Classes", "Category:Ancestries"],
        "rateLimitMs": 0,
        "jitterMs": 0,
        "output": {"basePath": dir.path().join("out").display().to_string()},
    });
    std::fs::write(&state, v.to_string()).unwrap();
    let o = run(&["run", state.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let h = read_json(dir.path().join("out/wiki/crawl-health.json"));
    // 8 classes and 6 ancestries (testdata/wiki/README.md), nothing else.
    assert_eq!(h["ledger"]["entered"], 14, "{h:#}");
    assert_eq!(h["totals"]["concepts"], 14);
    let listed: Vec<String> = wiki
        .requests()
        .unwrap()
        .iter()
        .filter_map(|r| r.param("cmtitle"))
        .collect();
    assert_eq!(listed, ["Category:Classes", "Category:Ancestries"]);
    // Their infoboxes hold no template: nothing to expand, no extra request.
    let expand = wiki
        .requests()
        .unwrap()
        .iter()
        .filter(|r| r.param("action").as_deref() == Some("expandtemplates"))
        .count();
    assert_eq!(expand, 0);
}
