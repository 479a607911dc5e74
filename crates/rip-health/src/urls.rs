//! [`Urls`]: what the ledger check knows of each URL, in about 20 bytes a URL, whatever
//! its length.
//!
//! A URL is known by its 128-bit xxh3 hash, and what was seen of it is one byte
//! ([`State`]): entered 0, 1 or more times; 0, 1 or more terminal records and the kind of
//! the first; the last non-terminal kind seen. The keys and bytes are kept by a
//! [`rip_keystore::Store`]. The texts are not kept in memory:
//!
//! - each URL's text is written once, when it is first seen, to a temporary file (an
//!   anonymous file in `$TMPDIR`, gone when the process ends; about as many bytes as the
//!   URLs, once each), and the URLs that need naming at the end (no outcome: unaccounted
//!   or in flight) are found by reading that file again ([`Urls::named`]);
//! - a URL entered twice, and one with a second terminal record, is named when it happens
//!   (its text is at hand then), with its terminal records' kinds in stream order. Those
//!   are problems, so few.
//!
//! The check is as strict as one with the texts as keys, except for hash collisions: two
//! different URLs with the same 128-bit hash (a chance of about n²/2¹²⁹, some 10⁻²⁵ at ten
//! million URLs) would share one book, so one's outcome could account for the other, or
//! the two would show as one URL entered twice.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

use rip_keystore::Store;
use xxhash_rust::xxh3::xxh3_128;

/// Bytes of texts kept in memory before they are written to the file.
const TEXT_BUFFER: usize = 64 * 1024;

/// The kinds of terminal record, as a [`State`] holds them.
const TERMINALS: [&str; 3] = ["doc", "error", "expected"];

/// The non-terminal kinds a [`State`] holds as the last seen (0: none).
const NON_TERMINALS: [&str; 4] = ["", "ref", "page", "failure"];

/// What was seen of one URL, in one byte: bits 0-1 times entered (0, 1, 2: more), bits 2-3
/// terminal records (0, 1, 2: more), bits 4-5 the kind of the first terminal record
/// (`TERMINALS`), bits 6-7 the last non-terminal kind seen (`NON_TERMINALS`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State(u8);

impl State {
    /// Times entered: 0, 1, or 2 for more.
    pub fn entered(self) -> u8 {
        self.0 & 0b11
    }

    /// Terminal records: 0, 1, or 2 for more.
    pub fn terminals(self) -> u8 {
        (self.0 >> 2) & 0b11
    }

    /// The kind of the first terminal record, if any.
    pub fn first_terminal(self) -> Option<&'static str> {
        (self.terminals() > 0).then(|| TERMINALS[usize::from((self.0 >> 4) & 0b11)])
    }

    /// The last non-terminal kind seen (`ref`, `page`, `failure`), if any.
    pub fn last_seen(self) -> Option<&'static str> {
        Some(NON_TERMINALS[usize::from(self.0 >> 6)]).filter(|k| !k.is_empty())
    }

    fn enter(&mut self) {
        self.0 = (self.0 & !0b11) | (self.entered() + 1).min(2);
    }

    fn add_terminal(&mut self, kind: &'static str) {
        if self.terminals() == 0 {
            let k = TERMINALS.iter().position(|&t| t == kind).unwrap_or(0) as u8;
            self.0 = (self.0 & !0b11_0000) | (k << 4);
        }
        self.0 = (self.0 & !0b1100) | ((self.terminals() + 1).min(2) << 2);
    }

    fn see(&mut self, kind: &'static str) {
        let k = NON_TERMINALS.iter().position(|&t| t == kind).unwrap_or(0) as u8;
        self.0 = (self.0 & 0b11_1111) | (k << 6);
    }
}

/// Every URL seen, and the few named as they happen (see the module docs).
#[derive(Debug, Default)]
pub struct Urls {
    states: Store<u8>,
    /// Texts not yet written to `file`.
    pending: Vec<u8>,
    /// The texts written so far (created with the first full buffer).
    file: Option<File>,
    written: u64,
    /// The first error writing texts: reported by [`Urls::named`].
    error: Option<io::Error>,
    /// Distinct URLs entered.
    entered: u64,
    /// Distinct URLs with a terminal record.
    with_terminal: u64,
    /// URLs entered a second time, in the order it happened.
    entered_twice: Vec<String>,
    /// URLs with more than one terminal record: the URL and every kind, in stream order.
    duplicated: HashMap<u128, (String, Vec<&'static str>)>,
}

impl Urls {
    /// `url` entered (a ledger names it).
    pub fn enter(&mut self, url: &str) {
        let before = self.update(url, State::enter);
        match before.entered() {
            0 => self.entered += 1,
            1 => self.entered_twice.push(url.to_owned()),
            _ => {}
        }
    }

    /// A terminal record of kind `kind` accounts for `url`.
    pub fn terminal(&mut self, url: &str, kind: &'static str) {
        let before = self.update(url, |s| s.add_terminal(kind));
        match (before.terminals(), before.first_terminal()) {
            (0, _) => self.with_terminal += 1,
            (1, Some(first)) => {
                let kinds = vec![first, kind];
                self.duplicated
                    .insert(xxh3_128(url.as_bytes()), (url.to_owned(), kinds));
            }
            _ => {
                if let Some((_, kinds)) = self.duplicated.get_mut(&xxh3_128(url.as_bytes())) {
                    kinds.push(kind);
                }
            }
        }
    }

