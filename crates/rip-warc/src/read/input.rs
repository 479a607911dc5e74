//! [`Input`]: a buffered reader that knows its position in the stream, can look ahead
//! and can give bytes back, which is what finding record boundaries in a damaged file
//! takes (a record cut short gives back the next record it swallowed).

use std::io::{self, BufRead, Read};

const CHUNK: usize = 64 * 1024;

/// A buffered reader over `R` that counts the bytes consumed.
///
/// The buffer is filled memory kept between reads (`buf[pos..end]` is what is ahead), so a
/// read does not clear it first.
#[derive(Debug)]
pub struct Input<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    consumed: u64,
    eof: bool,
}

impl<R: Read> Input<R> {
    /// Reads `inner` from its current position, counted from 0.
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            pos: 0,
            end: 0,
            consumed: 0,
            eof: false,
        }
    }

    /// Reads `inner` into `buf`, memory a reader before it gave back ([`into_buffer`](Self::into_buffer)):
    /// it is not allocated and zeroed again (what it holds is not read).
    pub fn with_buffer(inner: R, buf: Vec<u8>) -> Self {
        Self {
            buf,
            ..Self::new(inner)
        }
    }

    /// The buffer's memory, for the next reader ([`with_buffer`](Self::with_buffer)).
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// Bytes consumed so far: the offset of the next byte in the stream.
    pub fn position(&self) -> u64 {
        self.consumed
    }

    /// The reader underneath (bytes already buffered are not in it any more).
    pub fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Lets a reader that ended (a [`Read::take`] at its limit) be read again.
    pub fn clear_eof(&mut self) {
        self.eof = false;
    }

    /// At least `n` bytes ahead, unless the stream ends first (then what is left).
    pub fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        while self.end - self.pos < n && !self.eof {
            self.compact();
            let want = self.end + CHUNK.max(n);
            if self.buf.len() < want {
                self.buf.resize(want, 0);
            }
            let got = self.inner.read(&mut self.buf[self.end..])?;
            self.end += got;
            self.eof = got == 0;
        }
        let end = self.end.min(self.pos + n);
        Ok(&self.buf[self.pos..end])
    }

    /// Puts `bytes` back in front of what is left to read (the position goes back).
    pub fn unread(&mut self, bytes: &[u8]) {
        self.compact();
        self.buf.truncate(self.end);
        self.buf.splice(0..0, bytes.iter().copied());
        self.end += bytes.len();
        self.consumed -= bytes.len() as u64;
    }

    fn compact(&mut self) {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
    }
}

impl<R: Read> Read for Input<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Input<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.end {
            self.pos = 0;
            self.end = 0;
            if !self.eof {
                self.peek(1)?;
            }
        }
        Ok(&self.buf[self.pos..self.end])
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.pos);
        self.pos += n;
        self.consumed += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_peeks_and_gives_back() {
        let mut input = Input::new(&b"abcdef"[..]);
        assert_eq!(input.peek(3).unwrap(), b"abc");
        let mut two = [0; 2];
        input.read_exact(&mut two).unwrap();
        assert_eq!((input.position(), &two), (2, b"ab"));
        input.unread(b"xy");
        assert_eq!(input.position(), 0);
        let mut rest = Vec::new();
        input.read_to_end(&mut rest).unwrap();
        assert_eq!((rest.as_slice(), input.position()), (&b"xycdef"[..], 6));
        assert_eq!(input.peek(4).unwrap(), b"");
    }
}
