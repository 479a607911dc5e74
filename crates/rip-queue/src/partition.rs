//! Streams partitioned by host: every record of a URL goes to the subject of its host's
//! partition, so that the one worker owning that partition holds the host's politeness.
//!
//! A partitioned stream says how many partitions it has in its description
//! (`partitions=16`), written when `rip-queue push --partitions` creates it; every publisher
//! reads it from there, so a record of one host lands in one partition whoever publishes it.

use xxhash_rust::xxh3::xxh3_64;

/// The description of a stream with `n` partitions.
pub fn description(n: u32) -> String {
    format!("partitions={n}")
}

/// The partitions a stream's description names (0: not partitioned).
pub fn from_description(description: Option<&str>) -> u32 {
    description
        .and_then(|d| d.strip_prefix("partitions="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The partition of the record on `line` among `n`: by the host and port of its `url`
/// (lower-cased), partition 0 for a record without one.
pub fn of(line: &str, n: u32) -> u32 {
    if n == 0 {
        return 0;
    }
    let value: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    of_url(value.get("url").and_then(|u| u.as_str()), n)
}

/// The partition among `n` of a record whose URL is `url` (see [`of`]).
pub fn of_url(url: Option<&str>, n: u32) -> u32 {
    match url.and_then(host_key) {
        Some(host) if n > 0 => (xxh3_64(host.as_bytes()) % u64::from(n)) as u32,
        _ => 0,
    }
}

/// `host:port` of `url`, lower-cased, the port the scheme's default when absent.
pub fn host_key(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let host = parsed.host_str()?.to_ascii_lowercase();
    Some(format!(
        "{host}:{}",
        parsed.port_or_known_default().unwrap_or(0)
    ))
}

/// The owner of partition `p` among `members`: the member with the highest hash of
/// (member, partition). A member joining or leaving moves only the partitions it wins or
/// held (rendezvous hashing).
pub fn owner(members: &[String], p: u32) -> Option<&str> {
    members
        .iter()
        .max_by_key(|m| xxh3_64(format!("{m}/{p}").as_bytes()))
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_is_one_partition_whatever_the_path_case_or_default_port() {
        let line = |u: &str| format!(r#"{{"_type":"ref","url":"{u}"}}"#);
        let p = of(&line("http://Example.com/a"), 16);
        assert_eq!(of(&line("http://example.com:80/b?x"), 16), p);
        assert_eq!(of(r#"{"_type":"summary"}"#, 16), 0);
        assert_eq!(of(&line("http://example.com/a"), 0), 0);
    }

    #[test]
    fn partitions_spread_and_a_member_leaving_moves_only_its_own() {
        let three: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let two: Vec<String> = ["a", "c"].map(String::from).to_vec();
        let mut held_by_b = 0;
        for p in 0..64 {
            let before = owner(&three, p).unwrap();
            let after = owner(&two, p).unwrap();
            if before == "b" {
                held_by_b += 1;
            } else {
                assert_eq!(before, after, "partition {p} moved without cause");
            }
        }
        assert!((10..=35).contains(&held_by_b), "{held_by_b} of 64");
    }

    #[test]
    fn descriptions_round_trip() {
        assert_eq!(from_description(Some(&description(16))), 16);
        assert_eq!(from_description(None), 0);
        assert_eq!(from_description(Some("something else")), 0);
    }
}
