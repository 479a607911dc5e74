//! Gzip: encoding bodies and sitemaps, and making gzip bombs.

use std::io::Write as _;

use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;

/// The largest gzip bomb made: 64 GiB of zeros (about 64 MiB compressed).
pub const MAX_GZIP_BOMB: u64 = 64 << 30;

/// Gzips bytes (fast level: test bodies, not archives).
pub(crate) fn gzip(data: &[u8]) -> Bytes {
    let mut encoder = GzEncoder::new(Vec::with_capacity(data.len() / 4 + 64), Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default().into()
}

/// A gzip member that expands to `expanded` zero bytes (capped at [`MAX_GZIP_BOMB`]).
pub(crate) fn make_bomb(expanded: u64) -> Bytes {
    let zeros = vec![0u8; 1 << 20];
    let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
    let mut left = expanded.min(MAX_GZIP_BOMB);
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        let _ = encoder.write_all(&zeros[..n]);
        left -= n as u64;
    }
    encoder.finish().unwrap_or_default().into()
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn round_trip() {
        let mut out = String::new();
        flate2::read::GzDecoder::new(&gzip(b"hello hello hello")[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, "hello hello hello");
    }

    #[test]
    fn bomb_expands() {
        let bomb = make_bomb(10 << 20);
        assert!(bomb.len() < 20_000, "{} bytes", bomb.len());
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bomb[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out.len(), 10 << 20);
        assert!(out.iter().all(|&b| b == 0));
    }
}
