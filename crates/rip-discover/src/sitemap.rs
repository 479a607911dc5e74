//! Sitemaps: XML `urlset`s, `sitemapindex`es, plain-text sitemaps (one URL a line), each
//! possibly a gzip file (`.xml.gz`: the file is gzip, not the transfer).
//!
//! Everything here treats the input as hostile, within the protocol's own limits:
//!
//! - a gzip body is inflated to at most [`Limits::max_bytes`] (50 MiB, the protocol's cap),
//!   so a gzip bomb costs at most that;
//! - at most [`Limits::max_urls`] `<loc>`s are read from one file (50,000 in the protocol);
//! - XML is read with quick-xml's streaming reader, which never expands entities declared
//!   in a DTD: `&lol9;` stays unexpanded and its `<loc>` is dropped, so "billion laughs"
//!   costs nothing; only the five predefined entities and character references are decoded;
//! - element nesting deeper than [`MAX_NESTING`] ends the file;
//! - the crawler bounds index *depth* and the number of sitemap files fetched
//!   ([`Limits::max_index_depth`], [`Limits::max_files`]).

use std::io::Read;
use std::ops::ControlFlow;

use quick_xml::Reader;
use quick_xml::events::{BytesRef, BytesStart, Event};

/// Elements nested deeper than this end the parse (a real sitemap nests 3 deep).
pub const MAX_NESTING: usize = 32;
/// A `<loc>` longer than this is dropped.
pub const MAX_LOC: usize = 8 << 10;

/// Bounds on sitemaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of one sitemap after gzip inflation.
    pub max_bytes: usize,
    /// `<loc>` entries read from one file.
    pub max_urls: usize,
    /// How deep sitemap indexes may nest (1: an index of sitemaps, no index of indexes).
    pub max_index_depth: u32,
    /// Sitemap files fetched in one run.
    pub max_files: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_bytes: 50 << 20,
            max_urls: 50_000,
            max_index_depth: 2,
            max_files: 1_000,
        }
    }
}

/// The kind of a sitemap file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `<urlset>`: page URLs.
    UrlSet,
    /// `<sitemapindex>`: sitemap URLs.
    Index,
    /// Plain text, one URL per line.
    Text,
    /// Neither (an HTML error page, RSS, …): nothing read.
    Unknown,
}

/// A parsed sitemap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sitemap {
    /// What it was.
    pub kind: Kind,
    /// The `<loc>`s (page URLs for a urlset or text sitemap, sitemaps for an index), as
    /// written, trimmed.
    pub locs: Vec<String>,
    /// What was cut or refused, for a person (empty when nothing was).
    pub problems: Vec<String>,
}

/// Inflates a gzip body (by its magic bytes) within `max_bytes`; other bodies are kept.
/// Returns the bytes and whether they were cut.
pub fn inflate(body: &[u8], max_bytes: usize) -> (Vec<u8>, bool) {
    if !body.starts_with(&[0x1f, 0x8b]) {
        let cut = body.len() > max_bytes;
        return (body[..body.len().min(max_bytes)].to_vec(), cut);
    }
    let mut out = Vec::new();
    let mut dec = flate2::read::MultiGzDecoder::new(body).take(max_bytes as u64 + 1);
    let _ = dec.read_to_end(&mut out);
    let cut = out.len() > max_bytes;
    out.truncate(max_bytes);
    (out, cut)
}

/// Parses a sitemap body (gzip or not) within `limits`.
pub fn parse(body: &[u8], limits: &Limits) -> Sitemap {
    let (bytes, cut) = inflate(body, limits.max_bytes);
    let text = String::from_utf8_lossy(&bytes);
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    let mut map = if trimmed.starts_with('<') {
        parse_xml(trimmed, limits)
    } else {
        parse_text(trimmed, limits)
    };
    if cut {
        map.problems.push(format!(
            "cut at {} bytes (after gzip inflation)",
            limits.max_bytes
        ));
    }
    map
}

fn parse_text(text: &str, limits: &Limits) -> Sitemap {
    let mut locs = Vec::new();
    let mut problems = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if locs.len() >= limits.max_urls {
            problems.push(format!(
                "more than {} URLs: the rest ignored",
                limits.max_urls
            ));
            break;
        }
        let lower = line.get(..8).unwrap_or(line).to_ascii_lowercase();
        if (lower.starts_with("http://") || lower.starts_with("https://")) && line.len() <= MAX_LOC
        {
            locs.push(line.to_owned());
        }
    }
    let kind = if locs.is_empty() {
        Kind::Unknown
    } else {
        Kind::Text
    };
    Sitemap {
        kind,
        locs,
        problems,
    }
}

fn predefined(name: &str) -> Option<char> {
    Some(match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        _ => return None,
    })
}

