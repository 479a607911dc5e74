//! A run's output as messages: each URL's `ledger` entry stored in one message with the URL's
//! outcome, under the entry's identity.
//!
//! A first-round URL leaves a run two records: its ledger entry (rip-fetch's `ledger`, one URL
//! at a time here) and its outcome (a `page`, `doc`, `error`, `failure` or `expected` with that
//! `url`). Stored apart they cost the broker two publications and two acknowledgements: a
//! third of its messages a page (`scripts/bench/queue`). Stored together, the message holds
//! the entry's line and then the outcome's, and its identity is the entry's
//! ([`Head::message_id`]), so work done again (a worker killed after publishing and before
//! acknowledging) stores the URL's entry and outcome once, whatever the second run's outcome.
//! A reader gets the two lines, the entry first, as two records.

use crate::identity::{Head, ledger_per_url};
use std::collections::{HashMap, HashSet};

/// The kinds of record that are a URL's outcome, which its ledger entry goes with.
const OUTCOMES: [&str; 5] = ["page", "doc", "error", "failure", "expected"];

/// One message of a run's output.
pub(crate) enum Piece {
    /// A record alone.
    One { line: String, head: Head },
    /// A ledger entry of one URL and that URL's outcome, in this order.
    Pair {
        entry: String,
        entry_head: Head,
        outcome: String,
        outcome_head: Head,
    },
}

#[cfg(test)]
impl Piece {
    /// The message's text: the record's line, or the entry's and the outcome's lines.
    pub(crate) fn text(&self) -> String {
        match self {
            Piece::One { line, .. } => line.clone(),
            Piece::Pair { entry, outcome, .. } => format!("{entry}\n{outcome}"),
        }
    }
}

/// The messages of `records`, a run's output in order, each line with its head (read once,
/// by the caller): ledger records one URL at a time, each entry whose URL has an outcome
/// among them paired with the first such outcome, at the outcome's place, when the two fit
/// in `max_payload` bytes together; every other record alone, in its place.
pub(crate) fn pieces(records: Vec<(String, Head)>, max_payload: usize) -> Vec<Piece> {
    let records: Vec<(String, Head)> = records.into_iter().flat_map(one_url_per_ledger).collect();
    let entry_of = pairs(&records, max_payload);
    let paired: HashSet<usize> = entry_of.values().copied().collect();
    let mut slots: Vec<Option<(String, Head)>> = records.into_iter().map(Some).collect();
    let mut pieces = Vec::with_capacity(slots.len());
    for i in 0..slots.len() {
        if paired.contains(&i) {
            continue; // with its outcome
        }
        let (line, head) = slots[i].take().expect("each record taken once");
        let piece = match entry_of.get(&i) {
            Some(&e) => {
                let (entry, entry_head) = slots[e].take().expect("an entry paired once");
                Piece::Pair {
                    entry,
                    entry_head,
                    outcome: line,
                    outcome_head: head,
                }
            }
            None => Piece::One { line, head },
        };
        pieces.push(piece);
    }
    pieces
}

/// `record` itself, or the ledger record it is, one record per URL it names (each with its
/// head; only ledger lines are read again).
fn one_url_per_ledger((line, head): (String, Head)) -> Vec<(String, Head)> {
    if head.kind != "ledger" {
        return vec![(line, head)];
    }
    match ledger_per_url(&line) {
        Some(pieces) => pieces
            .into_iter()
            .map(|piece| {
                let head = Head::of(&piece);
                (piece, head)
            })
            .collect(),
        None => vec![(line, head)],
    }
}

