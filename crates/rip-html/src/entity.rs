//! Character references (`&amp;`, `&#233;`, `&eacute`), decoded as the HTML
//! tokenizer decodes them, or a [`Bail`] where the rule is subtle enough that a
//! complete parser should read the page.

use std::borrow::Cow;

use html5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};

use crate::Bail;

/// Longest entity name the table holds (`&CounterClockwiseContourIntegral;`).
const LONGEST_NAME: usize = 32;

/// `s` with its character references decoded; `in_attr` applies the attribute
/// value rule (a legacy reference followed by `=` or an alphanumeric stays as written).
pub fn decode(s: &str, in_attr: bool) -> Result<Cow<'_, str>, Bail> {
    match memchr::memchr(b'&', s.as_bytes()) {
        Some(first) => decode_from(s, first, in_attr).map(Cow::Owned),
        None => Ok(Cow::Borrowed(s)),
    }
}

/// [`decode`] of `s` whose first `&` is at `first`.
pub fn decode_from(s: &str, first: usize, in_attr: bool) -> Result<String, Bail> {
    let mut out = String::with_capacity(s.len());
    out.push_str(&s[..first]);
    let mut rest = &s[first..];
    while let Some(amp) = memchr::memchr(b'&', rest.as_bytes()) {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let used = reference(after, in_attr, &mut out)?;
        if used == 0 {
            out.push('&');
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Decodes the reference that `after` (the text after a `&`) starts with into `out`;
/// returns how many bytes of `after` it used (0: not a reference, the `&` stays).
fn reference(after: &str, in_attr: bool, out: &mut String) -> Result<usize, Bail> {
    let b = after.as_bytes();
    match b.first() {
        Some(b'#') => numeric(after, out),
        Some(c) if c.is_ascii_alphanumeric() => named(after, in_attr, out),
        _ => Ok(0),
    }
}

fn numeric(after: &str, out: &mut String) -> Result<usize, Bail> {
    let b = after.as_bytes();
    let hex = matches!(b.get(1), Some(b'x' | b'X'));
    let start = if hex { 2 } else { 1 };
    let radix = if hex { 16 } else { 10 };
    let digits = b[start..]
        .iter()
        .take_while(|c| (*c).is_ascii_hexdigit() && (hex || c.is_ascii_digit()))
        .count();
    if digits == 0 {
        return Ok(0);
    }
    // Past U+10FFFF the value no longer matters (it stands for U+FFFD): capped there,
    // it never overflows, however many digits.
    let n = b[start..start + digits].iter().fold(0u32, |n, &c| {
        let digit = char::from(c).to_digit(radix).unwrap_or(0);
        (n * radix + digit).min(0x11_0000)
    });
    out.push(code_point(n));
    let end = start + digits;
    Ok(if b.get(end) == Some(&b';') {
        end + 1
    } else {
        end
    })
}

/// The character a numeric reference stands for, with the tokenizer's replacements.
fn code_point(n: u32) -> char {
    match n {
        0 | 0xD800..=0xDFFF | 0x11_0000.. => '\u{FFFD}',
        0x80..=0x9F => C1_REPLACEMENTS[(n - 0x80) as usize]
            .unwrap_or_else(|| char::from_u32(n).unwrap_or('\u{FFFD}')),
        _ => char::from_u32(n).unwrap_or('\u{FFFD}'),
    }
}

fn named(after: &str, in_attr: bool, out: &mut String) -> Result<usize, Bail> {
    let b = after.as_bytes();
    let len = b
        .iter()
        .take(LONGEST_NAME + 1)
        .take_while(|c| c.is_ascii_alphanumeric())
        .count();
    if len > LONGEST_NAME {
        // No name is this long, but a legacy one may start the run (`&ltZZZ…`): the
        // tokenizer decodes that in text (in an attribute, before a letter, it does not).
        let legacy = (1..=LONGEST_NAME).any(|k| {
            NAMED_ENTITIES
                .get(&after[..k])
                .is_some_and(|&(c1, _)| c1 != 0)
        });
        return if legacy && !in_attr {
            Err(Bail("a character reference without its semicolon"))
        } else {
            Ok(0)
        };
    }
    if b.get(len) == Some(&b';') {
        if let Some(c) = common(&after[..len]) {
            out.push(c);
            return Ok(len + 1);
        }
        if let Some(&(c1, c2)) = NAMED_ENTITIES.get(&after[..=len])
            && c1 != 0
        {
            push_pair(out, c1, c2);
            return Ok(len + 1);
        }
    }
    // A legacy reference written without its semicolon: the longest one that starts
    // the name.
    let Some(k) = (1..=len).rev().find(|&k| {
        NAMED_ENTITIES
            .get(&after[..k])
            .is_some_and(|&(c1, _)| c1 != 0)
    }) else {
        return Ok(0);
    };
    let next = b.get(k).copied();
    if in_attr && next.is_some_and(|c| c == b'=' || c.is_ascii_alphanumeric()) {
        return Ok(0);
    }
    if k < len || next == Some(b';') {
        return Err(Bail("a character reference without its semicolon"));
    }
    let &(c1, c2) = NAMED_ENTITIES.get(&after[..k]).unwrap_or(&(0xFFFD, 0));
    push_pair(out, c1, c2);
    Ok(k)
}

/// The character of the commonest references, written with their semicolon, without
/// a look in the table (a hash of the name).
fn common(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "nbsp" => Some('\u{a0}'),
        _ => None,
    }
}

fn push_pair(out: &mut String, c1: u32, c2: u32) {
    out.push(char::from_u32(c1).unwrap_or('\u{FFFD}'));
    if c2 != 0 {
        out.push(char::from_u32(c2).unwrap_or('\u{FFFD}'));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> String {
        decode(s, false).unwrap().into_owned()
    }

    #[test]
    fn the_commonest_references_are_the_tables() {
        for name in ["amp", "lt", "gt", "quot", "nbsp"] {
            let (c1, c2) = NAMED_ENTITIES[&format!("{name};")];
            assert_eq!(common(name), char::from_u32(c1), "{name}");
            assert_eq!(c2, 0, "{name}");
        }
        assert_eq!(common("ampx"), None);
        assert_eq!(common("AMP"), None);
    }

    #[test]
    fn references_decode_as_the_tokenizer_decodes_them() {
        assert_eq!(text("a &amp; b &lt;c&gt;"), "a & b <c>");
        assert_eq!(text("&#233;&#xE9;&#X41;&#65"), "ééAA");
        assert_eq!(text("&#0;&#x80;&#xD800;"), "\u{FFFD}€\u{FFFD}");
        assert_eq!(text("&copy x &nosuch; & &; &#;"), "© x &nosuch; & &; &#;");
        assert_eq!(text("&NotEqualTilde;"), "\u{2242}\u{338}");
        assert_eq!(decode("?a=1&copy=2", true).unwrap(), "?a=1&copy=2");
        assert_eq!(decode("x&copy y", true).unwrap(), "x© y");
        assert!(decode("&notit;", false).is_err());
    }

    /// Found by the `stream_vs_tree` fuzz target: a run of letters past the longest name
    /// was kept as written, where the tokenizer decodes the legacy `&lt` that starts it.
    #[test]
    fn a_legacy_reference_starting_a_run_past_the_longest_name_is_not_kept_as_written() {
        let run = format!("&lt{};", "Z".repeat(40));
        assert!(decode(&run, false).is_err(), "text: the tree reads it");
        assert_eq!(
            decode(&format!("?a{run}"), true).unwrap(),
            format!("?a{run}")
        );
        let none = format!("&qq{};", "Z".repeat(40));
        assert_eq!(text(&none), none);
    }

    #[test]
    fn numeric_references_of_any_length_decode_as_the_tokenizer_decodes_them() {
        // Leading zeros count for nothing; past U+10FFFF the reference is U+FFFD, however
        // far past, with or without its semicolon.
        assert_eq!(text("&#0000000000065;&#x00000000000041;"), "AA");
        assert_eq!(
            text("&#x10FFFF;&#1114112;&#x110000"),
            "\u{10FFFF}\u{FFFD}\u{FFFD}"
        );
        assert_eq!(text("&#99999999999999999999999;x"), "\u{FFFD}x");
        assert_eq!(text("&#xFFFFFFFFFFFFFFFFFFFFFFFFFFFF"), "\u{FFFD}");
        assert_eq!(decode("a=&#000000000038;b", true).unwrap(), "a=&b");
    }
}
