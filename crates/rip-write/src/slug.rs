//! File names for URLs: readable, collision-free, and unable to leave the output folder.
//!
//! The readable part follows the reference: the URL's path and query with every character
//! other than ASCII letters, digits, `.` and `_` turned into `-` (runs collapsed, leading
//! dots and dashes dropped), so `https://2e.aonprd.com/Feats.aspx?ID=750` becomes
//! `Feats.aspx-ID-750`. Such a name has no `/`, `\`, NUL or `..` component and is at most
//! [`MAX_READABLE`] bytes, whatever the URL holds.
//!
//! Several URLs can share a readable part (`/a?b` and `/a-b`; the same path on two hosts).
//! [`Slugs`] gives the first URL of a run the plain name and later ones the name plus
//! `~` and 16 hex digits of the URL's SHA-256 (`~` never appears in a readable part, so a
//! hashed name never equals a plain one). A name already on disk from an earlier run keeps
//! belonging to the URL written in it, so names are stable from run to run.

use sha2::{Digest, Sha256};
use std::collections::HashMap;

/// The longest readable part, in bytes; a longer one is cut and always hashed.
pub const MAX_READABLE: usize = 120;

/// Readable parts that would clash with the files `rip-write` writes itself.
const RESERVED: &[&str] = &[
    "failures",
    "crawl-health",
    "raw",
    "docs",
    "errors",
    "expected",
];

/// The readable part of a URL's file name, and whether it may be used alone (it was not
/// cut and is not reserved). Two URLs can still share it: see [`Slugs`].
pub fn readable(url: &str) -> (String, bool) {
    let rest = match url.find("://") {
        Some(i) => {
            let after = &url[i + 3..];
            match after.find(['/', '?', '#']) {
                Some(j) => &after[j..],
                None => "",
            }
        }
        None => url,
    };
    let mut out = String::with_capacity(rest.len().min(MAX_READABLE + 1));
    let mut dash = false;
    for c in rest.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            if dash && !out.is_empty() {
                out.push('-');
            }
            dash = false;
            out.push(c);
        } else {
            dash = true;
        }
        if out.len() > MAX_READABLE {
            break;
        }
    }
    let trimmed = out.trim_start_matches(['.', '-']);
    let mut name = if trimmed.is_empty() {
        "index".to_owned()
    } else {
        trimmed.to_owned()
    };
    let mut plain = true;
    if name.len() > MAX_READABLE {
        name.truncate(MAX_READABLE);
        plain = false;
    }
    if RESERVED.iter().any(|r| name.eq_ignore_ascii_case(r)) {
        plain = false;
    }
    (name, plain)
}

/// 16 hex digits of the SHA-256 of `identity`.
pub fn hash16(identity: &str) -> String {
    let digest = Sha256::digest(identity.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The slugs handed out in one run: slug → the SHA-256 of the URL that owns it.
#[derive(Debug, Default)]
pub struct Slugs {
    owners: HashMap<String, [u8; 32]>,
}

impl Slugs {
    /// The slug of `identity` (the URL a record accounts for). `on_disk(slug)` tells
    /// whether a file of that slug already exists and, if so, the identity written in it
    /// (`Some(None)`: a file that names none). The same identity always gets the same slug
    /// within a run, and two identities never get the same one.
    pub fn assign(
        &mut self,
        identity: &str,
        mut on_disk: impl FnMut(&str) -> Option<Option<String>>,
    ) -> String {
        let id: [u8; 32] = Sha256::digest(identity.as_bytes()).into();
        let (base, plain) = readable(identity);
        let hashed = format!("{base}~{}", hash16(identity));
        let counted = (2u64..).map(|n| format!("{hashed}~{n}"));
        let names = plain
            .then(|| base.clone())
            .into_iter()
            .chain(std::iter::once(hashed.clone()))
            .chain(counted);
        for slug in names {
            match self.owners.get(&slug) {
                Some(owner) if *owner == id => return slug,
                Some(_) => continue,
                None => {}
            }
            // Not handed out in this run: a file from an earlier run may own it.
            let free = match on_disk(&slug) {
                None => true,
                Some(Some(owner)) => owner == identity,
                Some(None) => false,
            };
            if free {
                self.owners.insert(slug.clone(), id);
                return slug;
            }
        }
        unreachable!("an endless iterator of names")
    }
}

#[cfg(test)]
mod tests;
