//! A `page` record's JSON read in one pass over its body.
//!
//! `serde_json` reads a string with escapes into a scratch buffer that grows as it goes,
//! then copies it out into the `String`: for a page's body (most of its line, and HTML
//! has a `\"` every few bytes) that is two copies and a chain of reallocations a page.
//! [`page`] walks the record's top level itself, unescapes the body straight into a
//! `String` sized from the line, and leaves every other member (small) to `serde_json`,
//! which reads them from a copy of the record without the body. The result is
//! `serde_json::from_str::<Page>`'s: anything the walk does not expect (a body that is
//! not a plain string, a surrogate escape, a control character, a key written with
//! escapes, a second body, bad JSON) sends the line to `serde_json` whole, which then
//! gives its own answer or error.

use rip_core::Page;

use rip_core::ndjson::next_escape;

/// The `page` record on `text`, as `serde_json::from_str` reads it.
pub fn page(text: &str) -> Result<Page, serde_json::Error> {
    if let Some((others, body)) = split_body(text)
        && let Ok(mut page) = serde_json::from_str::<Page>(&others)
    {
        page.body = body;
        return Ok(page);
    }
    serde_json::from_str(text)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r'))
    {
        i += 1;
    }
    i
}

/// The record without its `body` (an empty one in its place, last) and the body,
/// unescaped; `None` when the walk cannot tell (see the module's docs).
fn split_body(text: &str) -> Option<(String, String)> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut others = String::with_capacity(1024);
    others.push('{');
    let mut body = None;
    i = skip_ws(b, i + 1);
    loop {
        let key = i;
        i = string_end(b, i)?;
        let key = &text[key..i];
        i = skip_ws(b, i);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(b, i + 1);
        if key.contains('\\') {
            return None;
        }
        if key == "\"body\"" {
            if body.is_some() {
                return None;
            }
            let (s, end) = unescaped(text, i)?;
            body = Some(s);
            i = end;
        } else {
            let value = i;
            i = value_end(b, i)?;
            if others.len() > 1 {
                others.push(',');
            }
            others.push_str(key);
            others.push(':');
            others.push_str(&text[value..i]);
        }
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => break,
            _ => return None,
        }
    }
    if skip_ws(b, i + 1) != b.len() {
        return None;
    }
    if others.len() > 1 {
        others.push(',');
    }
    others.push_str("\"body\":\"\"}");
    Some((others, body?))
}

/// Where the string starting at `i` (its `"`) ends, past its closing quote.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        let k = next_escape(b, j)?;
        match b[k] {
            b'"' => return Some(k + 1),
            b'\\' => j = k + 2,
            _ => return None,
        }
    }
}

/// Where the value starting at `i` ends (not checked: `serde_json` reads it later).
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match b.get(j)? {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let n = b[i..]
                .iter()
                .position(|c| matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))?;
            Some(i + n)
        }
    }
}

/// The string starting at `i` (its `"`), unescaped as `serde_json` does, and where it
/// ends; `None` for what the walk leaves to `serde_json` (surrogates, control
/// characters, unknown escapes, no end).
fn unescaped(text: &str, i: usize) -> Option<(String, usize)> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut out = String::with_capacity(b.len() - i);
    // The run to copy starts at `j`; the next escape is searched for from `from`.
    let (mut j, mut from) = (i + 1, i + 1);
    loop {
        let k = next_escape(b, from)?;
        out.push_str(&text[j..k]);
        match b[k] {
            b'"' => {
                // Sized for the escapes too: give their bytes back (in place).
                out.shrink_to_fit();
                return Some((out, k + 1));
            }
            // `\"`, `\\`, `\/` (most escapes in HTML: its quotes): the character is the
            // byte escaped, copied with the run it starts.
            b'\\' if matches!(b.get(k + 1), Some(b'"' | b'\\' | b'/')) => {
                (j, from) = (k + 1, k + 2);
            }
            b'\\' if b.get(k + 1) == Some(&b'n') => {
                out.push('\n');
                (j, from) = (k + 2, k + 2);
            }
            b'\\' => {
                let (c, used) = escape(b, k + 1)?;
                out.push(c);
                (j, from) = (k + 1 + used, k + 1 + used);
            }
            _ => return None,
        }
    }
}

