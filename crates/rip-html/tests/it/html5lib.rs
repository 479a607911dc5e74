//! html5lib's tokenizer tests (`testdata/conformance/html5lib/tokenizer/`) through
//! [`Scanner`]: on every input that starts in the data state, the scanner either bails
//! or gives the tokens the standard's tokenizer gives. So does [`Scanner::raw_text`] on
//! those that start in the content of a raw text element it is asked to read (RCDATA and
//! RAWTEXT with the element named, script data of a `script`), the data state after it.
//!
//! The input goes through [`rip_html::preprocess`] first, as every caller's does (CR LF
//! and CR made LF; a NUL is a bail). Compared: character tokens (concatenated), start
//! tags (name, attributes with the first of a repeated name kept, self-closing), end
//! tags (name), that a comment is there, and of a doctype the mode [`Quirks`] says
//! (the names and identifiers, and a comment's text, are not in [`Token`]: callers
//! have no use for them). Not compared: the `errors` lists (the scanner reports none).

use std::collections::BTreeMap;
use std::path::Path;

use rip_html::{Quirks, Scanner, Token, preprocess};
use serde_json::Value;

/// Cases the scanner reads otherwise than the standard's tokenizer, on purpose, by file
/// and description: each must differ, and no other case may.
const KNOWN: &[(&str, &str, &str)] = &[(
    "domjs.test",
    "leading U+FEFF must pass through",
    "a leading byte order mark is dropped, as html5ever drops it (the standard leaves that \
     to the decoder, before the tokenizer)",
)];

/// A token as both sides can say it.
#[derive(Debug, PartialEq)]
enum Tok {
    Chars(String),
    Start {
        name: String,
        attrs: BTreeMap<String, String>,
        self_closing: bool,
    },
    End(String),
    Comment,
    /// What the page's mode is: `None` when the doctype's identifiers decide it.
    Doctype(Option<bool>),
}

/// The scanner's tokens for `input`, or why it bailed. With `raw`, the input starts in
/// the content of that element (its name, and whether it is RCDATA), which
/// [`Scanner::raw_text`] reads up to its end tag before the data state goes on.
fn scan(input: &str, raw: Option<(&str, bool)>) -> Result<Vec<Tok>, String> {
    let input = preprocess(input).map_err(|b| b.0.to_owned())?;
    let mut scan = Scanner::new(&input);
    let mut attrs = Vec::new();
    let mut out = Vec::new();
    if let Some((name, rcdata)) = raw {
        let text = scan.raw_text(name, rcdata).map_err(|b| b.0.to_owned())?;
        push(&mut out, Tok::Chars(text.into_owned()));
        push(&mut out, Tok::End(name.to_owned()));
    }
    loop {
        let tok = match scan.next(&mut attrs).map_err(|b| b.0.to_owned())? {
            Token::Eof => return Ok(out),
            Token::Text(t) => Tok::Chars(t.into_owned()),
            Token::Start { name, self_closing } => {
                let mut map = BTreeMap::new();
                for (n, v) in attrs.drain(..) {
                    let fresh = map.insert(n.into_owned(), v.into_owned()).is_none();
                    assert!(fresh, "the scanner gave an attribute twice: {input:?}");
                }
                Tok::Start {
                    name: name.into_owned(),
                    attrs: map,
                    self_closing,
                }
            }
            Token::End(name) => Tok::End(name.into_owned()),
            Token::Comment => Tok::Comment,
            Token::Doctype(Quirks::No) => Tok::Doctype(Some(false)),
            Token::Doctype(Quirks::Yes) => Tok::Doctype(Some(true)),
            Token::Doctype(Quirks::Unknown) => Tok::Doctype(None),
        };
        push(&mut out, tok);
    }
}

/// Appends `tok`, joining adjacent character tokens.
fn push(out: &mut Vec<Tok>, tok: Tok) {
    if let (Some(Tok::Chars(last)), Tok::Chars(more)) = (out.last_mut(), &tok) {
        last.push_str(more);
    } else if tok != Tok::Chars(String::new()) {
        out.push(tok);
    }
}

/// `s` with its `\uXXXX` escapes decoded (`doubleEscaped` tests), surrogate pairs
/// joined; `None` when a lone surrogate is left (not a `str`: a page's decoder makes
/// it U+FFFD before any tokenizer sees it).
fn unescape(s: &str) -> Option<String> {
    let units = |s: &str| -> Option<Vec<u16>> {
        let mut out = Vec::new();
        let mut rest = s;
        while let Some(at) = rest.find("\\u") {
            out.extend(rest[..at].encode_utf16());
            let hex = rest.get(at + 2..at + 6)?;
            out.push(u16::from_str_radix(hex, 16).ok()?);
            rest = &rest[at + 6..];
        }
        out.extend(rest.encode_utf16());
        Some(out)
    };
    String::from_utf16(&units(s)?).ok()
}

/// The expected tokens of a test; `None` when they cannot be a `str`.
fn expected(output: &[Value], escaped: bool) -> Option<Vec<Tok>> {
    let text = |v: &Value| -> Option<String> {
        let s = v.as_str()?;
        if escaped {
            unescape(s)
        } else {
            Some(s.to_owned())
        }
    };
    let mut out = Vec::new();
    for tok in output {
        let t = tok.as_array().unwrap();
        let tok = match t[0].as_str().unwrap() {
            "Character" => Tok::Chars(text(&t[1])?),
            "StartTag" => {
                let mut attrs = BTreeMap::new();
                for (n, v) in t[2].as_object().unwrap() {
                    let n = if escaped { unescape(n)? } else { n.clone() };
                    attrs.insert(n, text(v)?);
                }
                Tok::Start {
                    name: text(&t[1])?,
                    attrs,
                    self_closing: t.get(3) == Some(&Value::Bool(true)),
                }
            }
            "EndTag" => Tok::End(text(&t[1])?),
            "Comment" => Tok::Comment,
            "DOCTYPE" => Tok::Doctype(doctype_mode(t)),
            other => panic!("a token {other:?}"),
        };
        push(&mut out, tok);
    }
    Some(out)
}

