//! One gzip member (RFC 1952) read from an [`Input`], its inflater kept from member to
//! member: flate2's `GzDecoder` makes a new one for each (allocating and clearing some
//! 40 KB), which was a tenth of `rip-warc read`'s time on a file of small records. The
//! header's optional fields are read and skipped; the trailer's CRC-32 and size are
//! checked, a mismatch an error as `GzDecoder`'s.

use std::io::{self, BufRead, Read};

use flate2::{Crc, Decompress, FlushDecompress, Status};

use super::input::Input;

const FHCRC: u8 = 0x02;
const FEXTRA: u8 = 0x04;
const FNAME: u8 = 0x08;
const FCOMMENT: u8 = 0x10;
/// Longest file name or comment read in a header (a longer one is damage).
const MAX_HEADER_TEXT: usize = 64 * 1024;

/// The member's inflated bytes, as a reader.
pub struct GzMember<'a, R> {
    input: &'a mut Input<R>,
    inflater: &'a mut Decompress,
    crc: Crc,
    state: State,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Header,
    Body,
    Done,
}

impl<'a, R: Read> GzMember<'a, R> {
    /// The member starting at `input`'s position, inflated by `inflater` (reset here).
    pub fn new(input: &'a mut Input<R>, inflater: &'a mut Decompress) -> Self {
        Self {
            input,
            inflater,
            crc: Crc::new(),
            state: State::Header,
        }
    }

    /// The input underneath (at the member's end once it was read whole).
    pub fn input(&self) -> &Input<R> {
        self.input
    }

    fn header(&mut self) -> io::Result<()> {
        let fixed = self.input.peek(10)?;
        if fixed.len() < 10 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if fixed[..3] != [0x1f, 0x8b, 0x08] {
            return Err(invalid("invalid gzip header"));
        }
        let flags = fixed[3];
        self.input.consume(10);
        if flags & FEXTRA != 0 {
            let len = self.input.peek(2)?;
            if len.len() < 2 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            let n = usize::from(u16::from_le_bytes([len[0], len[1]]));
            self.skip(2 + n)?;
        }
        for flag in [FNAME, FCOMMENT] {
            if flags & flag != 0 {
                self.skip_text()?;
            }
        }
        if flags & FHCRC != 0 {
            self.skip(2)?;
        }
        self.inflater.reset(false);
        Ok(())
    }

    fn skip(&mut self, n: usize) -> io::Result<()> {
        if self.input.peek(n)?.len() < n {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.input.consume(n);
        Ok(())
    }

    /// Skips a zero-terminated field.
    fn skip_text(&mut self) -> io::Result<()> {
        let mut want = 256;
        loop {
            let ahead = self.input.peek(want)?;
            if let Some(end) = ahead.iter().position(|&b| b == 0) {
                self.input.consume(end + 1);
                return Ok(());
            }
            if ahead.len() < want {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            if want >= MAX_HEADER_TEXT {
                return Err(invalid("a gzip header's name or comment past 64 KiB"));
            }
            want *= 4;
        }
    }

    /// Checks the trailer: CRC-32 and size (modulo 2^32) of what was inflated.
    fn trailer(&mut self) -> io::Result<()> {
        let t = self.input.peek(8)?;
        if t.len() < 8 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let size = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        if crc != self.crc.sum() || size != self.crc.amount() {
            return Err(invalid(
                "corrupt gzip stream does not have a matching checksum",
            ));
        }
        self.input.consume(8);
        Ok(())
    }
}

impl<R: Read> Read for GzMember<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.state == State::Header {
            self.header()?;
            self.state = State::Body;
        }
        while self.state == State::Body && !out.is_empty() {
            let ahead = self.input.fill_buf()?;
            let eof = ahead.is_empty();
            let (in0, out0) = (self.inflater.total_in(), self.inflater.total_out());
            let status = self
                .inflater
                .decompress(ahead, out, FlushDecompress::None)
                .map_err(|e| invalid(&e.to_string()))?;
            let used = (self.inflater.total_in() - in0) as usize;
            let made = (self.inflater.total_out() - out0) as usize;
            self.input.consume(used);
            self.crc.update(&out[..made]);
            if status == Status::StreamEnd {
                self.trailer()?;
                self.state = State::Done;
            } else if made == 0 && used == 0 {
                // No progress on what is buffered: more input, or the member is cut.
                let have = self.input.peek(1)?.len();
                if eof || self.input.peek(have.max(1) + 64 * 1024)?.len() <= have {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
            }
            if made > 0 {
                return Ok(made);
            }
        }
        Ok(0)
    }
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_owned())
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn gz(plain: &[u8], name: Option<&str>) -> Vec<u8> {
        let mut b = flate2::GzBuilder::new();
        if let Some(n) = name {
            b = b.filename(n).comment("a comment").extra(vec![1, 2, 3]);
        }
        let mut e = b.write(Vec::new(), flate2::Compression::default());
        e.write_all(plain).expect("in memory");
        e.finish().expect("in memory")
    }

    /// Members one after the other, with and without the header's optional fields, read
    /// by one inflater; each ends where the next starts.
    #[test]
    fn members_read_one_after_another_with_one_inflater() {
        let big: Vec<u8> = (0..300_000u32).map(|i| (i % 241) as u8).collect();
        let plains: [&[u8]; 4] = [b"first", &big, b"", b"last"];
        let mut file = Vec::new();
        for (i, p) in plains.iter().enumerate() {
            file.extend(gz(p, (i % 2 == 1).then_some("name.warc")));
        }
        let mut input = Input::new(&file[..]);
        let mut inflater = Decompress::new(false);
        for p in plains {
            let mut back = Vec::new();
            GzMember::new(&mut input, &mut inflater)
                .read_to_end(&mut back)
                .expect("inflates");
            assert_eq!(back, p);
        }
        assert_eq!(input.position(), file.len() as u64);
    }

    /// A wrong checksum, a cut member and a bad header are errors, not data.
    #[test]
    fn damage_is_an_error() {
        let good = gz(b"some bytes to check", None);
        let n = good.len();
        let mut bad_crc = good.clone();
        bad_crc[n - 8] ^= 1;
        let mut bad_size = good.clone();
        bad_size[n - 1] ^= 1;
        let cut = good[..n - 3].to_vec();
        let mut bad_magic = good.clone();
        bad_magic[1] = 0;
        for bytes in [bad_crc, bad_size, cut, bad_magic] {
            let mut input = Input::new(&bytes[..]);
            let mut inflater = Decompress::new(false);
            let got = GzMember::new(&mut input, &mut inflater).read_to_end(&mut Vec::new());
            assert!(got.is_err(), "{got:?}");
        }
    }
}
