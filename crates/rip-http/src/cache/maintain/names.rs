//! The URL of an entry that does not read back, so that a report names it beside its
//! place. The index keys entries by a hash of their URL, not the URL, so a URL is named
//! only when something says it and its hash is the key:
//!
//! 1. the entry's own metadata line, whole, or the `{"url":"…"` it starts with when the
//!    rest of it is damaged;
//! 2. else an earlier entry of the same key that the index still lists (a replaced entry,
//!    until a compaction), when that one reads.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use xxhash_rust::xxh3::xxh3_128;

use super::EntryProblem;
use crate::cache::pack::{INDEX, parse_line, read_lines};

/// The URL an entry's bytes name, when it is the URL of `key`.
pub(super) fn url_of(bytes: &[u8], key: u128) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct UrlOnly {
        url: String,
    }
    let line = bytes.split(|&b| b == b'\n').next()?;
    let url = match serde_json::from_slice::<UrlOnly>(line) {
        Ok(meta) => meta.url,
        // The metadata starts with its URL (`CacheMeta`'s first field): read that string
        // alone, whatever follows it.
        Err(_) => {
            let rest = line.strip_prefix(br#"{"url":"#)?;
            let mut strings = serde_json::Deserializer::from_slice(rest).into_iter::<String>();
            strings.next()?.ok()?
        }
    };
    (xxh3_128(url.as_bytes()) == key).then_some(url)
}

/// Names the URL of each of `problems` that has none, from earlier entries of its key in
/// the index of `dir`. `unnamed` holds, for each, its place in `problems`, its key and
/// where its own entry is (`<pack>` and offset, skipped). Costs one read of the index,
/// and only when some problem has no URL.
pub(super) fn from_earlier_entries(
    dir: &Path,
    problems: &mut [EntryProblem],
    unnamed: &[(usize, u128, String, u64)],
) {
    if unnamed.is_empty() {
        return;
    }
    let wanted: HashMap<u128, usize> = unnamed.iter().map(|(i, key, ..)| (*key, *i)).collect();
    let mut earlier: Vec<(usize, u128, String, u64, u32)> = Vec::new();
    let Ok(index) = File::open(dir.join(INDEX)) else {
        return;
    };
    let _ = read_lines(&index, 0, |line| {
        if let Some((key, pack, offset, len)) = parse_line(line)
            && let Some(&i) = wanted.get(&key)
            && !unnamed
                .iter()
                .any(|(_, k, p, o)| *k == key && p == pack && *o == offset)
        {
            earlier.push((i, key, pack.to_owned(), offset, len));
        }
    });
    // The latest earlier entry first: the likeliest to be still there.
    for (i, key, pack, offset, len) in earlier.into_iter().rev() {
        if problems[i].url.is_some() {
            continue;
        }
        let mut bytes = vec![0; len as usize];
        let read = File::open(dir.join(&pack)).and_then(|f| f.read_exact_at(&mut bytes, offset));
        if read.is_ok() {
            problems[i].url = url_of(&bytes, key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_read_from_a_damaged_metadata_line_and_checked_against_the_key() {
        let url = "http://h/a?b=\"c\"";
        let key = xxh3_128(url.as_bytes());
        let whole = format!(
            "{{\"url\":{},\"status\":200}}\nbody",
            serde_json::json!(url)
        );
        assert_eq!(url_of(whole.as_bytes(), key).as_deref(), Some(url));
        let damaged = format!("{{\"url\":{},\"sta\0\0", serde_json::json!(url));
        assert_eq!(url_of(damaged.as_bytes(), key).as_deref(), Some(url));
        assert_eq!(url_of(whole.as_bytes(), key + 1), None, "another key's URL");
        assert_eq!(url_of(b"{\"ur\0\0", key), None);
        assert_eq!(url_of(b"", key), None);
    }
}
