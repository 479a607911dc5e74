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

use quick_xml::Reader;
use quick_xml::events::Event;

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
    let mut kind = Kind::Unknown;
    let mut locs = Vec::new();
    let mut problems = Vec::new();
    let mut depth = 0usize;
    // Inside <loc>: the text so far, and whether it is still usable.
    let mut loc: Option<(String, bool)> = None;
    let mut unexpanded = 0usize;
    loop {
        let ev = match reader.read_event() {
            Ok(ev) => ev,
            Err(e) => {
                problems.push(format!(
                    "XML error at byte {}: {e} (the rest ignored)",
                    reader.buffer_position()
                ));
                break;
            }
        };
        match ev {
            Event::Start(e) => {
                depth += 1;
                if depth > MAX_NESTING {
                    problems.push(format!("elements nested over {MAX_NESTING} deep"));
                    break;
                }
                let name = e.local_name();
                let name = name.as_ref();
                if depth == 1 {
                    kind = match name {
                        "urlset" => Kind::UrlSet,
                        "sitemapindex" => Kind::Index,
                        _ => {
                            problems.push(format!("not a sitemap (root element <{}>)", name));
                            break;
                        }
                    };
                } else if name == "loc" && depth == 3 {
                    loc = Some((String::new(), true));
                }
            }
            Event::End(_) => {
                if let Some((s, ok)) = loc.take() {
                    let s = s.trim();
                    if ok && !s.is_empty() && s.len() <= MAX_LOC {
                        if locs.len() >= limits.max_urls {
                            problems.push(format!(
                                "more than {} URLs: the rest ignored",
                                limits.max_urls
                            ));
                            break;
                        }
                        locs.push(s.to_owned());
                    }
                }
                depth = depth.saturating_sub(1);
            }
            Event::Text(t) => {
                if let Some((s, _)) = loc.as_mut()
                    && s.len() <= MAX_LOC
                {
                    s.push_str(&t.xml10_content());
                }
            }
            Event::CData(c) => {
                if let Some((s, _)) = loc.as_mut()
                    && s.len() <= MAX_LOC
                {
                    s.push_str(&c.xml10_content());
                }
            }
            Event::GeneralRef(r) => {
                if let Some((s, ok)) = loc.as_mut() {
                    let name = r.xml10_content();
                    match r.resolve_char_ref() {
                        Ok(Some(c)) => s.push(c),
                        _ => match predefined(&name) {
                            Some(c) => s.push(c),
                            None => {
                                // A DTD entity: never expanded, so the loc is unusable.
                                *ok = false;
                                unexpanded += 1;
                            }
                        },
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if unexpanded > 0 {
        problems.push(format!(
            "{unexpanded} entity references not expanded (DTD entities are never expanded)"
        ));
    }
    Sitemap {
        kind,
        locs,
        problems,
    }
}

#[cfg(test)]
mod tests;