/// The pairs among `records`: for each outcome paired, the index of its entry. A single-URL
/// ledger entry goes with the first outcome of its URL; an entry repeated stays alone, and so
/// does an outcome whose entry is taken.
fn pairs(records: &[(String, Head)], max_payload: usize) -> HashMap<usize, usize> {
    let mut entry_of_url: HashMap<&str, usize> = HashMap::new();
    for (i, (_, head)) in records.iter().enumerate() {
        if let Some(url) = head.entered_one() {
            entry_of_url.entry(url).or_insert(i);
        }
    }
    let mut entry_of = HashMap::new();
    for (i, (line, head)) in records.iter().enumerate() {
        if !OUTCOMES.contains(&head.kind.as_str()) {
            continue;
        }
        let Some(entry) = head.url.as_deref().and_then(|url| entry_of_url.remove(url)) else {
            continue;
        };
        if records[entry].0.len() + 1 + line.len() <= max_payload {
            entry_of.insert(i, entry);
        }
    }
    entry_of
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `lines` with their heads, as a worker reads them.
    fn pieces(lines: Vec<String>, max_payload: usize) -> Vec<Piece> {
        let records = lines
            .into_iter()
            .map(|line| {
                let head = Head::of(&line);
                (line, head)
            })
            .collect();
        super::pieces(records, max_payload)
    }

    fn texts(pieces: &[Piece]) -> Vec<String> {
        pieces.iter().map(Piece::text).collect()
    }

    const LEDGER: &str = r#"{"_type":"ledger","stage":"rip-fetch","entered":["http://h/a","http://h/b","http://h/c"]}"#;

    fn entry(url: &str) -> String {
        format!(r#"{{"_type":"ledger","stage":"rip-fetch","entered":["{url}"]}}"#)
    }

    fn doc(url: &str) -> String {
        format!(r#"{{"_type":"doc","url":"{url}","attempt":0}}"#)
    }

    #[test]
    fn each_entry_goes_with_its_urls_outcome_in_the_outcomes_place() {
        let failure = r#"{"_type":"failure","url":"http://h/c","attempt":0}"#;
        let lines = vec![
            doc("http://h/b"),
            LEDGER.to_owned(),
            doc("http://h/a"),
            failure.to_owned(),
        ];
        let pieces = pieces(lines, 1 << 20);
        assert_eq!(
            texts(&pieces),
            [
                entry("http://h/b") + "\n" + &doc("http://h/b"),
                entry("http://h/a") + "\n" + &doc("http://h/a"),
                entry("http://h/c") + "\n" + failure,
            ]
        );
    }

    /// The identity of the one message of `lines`, a pair.
    fn pair_id(lines: Vec<String>) -> String {
        match pieces(lines, 1 << 20).as_slice() {
            [
                Piece::Pair {
                    entry, entry_head, ..
                },
            ] => entry_head.message_id(entry),
            _ => panic!("one pair"),
        }
    }

    #[test]
    fn a_pair_has_the_identity_of_its_entry_whatever_the_outcome() {
        let alone = entry("http://h/a");
        let with_doc = pair_id(vec![alone.clone(), doc("http://h/a")]);
        assert_eq!(with_doc, Head::of(&alone).message_id(&alone));
        // Work done again that ends otherwise is stored once: the first outcome stands.
        let failure = r#"{"_type":"failure","url":"http://h/a","attempt":0}"#;
        assert_eq!(pair_id(vec![failure.to_owned(), alone]), with_doc);
    }

    #[test]
    fn records_without_a_partner_stay_alone_and_in_order() {
        let redirected = doc("http://h/elsewhere");
        let next_round = r#"{"_type":"ref","url":"http://h/a","attempt":1}"#;
        let lines = vec![
            entry("http://h/a"),
            redirected.clone(),
            next_round.to_owned(),
            entry("http://h/a"),
        ];
        assert_eq!(
            texts(&pieces(lines.clone(), 1 << 20)),
            lines,
            "a ref is no outcome, another URL's doc no partner"
        );
    }

    #[test]
    fn an_entry_goes_with_one_outcome_and_a_repeated_entry_stays_alone() {
        let lines = vec![
            entry("http://h/a"),
            doc("http://h/a"),
            entry("http://h/a"),
            doc("http://h/a"),
        ];
        assert_eq!(
            texts(&pieces(lines, 1 << 20)),
            [
                entry("http://h/a") + "\n" + &doc("http://h/a"),
                entry("http://h/a"),
                doc("http://h/a"),
            ]
        );
    }

    #[test]
    fn a_pair_over_the_broker_maximum_goes_as_two_messages() {
        let lines = vec![entry("http://h/a"), doc("http://h/a")];
        let both = lines[0].len() + 1 + lines[1].len();
        assert_eq!(texts(&pieces(lines.clone(), both - 1)), lines);
        assert_eq!(pieces(lines, both).len(), 1);
    }
}
