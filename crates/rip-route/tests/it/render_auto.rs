//! `rip-route --render auto`: fetched pages whose HTML shows that their content needs
//! script go on to the browser saying why; a URL pattern's decision is learnt.

use crate::support::*;
use rip_core::Record;

fn page(url: &str, body: &str) -> String {
    serde_json::json!({
        "_type": "page", "url": url, "finalUrl": url, "status": 200,
        "contentType": "text/html; charset=utf-8", "fetchedAt": "2026-12-07T09:00:00Z",
        "body": body, "depth": 1, "attempt": 0
    })
    .to_string()
}

#[test]
fn shells_go_to_the_browser_saying_why_and_a_pattern_is_learnt_after_three() {
    let shell = "<div id=app></div><script src=/js/app.js></script>";
    let article = "<h1>Ash wyrm</h1><p>A wyrm of the ash wastes, feared by caravans.</p>\
                   <script src=/js/menu.js></script>";
    let mut input = String::new();
    for i in 1..=5 {
        input += &page(&format!("http://h/app/item-{i}.html"), shell);
        input.push('\n');
        input += &page(&format!("http://h/bestiary/{i}"), article);
        input.push('\n');
    }
    let ran = route(&["--render", "auto"], &input);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let refs: Vec<_> = ran
        .records()
        .iter()
        .filter_map(|r| match r {
            Record::Ref(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(refs.len(), 5, "the five shells, and no article");
    for (i, r) in refs.iter().enumerate() {
        assert!(r.context.needs_browser && r.url.contains("/app/"), "{r:?}");
        let why = r.context.rendered_because.as_ref().unwrap();
        assert_eq!(why.signal.as_deref(), Some("emptyAppRoot"));
        assert_eq!(why.figures.app_root_chars, Some(0));
        let learnt = (i >= 3).then_some("http://h/app/item-{n}.html");
        assert_eq!(why.learnt.as_deref(), learnt, "page {}", i + 1);
    }
    assert_eq!(ran.of("page").len(), 5, "the articles pass through");
    for (name, n) in [
        ("sentToBrowser", 5),
        ("autoRendered", 5),
        ("autoKept", 5),
        ("autoChecked", 6),
        ("autoLearnt", 4),
        ("patternsLearnt", 2),
    ] {
        assert_eq!(ran.counter(name), n, "{name}");
    }
    assert!(
        ran.stderr.contains(
            "rip-route: render auto: 10 pages: 5 to the browser, 5 kept from it; 6 judged \
             from their HTML, 4 by a learnt URL pattern (2 patterns learnt, 0 contradicted)"
        ),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_rule_says_which_rule_sent_the_page() {
    let policy = tempfile::NamedTempFile::with_suffix(".toml").unwrap();
    std::fs::write(
        policy.path(),
        "[[render]]\nname = \"market\"\nurl = '/market/'\n",
    )
    .unwrap();
    let input = page("http://h/market/", "<ul></ul>");
    let ran = route(&["-p", policy.path().to_str().unwrap()], &input);
    let refs = ran.of("ref");
    assert_eq!(refs.len(), 1);
    let Record::Ref(r) = refs[0] else { panic!() };
    let why = r.context.rendered_because.as_ref().unwrap();
    assert_eq!(why.rule.as_deref(), Some("market"));
}
