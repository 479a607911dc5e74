//! Compaction: the live entries to a new pack and index, then one rename (see the parent
//! module for the steps and why each is safe to interrupt).

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::snapshot::{PackReader, Snapshot, pack_files};
use super::{CompactOptions, CompactPhase, CompactReport, MaintainError, Problems, at};
use crate::cache::now_ms;
use crate::cache::pack::{INDEX, Loc, index_line, parse_line};

/// The new index while it is written.
const NEW_INDEX: &str = "index.compact";

pub(super) fn run(dir: &Path, options: &CompactOptions) -> Result<CompactReport, MaintainError> {
    let mut report = CompactReport {
        dir: dir.to_owned(),
        ..CompactReport::default()
    };
    let index_path = dir.join(INDEX);
    let index = match File::open(&index_path) {
        Ok(index) => index,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(report),
        Err(e) => return Err(at(&index_path)(e)),
    };
    let mut snap = Snapshot::default();
    snap.read_from(&index, &index_path)?;
    report.entries_before = snap.live.len() as u64;
    report.bytes_before = folder_bytes(dir)?;
    let tidy = is_tidy(&snap, dir)?;
    let mut out = Output::create(dir)?;
    copy_live(&snap, dir, &mut out, options, &mut report)?;
    if tidy && report.dropped_corrupt == 0 && report.dropped_old == 0 {
        // Every byte is a live entry that reads back: a rewrite would reclaim nothing
        // (and could only grow the index, its lines naming a longer pack), so the folder
        // stays as it is.
        out.discard();
        report.bytes_after = report.bytes_before;
        return Ok(report);
    }
    out.sync_pack()?;
    // Writers append holding the shared lock: once this is ours, none is half-way.
    index.lock().map_err(at(&index_path))?;
    phase(options, CompactPhase::Locked);
    let listed = pack_files(dir)?;
    let mut keep = copy_tail(&mut snap, &index, &index_path, &mut out, &mut report)?;
    if report.kept > 0 {
        keep.insert(out.name.clone());
    }
    out.install(dir)?;
    phase(options, CompactPhase::Renamed);
    for (name, _) in listed.iter().filter(|(name, _)| !keep.contains(name)) {
        match std::fs::remove_file(dir.join(name)) {
            Ok(()) => report.packs_removed += 1,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(at(&dir.join(name))(e)),
        }
    }
    report.bytes_after = folder_bytes(dir)?;
    Ok(report)
}

fn phase(options: &CompactOptions, phase: CompactPhase) {
    if let Some(at) = options.at {
        at(phase);
    }
}

/// Whether the folder holds nothing a compaction reclaims, as far as the index and the
/// packs' sizes tell (whether entries read back is for the copy to find): one index line
/// per live entry, each pack wholly live entries, no pack unnamed and none missing, and
/// no interrupted compaction's index left.
fn is_tidy(snap: &Snapshot, dir: &Path) -> Result<bool, MaintainError> {
    if snap.lines != snap.live.len() as u64 || dir.join(NEW_INDEX).exists() {
        return Ok(false);
    }
    let mut live: HashMap<&str, u64> = HashMap::new();
    for loc in snap.live.values() {
        *live.entry(snap.packs.name(loc.pack)).or_default() += u64::from(loc.len);
    }
    let listed = pack_files(dir)?;
    Ok(listed.len() == live.len()
        && listed
            .iter()
            .all(|(name, len)| live.get(name.as_str()) == Some(len)))
}

/// Copies each live entry that reads back and is young enough to `out`.
fn copy_live(
    snap: &Snapshot,
    dir: &Path,
    out: &mut Output,
    options: &CompactOptions,
    report: &mut CompactReport,
) -> Result<(), MaintainError> {
    let cutoff = options
        .older_than
        .map(|age| now_ms().saturating_sub(age.as_millis() as u64));
    let mut reader = PackReader::new(dir);
    let mut problems = Problems::default();
    let order = snap.in_pack_order();
    for (i, (key, loc)) in order.iter().enumerate() {
        if i == order.len() / 2 {
            phase(options, CompactPhase::Copying);
        }
        let entry = match reader.entry(snap, *key, *loc) {
            Ok(entry) => entry,
            Err(problem) => {
                report.dropped_corrupt += 1;
                problems.add(snap, *key, *loc, problem);
                continue;
            }
        };
        if cutoff.is_some_and(|cutoff| entry.meta.stored_at_ms < cutoff) {
            report.dropped_old += 1;
            continue;
        }
        out.push(*key, &entry.bytes)?;
        report.kept += 1;
    }
    // Before the old packs go: earlier entries there may name a problem's URL.
    report.problems = problems.finish(dir);
    Ok(())
}

