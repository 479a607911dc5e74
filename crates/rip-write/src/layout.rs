//! Where a record's files go in the output folder: directly in it (flat), or in one of 256
//! shards (sharded).
//!
//! - **Flat** (the default): `<dir>/<slug>.json`, `<dir>/<slug>.md`,
//!   `<dir>/raw/<slug>.<ext>`.
//! - **Sharded**: `<dir>/<shard>/<slug>.json`, `<dir>/<shard>/<slug>.md`,
//!   `<dir>/raw/<shard>/<slug>.<ext>`, where `<shard>` is the first two hex digits of the
//!   SHA-256 of the slug's readable part (the name before any `~`: [`shard`]). All the
//!   URLs sharing a readable part share a shard, so a file renamed to its hashed name
//!   stays in its shard, and a file name is still unique in the whole folder. A million
//!   records make 256 folders of ~3,900 files each.
//!
//! A flat folder of a million files works on ext4 (its hashed directory index), but
//! `ls` takes seconds and hundreds of MB, a shell glob over it exceeds the argument limit,
//! and without the `large_dir` feature ext4's index stops at about ten million names
//! (`docs/benchmarks-log.md`, the output folder at size). The readers (`rip_core::folder`)
//! read both layouts, and a folder holding both.
//!
//! A folder keeps its layout: without a layout asked for, `rip-write` writes in the one
//! the folder has (sharded when it has a shard), and a layout asked for that the folder's
//! record files contradict is refused ([`Layout::check`]), as the files of the other
//! layout would stay beside the new ones, a URL counted twice.

use rip_core::folder::{REPORT_FILES, is_shard};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// How record files are laid out in the folder (see the module docs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Layout {
    /// Every record file directly in the folder.
    #[default]
    Flat,
    /// Record files in 256 sub-folders named by two hex digits.
    Sharded,
}

/// The shard of `slug`: two lowercase hex digits of the SHA-256 of its readable part.
pub fn shard(slug: &str) -> String {
    let readable = slug.split('~').next().unwrap_or(slug);
    format!("{:02x}", Sha256::digest(readable.as_bytes())[0])
}

/// A layout that would mix with the folder's record files of the other one.
#[derive(Debug, thiserror::Error)]
#[error(
    "{} holds {found} record files (e.g. {}); writing --layout {wanted} there would leave \
     them beside the new ones, each URL counted twice (hint: write to another folder, or \
     leave out --layout to keep the folder's)",
    dir.display(),
    example.display()
)]
pub struct Mixed {
    /// The folder.
    pub dir: PathBuf,
    /// The layout asked for.
    pub wanted: &'static str,
    /// The layout found.
    pub found: &'static str,
    /// A record file (or shard) of the layout found.
    pub example: PathBuf,
}

impl Layout {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Flat => "flat",
            Self::Sharded => "sharded",
        }
    }

    /// The layout to write in `dir`: `wanted`, or the folder's own (flat for a new one).
    /// Refused when `wanted` contradicts the record files already there.
    pub fn check(dir: &Path, wanted: Option<Layout>) -> Result<Layout, Mixed> {
        let found = |layout: Layout| match layout {
            Self::Flat => a_flat_record(dir),
            Self::Sharded => a_shard(dir),
        };
        let Some(wanted) = wanted else {
            return Ok(match a_shard(dir) {
                Some(_) => Self::Sharded,
                None => Self::Flat,
            });
        };
        let other = match wanted {
            Self::Flat => Self::Sharded,
            Self::Sharded => Self::Flat,
        };
        match found(other) {
            None => Ok(wanted),
            Some(example) => Err(Mixed {
                dir: dir.to_owned(),
                wanted: wanted.name(),
                found: other.name(),
                example,
            }),
        }
    }

    /// The folder `slug`'s record files go to, in `dir`.
    pub fn folder(self, dir: &Path, slug: &str) -> PathBuf {
        match self {
            Self::Flat => dir.to_owned(),
            Self::Sharded => dir.join(shard(slug)),
        }
    }

    /// The path of `slug`'s `name` (its file name with an extension) relative to the
    /// folder: `name`, or `<shard>/name`.
    pub fn relative(self, slug: &str, name: &str) -> String {
        match self {
            Self::Flat => name.to_owned(),
            Self::Sharded => format!("{}/{name}", shard(slug)),
        }
    }
}

/// A shard of `dir` holding something, if any (256 lookups: no listing of a large folder).
fn a_shard(dir: &Path) -> Option<PathBuf> {
    (0..=255u8)
        .map(|b| dir.join(format!("{b:02x}")))
        .find(|p| std::fs::read_dir(p).is_ok_and(|mut it| it.next().is_some()))
}

/// A record file directly in `dir`, if any (the listing stops at the first).
fn a_flat_record(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .find(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.ends_with(".json")
                && !REPORT_FILES.contains(&name.as_ref())
                && !is_shard(&name)
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|e| e.path())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_sharing_a_readable_part_share_a_shard() {
        let s = shard("Feats.aspx-ID-750");
        assert!(is_shard(&s), "{s}");
        assert_eq!(shard("Feats.aspx-ID-750~0123456789abcdef"), s);
        assert_eq!(shard("Feats.aspx-ID-750~0123456789abcdef~2"), s);
        // printf %s Feats.aspx-ID-750 | sha256sum | cut -c1-2
        assert_eq!(
            s,
            format!("{:02x}", Sha256::digest(b"Feats.aspx-ID-750")[0])
        );
        let shards: std::collections::HashSet<String> = (0..5000)
            .map(|i| shard(&format!("items-item-{i}.html")))
            .collect();
        assert_eq!(shards.len(), 256, "names spread over every shard");
    }

    #[test]
    fn a_folder_keeps_its_layout() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let check = |wanted| Layout::check(dir, wanted).map_err(|e| e.to_string());
        assert_eq!(check(None), Ok(Layout::Flat), "a new folder");
        assert_eq!(check(Some(Layout::Sharded)), Ok(Layout::Sharded));
        std::fs::write(dir.join("failures.json"), "{}").unwrap();
        std::fs::create_dir(dir.join("raw")).unwrap();
        std::fs::create_dir(dir.join("3f")).unwrap();
        assert_eq!(check(Some(Layout::Sharded)), Ok(Layout::Sharded), "reports");
        assert_eq!(check(None), Ok(Layout::Flat), "an empty shard is nothing");
        std::fs::write(dir.join("3f/a.json"), "{}").unwrap();
        assert_eq!(check(None), Ok(Layout::Sharded));
        let err = check(Some(Layout::Flat)).unwrap_err();
        assert!(
            err.contains("holds sharded record files (e.g. ") && err.contains("--layout flat"),
            "{err}"
        );
        std::fs::remove_dir_all(dir.join("3f")).unwrap();
        std::fs::write(dir.join("a.json"), "{}").unwrap();
        assert_eq!(check(None), Ok(Layout::Flat));
        let err = check(Some(Layout::Sharded)).unwrap_err();
        assert!(err.contains("holds flat record files (e.g. "), "{err}");
        assert!(err.contains("a.json"), "{err}");
    }
}