/// The character of the escape after a `\` at `i`, and how many bytes it takes.
fn escape(b: &[u8], i: usize) -> Option<(char, usize)> {
    let c = match b.get(i)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hex = b.get(i + 1..i + 5)?;
            if !hex.iter().all(u8::is_ascii_hexdigit) {
                return None;
            }
            let hex = std::str::from_utf8(hex).ok()?;
            let code = u32::from_str_radix(hex, 16).ok()?;
            // Surrogates (pairs or lone ones) are left to serde_json.
            return char::from_u32(code).map(|c| (c, 5));
        }
        _ => return None,
    };
    Some((c, 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(text: &str) {
        let theirs = serde_json::from_str::<Page>(text).map_err(|e| e.to_string());
        let ours = page(text).map_err(|e| e.to_string());
        assert_eq!(ours, theirs, "{text}");
    }

    const HEAD: &str = r#""_type":"page","url":"http://h/a","finalUrl":"http://h/a","status":200,"fetchedAt":"2026-12-01T09:00:00Z","truncated":false"#;

    #[test]
    fn strings_unescape_as_serde_json_across_eight_byte_words() {
        let pieces = [
            "a", "bcdefgh", "é", "☃", "𝄞", r#"\""#, r"\\", r"\n", r"\u00e9", r"\u20AC", r"\/",
            r"\t",
        ];
        let mut seed = 0x2545_F491_4F6C_DD1D_u64;
        for len in 0..40 {
            for _ in 0..25 {
                let mut json = String::from("\"");
                for _ in 0..len {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    json.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
                }
                json.push('"');
                let want: String = serde_json::from_str(&json).unwrap();
                let line = format!("{json},\"x\":1}}");
                assert_eq!(unescaped(&line, 0), Some((want, json.len())), "{json}");
            }
        }
        // An escaped backslash before `n`, `"`, `/` or another escape is one backslash;
        // escaped quotes and slashes in a row.
        for json in [
            r#""\\n""#,
            r#""\\\"""#,
            r#""\\\\""#,
            r#""a\\/\/b\"\"\n\\n\\\n""#,
            r#""\"\"\"""#,
            r#""\n\n\/\"""#,
        ] {
            let want: String = serde_json::from_str(json).unwrap();
            assert_eq!(unescaped(json, 0), Some((want, json.len())), "{json}");
        }
        // Bytes JSON does not allow are left to serde_json, wherever they are.
        for at in 0..17 {
            let mut body = "x".repeat(17);
            body.replace_range(at..=at, "\u{1}");
            assert_eq!(unescaped(&format!("\"{body}\""), 0), None, "{at}");
        }
    }

    #[test]
    fn a_page_reads_as_serde_json_reads_it() {
        let bodies = [
            r#""""#,
            r#""<p class=\"x\">a\\b\/c\b\f\n\r\t\u00e9\u20AC\u0000 é ☃</p>""#,
            r#""\ud83d\ude00 a pair""#,
            r#""\ud83d lone""#,
            r#""\ude00 lone""#,
            r#""\ud83d\u0041""#,
            r#""\x""#,
            r#""\u12""#,
            r#""\u+123""#,
            "\"raw\u{1}control\"",
            "\"tab\tinside\"",
            r#"null"#,
            r#"42"#,
            r#"["<p>"]"#,
            r#""unterminated"#,
        ];
        for body in bodies {
            same(&format!("{{{HEAD},\"body\":{body}}}"));
            same(&format!("{{\"body\":{body},{HEAD}}}"));
            same(&format!(" {{ \"body\" : {body} ,\n{HEAD} }} \n"));
        }
        // An ordinary record is read by the walk, not handed to serde_json whole.
        let (_, body) = split_body(&format!("{{{HEAD},\"body\":{}}}", bodies[1])).unwrap();
        assert!(body.starts_with("<p class=\"x\">a\\b/c\u{8}"), "{body}");
        let body = r#""<p>""#;
        for text in [
            format!("{{{HEAD}}}"),
            format!("{{{HEAD},\"body\":{body},\"body\":{body}}}"),
            format!("{{{HEAD},\"bod\\u0079\":{body}}}"),
            format!("{{{HEAD},\"body\":{body}}}x"),
            format!("{{{HEAD},\"body\":{body}"),
            format!("{{{HEAD},\"body\":{body},}}"),
            format!(
                "{{{HEAD},\"raw\":{{\"body\":\"no\",\"a\":[1,{{\"}}\":\"]\"}}]}},\"body\":{body}}}"
            ),
            format!(
                "{{{HEAD},\"depth\":2,\"parent\":\"http://h/\",\"body\":{body},\"attempt\":1}}"
            ),
            format!("{{{HEAD},\"status\":\"x\",\"body\":{body}}}"),
            format!("[{{{HEAD},\"body\":{body}}}]"),
            String::new(),
        ] {
            same(&text);
        }
    }
}
