//! Cutting one fuzz input into the pieces a target needs.

/// The input cut at its first NUL byte: (before, after); no NUL, (all, empty).
pub(crate) fn split_nul(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// The input's first byte (a choice among variants) and the rest.
pub(crate) fn choice(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&c, rest)) => (c, rest),
        None => (0, data),
    }
}

/// Bytes as text the way our programs receive a page's text: lossy UTF-8.
pub(crate) fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}
