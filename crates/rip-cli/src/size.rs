//! Byte sizes on the command line, one syntax for every binary: `16MiB`, `500k`, `1G`,
//! `4096` (bytes).

/// A byte size: `16MiB`, `500k`, `1G`, or a bare number of bytes (`4096`). Units are
/// binary (k = 1,024) and case-insensitive; `KB`/`KiB`, `MB`/`MiB`, `GB`/`GiB` are the same.
pub fn parse_size(s: &str) -> Result<usize, SizeError> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: usize = n
        .parse()
        .map_err(|e: std::num::ParseIntError| match e.kind() {
            std::num::IntErrorKind::PosOverflow => SizeError::TooLarge(s.to_owned()),
            _ => SizeError::Number(s.to_owned()),
        })?;
    let mult: usize = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return Err(SizeError::Unit(s.to_owned())),
    };
    n.checked_mul(mult)
        .ok_or_else(|| SizeError::TooLarge(s.to_owned()))
}

/// Why a size flag's value is not a size; each variant holds the value as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// No number before the unit, or not a number.
    #[error("bad size `{0}` (e.g. 16MiB, 500k)")]
    Number(String),
    /// A unit other than k, M or G (with or without `B`/`iB`).
    #[error("bad size unit in `{0}` (use k, M or G)")]
    Unit(String),
    /// More bytes than this machine can count.
    #[error("size `{0}` is too large")]
    TooLarge(String),
}

/// A size flag whose bare number once meant MiB (rip-parse's `--max-body 32`): read as
/// [`parse_size`] reads every size flag (a bare number is bytes), the bare number kept for
/// a warning that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeOnceMib {
    /// The size, in bytes.
    pub bytes: usize,
    /// The bare number given (bytes now, MiB before), for the warning.
    pub bare: Option<usize>,
}

impl SizeOnceMib {
    /// Parses `16MiB`, `500k`, `4096` as [`parse_size`] does.
    pub fn parse(s: &str) -> Result<Self, SizeError> {
        let t = s.trim();
        let bytes = parse_size(s)?;
        let bare = (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())).then_some(bytes);
        Ok(Self { bytes, bare })
    }

    /// The warning for a bare number, e.g. `rip-parse: warning: --max-body 16 is 16 bytes,
    /// as a bare number is in every size flag (it was 16 MiB here before: write 16MiB)`.
    pub fn warning(&self, program: &str, flag: &str) -> Option<String> {
        self.bare.map(|n| {
            format!(
                "{program}: warning: {flag} {n} is {n} bytes, as a bare number is in every \
                 size flag (it was {n} MiB here before: write {n}MiB)"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("500k"), Ok(500 << 10));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(
            parse_size("12parsecs").unwrap_err().to_string(),
            "bad size unit in `12parsecs` (use k, M or G)"
        );
        assert_eq!(
            parse_size("MiB").unwrap_err().to_string(),
            "bad size `MiB` (e.g. 16MiB, 500k)"
        );
        assert_eq!(
            SizeOnceMib::parse("99999999999999999999")
                .unwrap_err()
                .to_string(),
            "size `99999999999999999999` is too large"
        );
        assert!(parse_size("99999999999999999999G").is_err());
    }

    #[test]
    fn a_bare_number_is_bytes_with_a_warning() {
        let bare = SizeOnceMib::parse("16").unwrap();
        assert_eq!(bare.bytes, 16);
        let warning = bare.warning("rip-parse", "--max-body").unwrap();
        assert!(warning.contains("16 is 16 bytes"), "{warning}");
        assert!(warning.contains("write 16MiB"), "{warning}");
        let unit = SizeOnceMib::parse("500k").unwrap();
        assert_eq!((unit.bytes, unit.warning("p", "--f")), (500 << 10, None));
        assert!(SizeOnceMib::parse("16 parsecs").is_err());
    }
}