/// Copies the lines appended to `index` since the snapshot as they are (their entries stay
/// where they are); returns the packs they name.
fn copy_tail(
    snap: &mut Snapshot,
    index: &File,
    index_path: &Path,
    out: &mut Output,
    report: &mut CompactReport,
) -> Result<HashSet<String>, MaintainError> {
    let before = snap.lines;
    let mut packs = HashSet::new();
    let mut written = Ok(());
    snap.end = crate::cache::pack::read_lines(index, snap.end, |line| {
        snap.lines += 1;
        let Some((_, name, _, _)) = parse_line(line) else {
            return;
        };
        packs.insert(name.to_owned());
        if written.is_ok() {
            written = out.line(line);
        }
    })
    .map_err(at(index_path))?;
    written.map_err(at(&out.index_path))?;
    report.appended_meanwhile = snap.lines - before;
    Ok(packs)
}

/// The new pack and index being written.
struct Output {
    name: String,
    pack_path: PathBuf,
    pack: BufWriter<File>,
    offset: u64,
    index_path: PathBuf,
    index: BufWriter<File>,
}

impl Output {
    fn create(dir: &Path) -> Result<Self, MaintainError> {
        let name = format!("c-{}-{:016x}.pack", std::process::id(), fastrand::u64(..));
        let pack_path = dir.join(&name);
        let index_path = dir.join(NEW_INDEX);
        let pack = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&pack_path)
            .map_err(at(&pack_path))?;
        // What an interrupted compaction left is replaced.
        let index = File::create(&index_path).map_err(at(&index_path))?;
        Ok(Self {
            name,
            pack_path,
            pack: BufWriter::with_capacity(1 << 20, pack),
            offset: 0,
            index_path,
            index: BufWriter::with_capacity(1 << 20, index),
        })
    }

    fn push(&mut self, key: u128, bytes: &[u8]) -> Result<(), MaintainError> {
        let loc = Loc {
            offset: self.offset,
            pack: 0,
            len: bytes.len() as u32,
        };
        self.pack.write_all(bytes).map_err(at(&self.pack_path))?;
        self.offset += bytes.len() as u64;
        let line = index_line(key, &self.name, loc);
        self.index
            .write_all(line.as_bytes())
            .map_err(at(&self.index_path))
    }

    fn line(&mut self, line: &[u8]) -> io::Result<()> {
        self.index.write_all(line)?;
        self.index.write_all(b"\n")
    }

    /// Removes the new pack and index, unused.
    fn discard(self) {
        let (pack, index) = (self.pack_path, self.index_path);
        drop((self.pack, self.index));
        // What cannot be removed is a pack no index names and a stray `index.compact`,
        // both removed by the next compaction.
        let _ = std::fs::remove_file(pack);
        let _ = std::fs::remove_file(index);
    }

    fn sync_pack(&mut self) -> Result<(), MaintainError> {
        self.pack.flush().map_err(at(&self.pack_path))?;
        self.pack.get_ref().sync_all().map_err(at(&self.pack_path))
    }

    /// Syncs the new index and renames it over the old one.
    fn install(mut self, dir: &Path) -> Result<(), MaintainError> {
        let path = self.index_path.clone();
        self.index.flush().map_err(at(&path))?;
        self.index.get_ref().sync_all().map_err(at(&path))?;
        std::fs::rename(&path, dir.join(INDEX)).map_err(at(&path))?;
        File::open(dir).and_then(|d| d.sync_all()).map_err(at(dir))
    }
}

/// Bytes of the folder's packs and index.
fn folder_bytes(dir: &Path) -> Result<u64, MaintainError> {
    let packs: u64 = pack_files(dir)?.iter().map(|(_, len)| len).sum();
    Ok(packs + std::fs::metadata(dir.join(INDEX)).map_or(0, |m| m.len()))
}
