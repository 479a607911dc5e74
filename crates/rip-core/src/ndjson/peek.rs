//! A line's `_type` in one pass, without serde: the reader's fast path.
//!
//! [`kind`] walks the line once, checking it against JSON's grammar as `serde_json`
//! reads a record's `_type` (the top-level keys as strings, every other value skipped,
//! as `serde::de::IgnoredAny` skips it), and notes the top-level `_type`. It answers only
//! when the answer is certain: one JSON object, well-formed throughout, with a single
//! top-level `_type` whose value is a non-empty string without escapes, and no top-level
//! key written with escapes (`"_typ\u0065"` is a `_type` too). Anything else (not JSON, a
//! second `_type`, an escaped key, a `_type` that is not a plain string, nesting deeper
//! than [`MAX_DEPTH`]) gives `None`, and the caller reads the line with `serde_json`,
//! whose answer and error messages are the reference. So the fast path never accepts a
//! line that `serde_json` would refuse, and never finds another kind.
//!
//! Strings, most of a line's bytes (a page's body), are searched for their next quote,
//! backslash or control character eight bytes at a time.

/// Nesting deeper than this goes to `serde_json` (which skips nested values without a
/// depth limit): the open containers are a bit each in a `u64`.
pub(super) const MAX_DEPTH: u32 = 64;

/// The line's `_type` when the line is certainly a record of that kind; `None` when
/// `serde_json` must decide (see the module's docs).
pub(super) fn kind(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let mut s = Scanner { b, i: 0 };
    s.ws();
    s.eat(b'{')?;
    s.ws();
    let mut kind = None;
    if s.peek() == Some(b'}') {
        s.i += 1;
    } else {
        loop {
            let key = s.plain_string()?;
            s.ws();
            s.eat(b':')?;
            s.ws();
            if &b[key.clone()] == b"_type" {
                if kind.is_some() {
                    return None;
                }
                let value = s.plain_string()?;
                if value.is_empty() {
                    return None;
                }
                kind = Some(value);
            } else {
                s.value()?;
            }
            s.ws();
            match s.next()? {
                b',' => s.ws(),
                b'}' => break,
                _ => return None,
            }
        }
    }
    s.ws();
    if s.i != b.len() {
        return None;
    }
    kind.map(|range| &text[range])
}

