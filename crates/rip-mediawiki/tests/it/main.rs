//! rip-mediawiki against the real test MediaWiki: the loops rip-wikilist and rip-fetch
//! run, driven here with plain reqwest.

use std::collections::{BTreeMap, BTreeSet};

use rip_core::ErrorCategory;
use rip_mediawiki::{
    AnswerError, ApiRequest, Continue, Limit, List, MAX_BATCH, Revision, TitleOutcome,
    list_request, parse_list, parse_revisions, parse_siteinfo, revisions_request, siteinfo_request,
};
use rip_testwiki::{Manifest, Wiki};

async fn send(req: &ApiRequest) -> (reqwest::header::HeaderMap, Vec<u8>) {
    let client = reqwest::Client::new();
    let builder = match &req.form {
        Some(form) => client
            .post(req.url.clone())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.clone()),
        None => client.get(req.url.clone()),
    };
    let resp = builder.send().await.expect("the wiki answers");
    assert_eq!(resp.status(), 200);
    let headers = resp.headers().clone();
    (headers, resp.bytes().await.unwrap().to_vec())
}

async fn enumerate(wiki: &Wiki, list: &List, limit: Limit) -> (Vec<String>, usize) {
    let mut titles = Vec::new();
    let mut cont = Continue::new();
    let mut requests = 0;
    loop {
        let (_, body) = send(&list_request(wiki.api_url(), list, limit, &cont)).await;
        requests += 1;
        let answer = parse_list(list, &body).unwrap();
        titles.extend(answer.items.into_iter().map(|l| l.title));
        match answer.cont {
            Some(c) => cont = c,
            None => return (titles, requests),
        }
    }
}

/// Fetches titles in batches of 50, following `continue` for cut answers.
async fn fetch_all(wiki: &Wiki, titles: &[String]) -> BTreeMap<String, TitleOutcome> {
    let mut out = BTreeMap::new();
    for batch in titles.chunks(MAX_BATCH) {
        let mut cont = Continue::new();
        loop {
            let req = revisions_request(wiki.api_url(), batch, Some(5), &cont);
            let (_, body) = send(&req).await;
            let answer = parse_revisions(batch, &body).unwrap();
            for (title, outcome) in answer.outcomes {
                if outcome != TitleOutcome::Pending {
                    out.insert(title, outcome);
                }
            }
            match answer.cont {
                Some(c) => cont = c,
                None => break,
            }
        }
    }
    out
}

fn found(outcome: &TitleOutcome) -> &Revision {
    match outcome {
        TitleOutcome::Found(rev) => rev,
        other => panic!("not found: {other:?}"),
    }
}

#[tokio::test]
async fn enumerates_all_pages_and_one_category_page_by_page() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    let all = List::AllPages {
        namespace: 0,
        skip_redirects: false,
    };
    let (titles, requests) = enumerate(&wiki, &all, Limit::Of(37)).await;
    assert_eq!(requests, 9);
    assert_eq!(
        titles.iter().cloned().collect::<BTreeSet<_>>().len(),
        titles.len()
    );
    assert_eq!(
        titles.into_iter().collect::<BTreeSet<_>>(),
        manifest.main_titles().into_iter().collect()
    );

    let articles = List::AllPages {
        namespace: 0,
        skip_redirects: true,
    };
    let (titles, _) = enumerate(&wiki, &articles, Limit::Max).await;
    assert_eq!(
        titles, manifest.articles,
        "the API's order is the manifest's (sorted)"
    );

    let creatures = List::CategoryMembers {
        category: "Creatures".into(),
        namespace: Some(0),
    };
    let (titles, requests) = enumerate(&wiki, &creatures, Limit::Of(20)).await;
    assert_eq!(requests, 7);
    let got: BTreeSet<_> = titles.into_iter().collect();
    assert_eq!(
        got,
        manifest.categories["Creatures"].iter().cloned().collect()
    );

    let nothing = List::CategoryMembers {
        category: "Category:No such category".into(),
        namespace: None,
    };
    assert_eq!(enumerate(&wiki, &nothing, Limit::Max).await, (vec![], 1));
}

#[tokio::test]
async fn every_title_is_fetched_in_batches_of_fifty_and_mapped_back() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    // Every article and redirect, plus titles as people type them.
    let mut titles = manifest.main_titles();
    titles.extend(["ash_Wyrm".to_owned(), "q&A Tavern".to_owned()]);
    let outcomes = fetch_all(&wiki, &titles).await;
    assert_eq!(outcomes.len(), titles.len());

    for article in &manifest.articles {
        let rev = found(&outcomes[article]);
        assert_eq!(&rev.title, article);
        assert!(rev.redirected_from.is_none());
        assert_eq!(rev.content_format.as_deref(), Some("text/x-wiki"));
        assert!(rev.revid > 0 && rev.pageid > 0);
    }
    for (redirect, target) in &manifest.redirects {
        let rev = found(&outcomes[redirect]);
        assert_eq!(&rev.title, target, "{redirect}");
        assert_eq!(rev.redirected_from.as_ref(), Some(redirect));
        assert_eq!(rev.revid, found(&outcomes[target]).revid);
    }
    assert_eq!(
        found(&outcomes["Pyro"]).fragment.as_deref(),
        Some("Features")
    );
    assert_eq!(found(&outcomes["ash_Wyrm"]).title, "Ash Wyrm");
    assert_eq!(found(&outcomes["q&A Tavern"]).title, "Q&A Tavern");
    for old in &manifest.pages_with_old_revisions {
        assert!(
            !found(&outcomes[old]).content.contains("(stub)"),
            "{old}: the latest revision"
        );
    }

    // The server saw exactly ceil(n / 50) requests, none with more than 50 titles.
    let log = wiki.requests().unwrap();
    let batches: Vec<_> = log
        .iter()
        .filter(|r| r.param("prop").as_deref() == Some("revisions"))
        .collect();
    assert_eq!(batches.len(), titles.len().div_ceil(MAX_BATCH));
    assert!(
        batches
            .iter()
            .all(|r| (1..=MAX_BATCH).contains(&r.titles().len()))
    );
    assert!(
        batches
            .iter()
            .all(|r| r.param("maxlag").as_deref() == Some("5"))
    );
    let sent: Vec<String> = batches.iter().flat_map(|r| r.titles()).collect();
    assert_eq!(sent, titles);
}

