//! The ledger property of resolve groups, in process over many shapes: whatever each
//! candidate's outcome and however outcomes interleave with other records, a closing
//! rip-route writes exactly one record accounting for each failed URL.

use crate::support::*;
use proptest::prelude::*;
use rip_core::{Line, Record};
use rip_route::{Config, Policy};

fn policy() -> Policy {
    Policy::from_file(std::path::Path::new(&testdata("policy/emberfall.toml"))).unwrap()
}

fn run_in_process(input: String) -> Vec<Record> {
    let mut out = Vec::new();
    rip_route::run(
        Config {
            policy: policy(),
            ..Config::default()
        },
        std::io::Cursor::new(input.into_bytes()),
        &mut out,
    )
    .unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .filter_map(|l| Line::from_text(l).ok()?.decode().ok())
        .collect()
}

/// One outcome per candidate: 200, a failure status, or robots' `expected`.
fn outcome(ref_line: &str, kind: u8) -> String {
    match kind {
        0 => fetched(ref_line, 200),
        1 => fetched(ref_line, 404),
        2 => fetched(ref_line, 503),
        _ => {
            let Record::Ref(r) = record(ref_line) else {
                unreachable!()
            };
            serde_json::json!({"_type":"expected","url":r.url,"reason":"disallowed by robots.txt",
                "resolves":r.context.resolves,"attempt":r.attempt})
            .to_string()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_failed_url_is_accounted_for_exactly_once(
        groups in proptest::collection::vec(proptest::collection::vec(0u8..4, 2), 1..6),
        drop_last in any::<bool>(),
        seed in any::<u64>(),
    ) {
        // Round 1: one mis-linked URL per group opens a group of two candidates.
        let failed: Vec<String> = (0..groups.len()).map(|i| format!("http://h/classes/{}.html", 100 + i)).collect();
        let round1: String = failed.iter().map(|u| failure(u, 404, 1) + "\n").collect();
        let opened: Vec<String> = run_in_process(round1)
            .iter()
            .filter(|r| !matches!(r, Record::Summary(_)))
            .map(|r| serde_json::to_string(r).unwrap())
            .collect();
        // A fake rip-fetch: heads pass through first, outcomes come later in shuffled order.
        let mut heads = Vec::new();
        let mut outcomes = Vec::new();
        let mut refs = opened.iter().filter(|l| l.starts_with("{\"_type\":\"ref\""));
        for (g, kinds) in groups.iter().enumerate() {
            heads.push(opened.iter().find(|l| l.contains(&failed[g]) && l.contains("\"resolving\"")).unwrap().clone());
            for &k in kinds {
                outcomes.push(outcome(refs.next().unwrap(), k));
            }
        }
        let mut state = seed | 1;
        for i in (1..outcomes.len()).rev() {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17;
            outcomes.swap(i, (state % (i as u64 + 1)) as usize);
        }
        if drop_last {
            outcomes.pop(); // a candidate lost upstream
        }
        let mut input = heads.join("\n") + "\n";
        for o in &outcomes {
            input.push_str(o);
            input.push_str("\n{\"_type\":\"telemetry\"}\n");
        }
        let out = run_in_process(input);
        for (g, u) in failed.iter().enumerate() {
            let accounts: Vec<&Record> = out.iter().filter(|r| accounts_for(r).as_deref() == Some(u.as_str())).collect();
            prop_assert_eq!(accounts.len(), 1, "{} in {:?}", u, out);
            let any_success = groups[g].contains(&0);
            match accounts[0] {
                Record::Page(p) => {
                    prop_assert!(any_success);
                    // The first success in preference order (ancestries before spells) won,
                    // unless it was the lost one.
                    let first_ok = groups[g].iter().position(|&k| k == 0).unwrap();
                    let want = if first_ok == 0 { "ancestries" } else { "spells" };
                    prop_assert!(p.url.contains(want) || drop_last, "{} won", p.url);
                }
                Record::Error(e) => {
                    prop_assert_eq!(&e.url, u);
                    prop_assert!(!any_success || drop_last);
                }
                other => prop_assert!(false, "unexpected {:?}", other),
            }
        }
        prop_assert!(out.iter().all(|r| !matches!(r, Record::Failure(_) | Record::Ref(_))), "nothing left open");
    }
}
