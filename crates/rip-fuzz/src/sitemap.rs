//! Sitemaps (`rip_discover::sitemap`), plain and gzip.

use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use rip_discover::sitemap::{Limits, MAX_LOC, parse};

use crate::input::choice;

/// The first byte sets the limits (bytes, URLs): the entries kept stay within them,
/// each trimmed and at most [`MAX_LOC`] long; the same body gzipped reads alike.
pub(crate) fn sitemap(data: &[u8]) {
    let (c, body) = choice(data);
    let limits = Limits {
        max_bytes: 64 + usize::from(c & 0x0f) * 4096,
        max_urls: 1 + usize::from(c >> 4) * 3,
        ..Limits::default()
    };
    let map = parse(body, &limits);
    assert!(map.locs.len() <= limits.max_urls, "{} URLs", map.locs.len());
    for loc in &map.locs {
        assert!(!loc.is_empty() && loc.len() <= MAX_LOC, "{loc:?}");
        assert_eq!(loc.trim(), loc);
    }
    if body.starts_with(&[0x1f, 0x8b]) {
        return;
    }
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(body).expect("to memory");
    let zipped = parse(&gz.finish().expect("to memory"), &limits);
    assert_eq!((zipped.kind, &zipped.locs), (map.kind, &map.locs));
}
