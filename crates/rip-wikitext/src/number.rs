//! Numbers as editors type them in infoboxes: `1,200`, `12.5 kg`, `−3`, `2,363 (est.)`.

/// The first number in `text`: an optional sign (`-`, `+`, `−`), digits with optional
/// thousands separators (`,` followed by exactly three digits), an optional decimal part.
/// `None` when there is no digit.
pub fn parse_number(text: &str) -> Option<f64> {
    let chars: Vec<char> = text.chars().collect();
    let start = chars.iter().position(|c| c.is_ascii_digit())?;
    let mut digits = String::new();
    if start > 0 && matches!(chars[start - 1], '-' | '−') {
        digits.push('-');
    }
    let mut i = start;
    while i < chars.len() {
        let c = chars[i];
        if c.is_ascii_digit() {
            digits.push(c);
            i += 1;
        } else if c == ','
            && chars.len() >= i + 4
            && chars[i + 1..i + 4].iter().all(char::is_ascii_digit)
            && chars.get(i + 4).is_none_or(|c| !c.is_ascii_digit())
        {
            i += 1;
        } else {
            break;
        }
    }
    if chars.get(i) == Some(&'.') && chars.get(i + 1).is_some_and(char::is_ascii_digit) {
        digits.push('.');
        i += 1;
        while let Some(c) = chars.get(i).filter(|c| c.is_ascii_digit()) {
            digits.push(*c);
            i += 1;
        }
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::parse_number;

    #[test]
    fn numbers_as_typed() {
        assert_eq!(parse_number("1,200"), Some(1200.0));
        assert_eq!(parse_number("2,363 (est.)"), Some(2363.0));
        assert_eq!(parse_number("12.5 kg"), Some(12.5));
        assert_eq!(parse_number("−3 °C"), Some(-3.0));
        assert_eq!(parse_number("about 40 ft"), Some(40.0));
        assert_eq!(parse_number("1,2345"), Some(1.0));
        assert_eq!(parse_number("12,400 (As of 2021)"), Some(12400.0));
        assert_eq!(parse_number("none"), None);
        assert_eq!(parse_number(""), None);
    }
}
