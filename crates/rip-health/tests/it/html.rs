//! The HTML report on the demo site's golden stream: books that look balanced because they
//! are, the words of each stage, the rounds, and where missing pages were linked from.

use crate::{golden, run};

fn report() -> (String, serde_json::Value) {
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("report.html");
    let r = run(
        &["--html", html.to_str().unwrap()],
        Some(&golden("site.reconciled.ndjson")),
    );
    assert_eq!(r.code, 2, "item-99 is missing: {}", r.stderr);
    let json = serde_json::from_str(&r.stdout).unwrap();
    (std::fs::read_to_string(html).unwrap(), json)
}

#[test]
fn the_outcome_cards_add_up_to_what_entered_and_the_robots_gap_is_apart() {
    let (page, v) = report();
    // 11 entered; the robots-disallowed link (an `expected` from discovery) never did.
    assert_eq!(v["counters"]["entered"], 11);
    assert_eq!(v["ledger"]["notEnteredExpected"], 1);
    assert!(
        page.contains(
            "<p>11 entered = 9 docs + 2 failures (1 captured elsewhere, 1 missing, 0 dead) \
             + 0 expected + 0 unaccounted</p>"
        ),
        "{page}"
    );
    assert!(page.contains("<b>0</b>expected</div>"), "{page}");
    assert!(
        page.contains(
            "Besides: 1 expected, never entered (links the crawler found and robots.txt disallowed"
        ),
        "{page}"
    );
}

#[test]
fn rounds_are_counted_and_docs_are_not_called_captured() {
    let (page, _) = report();
    assert!(
        page.contains("2 fetch rounds ran; 1 URL needed a retry round."),
        "{page}"
    );
    assert!(!page.contains("retry round(s) in all"), "{page}");
    assert!(!page.contains("captured, no retry"), "{page}");
    assert!(page.contains(">docs, first round<"), "{page}");
    assert!(page.contains(">docs after 1 retry round<"), "{page}");
}

#[test]
fn missing_pages_show_where_they_were_linked_from_and_stage_names_are_whole() {
    let (page, v) = report();
    assert_eq!(
        v["missing"][0]["parent"],
        "http://127.0.0.1:8080/blog/patch-notes-2-1.html"
    );
    assert_eq!(v["missing"][0]["linkText"], "Dragonbone Lute");
    assert!(
        page.contains(
            "<td class=\"u\">http://127.0.0.1:8080/items/item-99.html</td>\
             <td class=\"u\">http://127.0.0.1:8080/blog/patch-notes-2-1.html</td>\
             <td>Dragonbone Lute</td>"
        ),
        "{page}"
    );
    // Words break at spaces only; URLs anywhere; stage names and numbers nowhere.
    assert!(!page.contains("td,th{text-align:left;padding:4px 8px;border-bottom:1px solid #e4e7ec;vertical-align:top;word-break:break-all}"));
    assert!(page.contains("<td class=\"n\">rip-discover</td>"), "{page}");
}

/// The one-screen summary on stderr adds up as the cards do: what entered is docs, failures
/// and the expected gaps that entered; the robots gap found by discovery is said apart.
#[test]
fn the_summary_on_stderr_adds_up_to_what_entered_as_the_cards_do() {
    let r = run(&[], Some(&golden("site.reconciled.ndjson")));
    assert_eq!(r.code, 2, "item-99 is missing: {}", r.stderr);
    let line = r
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("entered "))
        .unwrap_or_else(|| panic!("no `entered` line: {}", r.stderr));
    assert!(line.contains("entered 11 · docs 9 ("), "{line}");
    assert!(
        line.ends_with("· failures 2 · expected 0 (and 1 never entered: disallowed by robots.txt)"),
        "{line}"
    );
    // Ladon's counters count that expected record too: the line says it never entered,
    // so that 9 + 2 + 1 = 11 + 1 reads as balanced.
    let counters = r
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("counters: "))
        .unwrap_or_else(|| panic!("no `counters` line: {}", r.stderr));
    assert!(
        counters.ends_with("failed 2 · expected 1 · entered 11 + 1 never entered (balanced)"),
        "{counters}"
    );
}
