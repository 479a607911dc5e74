//! A `page` record as its NDJSON line, its body escaped here rather than by serde_json.
//!
//! serde_json escapes a string a byte at a time (a table look-up per byte, and a write
//! per run and per escape); on `rip-warc read` that was a fifth of the CPU, nearly all of
//! it in the bodies. [`escape_into`] looks for the bytes that need escaping eight at a
//! time (the bit trick serde_json's own reader uses to skip them) and copies each run
//! between them in one go; its output is serde_json's, byte for byte (tested on every
//! byte value and on the ndjson fuzz corpus). The rest of the record is serde_json's.

use rip_core::{Kind, Line, Page, Record};

/// Every byte: 1 in each byte.
const ONES: u64 = u64::MAX / 255;
/// The high bit of each byte.
const HIGH: u64 = ONES << 7;

/// The high bit set in each byte of `w` that JSON must escape (below 0x20, `"` or `\`),
/// exact for the lowest such byte (a borrow only runs upward from a byte that matched).
fn escapes(w: u64) -> u64 {
    let control = w.wrapping_sub(ONES * 0x20) & !w;
    let q = w ^ (ONES * u64::from(b'"'));
    let quote = q.wrapping_sub(ONES) & !q;
    let b = w ^ (ONES * u64::from(b'\\'));
    let backslash = b.wrapping_sub(ONES) & !b;
    (control | quote | backslash) & HIGH
}

fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Where the next byte to escape is, at `from` or after.
fn next_escape(bytes: &[u8], mut from: usize) -> Option<usize> {
    while let Some(chunk) = bytes.get(from..from + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let found = escapes(u64::from_le_bytes(word));
        if found != 0 {
            return Some(from + (found.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    let rest = bytes.get(from..)?;
    rest.iter().position(|&b| needs_escape(b)).map(|i| from + i)
}

/// Appends `s` as a JSON string (quotes included), escaped as serde_json escapes it:
/// `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other control characters as `\u00XX`.
pub fn escape_into(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + bytes.len() / 16 + 2);
    out.push(b'"');
    let mut run = 0;
    while let Some(at) = next_escape(bytes, run) {
        out.extend_from_slice(&bytes[run..at]);
        let b = bytes[at];
        let short = match b {
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            0x08 => Some(b'b'),
            0x0c => Some(b'f'),
            b'\n' => Some(b'n'),
            b'\r' => Some(b'r'),
            b'\t' => Some(b't'),
            _ => None,
        };
        match short {
            Some(c) => out.extend_from_slice(&[b'\\', c]),
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let (hi, lo) = (HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]);
                out.extend_from_slice(&[b'\\', b'u', b'0', b'0', hi, lo]);
            }
        }
        run = at + 1;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// `page` as its line: serde_json's, the body spliced in escaped by [`escape_into`].
/// `scratch` is reused from record to record.
pub fn page_line(mut page: Page, scratch: &mut Vec<u8>) -> Result<Line, serde_json::Error> {
    let body = std::mem::take(&mut page.body);
    scratch.clear();
    serde_json::to_writer(&mut *scratch, &Record::Page(page))?;
    let Some(at) = top_level_key(scratch, b"\"body\":") else {
        return Err(serde::ser::Error::custom("a page without its body field"));
    };
    // `"body":""`: the empty string's two quotes replaced by the escaped body.
    let value = at + b"\"body\":".len();
    let mut text = Vec::with_capacity(scratch.len() + body.len() + body.len() / 8);
    text.extend_from_slice(&scratch[..value]);
    escape_into(&body, &mut text);
    text.extend_from_slice(&scratch[value + 2..]);
    // Every piece was UTF-8: serde_json's output, split at ASCII, and the body's escape.
    let text = String::from_utf8(text).map_err(serde::ser::Error::custom)?;
    Ok(Line::from_trusted(Kind::Page, text))
}

/// Where `key` (`"name":`) starts as a key of the outer object of the compact JSON
/// `json`: outside every string, one level deep, after `{` or `,`.
fn top_level_key(json: &[u8], key: &[u8]) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in json.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let after_brace = i > 0 && matches!(json[i - 1], b'{' | b',');
                if depth == 1 && after_brace && json[i..].starts_with(key) {
                    return Some(i);
                }
                in_string = true;
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(s: &str) -> String {
        let mut out = Vec::new();
        escape_into(s, &mut out);
        String::from_utf8(out).expect("utf-8")
    }

    fn check(s: &str) {
        let want = serde_json::to_string(s).expect("serialises");
        assert_eq!(ours(s), want, "{s:?}");
    }

    /// Every character below 0x80 and some above, alone, at each offset of a word, and
    /// between runs; then strings of every length up to 40 over a mix of them.
    #[test]
    fn escapes_every_byte_value_as_serde_json() {
        let mut chars: Vec<char> = (0u8..0x80).map(char::from).collect();
        chars.extend([
            '\u{80}', '\u{a0}', 'é', '\u{2028}', '\u{7f}', '𝄞', '\u{ffff}',
        ]);
        for &c in &chars {
            for pad in 0..10 {
                let a = "a".repeat(pad);
                check(&format!("{a}{c}"));
                check(&format!("{a}{c}{a}{c}xyz"));
                check(&format!("{c}{a}"));
            }
        }
        for len in 0..40 {
            let s: String = (0..len)
                .map(|i| chars[(i * 7 + len) % chars.len()])
                .collect();
            check(&s);
        }
    }

    /// Every input of the ndjson fuzz corpus (as UTF-8, lossily), escaped as serde_json
    /// escapes it.
    #[test]
    fn escapes_the_ndjson_fuzz_corpus_as_serde_json() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/ndjson");
        let entries = std::fs::read_dir(&dir).expect("the ndjson fuzz corpus");
        let mut n = 0;
        for e in entries.flatten() {
            let bytes = std::fs::read(e.path()).expect("read");
            check(&String::from_utf8_lossy(&bytes));
            n += 1;
        }
        assert!(n > 100, "{n} inputs in {}", dir.display());
    }

    fn page(body: &str) -> Page {
        let mut p: Page = serde_json::from_value(serde_json::json!({
            "url": "http://t.test/a", "finalUrl": "http://t.test/a", "status": 200,
            "fetchedAt": "2026-12-01T09:00:00Z", "body": "",
            "headers": {"body": "", "x": "\"body\":\"\""},
            "title": "{\"body\":\"\"}",
        }))
        .expect("a page");
        p.body = body.to_owned();
        p
    }

    /// The line is serde_json's line of the same record, byte for byte, whatever other
    /// fields look like a body.
    #[test]
    fn a_page_line_is_serde_json_s() {
        let mut scratch = Vec::new();
        for body in [
            "",
            "<p class=\"x\">\n\tHi\\</p>\u{1}",
            "plain text, no escapes at all",
        ] {
            let p = page(body);
            let want = serde_json::to_string(&Record::Page(p.clone())).expect("json");
            let line = page_line(p, &mut scratch).expect("line");
            assert_eq!(line.text(), want);
            assert_eq!(line.kind(), &Kind::Page);
        }
    }
}
