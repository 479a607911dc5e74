use super::*;
use proptest::prelude::*;
use std::path::{Component, Path};

fn no_disk(_: &str) -> Option<Option<String>> {
    None
}

#[test]
fn reference_examples() {
    assert_eq!(
        readable("https://2e.aonprd.com/Feats.aspx?ID=750").0,
        "Feats.aspx-ID-750"
    );
    assert_eq!(
        readable("http://127.0.0.1:8080/classes/77.html").0,
        "classes-77.html"
    );
    assert_eq!(readable("http://h/").0, "index");
    assert_eq!(readable("http://h").0, "index");
    assert_eq!(readable("http://h/items/?page=2").0, "items-page-2");
}

#[test]
fn hostile_urls_stay_plain_file_names() {
    for url in [
        "http://h/../../etc/passwd",
        "../../etc/passwd",
        "/absolute/path",
        "http://h/%2e%2e/%2e%2e/x",
        "http://h/a\0b",
        "http://h/..",
        "http://h/.hidden",
        "http://h/C:\\Windows\\x",
        "http://h/ünïcödé/名前",
    ] {
        let (name, _) = readable(url);
        assert!(
            !name.starts_with('.') && !name.contains(['/', '\\', '\0']),
            "{url} → {name}"
        );
    }
    assert_eq!(readable("http://h/../../etc/passwd").0, "etc-passwd");
    assert_eq!(readable("http://h/ünïcödé/名前").0, "n-c-d");
}

#[test]
fn long_and_reserved_names_are_hashed() {
    let long = format!("http://h/{}", "a".repeat(500));
    let (name, plain) = readable(&long);
    assert_eq!((name.len(), plain), (MAX_READABLE, false));
    let mut slugs = Slugs::default();
    let slug = slugs.assign(&long, no_disk);
    assert_eq!(slug.len(), MAX_READABLE + 17);
    assert!(slug.contains('~'));
    assert!(
        !readable("http://h/failures").1,
        "failures.json is rip-write's own"
    );
    assert!(
        !readable("http://h/crawl-health").1,
        "crawl-health.json is rip-health's"
    );
    assert!(
        slugs
            .assign("http://h/failures", no_disk)
            .starts_with("failures~")
    );
}

#[test]
fn colliding_urls_get_distinct_stable_names() {
    let mut slugs = Slugs::default();
    let a = slugs.assign("http://h/a?b", no_disk);
    let b = slugs.assign("http://h/a-b", no_disk);
    let c = slugs.assign("http://other/a-b", no_disk);
    assert_eq!(a, "a-b");
    assert_ne!(a, b);
    assert_ne!(b, c);
    assert_eq!(
        slugs.assign("http://h/a-b", no_disk),
        b,
        "same URL, same name"
    );
    assert_eq!(slugs.assign("http://h/a?b", no_disk), a);
}

#[test]
fn a_file_from_an_earlier_run_keeps_its_owner() {
    // Last run wrote `a-b.json` for http://h/a?b; this run sees http://h/a-b first.
    let disk = |slug: &str| (slug == "a-b").then(|| Some("http://h/a?b".to_owned()));
    let mut slugs = Slugs::default();
    let first = slugs.assign("http://h/a-b", disk);
    assert!(first.starts_with("a-b~"), "{first}");
    assert_eq!(
        slugs.assign("http://h/a?b", disk),
        "a-b",
        "the owner overwrites its own file"
    );
    let unreadable = |slug: &str| (slug == "x").then_some(None);
    assert!(
        Slugs::default()
            .assign("http://h/x", unreadable)
            .starts_with("x~")
    );
}

fn single_normal_component(name: &str) -> bool {
    let mut comps = Path::new(name).components();
    matches!(comps.next(), Some(Component::Normal(_))) && comps.next().is_none()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_url_gives_a_safe_bounded_name(url in "\\PC{0,300}|(\\.\\./|/|\\\\|%2e|\\x00|[a-z]{1,5}|\\?|=|~)*") {
        let (name, _) = readable(&url);
        prop_assert!(!name.is_empty());
        prop_assert!(name.len() <= MAX_READABLE);
        prop_assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-'));
        prop_assert!(!name.starts_with('.') && !name.starts_with('-'));
        let mut slugs = Slugs::default();
        let slug = slugs.assign(&url, no_disk);
        let file = format!("{slug}.json");
        prop_assert!(single_normal_component(&file), "{:?}", file);
        prop_assert!(Path::new("/out/site").join(&file).starts_with("/out/site"));
    }

    #[test]
    fn distinct_urls_never_share_a_name(urls in proptest::collection::vec("(http://[ab]/)?[a-c?=/.~-]{0,6}", 1..40)) {
        let mut slugs = Slugs::default();
        let mut seen: HashMap<String, String> = HashMap::new();
        for url in &urls {
            let slug = slugs.assign(url, no_disk);
            if let Some(other) = seen.insert(slug.clone(), url.clone()) {
                prop_assert_eq!(&other, url, "two URLs got {}", slug);
            }
        }
    }
}
