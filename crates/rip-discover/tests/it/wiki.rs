//! `--mediawiki`: enumeration against the real test MediaWiki (`rip-wikitest`), every page and
//! categories with a page size small enough that continuation happens many times; the
//! wiki's own request log shows the requests.

use std::collections::BTreeSet;

use rip_wikitest::{Manifest, Wiki};

use crate::{Crawled, Ran, run};

fn titles(r: &Ran) -> Vec<String> {
    r.refs()
        .iter()
        .map(|x| x.context.title.clone().expect("a wiki ref has a title"))
        .collect()
}

/// The `list=` requests the wiki received, with their continuation parameter.
fn list_requests(wiki: &Wiki) -> Vec<(String, Option<String>)> {
    wiki.requests()
        .unwrap()
        .into_iter()
        .filter_map(|r| {
            let list = r.param("list")?;
            let cont = r.param("apcontinue").or_else(|| r.param("cmcontinue"));
            Some((list, cont))
        })
        .collect()
}

/// One wiki for every enumeration case (each case reads the log from where the last ended).
#[test]
fn mediawiki_enumeration_pages_categories_priority_and_budget() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let api = wiki.api_url().as_str().to_owned();
    let base = api.strip_suffix("/api.php").unwrap().to_owned();

    // Every article of the main namespace (redirects left out), 25 titles per answer.
    let r = run(&["--mediawiki", &api, "--page-size", "25"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = titles(&r);
    assert_eq!(got.len(), 306);
    let want: BTreeSet<&String> = manifest.articles.iter().collect();
    assert_eq!(got.iter().collect::<BTreeSet<_>>(), want);
    assert_eq!(
        got.len(),
        got.iter().collect::<BTreeSet<_>>().len(),
        "each title once"
    );
    let lists = list_requests(&wiki);
    assert_eq!(lists.len(), 13, "ceil(306 / 25) answers: {lists:?}");
    assert!(lists[0].1.is_none() && lists[1..].iter().all(|(_, c)| c.is_some()));
    assert_eq!(r.counter("targets"), 306);
    for x in r.refs() {
        assert_eq!(x.context.wiki_api.as_deref(), Some(api.as_str()));
        assert_eq!(x.context.depth, 0);
        assert!(x.is_entry());
    }
    let url_of = |t: &str| {
        r.refs()
            .iter()
            .find(|x| x.context.title.as_deref() == Some(t))
            .map(|x| x.url.clone())
    };
    // Article URLs as MediaWiki builds them.
    assert_eq!(
        url_of("Ash Wyrm").unwrap(),
        format!("{base}/index.php/Ash_Wyrm")
    );
    assert_eq!(
        url_of("100% Pure Ember").unwrap(),
        format!("{base}/index.php/100%25_Pure_Ember")
    );
    assert_eq!(
        url_of("Æther Wisp").unwrap(),
        format!("{base}/index.php/%C3%86ther_Wisp")
    );
    assert_eq!(
        url_of("Sword of Ash/Reforged").unwrap(),
        format!("{base}/index.php/Sword_of_Ash/Reforged")
    );

    // Two categories, one inside the other: the union, each page once; 10 per answer.
    let before = list_requests(&wiki).len();
    let r = run(&[
        "--mediawiki",
        &api,
        "--page-size",
        "10",
        "--category",
        "Dragons",
        "--category",
        "Category:Creatures",
        "--category",
        "dragons",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let got = titles(&r);
    let creatures = &manifest.categories["Creatures"];
    assert_eq!(
        got.iter().collect::<BTreeSet<_>>(),
        creatures.iter().collect()
    );
    assert_eq!(got.len(), 121);
    assert_eq!((r.counter("listed"), r.counter("duplicates")), (142, 21));
    let lists = &list_requests(&wiki)[before..];
    // Dragons: 21 in 3 answers; Creatures: 121 articles (namespace 0 only) in 13.
    assert_eq!(lists.len(), 16, "{lists:?}");
    assert_eq!(lists.iter().filter(|(_, c)| c.is_some()).count(), 14);
    for req in &wiki.requests().unwrap()[..] {
        if req.param("list").as_deref() == Some("categorymembers") {
            assert_eq!(req.param("cmnamespace").as_deref(), Some("0"));
        }
    }

    // --max-pages after enumeration: the first N of the deduplicated list.
    let r = run(&[
        "--mediawiki",
        &api,
        "--page-size",
        "10",
        "--category",
        "Dragons",
        "--category",
        "Creatures",
        "--max-pages",
        "30",
    ]);
    assert_eq!(titles(&r), got[..30]);
    assert_eq!(r.counter("notWritten"), 91);
    assert!(
        r.summary().notes.iter().any(|n| n.contains("maxPages 30")),
        "{:?}",
        r.summary().notes
    );

    // Configuration: its categories when no flag names one; the flag wins over it.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("wiki.json");
    std::fs::write(
        &config,
        serde_json::json!({"apiUrl": api, "categories": ["Undead", "Spirits"]}).to_string(),
    )
    .unwrap();
    let cfg = config.to_str().unwrap();
    let r = run(&["--wiki-config", cfg]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want: BTreeSet<&String> = manifest.categories["Undead"]
        .iter()
        .chain(&manifest.categories["Spirits"])
        .collect();
    assert_eq!(titles(&r).iter().collect::<BTreeSet<_>>(), want);
    let r = run(&["--wiki-config", cfg, "--category", "Classes"]);
    assert_eq!(
        titles(&r).iter().collect::<BTreeSet<_>>(),
        manifest.categories["Classes"].iter().collect()
    );
    // An empty category is no error: no refs.
    let r = run(&["--mediawiki", &api, "--category", "No such category"]);
    assert_eq!((r.code, r.refs().len()), (0, 0), "{}", r.stderr);
}

/// The wiki failing: its site information unreadable after the retries is a `failure`
/// naming the request, exit 3; a 503 or a maxlag answer is retried and the list completes.
#[test]
fn api_failures_are_failure_records_and_retryable_answers_are_retried() {
    let wiki = Wiki::start().unwrap();
    let api = wiki.api_url().as_str().to_owned();
    wiki.fault_status(503, 2).unwrap();
    let r = run(&["--mediawiki", &api, "--attempts", "2"]);
    assert_eq!((r.code, r.refs().len()), (3, 0), "{}", r.stderr);
    let f = &r.failures()[0];
    assert!(
        f.url.starts_with(&api) && f.url.contains("meta=siteinfo"),
        "{}",
        f.url
    );
    assert_eq!(f.phase, rip_core::Phase::Discover);
    assert_eq!(f.status, Some(503));
    assert!(
        f.errors[0].message.contains("site information"),
        "{:?}",
        f.errors
    );
    assert_eq!(r.summary().status, rip_core::Status::NotReady);

    wiki.fault_status(503, 1).unwrap();
    let r = run(&["--mediawiki", &api, "--category", "Dragons"]);
    assert_eq!((r.code, r.refs().len()), (0, 21), "{}", r.stderr);
    // MediaWiki's real maxlag error on the list request: THROTTLED, retried after its wait.
    wiki.fault_maxlag(10, 1).unwrap();
    let r = run(&["--mediawiki", &api, "--category", "Dragons"]);
    assert_eq!((r.code, r.refs().len()), (0, 21), "{}", r.stderr);
    let lists: Vec<_> = wiki
        .requests()
        .unwrap()
        .into_iter()
        .filter(|q| q.param("list").is_some())
        .collect();
    assert!(
        lists
            .iter()
            .all(|q| q.param("maxlag").as_deref() == Some("5"))
    );
    assert_eq!(
        lists.len(),
        3,
        "one list, then a maxlag answer and its retry"
    );
}
