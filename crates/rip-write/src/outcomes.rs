//! One outcome per URL: the terminal records seen in this run (so that a second one for a
//! URL is a conflict, not an overwrite), and what reached `rip-write` without an outcome:
//! failures no `rip-route` captured and refs no `rip-fetch` fetched.

use crate::failures::{UnfetchedEntry, UnroutedEntry};
use rip_keystore::Store;

/// The first terminal record of a URL in this run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct First {
    /// Its kind (`doc`, `error`, `expected`).
    pub kind: &'static str,
    /// Its input line.
    pub line: u64,
}

/// The terminal kinds, by the number packed in an entry's top bits.
const KINDS: [&str; 3] = ["doc", "error", "expected"];

/// Bits of an entry below the kind: the line (a line past 2^62 would share its top bits
/// with the kind; no input is that long).
const LINE_BITS: u32 = 62;

/// Terminal records by the URL they account for: 128 bits of its SHA-256, with the first
/// record's kind and line in one u64, in a [`Store`] (about 26 bytes a URL, where a hash
/// map of the URLs themselves would take a few hundred).
#[derive(Debug, Default)]
pub(crate) struct Outcomes {
    seen: Store<u64>,
}

impl Outcomes {
    /// Notes a terminal record for `identity`; returns the first one when there was one
    /// already (a conflict: the new one must not replace it).
    pub fn terminal(&mut self, identity: &str, kind: &'static str, line: u64) -> Option<First> {
        let key = u128::from_be_bytes(crate::slug::id_of(identity));
        if let Some(packed) = self.seen.get(key) {
            return Some(unpack(packed));
        }
        self.seen.insert(key, pack(kind, line));
        None
    }
}

fn pack(kind: &str, line: u64) -> u64 {
    let k = KINDS.iter().position(|&k| k == kind).unwrap_or(2) as u64;
    (k << LINE_BITS) | (line & ((1 << LINE_BITS) - 1))
}

fn unpack(packed: u64) -> First {
    First {
        kind: KINDS[(packed >> LINE_BITS) as usize],
        line: packed & ((1 << LINE_BITS) - 1),
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
        let first = o.terminal("http://h/b", "expected", 5).unwrap();
        assert_eq!((first.kind, first.line), ("doc", 2));
        assert!(o.terminal("http://h/c", "expected", 1 << 40).is_none());
        let first = o.terminal("http://h/c", "doc", 6).unwrap();
        assert_eq!((first.kind, first.line), ("expected", 1 << 40));
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
