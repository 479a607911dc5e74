//! `--mediawiki`: enumeration against the real test MediaWiki (`rip-testwiki`), every page and
//! categories with a page size small enough that continuation happens many times; the
//! wiki's own request log shows the requests.

use std::collections::BTreeSet;

use rip_testwiki::{Manifest, Wiki};

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
#[expect(
    clippy::too_many_lines,
    reason = "one end-to-end scenario, its run and then its checks, read top to bottom"
)]
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

    // --max-pages: the first N of the deduplicated list; the listing stops there.
    let before = list_requests(&wiki).len();
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
    // Dragons (21 titles) in 3 answers of 10, then 2 answers of Creatures (some of them
    // Dragons again) for the 9 titles left; the second had 4 new titles past the budget,
    // and nothing was asked after it.
    let asked = list_requests(&wiki).len() - before;
    assert_eq!(
        (r.counter("notWritten"), asked),
        (4, 5),
        "{:?}",
        r.summary().notes
    );
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

#[test]
fn a_wiki_listing_resumes_through_its_state_folder() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let api = wiki.api_url().to_string();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let state = state.to_str().unwrap();
    let base = ["--mediawiki", &api, "--page-size", "20", "--state", state];

    // A budget stops the listing; the same command with a larger one goes on from there.
    let first = run(&[&base[..], &["--max-pages", "50"]].concat());
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(titles(&first).len(), 50);
    let asked = list_requests(&wiki).len();
    let rest = run(&base);
    assert_eq!(rest.code, 0, "{}", rest.stderr);
    let mut all = titles(&first);
    all.extend(titles(&rest));
    assert_eq!(all.len(), 306, "no title twice, none lost");
    assert_eq!(
        all.iter().collect::<BTreeSet<_>>(),
        manifest.articles.iter().collect()
    );
    let resumed = &list_requests(&wiki)[asked..];
    assert!(
        resumed[0].1.is_some(),
        "the second run went on from a `continue`: {resumed:?}"
    );
    assert_eq!(
        resumed.len(),
        16 - 2,
        "306 titles in answers of 20, 3 asked before"
    );
    assert!(
        rest.summary()
            .notes
            .iter()
            .any(|n| n.contains("resumed: 50 titles")),
        "{:?}",
        rest.summary().notes
    );

    // Once the listing has ended, the same command writes nothing and asks no list.
    let asked = list_requests(&wiki).len();
    let again = run(&base);
    assert_eq!(
        (titles(&again).len(), list_requests(&wiki).len()),
        (0, asked)
    );
}

#[test]
fn a_wiki_listing_killed_mid_way_resumes_without_losing_a_title() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let api = wiki.api_url().to_string();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    // 31 answers of 10 titles, 150 ms apart: about 4.5 s.
    let listing = [
        "--mediawiki",
        &api,
        "--page-size",
        "10",
        "--state",
        state.to_str().unwrap(),
    ];
    let slow = ["--delay", "150ms", "--jitter", "0ms", "--cache", "off"];
    let out = dir.path().join("first.ndjson");
    let mut child = std::process::Command::new(rip_testkit::bin("rip-discover"))
        .args(listing.iter().chain(&slow))
        .current_dir(dir.path())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once two answers are out (refs are flushed answer by answer).
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&out).unwrap().lines().count() < 20 {
        assert!(started.elapsed().as_secs() < 20, "no answer in 20 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let first: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<rip_core::Ref>(l).ok())
        .filter_map(|r| r.context.title)
        .collect();
    assert!(
        (10..300).contains(&first.len()),
        "killed mid-way: {} titles",
        first.len()
    );
    let rest = run(&listing);
    assert_eq!(rest.code, 0, "{}", rest.stderr);
    let rest = titles(&rest);
    let all: BTreeSet<&String> = first.iter().chain(&rest).collect();
    assert_eq!(
        all,
        manifest.articles.iter().collect(),
        "every title, in one run or the other"
    );
    // At most the answer in flight at the kill is written twice.
    let twice = first.len() + rest.len() - 306;
    assert!(twice <= 10, "{twice} titles written twice");
}