    /// A non-terminal record (`ref`, `page`, `failure`) of `url`.
    pub fn see(&mut self, url: &str, kind: &'static str) {
        self.update(url, |s| s.see(kind));
    }

    /// Distinct URLs entered.
    pub fn entered(&self) -> u64 {
        self.entered
    }

    /// Distinct URLs with a terminal record.
    pub fn with_terminal(&self) -> u64 {
        self.with_terminal
    }

    /// What was seen of `url`, if anything.
    pub fn state(&self, url: &str) -> Option<State> {
        self.states.get(xxh3_128(url.as_bytes())).map(State)
    }

    /// The kinds of `url`'s terminal records, in stream order.
    pub fn terminal_kinds(&self, url: &str) -> Vec<&'static str> {
        let key = xxh3_128(url.as_bytes());
        match self.states.get(key).map(State) {
            Some(s) if s.terminals() > 1 => self
                .duplicated
                .get(&key)
                .map(|(_, kinds)| kinds.clone())
                .unwrap_or_default(),
            Some(s) => s.first_terminal().into_iter().collect(),
            None => Vec::new(),
        }
    }

    /// Every URL's state, in no particular order.
    pub fn states(&self) -> impl Iterator<Item = State> + '_ {
        self.states.iter().map(|(_, b)| State(b))
    }

    /// Terminal records of URLs whose state `count` takes (the URLs with more than one
    /// counted exactly).
    pub fn terminal_records(&self, count: impl Fn(State) -> bool) -> u64 {
        self.states
            .iter()
            .filter(|&(_, b)| count(State(b)))
            .map(|(key, b)| match State(b).terminals() {
                2 => self.duplicated.get(&key).map_or(2, |(_, k)| k.len() as u64),
                n => u64::from(n),
            })
            .sum()
    }

    /// URLs entered more than once, sorted.
    pub fn entered_twice(&self) -> Vec<String> {
        let mut urls = self.entered_twice.clone();
        urls.sort();
        urls
    }

    /// URLs with more than one terminal record and their kinds in stream order, sorted by
    /// URL.
    pub fn duplicated(&self) -> Vec<(String, Vec<&'static str>)> {
        let mut dups: Vec<_> = self.duplicated.values().cloned().collect();
        dups.sort_by(|a, b| a.0.cmp(&b.0));
        dups
    }

    /// The URLs whose state `wanted` takes, with their states, sorted by URL. Reads every
    /// text again, unless no state is wanted.
    pub fn named(&self, wanted: impl Fn(State) -> bool) -> io::Result<Vec<(String, State)>> {
        if let Some(e) = &self.error {
            return Err(io::Error::new(e.kind(), e.to_string()));
        }
        if !self.states().any(&wanted) {
            return Ok(Vec::new());
        }
        // Texts are written at their offset (pwrite), so the cursor is the reading's.
        let file: Box<dyn Read + '_> = match self.file.as_ref() {
            Some(mut f) => {
                f.seek(SeekFrom::Start(0))?;
                Box::new(f.take(self.written))
            }
            None => Box::new(io::empty()),
        };
        let mut texts = BufReader::with_capacity(256 * 1024, file.chain(&self.pending[..]));
        let mut named = Vec::new();
        let mut text = Vec::new();
        while !texts.fill_buf()?.is_empty() {
            let mut len = [0; 4];
            texts.read_exact(&mut len)?;
            text.resize(u32::from_le_bytes(len) as usize, 0);
            texts.read_exact(&mut text)?;
            if let Some(s) = self.states.get(xxh3_128(&text)).map(State)
                && wanted(s)
            {
                named.push((String::from_utf8_lossy(&text).into_owned(), s));
            }
        }
        named.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(named)
    }

    /// Changes `url`'s state with `f`; returns the state before. A URL seen for the first
    /// time has its text written down.
    fn update(&mut self, url: &str, f: impl FnOnce(&mut State)) -> State {
        let mut before = State::default();
        let new = self.states.update(xxh3_128(url.as_bytes()), |b| {
            before = State(*b);
            let mut s = State(*b);
            f(&mut s);
            *b = s.0;
        });
        if new {
            self.write_text(url);
        }
        before
    }

    /// Writes down a URL's text: its length (4 bytes, little-endian), then the text. After
    /// an error nothing more is kept: [`Urls::named`] reports it.
    fn write_text(&mut self, url: &str) {
        let Ok(len) = u32::try_from(url.len()) else {
            self.error = Some(io::Error::other("a URL longer than 4 GiB"));
            return;
        };
        if self.error.is_some() {
            return;
        }
        self.pending.extend_from_slice(&len.to_le_bytes());
        self.pending.extend_from_slice(url.as_bytes());
        if self.pending.len() >= TEXT_BUFFER
            && let Err(e) = self.flush_texts()
        {
            self.error = Some(e);
            self.pending = Vec::new();
        }
    }

    fn flush_texts(&mut self) -> io::Result<()> {
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile()?),
        };
        file.write_all_at(&self.pending, self.written)?;
        self.written += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }
}