fn parse_xml(text: &str, limits: &Limits) -> Sitemap {
    let mut reader = Reader::from_str(text);
    reader.config_mut().trim_text(false);
    let mut read = XmlSitemap::new(limits);
    loop {
        let flow = match reader.read_event() {
            Ok(ev) => read.event(ev),
            Err(e) => {
                read.problems.push(format!(
                    "XML error at byte {}: {e} (the rest ignored)",
                    reader.buffer_position()
                ));
                ControlFlow::Break(())
            }
        };
        if flow.is_break() {
            break;
        }
    }
    read.finish()
}

/// An XML sitemap as read so far, one event at a time.
struct XmlSitemap<'l> {
    limits: &'l Limits,
    kind: Kind,
    locs: Vec<String>,
    problems: Vec<String>,
    /// Elements open.
    depth: usize,
    /// Inside `<loc>`: the text so far, and whether it is still usable.
    loc: Option<(String, bool)>,
    /// DTD entity references met (never expanded).
    unexpanded: usize,
}

impl<'l> XmlSitemap<'l> {
    fn new(limits: &'l Limits) -> Self {
        Self {
            limits,
            kind: Kind::Unknown,
            locs: Vec::new(),
            problems: Vec::new(),
            depth: 0,
            loc: None,
            unexpanded: 0,
        }
    }

    /// Takes one event; `Break` ends the file (its end, or a limit reached).
    fn event(&mut self, ev: Event<'_>) -> ControlFlow<()> {
        match ev {
            Event::Start(e) => return self.start(&e),
            Event::End(_) => return self.end(),
            Event::Text(t) => {
                if let Some(s) = self.loc_text() {
                    s.push_str(&t.xml10_content());
                }
            }
            Event::CData(c) => {
                if let Some(s) = self.loc_text() {
                    s.push_str(&c.xml10_content());
                }
            }
            Event::GeneralRef(r) => self.reference(&r),
            Event::Eof => return ControlFlow::Break(()),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    /// An element opens: the root says the kind, a `<loc>` at depth 3 starts a URL.
    fn start(&mut self, e: &BytesStart<'_>) -> ControlFlow<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.problems
                .push(format!("elements nested over {MAX_NESTING} deep"));
            return ControlFlow::Break(());
        }
        let name = e.local_name();
        let name = name.as_ref();
        if self.depth == 1 {
            self.kind = match name {
                "urlset" => Kind::UrlSet,
                "sitemapindex" => Kind::Index,
                _ => {
                    self.problems
                        .push(format!("not a sitemap (root element <{}>)", name));
                    return ControlFlow::Break(());
                }
            };
        } else if name == "loc" && self.depth == 3 {
            self.loc = Some((String::new(), true));
        }
        ControlFlow::Continue(())
    }

    /// An element closes: a usable `<loc>` is kept, within [`Limits::max_urls`].
    fn end(&mut self) -> ControlFlow<()> {
        if let Some((s, ok)) = self.loc.take() {
            let s = s.trim();
            if ok && !s.is_empty() && s.len() <= MAX_LOC {
                if self.locs.len() >= self.limits.max_urls {
                    self.problems.push(format!(
                        "more than {} URLs: the rest ignored",
                        self.limits.max_urls
                    ));
                    return ControlFlow::Break(());
                }
                self.locs.push(s.to_owned());
            }
        }
        self.depth = self.depth.saturating_sub(1);
        ControlFlow::Continue(())
    }

    /// The text of the open `<loc>`, while it is not over [`MAX_LOC`].
    fn loc_text(&mut self) -> Option<&mut String> {
        self.loc
            .as_mut()
            .map(|(s, _)| s)
            .filter(|s| s.len() <= MAX_LOC)
    }

    /// `&…;` in a `<loc>`: a character reference or a predefined entity is decoded; a DTD
    /// entity is never expanded, and makes the loc unusable.
    fn reference(&mut self, r: &BytesRef<'_>) {
        let Some((s, ok)) = self.loc.as_mut() else {
            return;
        };
        let name = r.xml10_content();
        match r.resolve_char_ref() {
            Ok(Some(c)) => s.push(c),
            _ => match predefined(&name) {
                Some(c) => s.push(c),
                None => {
                    *ok = false;
                    self.unexpanded += 1;
                }
            },
        }
    }

    fn finish(mut self) -> Sitemap {
        if self.unexpanded > 0 {
            self.problems.push(format!(
                "{} entity references not expanded (DTD entities are never expanded)",
                self.unexpanded
            ));
        }
        Sitemap {
            kind: self.kind,
            locs: self.locs,
            problems: self.problems,
        }
    }
}

#[cfg(test)]
mod tests;
