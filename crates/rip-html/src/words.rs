//! Byte searches eight bytes at a time, in one `u64` ("SWAR"): a high bit flags each
//! byte of a word that matches. A flag can be set on a byte after the first true match
//! (a borrow carries into it), never before it, so the lowest flag ([`first`]) is exact.
//! Shared by the tokenizer's text search and rip-parse's white-space search.

/// One in each byte.
const ONES: u64 = u64::from_ne_bytes([1; 8]);
/// The high bit of each byte.
const HIGH: u64 = ONES << 7;

/// The eight bytes of `s` from `i` as one word, the first in the lowest byte; `None`
/// when fewer than eight are left.
#[inline]
pub fn word_at(s: &[u8], i: usize) -> Option<u64> {
    let chunk = s.get(i..i + 8)?;
    Some(u64::from_le_bytes(chunk.try_into().ok()?))
}

/// A flag for each byte of `w` equal to `b`.
#[inline]
pub fn equal(w: u64, b: u8) -> u64 {
    let x = w ^ (ONES * u64::from(b));
    x.wrapping_sub(ONES) & !x & HIGH
}

/// A flag for each byte of `w` below `n` (`n` at most 0x80; bytes from 0x80 up are
/// never flagged).
#[inline]
pub fn below(w: u64, n: u8) -> u64 {
    w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH
}

/// The place in its word of the first flagged byte of a non-zero `flags`.
#[inline]
pub fn first(flags: u64) -> usize {
    (flags.trailing_zeros() / 8) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_flag_is_the_first_match_for_every_byte_at_every_place() {
        for place in 0..8 {
            for b in 0..=255u8 {
                for fill in [0u8, b'a', 0x1f, 0x20, 0x7f, 0x80, 0xff] {
                    if fill == b {
                        continue;
                    }
                    let mut bytes = [fill; 8];
                    bytes[place] = b;
                    let w = word_at(&bytes, 0).unwrap();
                    let eq = equal(w, b);
                    assert_eq!(first(eq), place, "{b:#x} at {place} among {fill:#x}");
                    for n in [b'!', 0x20, 0x80] {
                        let want = bytes.iter().position(|&c| c < n);
                        let got = below(w, n);
                        assert_eq!((got != 0).then(|| first(got)), want, "{bytes:?} below {n}");
                    }
                }
            }
        }
        assert_eq!(word_at(b"1234567", 0), None);
    }
}