#[tokio::test]
async fn deleted_invalid_and_special_titles() {
    let wiki = Wiki::start().unwrap();
    let manifest = Manifest::load().unwrap();
    wiki.delete(&[&manifest.doomed]).unwrap();
    let titles: Vec<String> = [
        manifest.doomed.as_str(),
        "Never Written",
        "<bad>",
        "Special:Random",
        "Ash Wyrm",
    ]
    .map(String::from)
    .to_vec();
    let outcomes = fetch_all(&wiki, &titles).await;
    assert_eq!(
        outcomes[&manifest.doomed],
        TitleOutcome::Missing {
            title: manifest.doomed.clone()
        }
    );
    assert_eq!(
        outcomes["Never Written"],
        TitleOutcome::Missing {
            title: "Never Written".into()
        }
    );
    assert!(
        matches!(&outcomes["<bad>"], TitleOutcome::Invalid { reason } if reason.contains("invalid"))
    );
    assert!(matches!(
        &outcomes["Special:Random"],
        TitleOutcome::Invalid { .. }
    ));
    found(&outcomes["Ash Wyrm"]);
}

#[tokio::test]
async fn a_maxlag_answer_is_throttled_with_its_wait() {
    let wiki = Wiki::start().unwrap();
    wiki.fault_maxlag(9, 1).unwrap();
    let titles = vec!["Ash Wyrm".to_owned()];
    let req = revisions_request(wiki.api_url(), &titles, Some(5), &Continue::new());
    let (headers, body) = send(&req).await;
    let err = parse_revisions(&titles, &body).unwrap_err();
    let AnswerError::Api(api) = err else {
        panic!("{err}")
    };
    let api = api.with_retry_after(headers.get("retry-after").and_then(|v| v.to_str().ok()));
    assert_eq!(api.code, "maxlag");
    assert_eq!(api.category(), ErrorCategory::Throttled);
    assert_eq!(api.retry_after, Some(std::time::Duration::from_secs(5)));
    assert!(api.info.contains("9 seconds lagged"), "{}", api.info);
    // The fault is spent: the same request now succeeds.
    let (_, body) = send(&req).await;
    found(&parse_revisions(&titles, &body).unwrap().outcomes[0].1);
}

#[tokio::test]
async fn a_cut_answer_is_completed_by_continuation() {
    let dump = rip_testwiki::default_dump();
    let wiki = Wiki::start_with(&dump, &[("RIP_WIKI_API_MAX_RESULT_SIZE", "20000")]).unwrap();
    let manifest = Manifest::load().unwrap();
    let titles: Vec<String> = manifest.articles[..50].to_vec();
    // The first answer holds only part of the content.
    let req = revisions_request(wiki.api_url(), &titles, None, &Continue::new());
    let (_, body) = send(&req).await;
    let first = parse_revisions(&titles, &body).unwrap();
    let pending = first
        .outcomes
        .iter()
        .filter(|(_, o)| *o == TitleOutcome::Pending)
        .count();
    assert!(pending > 0 && first.cont.is_some(), "{pending} pending");
    // Following `continue` completes it.
    let outcomes = fetch_all(&wiki, &titles).await;
    assert_eq!(outcomes.len(), 50);
    assert!(
        outcomes
            .values()
            .all(|o| matches!(o, TitleOutcome::Found(_)))
    );
    let requests = wiki.requests().unwrap().len();
    assert!(requests >= 3, "{requests}");
}

#[tokio::test]
async fn article_urls_lead_to_the_pages() {
    let wiki = Wiki::start().unwrap();
    let (_, body) = send(&siteinfo_request(wiki.api_url())).await;
    let info = parse_siteinfo(&body).unwrap();
    assert_eq!(info.sitename, "Emberfall Wiki");
    for title in [
        "Q&A Tavern",
        "+1 Dagger",
        "100% Pure Ember",
        "Sword of Ash/Reforged",
        "Ka'Rath the Undying",
        "Æther Wisp",
    ] {
        let url = info.article_url(wiki.api_url(), title);
        let resp = reqwest::get(&url).await.unwrap();
        assert_eq!(resp.status(), 200, "{url}");
        let html = resp.text().await.unwrap();
        let escaped = title.replace('&', "&amp;");
        assert!(
            html.contains(&format!("<title>{escaped} - Emberfall Wiki</title>")),
            "{url}"
        );
    }
}
