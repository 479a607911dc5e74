//! The test wiki behaves like a MediaWiki: enumeration with continuation, batch fetch,
//! missing pages after a delete, real maxlag answers, a request log that shows every batch.
//! Plain reqwest here; the stages (rip-discover, rip-fetch) are tested against the same wiki.

use std::collections::BTreeSet;

use rip_testwiki::{Manifest, Wiki};
use serde_json::Value;

type Params<'a> = Vec<(&'a str, String)>;

async fn api(wiki: &Wiki, params: &[(&str, String)]) -> (reqwest::header::HeaderMap, Value) {
    let mut url = wiki.api_url().clone();
    url.query_pairs_mut()
        .extend_pairs([("format", "json"), ("formatversion", "2")])
        .extend_pairs(params.iter().map(|(k, v)| (k, v.as_str())));
    let resp = reqwest::Client::new()
        .get(url)
        .send()
        .await
        .expect("the wiki answers");
    assert_eq!(resp.status(), 200);
    let headers = resp.headers().clone();
    (headers, resp.json().await.expect("JSON"))
}

/// Follows `continue` until the list is complete; returns the titles and the request count.
async fn list_all(wiki: &Wiki, list: &str, params: Params<'_>) -> (Vec<String>, usize) {
    let mut titles = Vec::new();
    let mut cont: Vec<(String, String)> = Vec::new();
    let mut requests = 0;
    loop {
        let mut p: Vec<(&str, String)> = vec![("action", "query".into()), ("list", list.into())];
        p.extend(params.iter().cloned());
        p.extend(cont.iter().map(|(k, v)| (k.as_str(), v.clone())));
        let (_, body) = api(wiki, &p).await;
        requests += 1;
        for item in body["query"][list].as_array().expect("a list") {
            titles.push(item["title"].as_str().unwrap().to_owned());
        }
        match body.get("continue").and_then(Value::as_object) {
            Some(c) => {
                cont = c
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                    .collect()
            }
            None => break,
        }
        assert!(requests < 1000, "continuation never ends");
    }
    (titles, requests)
}

#[tokio::test]
async fn allpages_continues_until_every_title_is_listed() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let (titles, requests) = list_all(
        &wiki,
        "allpages",
        vec![("apnamespace", "0".into()), ("aplimit", "37".into())],
    )
    .await;
    assert_eq!(requests, manifest.main_namespace.total.div_ceil(37));
    assert!(requests >= 5, "continuation must happen several times");
    let got: BTreeSet<_> = titles.iter().cloned().collect();
    assert_eq!(got.len(), titles.len(), "no title twice");
    let want: BTreeSet<_> = manifest.main_titles().into_iter().collect();
    assert_eq!(got, want);

    // The log shows exactly those requests, each asking for 37 titles.
    let log = wiki.requests().unwrap();
    assert_eq!(log.len(), requests, "{log:#?}");
    assert!(
        log.iter()
            .all(|r| r.param("aplimit").as_deref() == Some("37"))
    );
    assert_eq!(
        log.iter()
            .filter(|r| r.param("apcontinue").is_some())
            .count(),
        requests - 1
    );
}

#[tokio::test]
async fn categorymembers_paginates_and_lists_subcategories_unless_asked_not_to() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let cat = |t: &str| {
        vec![
            ("cmtitle", "Category:Creatures".to_owned()),
            ("cmlimit", "20".into()),
            ("cmtype", t.into()),
        ]
    };
    let (pages, requests) = list_all(&wiki, "categorymembers", cat("page")).await;
    assert_eq!(requests, 7); // 121 pages, 20 a request
    let want: BTreeSet<_> = manifest.categories["Creatures"].iter().cloned().collect();
    assert_eq!(pages.iter().cloned().collect::<BTreeSet<_>>(), want);

    let (all, _) = list_all(&wiki, "categorymembers", cat("page|subcat")).await;
    let subcats: BTreeSet<_> = all
        .into_iter()
        .filter(|t| t.starts_with("Category:"))
        .collect();
    let want: BTreeSet<_> = manifest.category_subcategories["Creatures"]
        .iter()
        .cloned()
        .collect();
    assert_eq!(subcats, want);
}

