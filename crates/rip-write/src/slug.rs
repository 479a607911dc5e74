//! File names for URLs: readable, collision-free, and unable to leave the output folder.
//!
//! The readable part follows the reference: the URL's path and query with every character
//! other than ASCII letters, digits, `.` and `_` turned into `-` (runs collapsed, leading
//! dots and dashes dropped), so `https://2e.aonprd.com/Feats.aspx?ID=750` becomes
//! `Feats.aspx-ID-750`. Such a name has no `/`, `\`, NUL or `..` component and is at most
//! [`MAX_READABLE`] bytes, whatever the URL holds.
//!
//! Several URLs can share a readable part (`/a?b` and `/a-b`; the same path on two hosts).
//! [`Slugs`] never lets one of them have it: every URL of a shared readable part is named
//! by it plus `~` and 16 hex digits of the URL's SHA-256 (`~` never appears in a readable
//! part, so a hashed name never equals a plain one). A URL's name therefore depends on the
//! set of URLs of the run, never on the order they arrive in: the first of two sharing
//! URLs gets the plain name until the second comes, and then its files move to its hashed
//! name ([`Assigned::moved`]). A name on disk from an earlier run keeps belonging to the
//! URL written in it (another URL takes a hashed name instead), and a URL that now shares
//! its readable part leaves no plain-named file of its own behind ([`Assigned::stale`]).

use rip_keystore::Store;
use sha2::{Digest, Sha256};

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
    hex16(&id_of(identity))
}

/// A URL as the names know it: the first 128 bits of its SHA-256.
type Id = [u8; 16];

pub(crate) fn id_of(identity: &str) -> Id {
    let mut id = [0; 16];
    id.copy_from_slice(&Sha256::digest(identity.as_bytes())[..16]);
    id
}

fn hex16(id: &Id) -> String {
    id[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The key of a name in [`Slugs`]: 128 bits of its SHA-256. Two names with one key (a
/// chance of n²/2¹²⁹) would only cost a URL its plain name: an entry that is not the
/// URL's own always sends it on to another name, never onto another URL's file.
fn name_key(name: &str) -> u128 {
    u128::from_be_bytes(id_of(name))
}

/// What [`Slugs::assign`] decided for a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assigned {
    /// The URL's slug: its files are `<slug>.json`, `<slug>.md`, `raw/<slug>.<ext>`.
    pub slug: String,
    /// Another URL of this run held the plain name this URL shares: its files, written
    /// under `from`, must now be renamed to `to`.
    pub moved: Option<Moved>,
    /// This URL's file of an earlier run under a plain name it no longer has (it now shares
    /// it): to remove, so that the URL has one file.
    pub stale: Option<String>,
}

impl Assigned {
    fn plain(slug: String) -> Self {
        Self {
            slug,
            moved: None,
            stale: None,
        }
    }
}

/// Files to rename from one slug to another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moved {
    /// The slug they were written under.
    pub from: String,
    /// The slug they now have.
    pub to: String,
}

/// Who a name belongs to in this run (19 bytes).
#[derive(Debug, Clone, Copy)]
enum Entry {
    /// A readable part: its one URL while it has one (and whether that URL holds the plain
    /// name, which a file of an earlier run may forbid), or `None` once URLs share it.
    Readable { alone: Option<Id>, held: bool },
    /// A hashed (or counted) name and its URL.
    Hashed(Id),
    /// A hashed name whose file on disk, from an earlier run, belongs to another URL.
    Foreign,
}

/// The slugs handed out in one run: each name by its `name_key`, in a `Store` (about
/// 35 bytes a name; the names themselves are not kept).
#[derive(Debug, Default)]
pub struct Slugs {
    names: Store<Entry>,
}

impl Slugs {
    /// The slug of `identity` (the URL a record accounts for). `on_disk(slug)` tells
    /// whether a file of that slug already exists and, if so, the identity written in it
    /// (`Some(None)`: a file that names none). The same identity always gets the same slug
    /// while no other identity shares its readable part; two identities never get the same
    /// one; and when this run's set of identities is the same, so are the slugs, whatever
    /// the order of the calls.
    pub fn assign(
        &mut self,
        identity: &str,
        mut on_disk: impl FnMut(&str) -> Option<Option<String>>,
    ) -> Assigned {
        let id = id_of(identity);
        let (base, plain) = readable(identity);
        let mut moved = None;
        let mut stale = None;
        if plain {
            let key = name_key(&base);
            let displaced = match self.names.get(key) {
                None => {
                    let held = disk_allows(&mut on_disk, &base, &id);
                    let alone = Some(id);
                    self.names.insert(key, Entry::Readable { alone, held });
                    if held {
                        return Assigned::plain(base);
                    }
                    None
                }
                Some(Entry::Readable { alone, held }) => match alone {
                    Some(first) if first == id => {
                        if held {
                            return Assigned::plain(base);
                        }
                        None
                    }
                    // The readable part is shared from now on: its first URL loses the
                    // plain name if it had it.
                    Some(first) => {
                        let shared = Entry::Readable {
                            alone: None,
                            held: false,
                        };
                        self.names.insert(key, shared);
                        held.then_some(first)
                    }
                    None => None,
                },
                Some(Entry::Hashed(_) | Entry::Foreign) => {
                    unreachable!("a readable part never holds `~`")
                }
            };
            if let Some(first) = displaced {
                let to = self.hashed(&base, first, &mut on_disk);
                moved = Some(Moved {
                    from: base.clone(),
                    to,
                });
            }
            let known = matches!(
                self.names.get(name_key(&format!("{base}~{}", hex16(&id)))),
                Some(Entry::Hashed(owner)) if owner == id
            );
            if !known && on_disk(&base).flatten().as_deref() == Some(identity) {
                stale = Some(base.clone());
            }
        }
        Assigned {
            slug: self.hashed(&base, id, &mut on_disk),
            moved,
            stale,
        }
    }

    /// The hashed name of `id` (counted past a 64-bit prefix collision), handed out to it
    /// if it has none yet.
    fn hashed(
        &mut self,
        base: &str,
        id: Id,
        on_disk: &mut impl FnMut(&str) -> Option<Option<String>>,
    ) -> String {
        let hashed = format!("{base}~{}", hex16(&id));
        let counted = (2u64..).map(|n| format!("{hashed}~{n}"));
        for slug in std::iter::once(hashed.clone()).chain(counted) {
            let key = name_key(&slug);
            match self.names.get(key) {
                Some(Entry::Hashed(owner)) if owner == id => return slug,
                Some(_) => continue,
                None => {}
            }
            if disk_allows(on_disk, &slug, &id) {
                self.names.insert(key, Entry::Hashed(id));
                return slug;
            }
            self.names.insert(key, Entry::Foreign);
        }
        unreachable!("an endless iterator of names")
    }
}

/// Whether `slug` is free on disk for `id`: no file, or a file of the same URL.
fn disk_allows(
    on_disk: &mut impl FnMut(&str) -> Option<Option<String>>,
    slug: &str,
    id: &Id,
) -> bool {
    match on_disk(slug) {
        None => true,
        Some(Some(owner)) => id_of(&owner) == *id,
        Some(None) => false,
    }
}

#[cfg(test)]
mod tests;
