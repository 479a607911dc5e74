//! The index read whole (the last line of each key), the folder's packs, and reading
//! entries back in pack order.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::xxh3_128;

use super::{CacheStats, EntryProblem, MaintainError, at, names};
use crate::cache::pack::{INDEX, Loc, PackNames, parse_line, read_lines, valid_pack_name};
use crate::cache::{CacheMeta, check_entry};

/// An index as read up to `end`.
#[derive(Debug, Default)]
pub(super) struct Snapshot {
    /// Pack names by id.
    pub packs: PackNames,
    /// Each key's last place.
    pub live: HashMap<u128, Loc>,
    /// Lines read, and lines that failed their check.
    pub lines: u64,
    pub bad_lines: u64,
    /// Bytes of the index read (whole lines).
    pub end: u64,
}

impl Snapshot {
    /// The index of `dir` as it is now (empty when there is none).
    pub fn of_folder(dir: &Path) -> Result<Self, MaintainError> {
        let path = dir.join(INDEX);
        let mut snap = Self::default();
        match File::open(&path) {
            Ok(index) => snap.read_from(&index, &path)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(at(&path)(e)),
        }
        Ok(snap)
    }

    /// Reads the lines of `index` (at `path`) past [`Self::end`].
    pub fn read_from(&mut self, index: &File, path: &Path) -> Result<(), MaintainError> {
        let end = read_lines(index, self.end, |line| {
            self.lines += 1;
            match parse_line(line) {
                Some((key, name, offset, len)) => {
                    let pack = self.packs.id(name);
                    self.live.insert(key, Loc { offset, pack, len });
                }
                None => self.bad_lines += 1,
            }
        })
        .map_err(at(path))?;
        self.end = end;
        Ok(())
    }

    /// The live entries sorted by pack and offset, to read each pack front to back.
    pub fn in_pack_order(&self) -> Vec<(u128, Loc)> {
        let mut all: Vec<_> = self.live.iter().map(|(k, l)| (*k, *l)).collect();
        all.sort_unstable_by_key(|(_, l)| (l.pack, l.offset));
        all
    }

    /// The stats of the folder `dir` this index is in.
    pub fn stats(&self, dir: &Path) -> Result<CacheStats, MaintainError> {
        let listed: HashMap<String, u64> = pack_files(dir)?.into_iter().collect();
        let named: HashSet<u32> = self.live.values().map(|l| l.pack).collect();
        let mut stats = CacheStats {
            dir: dir.to_owned(),
            entries: self.live.len() as u64,
            index_lines: self.lines,
            bad_index_lines: self.bad_lines,
            index_bytes: std::fs::metadata(dir.join(INDEX)).map_or(0, |m| m.len()),
            packs: listed.len() as u64,
            pack_bytes: listed.values().sum(),
            ..CacheStats::default()
        };
        for loc in self.live.values() {
            if listed.contains_key(self.packs.name(loc.pack)) {
                stats.live_bytes += u64::from(loc.len);
            } else {
                stats.entries_in_missing_packs += 1;
            }
        }
        let named_names: HashSet<&str> = named.iter().map(|id| self.packs.name(*id)).collect();
        stats.missing_packs = named_names
            .iter()
            .filter(|n| !listed.contains_key(**n))
            .count() as u64;
        stats.unreferenced_packs = listed
            .keys()
            .filter(|n| !named_names.contains(n.as_str()))
            .count() as u64;
        stats.reclaimable_bytes = stats.pack_bytes.saturating_sub(stats.live_bytes);
        Ok(stats)
    }
}

/// The pack files in `dir` and their sizes.
pub(super) fn pack_files(dir: &Path) -> Result<Vec<(String, u64)>, MaintainError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(at(dir)(e)),
    };
    let mut packs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(at(dir))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if !valid_pack_name(&name) {
            continue;
        }
        // A pack removed since the listing (a compaction elsewhere) is not there.
        if let Ok(meta) = entry.metadata() {
            packs.push((name, meta.len()));
        }
    }
    Ok(packs)
}

/// Reads entries back, one pack open at a time.
pub(super) struct PackReader<'a> {
    dir: &'a Path,
    open: Option<(u32, File)>,
}

/// An entry read back and checked: its bytes and metadata.
pub(super) struct ReadEntry {
    pub bytes: Vec<u8>,
    pub meta: CacheMeta,
}

impl<'a> PackReader<'a> {
    pub fn new(dir: &'a Path) -> Self {
        Self { dir, open: None }
    }

    /// The entry of `key` at `loc`, checked: whole metadata, a body of its length and
    /// hash, and a URL whose key is `key`.
    pub fn entry(
        &mut self,
        snap: &Snapshot,
        key: u128,
        loc: Loc,
    ) -> Result<ReadEntry, EntryProblem> {
        let path = self.dir.join(snap.packs.name(loc.pack));
        let place = format!("{}@{}", path.display(), loc.offset);
        let problem = |url: Option<String>, why: String| EntryProblem {
            place: place.clone(),
            url,
            why,
        };
        let bytes = self.read(loc, &path).map_err(|e| problem(None, e))?;
        let meta = match check_entry(&bytes) {
            Ok((meta, _)) => meta,
            Err(why) => return Err(problem(names::url_of(&bytes, key), why.to_string())),
        };
        if xxh3_128(meta.url.as_bytes()) != key {
            let why = "the index names this entry for another URL".to_owned();
            return Err(problem(Some(meta.url), why));
        }
        Ok(ReadEntry { bytes, meta })
    }

    fn read(&mut self, loc: Loc, path: &PathBuf) -> Result<Vec<u8>, String> {
        if self.open.as_ref().is_none_or(|(id, _)| *id != loc.pack) {
            let file = File::open(path).map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => "the pack is missing".to_owned(),
                _ => format!("cannot open the pack: {e}"),
            })?;
            self.open = Some((loc.pack, file));
        }
        let (_, file) = self.open.as_ref().expect("opened above");
        let mut bytes = vec![0; loc.len as usize];
        file.read_exact_at(&mut bytes, loc.offset)
            .map_err(|e| match e.kind() {
                io::ErrorKind::UnexpectedEof => {
                    "the pack ends before the entry does (cut short?)".to_owned()
                }
                _ => format!("cannot read: {e}"),
            })?;
        Ok(bytes)
    }
}