/// The mode a doctype token `["DOCTYPE", name, public, system, correct]` puts the page
/// in: quirks (`Some(true)`) when it forces quirks or names other than `html`; no quirks
/// (`Some(false)`) for `html` without identifiers; `None` when the identifiers decide.
fn doctype_mode(t: &[Value]) -> Option<bool> {
    if t[4] == Value::Bool(false) || t[1].as_str() != Some("html") {
        Some(true)
    } else if t[2].is_null() && t[3].is_null() {
        Some(false)
    } else {
        None
    }
}

/// Whether the scanner's tokens are the expected ones: equal, a doctype whose mode the
/// scanner left to the identifiers standing for any mode.
fn agree(got: &[Tok], want: &[Tok]) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| match (g, w) {
            (Tok::Doctype(None), Tok::Doctype(_)) => true,
            _ => g == w,
        })
}

#[derive(Default, Debug)]
struct Counts {
    cases: usize,
    agreed: usize,
    bailed: usize,
    /// Data-state cases whose input or output holds a lone surrogate.
    not_a_str: usize,
    differed: Vec<String>,
    known: Vec<&'static str>,
}

/// How a test's initial state is run: `None` for the data state, the element whose
/// content it is for the raw text states; not run (`Err`) for the states callers of
/// [`Scanner::raw_text`] never ask for: PLAINTEXT, CDATA, a raw text state with no
/// element named (`lastStartTag`), and script data ended by another element's end tag.
fn start<'t>(state: &str, last: Option<&'t str>) -> Result<Option<(&'t str, bool)>, ()> {
    match (state, last) {
        ("Data state", _) => Ok(None),
        ("RCDATA state", Some(name)) => Ok(Some((name, true))),
        ("RAWTEXT state", Some(name)) => Ok(Some((name, false))),
        ("Script data state", Some("script")) => Ok(Some(("script", false))),
        _ => Err(()),
    }
}

/// Runs the tests of one file: the data-state runs count in `data`, the raw text ones
/// in `raw`.
fn run_file(file: &str, text: &str, data: &mut Counts, raw: &mut Counts) {
    let json: Value = serde_json::from_str(text).unwrap();
    for test in json["tests"].as_array().unwrap() {
        let states: Vec<&str> = match test.get("initialStates") {
            None => vec!["Data state"],
            Some(s) => s
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s.as_str().unwrap())
                .collect(),
        };
        let last = test.get("lastStartTag").and_then(Value::as_str);
        for state in states {
            let Ok(start) = start(state, last) else {
                continue;
            };
            let counts = if start.is_none() {
                &mut *data
            } else {
                &mut *raw
            };
            run_case(file, test, start, counts);
        }
    }
}

fn run_case(file: &str, test: &Value, start: Option<(&str, bool)>, counts: &mut Counts) {
    counts.cases += 1;
    let description = test["description"].as_str().unwrap();
    let escaped = test.get("doubleEscaped") == Some(&Value::Bool(true));
    let raw = test["input"].as_str().unwrap();
    let input = if escaped {
        unescape(raw)
    } else {
        Some(raw.to_owned())
    };
    let want = expected(test["output"].as_array().unwrap(), escaped);
    let (Some(input), Some(want)) = (input, want) else {
        counts.not_a_str += 1;
        return;
    };
    let known = KNOWN
        .iter()
        .find(|(f, d, _)| *f == file && *d == description && start.is_none());
    match scan(&input, start) {
        Err(_) => counts.bailed += 1,
        Ok(got) if agree(&got, &want) => {
            counts.agreed += 1;
            if let Some((_, d, _)) = known {
                counts
                    .differed
                    .push(format!("{file}: {d}: listed in KNOWN, agrees"));
            }
        }
        Ok(_) if known.is_some() => counts.known.push(known.unwrap().1),
        Ok(got) => counts.differed.push(format!(
            "{file}: {description} ({start:?}): {input:?}\n  got  {got:?}\n  want {want:?}"
        )),
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} cases: {} agreed, {} bailed, {} differed ({} known), {} not a str",
            self.cases,
            self.agreed,
            self.bailed,
            self.differed.len() + self.known.len(),
            self.known.len(),
            self.not_a_str
        )
    }
}

#[test]
fn html5lib_tokenizer_tests_agree_or_bail() {
    let started = std::time::Instant::now();
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/conformance/html5lib/tokenizer");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "test"))
        .collect();
    files.sort();
    let (mut data, mut raw) = (Counts::default(), Counts::default());
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let before = (data.cases, data.agreed, data.bailed);
        run_file(
            name,
            &std::fs::read_to_string(path).unwrap(),
            &mut data,
            &mut raw,
        );
        eprintln!(
            "{name}: {} data-state cases, {} agreed, {} bailed",
            data.cases - before.0,
            data.agreed - before.1,
            data.bailed - before.2
        );
    }
    eprintln!(
        "html5lib tokenizer, {} files: data state: {data}; raw text states: {raw}; in {:?}",
        files.len(),
        started.elapsed()
    );
    for counts in [&data, &raw] {
        assert!(counts.differed.is_empty(), "{}", counts.differed.join("\n"));
    }
    assert_eq!(data.known.len(), KNOWN.len(), "{:?}", data.known);
    // So that a change of the data or of the harness shows.
    assert_eq!((data.cases, raw.cases), (6689, 49));
}