struct Scanner<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    /// JSON's white space, as `serde_json` skips it.
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// A string without escapes, from its opening quote: the range of its contents.
    fn plain_string(&mut self) -> Option<std::ops::Range<usize>> {
        self.eat(b'"')?;
        let start = self.i;
        let escaped = self.string()?;
        (!escaped).then_some(start..self.i - 1)
    }

    /// The rest of a string after its opening quote, up to and past the closing one, as
    /// `serde_json` checks it: no control characters, escapes `\" \\ \/ \b \f \n \r \t`
    /// and `\u` with four hex digits. Whether it holds escapes.
    fn string(&mut self) -> Option<bool> {
        let b = self.b;
        let mut escaped = false;
        loop {
            // Escapes come in runs (`\"\n`): the byte after one is looked at alone first.
            if !special(*b.get(self.i)?) {
                self.i = next_escape(b, self.i + 1)?;
            }
            match b[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    match *b.get(self.i + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                        b'u' => {
                            let hex = b.get(self.i + 2..self.i + 6)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.i += 6;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
    }

    /// `null`, `true` or `false` (its first letter seen).
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    /// A number as `serde_json` skips one: `-`, then `0` or a digit string not starting
    /// with `0`, a fraction and an exponent, each with at least one digit. (Skipped, a
    /// number is never out of range.)
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.next()? {
            b'0' => {
                if let Some(b'0'..=b'9') = self.peek() {
                    return None;
                }
            }
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    /// `"key"` and its colon, in an object.
    fn member_key(&mut self) -> Option<()> {
        self.ws();
        self.eat(b'"')?;
        self.string()?;
        self.ws();
        self.eat(b':')
    }

    /// One value, nested ones and all, skipped: `open` holds a bit per open container
    /// (1: an object), the innermost lowest.
    fn value(&mut self) -> Option<()> {
        let mut open: u64 = 0;
        let mut depth = 0;
        loop {
            // A value starts here.
            self.ws();
            match self.next()? {
                c @ (b'{' | b'[') => {
                    let (close, object) = if c == b'{' { (b'}', 1) } else { (b']', 0) };
                    self.ws();
                    if self.peek() == Some(close) {
                        self.i += 1;
                    } else {
                        if depth == MAX_DEPTH {
                            return None;
                        }
                        depth += 1;
                        open = (open << 1) | object;
                        if object == 1 {
                            self.member_key()?;
                        }
                        continue;
                    }
                }
                b'"' => {
                    self.string()?;
                }
                b'n' => self.literal(b"ull")?,
                b't' => self.literal(b"rue")?,
                b'f' => self.literal(b"alse")?,
                b'-' | b'0'..=b'9' => {
                    self.i -= 1;
                    self.number()?;
                }
                _ => return None,
            }
            // A value ended: close what it ends, or go on after a comma.
            loop {
                if depth == 0 {
                    return Some(());
                }
                self.ws();
                let object = open & 1 == 1;
                match (self.next()?, object) {
                    (b',', true) => {
                        self.member_key()?;
                        break;
                    }
                    (b',', false) => break,
                    (b'}', true) | (b']', false) => {
                        depth -= 1;
                        open >>= 1;
                    }
                    _ => return None,
                }
            }
        }
    }
}

/// True for a byte a JSON string cannot hold as it is: a control character, `"` or `\`.
fn special(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// A high bit for each byte of `x` below 0x20, equal to `"` or equal to `\` (the "has a
/// zero byte" trick; bytes over 0x7F are left out by `!x`). It can flag a byte after a
/// true hit, never before the first one: the lowest flag is the first hit.
fn special_bits(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let control = x.wrapping_sub(ONES * 0x20);
    let quote = (x ^ (ONES * u64::from(b'"'))).wrapping_sub(ONES);
    let backslash = (x ^ (ONES * u64::from(b'\\'))).wrapping_sub(ONES);
    (control | quote | backslash) & !x & HIGH
}

/// Where in `s`, from `from`, the next byte is that a JSON string cannot hold as it is
/// (a control character, `"` or `\`), eight bytes at a time. For code that reads or
/// writes record lines by hand.
#[inline]
pub fn next_escape(s: &[u8], mut from: usize) -> Option<usize> {
    while let Some(chunk) = s.get(from..from + 8) {
        let hits = special_bits(u64::from_le_bytes(chunk.try_into().expect("eight bytes")));
        if hits != 0 {
            return Some(from + (hits.trailing_zeros() / 8) as usize);
        }
        from += 8;
    }
    (from..s.len()).find(|&i| special(s[i]))
}

#[cfg(test)]
mod tests {
    use super::super::{LineError, peek_kind_by_serde};
    use super::*;
    use crate::record::Kind;

    /// The fast path's answer, checked against serde_json's: when it answers, serde_json
    /// reads the line as a record of the same kind.
    fn fast(text: &str) -> Option<&str> {
        let got = kind(text);
        if let Some(k) = got {
            assert_eq!(
                peek_kind_by_serde(text),
                Ok(Kind::from_type(k)),
                "fast path said `{k}` for {text:?}"
            );
        }
        got
    }

    #[test]
    fn the_usual_shapes_take_the_fast_path() {
        for (text, want) in [
            (
                r#"{"_type":"ref","url":"http://h/","depth":0,"attempt":0}"#,
                "ref",
            ),
            (
                r#"{"url":"http://h/","_type":"page","status":200,"body":"<p class=\"a\">\n</p>"}"#,
                "page",
            ),
            (
                r#"  { "_type" : "x-new" , "a" : [ 1 , -2.5e+3 , 0 , true , false , null , { } , [ ] ] }  "#,
                "x-new",
            ),
            (
                "{\"_type\":\"doc\",\t\"a\":\r{\"b\":[{\"c\":\"\\u00e9\\/\\b\\f\\n\\r\\t\\\\\\\"\"}]}}",
                "doc",
            ),
            (r#"{"a":"\"_type\":\"page\"","_type":"ref"}"#, "ref"),
            (
                r#"{"a":{"_type":"page"},"_type":"ref","b":[{"_type":"x"}]}"#,
                "ref",
            ),
            (r#"{"a":1,"a":2,"_type":"ref"}"#, "ref"),
            (
                r#"{"_type":"é ☃","n":-0,"m":0.0,"e":1E5,"big":1e400,"long":123456789012345678901234567890}"#,
                "é ☃",
            ),
        ] {
            assert_eq!(fast(text), Some(want), "{text}");
        }
        let deep = format!(
            r#"{{"_type":"ref","a":{}1{}}}"#,
            "[".repeat(64),
            "]".repeat(64)
        );
        assert_eq!(fast(&deep), Some("ref"));
    }

    #[test]
    fn anything_unusual_goes_to_serde_json() {
        let deeper = format!(
            r#"{{"_type":"ref","a":{}1{}}}"#,
            "[".repeat(65),
            "]".repeat(65)
        );
        for text in [
            // serde_json accepts these, with the kind or an error of its own
            r#"{"_typ\u0065":"ref"}"#,
            r#"{"_type":"r\u0065f"}"#,
            r#"{"_type":"ref","x\u0041":1}"#,
            r#"{"_type":"ref","_type":"ref"}"#,
            r#"{"_type":"ref","_type":"page"}"#,
            r#"{"_type":""}"#,
            r#"{"_type":null}"#,
            r#"{"_type":5}"#,
            r#"{"_type":["ref"]}"#,
            r#"{"a":1}"#,
            r#"{}"#,
            r#"["ref"]"#,
            deeper.as_str(),
            // serde_json refuses these
            "",
            "   ",
            r#"{"_type":"ref""#,
            r#"{"_type":"ref",}"#,
            r#"{"_type":"ref"} x"#,
            r#"{"_type":"ref"}{}"#,
            r#"{"_type":"ref","a":[1,]}"#,
            r#"{"_type":"ref","a":[1 2]}"#,
            r#"{"_type":"ref","a":{"b"}}"#,
            r#"{"_type":"ref","a":{"b":1,}}"#,
            r#"{"_type":"ref","a":{1:2}}"#,
            r#"{"_type":"ref","a":01}"#,
            r#"{"_type":"ref","a":-}"#,
            r#"{"_type":"ref","a":1.}"#,
            r#"{"_type":"ref","a":1.e5}"#,
            r#"{"_type":"ref","a":1e}"#,
            r#"{"_type":"ref","a":+1}"#,
            r#"{"_type":"ref","a":.5}"#,
            r#"{"_type":"ref","a":nul}"#,
            r#"{"_type":"ref","a":True}"#,
            r#"{"_type":"ref","a":"\x"}"#,
            r#"{"_type":"ref","a":"\u12"}"#,
            r#"{"_type":"ref","a":"\u12G4"}"#,
            r#"{"_type":"ref","a":"\"}"#,
            "{\"_type\":\"ref\",\"a\":\"tab\there\"}",
            "{\"_type\":\"re\u{1}f\"}",
            "{\"_type\":\"ref\",\"a\u{1f}\":1}",
            "{\"_type\":\"ref\"\u{b}}",
            r#"{"_type":"ref","a":'x'}"#,
            r#"{"_type" "ref"}"#,
            r#"{_type:"ref"}"#,
        ] {
            assert_eq!(fast(text), None, "{text}");
        }
        assert_eq!(
            peek_kind_by_serde(r#"{"_type":"ref","_type":"ref"}"#),
            Err(LineError::Unreadable {
                reason: "duplicate field `_type`".into(),
                column: 22,
            })
        );
    }

    #[test]
    fn escapes_read_alike_at_every_place_across_eight_byte_words() {
        let pieces = [
            r#"\""#, r"\\", r"\/", r"\n", r"\u00e9", r"\uD83D", "é", "𝄞", "\"", "\u{1}", "\t",
            r"\x", r"\u12", r"\", "#",
        ];
        for p in pieces {
            for q in pieces {
                for at in 0..17 {
                    for gap in 0..9 {
                        let (x, y) = ("x".repeat(at), "y".repeat(gap));
                        let text = format!(r#"{{"_type":"ref","v":"{x}{p}{y}{q}zz"}}"#);
                        let serde = peek_kind_by_serde(&text);
                        // In the usual shape, the fast path answers whenever serde_json does.
                        assert_eq!(fast(&text).is_some(), serde.is_ok(), "{text}");
                    }
                }
            }
        }
    }

    /// xorshift64*: a fixed sequence, so a failure is found again.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
        }
    }

    #[test]
    fn mutated_records_never_get_another_answer_than_serde_jsons() {
        let seeds = [
            r#"{"_type":"ref","url":"http://h/a","depth":1,"attempt":0,"context":{"k":["v",2,null]}}"#,
            r#"{"_type":"page","url":"http://h/","status":200,"headers":{"a":"b"},"body":"<a href=\"x\">\n\t\u00e9</a>"}"#,
            r#"{ "n" : -1.5e-3 , "_type" : "doc" , "t" : [ true , false , { } , [ ] ] }"#,
        ];
        let alphabet: &[u8] = b"{}[]\":,\\/ \t\r\n\x01\x1f0123456789-+.eEnulltruefals_typeabu";
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut fast_hits, mut runs) = (0, 0);
        for seed in seeds {
            assert!(fast(seed).is_some(), "{seed}");
            for _ in 0..20_000 {
                let mut b = seed.as_bytes().to_vec();
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(b.len() + 1);
                    let c = alphabet[rng.below(alphabet.len())];
                    match rng.below(3) {
                        0 if at < b.len() => b[at] = c,
                        1 => b.insert(at, c),
                        _ if at < b.len() => {
                            b.remove(at);
                        }
                        _ => b.push(c),
                    }
                }
                let Ok(text) = String::from_utf8(b) else {
                    continue;
                };
                runs += 1;
                fast_hits += usize::from(fast(&text).is_some());
            }
        }
        // Most single mutations break the line; enough of them keep it readable.
        assert!(fast_hits > runs / 20, "{fast_hits} of {runs}");
    }

    #[test]
    fn the_next_byte_to_escape_is_found_at_every_place() {
        for c in 0u8..0x80 {
            for at in 0..19 {
                let mut s = *b"abcdefghijklmnopqrs";
                s[at] = c;
                for from in 0..=s.len() {
                    let want = (from..s.len()).find(|&i| special(s[i]));
                    assert_eq!(next_escape(&s, from), want, "{c:#x} at {at} from {from}");
                }
            }
        }
        assert_eq!(next_escape(b"ab\xc3\xa9\"", 0), Some(4));
        assert_eq!(next_escape(b"", 0), None);
        assert_eq!(next_escape(b"ab", 3), None);
    }
}
