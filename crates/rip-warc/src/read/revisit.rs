//! A `revisit` record: the response it stands for is the record it refers to (by
//! `WARC-Refers-To`, else by `WARC-Payload-Digest`), read again from the same file, its
//! URL and date the revisit's. When that record is not earlier in the same file (or the
//! input is stdin, which cannot be read twice), the revisit is an `expected`: a known
//! gap of the archive, not a failure of the site.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};

use chrono::{DateTime, Utc};
use rip_core::{Expected, ExpectedSource, Phase, Record};

use super::archive::RawRecord;
use super::header::Limits;
use super::pages::{Made, Origin, convert, target_uri};
use super::stage::{Reread, record_at};
use crate::record::field;

/// What the revisit `record` makes, given the offsets of the responses read before it.
pub(super) fn resolve(
    record: &RawRecord,
    origin: &Origin,
    reread: Option<&Reread>,
    originals: &HashMap<u64, u64>,
    hasher: &RandomState,
    limits: &Limits,
) -> Made {
    let url = target_uri(record).unwrap_or_default().to_owned();
    let refers_to = record.header.get(field::REFERS_TO);
    let digest = record.header.get(field::PAYLOAD_DIGEST);
    let found = reread.and_then(|reread| {
        let keys = [
            (field::RECORD_ID, refers_to),
            (field::PAYLOAD_DIGEST, digest),
        ];
        keys.into_iter().find_map(|(name, key)| {
            let key = key?;
            let offset = *originals.get(&hasher.hash_one(key))?;
            let original = record_at(reread, offset, limits)?;
            (original.header.get(name) == Some(key)).then_some(original)
        })
    });
    let Some(original) = found else {
        return unresolved(&url, refers_to.or(digest), reread.is_none());
    };
    let date = record
        .header
        .get(field::DATE)
        .and_then(|d| DateTime::parse_from_rfc3339(d).ok())
        .map(|d| d.with_timezone(&Utc));
    match convert(&original, origin, limits) {
        Made::Record(mut r) => {
            match r.as_mut() {
                Record::Page(p) => {
                    p.url.clone_from(&url);
                    p.final_url.clone_from(&url);
                    if let Some(date) = date {
                        p.fetched_at = date;
                    }
                }
                Record::Failure(f) => f.url.clone_from(&url),
                _ => {}
            }
            Made::Record(r)
        }
        other => other,
    }
}

fn unresolved(url: &str, refers_to: Option<&str>, stdin: bool) -> Made {
    let why = if stdin {
        "stdin cannot be read twice"
    } else {
        "it is not earlier in the same file"
    };
    let reason = format!(
        "a revisit of {}, whose body is not in the input: {why}",
        refers_to.unwrap_or("a record it does not name")
    );
    Made::Record(Box::new(Record::Expected(Expected {
        url: url.to_owned(),
        reason,
        source: Some(ExpectedSource::Other),
        rule: Some("warc.revisit".to_owned()),
        phase: Some(Phase::Fetch),
        status: None,
        attempt: 0,
        context: Default::default(),
        extra: Default::default(),
    })))
}
