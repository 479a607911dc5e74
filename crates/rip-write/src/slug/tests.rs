use super::*;
use proptest::prelude::*;
use std::collections::HashMap;
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
    let slug = slugs.assign(&long, no_disk).slug;
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
            .slug
            .starts_with("failures~")
    );
}

#[test]
fn colliding_urls_get_hashed_names_and_the_first_one_moves() {
    let mut slugs = Slugs::default();
    let a = slugs.assign("http://h/a?b", no_disk);
    assert_eq!(
        a,
        Assigned::plain("a-b".into()),
        "alone, it has the plain name"
    );
    let b = slugs.assign("http://h/a-b", no_disk);
    let a_hashed = format!("a-b~{}", hash16("http://h/a?b"));
    assert_eq!(b.slug, format!("a-b~{}", hash16("http://h/a-b")));
    assert_eq!(
        b.moved,
        Some(Moved {
            from: "a-b".into(),
            to: a_hashed.clone()
        }),
        "the first URL leaves the plain name"
    );
    let c = slugs.assign("http://other/a-b", no_disk);
    assert_eq!((c.moved, c.stale), (None, None));
    assert_ne!(b.slug, c.slug);
    assert_eq!(
        slugs.assign("http://h/a-b", no_disk).slug,
        b.slug,
        "same URL, same name"
    );
    assert_eq!(slugs.assign("http://h/a?b", no_disk).slug, a_hashed);
}

#[test]
fn names_are_the_same_in_any_order() {
    let urls = ["http://h/a?b", "http://h/a-b", "http://h/c", "http://x/a-b"];
    let names = |order: &[usize]| {
        let mut slugs = Slugs::default();
        for &i in order {
            slugs.assign(urls[i], no_disk);
        }
        let mut out: Vec<String> = urls.iter().map(|u| slugs.assign(u, no_disk).slug).collect();
        out.sort();
        out
    };
    assert_eq!(names(&[0, 1, 2, 3]), names(&[3, 2, 1, 0]));
    assert_eq!(names(&[2, 0, 3, 1]), names(&[1, 3, 0, 2]));
    assert!(names(&[0, 1, 2, 3]).contains(&"c".to_owned()));
}

#[test]
fn a_file_from_an_earlier_run_keeps_its_owner() {
    // Last run wrote `a-b.json` for http://h/a?b; this run sees http://h/a-b alone.
    let disk = |slug: &str| (slug == "a-b").then(|| Some("http://h/a?b".to_owned()));
    let mut slugs = Slugs::default();
    let first = slugs.assign("http://h/a-b", disk);
    assert!(first.slug.starts_with("a-b~"), "{first:?}");
    assert_eq!(slugs.assign("http://h/a-b", disk).slug, first.slug);
    // Then its owner comes too: the name is shared, so the owner's old file is stale.
    let owner = slugs.assign("http://h/a?b", disk);
    assert!(owner.slug.starts_with("a-b~"), "{owner:?}");
    assert_eq!(owner.stale.as_deref(), Some("a-b"));
    assert_eq!(owner.moved, None);
    // The owner alone overwrites its own file.
    assert_eq!(Slugs::default().assign("http://h/a?b", disk).slug, "a-b");
    let unreadable = |slug: &str| (slug == "x").then_some(None);
    assert!(
        Slugs::default()
            .assign("http://h/x", unreadable)
            .slug
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
        let slug = slugs.assign(&url, no_disk).slug;
        let file = format!("{slug}.json");
        prop_assert!(single_normal_component(&file), "{:?}", file);
        prop_assert!(Path::new("/out/site").join(&file).starts_with("/out/site"));
    }

    #[test]
    fn distinct_urls_never_share_a_name(urls in proptest::collection::vec("(http://[ab]/)?[a-c?=/.~-]{0,6}", 1..40)) {
        let mut slugs = Slugs::default();
        let mut current: HashMap<String, String> = HashMap::new();
        for url in &urls {
            let a = slugs.assign(url, no_disk);
            if let Some(m) = &a.moved {
                let owner = current.remove(&m.from).expect("a moved name was handed out");
                prop_assert!(current.insert(m.to.clone(), owner).is_none());
            }
            if let Some(other) = current.insert(a.slug.clone(), url.clone()) {
                prop_assert_eq!(&other, url, "two URLs got {}", a.slug);
            }
        }
        // And the names are those of the set, whatever the order.
        let mut reversed = Slugs::default();
        for url in urls.iter().rev() {
            reversed.assign(url, no_disk);
        }
        for (slug, url) in &current {
            prop_assert_eq!(&reversed.assign(url, no_disk).slug, slug);
        }
    }
}