#[tokio::test]
async fn fifty_titles_come_back_in_one_request_with_redirects_resolved() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    // Awkward titles, a redirect, pages with an old revision, then ordinary articles.
    let mut titles: Vec<String> = vec![
        "Q&A Tavern".into(),
        "+1 Dagger".into(),
        "100% Pure Ember".into(),
        "Sword of Ash/Reforged".into(),
        "Aether Wisp".into(),
    ];
    titles.extend(manifest.pages_with_old_revisions.iter().cloned());
    for t in &manifest.articles {
        if titles.len() == 50 {
            break;
        }
        if !titles.contains(t) && t != "Æther Wisp" {
            titles.push(t.clone());
        }
    }
    assert_eq!(titles.len(), 50);
    let (_, body) = api(
        &wiki,
        &[
            ("action", "query".into()),
            ("prop", "revisions".into()),
            ("rvprop", "content|ids".into()),
            ("rvslots", "main".into()),
            ("redirects", "1".into()),
            ("titles", titles.join("|")),
        ],
    )
    .await;
    assert!(
        body.get("continue").is_none(),
        "all 50 in one answer: {body}"
    );
    let pages = body["query"]["pages"].as_array().unwrap();
    assert_eq!(pages.len(), 50);
    assert_eq!(
        body["query"]["redirects"],
        serde_json::json!([{"from": "Aether Wisp", "to": "Æther Wisp"}])
    );
    for page in pages {
        let title = page["title"].as_str().unwrap();
        assert!(page.get("missing").is_none(), "{title} missing");
        let rev = &page["revisions"][0];
        assert!(rev["revid"].as_u64().unwrap() > 0);
        let content = rev["slots"]["main"]["content"].as_str().unwrap();
        assert!(
            !content.contains("(stub)"),
            "{title}: the old revision came back"
        );
        assert!(content.len() > 100, "{title}: {content}");
    }

    let log = wiki.requests().unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].titles(), titles);
}

#[tokio::test]
async fn a_title_deleted_after_enumeration_comes_back_missing() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let (titles, _) = list_all(
        &wiki,
        "allpages",
        vec![
            ("aplimit", "max".into()),
            ("apfilterredir", "nonredirects".into()),
        ],
    )
    .await;
    assert_eq!(titles.len(), manifest.main_namespace.articles);
    assert!(titles.contains(&manifest.doomed));

    wiki.delete(&[&manifest.doomed]).unwrap();
    let (_, body) = api(
        &wiki,
        &[
            ("action", "query".into()),
            ("prop", "revisions".into()),
            ("rvprop", "content|ids".into()),
            ("rvslots", "main".into()),
            ("titles", format!("{}|Ash Wyrm", manifest.doomed)),
        ],
    )
    .await;
    let pages = body["query"]["pages"].as_array().unwrap();
    let doomed = pages
        .iter()
        .find(|p| p["title"] == manifest.doomed.as_str())
        .unwrap();
    assert_eq!(doomed["missing"], true, "{doomed}");
    assert!(doomed.get("revisions").is_none());
    let other = pages.iter().find(|p| p["title"] == "Ash Wyrm").unwrap();
    assert!(other.get("missing").is_none(), "{other}");
}

#[tokio::test]
async fn maxlag_and_status_faults_are_injected_then_cleared() {
    let wiki = Wiki::start().unwrap();
    let siteinfo = |maxlag: &str| {
        vec![
            ("action", "query".to_owned()),
            ("meta", "siteinfo".into()),
            ("maxlag", maxlag.into()),
        ]
    };
    wiki.fault_maxlag(7, 1).unwrap();
    let (headers, body) = api(&wiki, &siteinfo("5")).await;
    assert_eq!(body["error"]["code"], "maxlag", "{body}");
    assert_eq!(body["error"]["lag"], 7);
    assert_eq!(headers["retry-after"], "5");
    assert_eq!(headers["x-database-lag"], "7");
    // Consumed: the next request is answered.
    let (_, body) = api(&wiki, &siteinfo("5")).await;
    assert_eq!(body["query"]["general"]["sitename"], "Emberfall Wiki");
    // A lag below the client's threshold is no error.
    wiki.fault_maxlag(3, 1).unwrap();
    let (_, body) = api(&wiki, &siteinfo("5")).await;
    assert!(body.get("error").is_none(), "{body}");
    wiki.clear_faults().unwrap();

    wiki.fault_status(503, 2).unwrap();
    let client = reqwest::Client::new();
    let url = format!("{}?action=query&meta=siteinfo&format=json", wiki.api_url());
    for want in [503, 503, 200] {
        assert_eq!(client.get(&url).send().await.unwrap().status(), want);
    }
    assert_eq!(wiki.requests().unwrap().len(), 6);
}

#[tokio::test]
async fn the_server_stops_on_drop() {
    let wiki = Wiki::start().unwrap();
    let url = wiki.api_url().clone();
    let dir = wiki.dir();
    assert!(reqwest::get(url.clone()).await.is_ok());
    drop(wiki);
    let err = reqwest::get(url)
        .await
        .expect_err("nothing listens any more");
    assert!(err.is_connect(), "{err}");
    assert!(!dir.exists(), "the folder is removed");
}

#[test]
fn the_committed_dump_is_what_its_generator_writes() {
    let script = rip_testwiki::default_dump().with_file_name("generate.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg("--check")
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
