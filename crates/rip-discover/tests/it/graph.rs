//! Generated link graphs: the three regexes, depth and page limits, normalisation,
//! robots.txt, each checked against a reference walk of the same graph.

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;
use rip_core::{ExpectedSource, Status};
use rip_testserver::{LinkGraph, LinkStyle, TestServer};

use crate::*;

fn serve(g: &LinkGraph) -> TestServer {
    TestServer::builder()
        .graph(g.clone())
        .start_background()
        .unwrap()
}

fn set(m: &BTreeMap<String, u32>) -> BTreeSet<String> {
    m.keys().cloned().collect()
}

/// The reference's semantics, exactly: `--follow` (delimiter) decides what is traversed,
/// `--target` what is collected among the traversed; a link matching the target but not
/// the delimiter is neither.
#[test]
fn follow_and_target_regexes_as_the_reference_defines_them() {
    let g = LinkGraph::new(300).seed(3).sections(4);
    let server = serve(&g);
    let follow = Regex::new(r"/$|/section-[01]/").unwrap();
    let target = Regex::new(r"/section-[13]/").unwrap();
    let r = run(&[
        &server.url("/"),
        "--follow",
        follow.as_str(),
        "--target",
        target.as_str(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let traversed = bfs(&g, |p| follow.is_match(p), |_| false, u32::MAX);
    let want: BTreeSet<String> = traversed
        .keys()
        .filter(|p| target.is_match(p))
        .cloned()
        .collect();
    assert!(want.len() > 20, "a meaningful sample: {}", want.len());
    assert_eq!(r.paths(), want);
    assert!(r.paths().iter().all(|p| p.starts_with("/section-1/")));
    // Traversed without being collected: section-0 pages and the home page were fetched.
    let log = requests(&server);
    assert!(log.keys().any(|p| p.starts_with("/section-0/")));
    assert!(log.contains_key("/"));
    // Matches the target, not the delimiter: section-3 is never even fetched.
    assert!(
        !log.keys()
            .any(|p| p.starts_with("/section-3/") || p.starts_with("/section-2/"))
    );
    let mut fetched: BTreeSet<String> = log.into_keys().collect();
    fetched.remove("/robots.txt");
    assert_eq!(fetched, set(&traversed));
    // Depth is the BFS depth over traversed links.
    for rf in r.refs() {
        assert_eq!(rf.context.depth, traversed[&path_of(&rf.url)], "{}", rf.url);
    }
}

/// `--domain`: by default only the start URL's origin is considered; a domain regex
/// widens it (here to a second server on another port).
#[test]
fn domain_regex_decides_what_is_considered_at_all() {
    let other_graph = LinkGraph::new(5);
    let other = serve(&other_graph);
    let g = LinkGraph::new(20).home_link(other.url("/"));
    let server = serve(&g);
    let r = run(&[&server.url("/")]);
    assert_eq!(r.refs().len(), 20);
    assert_eq!(
        other.total(),
        0,
        "another origin is out of the default domain"
    );
    assert_eq!(r.counter("outOfDomain"), 1);

    let r = run(&[&server.url("/"), "--domain", r"^http://127\.0\.0\.1:"]);
    assert_eq!(r.refs().len(), 25, "both sites");
    assert!(other.count("/") >= 1);

    let r = run(&[&server.url("/"), "--domain", r"^http://nowhere\.invalid/"]);
    assert_eq!(
        r.refs().len(),
        1,
        "only the start URL, which is always crawled"
    );
}

#[test]
fn depth_limit_matches_the_breadth_first_depths() {
    let g = LinkGraph::new(2000).seed(11).fan_out(4);
    let server = serve(&g);
    let r = run(&[&server.url("/"), "--max-depth", "3", "-c", "32"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let want = bfs(&g, |_| true, |_| false, 3);
    assert!(want.len() > 100 && want.len() < 2000, "{}", want.len());
    assert_eq!(r.paths(), set(&want));
    for rf in r.refs() {
        assert_eq!(rf.context.depth, want[&path_of(&rf.url)], "{}", rf.url);
    }
    assert_eq!(r.counter("maxDepth"), 3);
    // Nothing past depth 3 was fetched.
    assert_eq!(server.total(), want.len() + 1);
}

#[test]
fn page_and_request_budgets_stop_the_crawl_and_say_so() {
    let g = LinkGraph::new(1000).seed(5);
    let server = serve(&g);
    let r = run(&[&server.url("/"), "--max-pages", "25", "-c", "16"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.refs().len(), 25);
    assert_eq!(r.counter("budgetExhausted"), 1);
    assert!(
        r.summary().notes.iter().any(|n| n.contains("maxPages")),
        "{:?}",
        r.summary().notes
    );
    assert!(r.counter("frontierLeft") > 0);
    assert!(
        server.total() <= 26,
        "{} requests for 25 pages",
        server.total()
    );

    let server = serve(&g);
    let r = run(&[
        &server.url("/"),
        "--max-requests",
        "40",
        "--target",
        r"item-\d*7$",
    ]);
    assert_eq!(r.status(), Status::Complete);
    assert!(
        r.summary().notes.iter().any(|n| n.contains("maxRequests")),
        "{:?}",
        r.summary().notes
    );
    assert_eq!(server.total(), 41, "40 pages + robots.txt");
    assert!(r.refs().iter().all(|x| x.url.ends_with('7')));
}

/// Every spelling of a URL (root-relative, relative, absolute, fragment, tracking
/// parameters, dot segments, an escaped unreserved character) is one page: fetched once.
/// (Scheme, host and port case are covered by rip-url's tests: a test server's port is not
/// known before the hrefs are written.)
#[test]
fn normalisation_duplicates_collapse() {
    for style in [LinkStyle::Root, LinkStyle::Relative, LinkStyle::Absolute] {
        let g = LinkGraph::new(60)
            .seed(2)
            .sections(3)
            .link_style(style)
            .home_link("/section-1/item-1#frag")
            .home_link("/section-1/item-1?utm_source=x&utm_medium=y")
            .home_link("/section-1/./x/../item-1")
            .home_link("section-1/item-1")
            .home_link("/section-1/%69tem-1");
        let server = serve(&g);
        let r = run(&[&server.url("/")]);
        assert_eq!(r.refs().len(), 60, "{style:?}");
        let log = requests(&server);
        assert!(log.values().all(|&n| n == 1), "{style:?}: {log:?}");
        assert_eq!(log.len(), 61);
        assert!(r.counter("duplicates") > 60);
    }
}

/// Disallowed URLs are never fetched and come out as `expected` records naming the rule;
/// pages linked only from disallowed pages are never reached.
#[test]
fn robots_disallow_is_honoured() {
    let g = LinkGraph::new(400)
        .seed(9)
        .sections(4)
        .disallow("/section-2/");
    let server = serve(&g);
    let r = run(&[&server.url("/")]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let blocked = |p: &str| p.starts_with("/section-2/");
    let want = bfs(&g, |_| true, blocked, u32::MAX);
    assert_eq!(r.paths(), set(&want));
    let log = requests(&server);
    assert!(
        !log.keys().any(|p| blocked(p)),
        "a disallowed page was fetched"
    );
    // Pages only reachable through section 2 exist in this graph, and were not reached.
    let unblocked = bfs(&g, |_| true, |_| false, u32::MAX);
    let only_behind: Vec<&String> = unblocked
        .keys()
        .filter(|p| !blocked(p) && !want.contains_key(*p))
        .collect();
    assert!(
        !only_behind.is_empty(),
        "the graph has pages behind section 2"
    );
    for p in &only_behind {
        assert!(
            !log.contains_key(*p),
            "{p} is linked only from disallowed pages"
        );
    }
    // One expected record per disallowed URL the crawl met, naming the rule.
    let exp = r.expected();
    assert!(!exp.is_empty());
    for e in &exp {
        assert!(blocked(&path_of(&e.url)));
        assert_eq!(e.rule.as_deref(), Some("Disallow: /section-2/"));
        assert_eq!(e.source, Some(ExpectedSource::Robots));
    }
    let distinct: BTreeSet<&str> = exp.iter().map(|e| e.url.as_str()).collect();
    assert_eq!(distinct.len(), exp.len());
    assert_eq!(r.counter("robotsDenied") as usize, exp.len());
}

/// `--ignore-robots` crawls what robots.txt forbids (and says nothing about it).
#[test]
fn ignore_robots_reaches_everything() {
    let g = LinkGraph::new(100).sections(4).disallow("/section-2/");
    let server = serve(&g);
    let r = run(&[&server.url("/"), "--ignore-robots"]);
    assert_eq!(r.refs().len(), 100);
    assert!(r.expected().is_empty());
    assert!(!requests(&server).contains_key("/robots.txt"));
}

/// Start refs on stdin; other records pass through byte for byte; a malformed line is
/// reported with its number and the rest is processed.
#[test]
fn stdin_refs_pass_through_and_bad_lines() {
    let g = LinkGraph::new(10);
    let server = serve(&g);
    let doc = r#"{"_type":"doc","url":"http://x/","concept":"c","weird":[1,{"a":null}],"n":1.50}"#;
    let input = format!(
        "{doc}\nnot json\n{{\"_type\":\"ref\",\"url\":\"{}\",\"depth\":0,\"raw\":{{\"k\":1}}}}\n",
        server.url("/")
    );
    let cache = tempfile::tempdir().unwrap();
    let r = run_with(&[], cache.path(), Some(&input));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.summary().bad_lines, 1);
    assert!(r.stderr.contains("-:2:"), "{}", r.stderr);
    assert!(
        r.stdout.lines().any(|l| l == doc),
        "byte-for-byte pass-through"
    );
    assert_eq!(r.refs().len(), 10);
    let start = r.refs().into_iter().find(|x| x.context.depth == 0).unwrap();
    assert_eq!(start.context.raw["k"], 1, "the start ref keeps its context");
    assert_eq!(r.summary().input.get("ref"), Some(&1));
    assert_eq!(r.summary().input.get("doc"), Some(&1));
}

/// A line of stdin that is a bare URL is a start URL, as its `ref` would be; one that is
/// not a URL is a bad line.
#[test]
fn a_bare_url_on_stdin_is_a_start_url() {
    let g = LinkGraph::new(10);
    let server = serve(&g);
    let input = format!("{}\nhttp://[::1/\n", server.url("/"));
    let cache = tempfile::tempdir().unwrap();
    let r = run_with(&[], cache.path(), Some(&input));
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.refs().len(), 10, "{}", r.stderr);
    assert_eq!(r.summary().input.get("ref"), Some(&1));
    assert!(
        r.stderr.contains("-:2: not a URL: http://[::1/"),
        "{}",
        r.stderr
    );
}

/// `--drop-param NAME` (and `name*` prefixes) removes query parameters that do not change
/// the page, so its spellings are one URL; without it they are distinct pages. `utm_*` is
/// dropped unless `--keep-utm`.
#[test]
fn query_parameters_dropped_by_name() {
    let g = LinkGraph::new(20)
        .seed(6)
        .home_link("/item-3?sid=a1")
        .home_link("/item-3?sid=b2&sort=asc")
        .home_link("/item-3?sort=asc&sess_x=9")
        .home_link("/item-4?utm_source=feed");
    let server = serve(&g);
    let r = run(&[
        &server.url("/"),
        "--drop-param",
        "sid",
        "--drop-param",
        "sess_*",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let log = requests(&server);
    assert_eq!(log.get("/item-3"), Some(&1), "{log:?}");
    assert_eq!(log.get("/item-3?sort=asc"), Some(&1), "{log:?}");
    assert!(
        !log.keys()
            .any(|t| t.contains("sid=") || t.contains("sess_")),
        "{log:?}"
    );
    assert!(!log.keys().any(|t| t.contains("utm_")), "{log:?}");
    assert_eq!(
        r.refs().len(),
        21,
        "the graph's 20 pages and /item-3?sort=asc"
    );

    let server = serve(&g);
    let r = run(&[&server.url("/"), "--keep-utm"]);
    let log = requests(&server);
    assert_eq!(log.get("/item-3?sid=a1"), Some(&1), "{log:?}");
    assert_eq!(log.get("/item-4?utm_source=feed"), Some(&1), "{log:?}");
    assert_eq!(r.refs().len(), 24);
}

/// `--frontier-memory 0`: every waiting URL waits on disk, and the crawl is the same: the
/// same pages at the same depths, each once (parents updated while on disk included).
#[test]
fn a_frontier_on_disk_crawls_the_same_graph() {
    let g = LinkGraph::new(2000).seed(11).fan_out(4);
    let server = serve(&g);
    let want = bfs(&g, |_| true, |_| false, u32::MAX);
    // One page at a time: which parent a page keeps depends on the order pages end in.
    let r = run(&[&server.url("/"), "-c", "1", "--frontier-memory", "0"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.paths(), set(&want));
    for rf in r.refs() {
        assert_eq!(rf.context.depth, want[&path_of(&rf.url)], "{}", rf.url);
    }
    assert!(
        r.counter("frontierSpilled") as usize >= want.len() - 1,
        "{}",
        r.counter("frontierSpilled")
    );
    assert_eq!(r.counter("frontierLost"), 0);
    // The parents and link texts too, as a frontier in memory has them.
    let in_memory = run(&[&server.url("/"), "-c", "1"]);
    let context = |r: &Ran| -> BTreeSet<String> {
        r.refs()
            .iter()
            .map(|x| format!("{} {:?} {:?}", x.url, x.context.parent, x.context.link_text))
            .collect()
    };
    assert_eq!(context(&r), context(&in_memory));
    assert_eq!(in_memory.counter("frontierSpilled"), 0);
}
