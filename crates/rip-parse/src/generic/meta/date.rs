//! Dates as pages write them, normalised to ISO 8601 when they parse.
//!
//! Pages write dates in RFC 3339 (`2024-03-05T14:30:00Z`), its looser cousins (a space
//! for the `T`, no seconds, `+0100`), RFC 2822 (`Tue, 5 Mar 2024 14:30:00 +0000`),
//! slashes (`2024/03/05`) and words (`March 5, 2024`, `5 March 2024`). A date that
//! parses is written as ISO 8601 with what it gave: a date (`2024-03-05`), a local
//! time (`2024-03-05T14:30:00`) or a time with its offset (`2024-03-05T14:30:00+01:00`,
//! `Z` for UTC); one that does not is kept as the page wrote it.

use chrono::{DateTime, NaiveDate, NaiveDateTime, SecondsFormat};

/// `raw` as ISO 8601 when it parses, else `raw` trimmed; `None` when empty.
pub fn normalise(raw: &str) -> Option<String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return None;
    }
    Some(parse(raw).unwrap_or_else(|| raw.to_owned()))
}

fn parse(s: &str) -> Option<String> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.to_rfc3339_opts(SecondsFormat::AutoSi, true));
    }
    if let Ok(t) = DateTime::parse_from_rfc2822(s) {
        return Some(t.to_rfc3339_opts(SecondsFormat::AutoSi, true));
    }
    const ZONED: &[&str] = &[
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M%z",
        "%Y-%m-%dT%H:%M%:z",
        "%Y-%m-%d %H:%M:%S%.f%z",
        "%Y-%m-%d %H:%M:%S%.f %z",
        "%Y-%m-%d %H:%M:%S%.f%:z",
        "%Y-%m-%d %H:%M%z",
    ];
    for f in ZONED {
        if let Ok(t) = DateTime::parse_from_str(s, f) {
            return Some(t.to_rfc3339_opts(SecondsFormat::AutoSi, true));
        }
    }
    let s = s.strip_suffix(" UTC").map_or(s, str::trim_end);
    const LOCAL: &[&str] = &[
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y/%m/%d %H:%M:%S",
        "%Y/%m/%d %H:%M",
        "%B %d, %Y %I:%M %p",
        "%b %d, %Y %I:%M %p",
        "%B %d, %Y %H:%M",
        "%b %d, %Y %H:%M",
    ];
    for f in LOCAL {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(t.format("%Y-%m-%dT%H:%M:%S%.f").to_string());
        }
    }
    let weekday_less = s
        .trim_start_matches(|c: char| c.is_alphabetic() || c == ',')
        .trim_start();
    const DAYS: &[&str] = &[
        "%Y-%m-%d",
        "%Y/%m/%d",
        "%Y%m%d",
        "%B %d, %Y",
        "%b %d, %Y",
        "%b. %d, %Y",
        "%d %B %Y",
        "%d %b %Y",
        "%B %d %Y",
        "%b %d %Y",
        "%d. %B %Y",
    ];
    // A weekday before the date ("Tuesday, March 5, 2024") is left out; a date that
    // starts with its month would lose it too, so the date as written comes first.
    for s in [s, weekday_less] {
        for f in DAYS {
            if let Ok(d) = NaiveDate::parse_from_str(s, f) {
                return Some(d.format("%Y-%m-%d").to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::normalise;

    #[test]
    fn dates_in_the_forms_pages_write_them() {
        for (raw, want) in [
            ("2024-03-05T14:30:00Z", "2024-03-05T14:30:00Z"),
            ("2024-03-05T14:30:00+01:00", "2024-03-05T14:30:00+01:00"),
            (
                "2024-03-05T14:30:00.250-05:00",
                "2024-03-05T14:30:00.250-05:00",
            ),
            ("2024-03-05T14:30:00+0100", "2024-03-05T14:30:00+01:00"),
            ("2024-03-05T14:30+01:00", "2024-03-05T14:30:00+01:00"),
            ("2024-03-05 14:30:00 +0000", "2024-03-05T14:30:00Z"),
            ("2024-03-05 14:30:00", "2024-03-05T14:30:00"),
            ("2024-03-05T14:30", "2024-03-05T14:30:00"),
            ("2024-03-05 14:30:00 UTC", "2024-03-05T14:30:00"),
            ("Tue, 5 Mar 2024 14:30:00 +0000", "2024-03-05T14:30:00Z"),
            ("2024-03-05", "2024-03-05"),
            ("2024/03/05", "2024-03-05"),
            ("March 5, 2024", "2024-03-05"),
            ("Tuesday, March 5, 2024", "2024-03-05"),
            ("5 March 2024", "2024-03-05"),
            ("Mar 5, 2024", "2024-03-05"),
            ("Mar. 5, 2024", "2024-03-05"),
            (" 20240305 ", "2024-03-05"),
            ("March 5, 2024 2:30 PM", "2024-03-05T14:30:00"),
            ("yesterday", "yesterday"),
            ("5 mars 2024", "5 mars 2024"),
        ] {
            assert_eq!(normalise(raw).as_deref(), Some(want), "{raw}");
        }
        assert_eq!(normalise("  "), None);
    }
}
