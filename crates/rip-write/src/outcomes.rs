//! One outcome per URL: the terminal records seen in this run (so that a second one for a
//! URL is a conflict, not an overwrite), and what reached `rip-write` without an outcome:
//! failures no `rip-route` captured and refs no `rip-fetch` fetched.

use crate::failures::{UnfetchedEntry, UnroutedEntry};
use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The first terminal record of a URL in this run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct First {
    /// Its kind (`doc`, `error`, `expected`).
    pub kind: &'static str,
    /// Its input line.
    pub line: u64,
}

/// Terminal records by the URL they account for (128 bits of its SHA-256: 24 bytes an
/// entry, where the URL itself would take a hundred).
#[derive(Debug, Default)]
pub(crate) struct Outcomes {
    seen: HashMap<[u8; 16], First>,
}

impl Outcomes {
    /// Notes a terminal record for `identity`; returns the first one when there was one
    /// already (a conflict: the new one must not replace it).
    pub fn terminal(&mut self, identity: &str, kind: &'static str, line: u64) -> Option<First> {
        let digest = Sha256::digest(identity.as_bytes());
        let mut key = [0u8; 16];
        key.copy_from_slice(&digest[..16]);
        match self.seen.entry(key) {
            std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(First { kind, line });
                None
            }
        }
    }
}

/// The warning for failures that reached `rip-write` unrouted, if any did.
pub(crate) fn unrouted_warning(unrouted: &[UnroutedEntry]) -> Option<String> {
    let first = unrouted.first()?;
    let n = unrouted.len();
    Some(format!(
        "{n} {} reached rip-write unrouted (first: {}, phase {}, round {}): no rip-route \
         after the stage that failed, so no error document accounts for {} (hint: put \
         `| rip-route` before rip-write; listed in failures.json under `unrouted`)",
        plural(n, "failure", "failures"),
        first.url,
        serde_json::to_value(first.phase)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default(),
        first.attempt,
        plural(n, "it", "them"),
    ))
}

/// The warning for refs that reached `rip-write`, if any did.
pub(crate) fn unfetched_warning(unfetched: &[UnfetchedEntry]) -> Option<String> {
    let first = unfetched.first()?;
    let n = unfetched.len();
    let what = match (&first.resolves, first.attempt) {
        (Some(u), _) => format!("a resolve candidate for {u}"),
        (None, 0) => "a first-round ref".to_owned(),
        (None, a) => format!("a retry for round {}", a + 1),
    };
    Some(format!(
        "{n} {} reached rip-write unfetched (first: {}, {what}): nothing fetched {}, so {} no \
         outcome (hint: the last rip-route of the pipeline wrote retries; give it --final, \
         or add a `| rip-fetch | rip-route` round; listed in failures.json under `unfetched`)",
        plural(n, "ref", "refs"),
        first.url,
        plural(n, "it", "them"),
        plural(n, "it has", "they have"),
    ))
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_terminal_record_of_a_url_is_kept() {
        let mut o = Outcomes::default();
        assert!(o.terminal("http://h/a", "doc", 1).is_none());
        assert!(o.terminal("http://h/b", "doc", 2).is_none());
        let first = o.terminal("http://h/a", "error", 3).unwrap();
        assert_eq!((first.kind, first.line), ("doc", 1));
        assert_eq!(o.terminal("http://h/a", "doc", 4).unwrap().line, 1);
    }

    #[test]
    fn warnings_name_the_first_url_and_say_how_many() {
        assert_eq!(unfetched_warning(&[]), None);
        let entry = |url: &str, attempt| UnfetchedEntry {
            url: url.into(),
            attempt,
            resolves: None,
        };
        let w = unfetched_warning(&[entry("http://h/x", 2), entry("http://h/y", 1)]).unwrap();
        assert!(
            w.starts_with(
                "2 refs reached rip-write unfetched (first: http://h/x, a retry for round 3)"
            ),
            "{w}"
        );
    }
}
