//! The cache's storage: entries appended to pack files, found through one shared index.
//!
//! - Each process that writes appends its entries to a pack file of its own,
//!   `<dir>/<pid>-<random>.pack`, opened once.
//! - After an entry's bytes are written, one line is appended to `<dir>/index` (opened
//!   `O_APPEND` by every writer, so lines from several processes do not interleave):
//!   `<key> <pack> <offset> <length> <check>`. The key is the URL's XXH3-128; the check
//!   is the XXH3-64 of the rest of the line, so a torn or altered line is skipped, never
//!   trusted.
//! - A reader keeps the index in memory (key → pack, offset, length; 32 bytes per entry
//!   plus the table's slack) and, before every lookup, reads the lines appended since
//!   (one `statx` when there are none). A line is only written once its entry is
//!   complete, so a reader sees an old entry or a new one, never half of one. The last
//!   line for a key wins.
//!
//! Appends with `O_APPEND` are whole on local filesystems; on NFS, lines of two writers can
//! interleave, and the checksums then reject them: those entries are misses, never wrong.
//!
//! Writing an entry costs two appends to open files. One file per URL cost an inode per
//! page, more kernel time than fetching and parsing the page (`docs/benchmarks-log.md`, the
//! crawl on 2026-12-02). A folder removed while in use is noticed (its index is gone) and
//! made again.
//!
//! Space of replaced entries is reclaimed by compaction (`rip-cache compact`, see
//! `maintain`), which writes the live entries to new packs and a new index, then renames
//! the new index over the old one. To let it do so while others use the folder:
//!
//! - a writer appends an entry and its line holding a shared `flock` on its open index,
//!   and first checks that neither that index nor its pack has been unlinked (else it
//!   starts afresh: new index handle, new pack);
//! - the compaction takes the exclusive lock on the index for its last step (the lines
//!   appended meanwhile, the rename, removing the old packs), so no writer is half-way
//!   through an append when the index is replaced or a pack removed;
//! - a reader whose index was replaced (its handle unlinked) reads the new one from the
//!   start, and one whose pack was removed before it opened it reads the index again.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use rip_keystore::Store;
use xxhash_rust::xxh3::{xxh3_64, xxh3_128};

/// Pack files kept open for reading at most; past this they are closed and reopened
/// as needed.
const MAX_OPEN_PACKS: usize = 256;

/// Where an entry's bytes are: 16 bytes, so a key and its place take 32 in a
/// [`Store`] (a million entries, ~36 MB; a hash map took 70-100 MB with its slack and its
/// growth, measured in rip-fetch at a million pages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Loc {
    pub offset: u64,
    pub pack: u32,
    pub len: u32,
}

/// The index's name in a cache folder.
pub(super) const INDEX: &str = "index";

/// Index bytes read at once: lines are handled as they come, so a large index costs this
/// much memory to read, not its size.
const READ_CHUNK: usize = 1 << 20;

#[derive(Debug)]
struct Writer {
    pack: u32,
    name: String,
    file: Arc<File>,
    offset: u64,
    index: File,
}

impl Writer {
    /// Appends an entry and its index line, holding the index's shared lock; `None`
    /// (nothing written) when the index or the pack has been unlinked (the folder was
    /// removed, or a compaction replaced the index and removed the pack).
    fn append(&mut self, key: u128, bytes: &[u8], len: u32) -> io::Result<Option<Loc>> {
        let _shared = SharedLock::take(&self.index)?;
        if unlinked(&self.index) || unlinked(&self.file) {
            return Ok(None);
        }
        let loc = Loc {
            pack: self.pack,
            offset: self.offset,
            len,
        };
        self.file.write_all_at(bytes, loc.offset)?;
        self.offset += u64::from(len);
        (&self.index).write_all(index_line(key, &self.name, loc).as_bytes())?;
        Ok(Some(loc))
    }
}

#[derive(Debug, Default)]
struct State {
    map: Store<Loc>,
    /// Pack names by id, and the open ones.
    packs: PackNames,
    open: HashMap<u32, Arc<File>>,
    /// The index as read so far: the open file and the offset of the first unread line.
    reader: Option<(File, u64)>,
    writer: Option<Writer>,
    /// Malformed index lines skipped.
    bad_lines: u64,
    /// The buffer index lines are read into, kept between lookups.
    line_buf: Vec<u8>,
}

/// The entries' bytes as stored, and where (for messages).
pub(crate) struct Found {
    pub bytes: Vec<u8>,
    pub place: String,
}

/// The pack store of one cache folder.
#[derive(Debug)]
pub(crate) struct PackStore {
    dir: PathBuf,
    state: Mutex<State>,
}

pub(super) fn unlinked(f: &File) -> bool {
    f.metadata().is_ok_and(|m| m.nlink() == 0)
}

/// A pack name as written in the index: a plain file name, nothing that leaves the folder.
pub(super) fn valid_pack_name(name: &str) -> bool {
    name.ends_with(".pack")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !name.starts_with('.')
}

impl PackStore {
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            state: Mutex::new(State::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves a state that is still consistent enough
        // to read (at worst an entry is missing): go on rather than poison every fetch.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The folder.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    fn index_path(&self) -> PathBuf {
        self.dir.join(INDEX)
    }

    /// The stored bytes of `url`'s latest entry.
    pub fn get(&self, url: &str) -> io::Result<Option<Found>> {
        match self.get_once(url) {
            // A compaction removed the pack after we read where the entry was: the index
            // that replaced ours says where it is now.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                *self.lock() = State::default();
                self.get_once(url)
            }
            found => found,
        }
    }

    fn get_once(&self, url: &str) -> io::Result<Option<Found>> {
        let key = xxh3_128(url.as_bytes());
        let (loc, file, name) = {
            let mut st = self.lock();
            // Every lookup first reads what other processes appended (one `fstat` when
            // nothing was), so it sees their latest entry, as a file per URL did.
            self.catch_up(&mut st)?;
            let Some(loc) = st.map.get(key) else {
                return Ok(None);
            };
            let file = self.pack_file(&mut st, loc.pack)?;
            (loc, file, st.packs.name(loc.pack).to_owned())
        };
        let place = format!("{}@{}", self.dir.join(&name).display(), loc.offset);
        let mut bytes = vec![0; loc.len as usize];
        match file.read_exact_at(&mut bytes, loc.offset) {
            Ok(()) => Ok(Some(Found { bytes, place })),
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Err(io::Error::new(
                e.kind(),
                format!("{place}: the pack ends before the entry does (cut short?)"),
            )),
            Err(e) => Err(io::Error::new(e.kind(), format!("{place}: {e}"))),
        }
    }

    /// Where `url`'s latest entry is: the pack file, offset and length.
    pub fn location(&self, url: &str) -> io::Result<Option<(PathBuf, u64, u64)>> {
        let key = xxh3_128(url.as_bytes());
        let mut st = self.lock();
        self.catch_up(&mut st)?;
        Ok(st.map.get(key).map(|l| {
            (
                self.dir.join(st.packs.name(l.pack)),
                l.offset,
                u64::from(l.len),
            )
        }))
    }

    /// Appends `bytes` as `url`'s entry.
    pub fn put(&self, url: &str, bytes: &[u8]) -> io::Result<()> {
        let key = xxh3_128(url.as_bytes());
        let len = u32::try_from(bytes.len()).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a cache entry of {} bytes is past the 4 GiB limit",
                    bytes.len()
                ),
            )
        })?;
        let mut st = self.lock();
        loop {
            if st.writer.is_none() {
                self.open_writer(&mut st)?;
            }
            let w = st.writer.as_mut().expect("opened above");
            match w.append(key, bytes, len)? {
                Some(loc) => {
                    st.map.insert(key, loc);
                    return Ok(());
                }
                // The folder was removed or compacted under us: what we knew of it may
                // be gone with it. Start afresh.
                None => *st = State::default(),
            }
        }
    }

    fn open_writer(&self, st: &mut State) -> io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let index = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.index_path())?;
        let name = format!("{}-{:016x}.pack", std::process::id(), fastrand::u64(..));
        let file = Arc::new(
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(self.dir.join(&name))?,
        );
        let pack = st.packs.id(&name);
        st.open.insert(pack, file.clone());
        st.writer = Some(Writer {
            pack,
            name,
            file,
            offset: 0,
            index,
        });
        Ok(())
    }

    fn pack_file(&self, st: &mut State, pack: u32) -> io::Result<Arc<File>> {
        if let Some(f) = st.open.get(&pack) {
            return Ok(f.clone());
        }
        if st.open.len() >= MAX_OPEN_PACKS {
            let keep = st.writer.as_ref().map(|w| (w.pack, w.file.clone()));
            st.open.clear();
            st.open.extend(keep);
        }
        let path = self.dir.join(st.packs.name(pack));
        let f = Arc::new(
            File::open(&path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?,
        );
        st.open.insert(pack, f.clone());
        Ok(f)
    }

    /// Reads the index lines appended since the last look.
    fn catch_up(&self, st: &mut State) -> io::Result<()> {
        // The index's length, when the open reader's look at it stands.
        let mut known_len = None;
        if let Some((f, offset)) = &st.reader {
            let m = f.metadata()?;
            if m.nlink() > 0 && m.len() == *offset {
                return Ok(());
            }
            if m.nlink() == 0 || m.len() < *offset {
                // The folder was removed, or the index cut short: what we knew of it
                // went with it (our pack too: the next write starts a new one).
                *st = State::default();
            } else {
                known_len = Some(m.len());
            }
        }
        if st.reader.is_none() {
            match File::open(self.index_path()) {
                Ok(f) => st.reader = Some((f, 0)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        let (file, start) = st.reader.take().expect("opened above");
        let len = match known_len {
            Some(len) => len,
            None => file.metadata()?.len(),
        };
        let mut bad = 0u64;
        let mut buf = std::mem::take(&mut st.line_buf);
        let end = read_lines_into(&file, start, len, &mut buf, |line| match parse_line(line) {
            Some((key, name, offset, len)) => {
                let pack = st.packs.id(name);
                st.map.insert(key, Loc { pack, offset, len });
            }
            None => bad += 1,
        });
        st.line_buf = buf;
        st.reader = Some((file, end.as_ref().map_or(start, |end| *end)));
        end?;
        if bad > 0 {
            st.bad_lines += bad;
            tracing::warn!(
                "cache index {}: skipped {bad} malformed line(s) ({} so far)",
                self.index_path().display(),
                st.bad_lines
            );
        }
        Ok(())
    }
}

/// A shared `flock` on an index, held while appending (a compaction takes it exclusive).
struct SharedLock<'a>(&'a File);

impl<'a> SharedLock<'a> {
    fn take(index: &'a File) -> io::Result<Self> {
        index.lock_shared()?;
        Ok(Self(index))
    }
}

impl Drop for SharedLock<'_> {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Calls `each` with every whole line of `file` from `offset` on (without its newline),
/// reading up to [`READ_CHUNK`] bytes at a time; returns the offset after the last whole
/// line (a line being written is read next time).
pub(super) fn read_lines(file: &File, offset: u64, each: impl FnMut(&[u8])) -> io::Result<u64> {
    let len = file.metadata()?.len();
    read_lines_into(file, offset, len, &mut Vec::new(), each)
}

/// [`read_lines`] of a file `len` bytes long (as last seen: it may have grown since)
/// with the caller's buffer, grown to what the file holds past `offset` and kept: a
/// process catching up with the few lines it has just appended itself (every cache lookup
/// after a store) reads a few hundred bytes, and a new buffer of [`READ_CHUNK`] each time
/// cost a megabyte allocated and zeroed per lookup (3–5% of rip-discover's samples on the
/// Rust documentation).
fn read_lines_into(
    file: &File,
    offset: u64,
    len: u64,
    buf: &mut Vec<u8>,
    mut each: impl FnMut(&[u8]),
) -> io::Result<u64> {
    let need = buffer_for(len.saturating_sub(offset));
    if buf.len() < need {
        buf.resize(need, 0);
    }
    let (mut done, mut filled) = (offset, 0usize);
    loop {
        if filled == buf.len() {
            // One line longer than the buffer: no valid line is; grow to read past it.
            buf.resize(buf.len() * 2, 0);
        }
        let n = file.read_at(&mut buf[filled..], done + filled as u64)?;
        if n == 0 {
            return Ok(done);
        }
        filled += n;
        let Some(last) = buf[..filled].iter().rposition(|&b| b == b'\n') else {
            continue;
        };
        buf[..last].split(|&b| b == b'\n').for_each(&mut each);
        buf.copy_within(last + 1..filled, 0);
        filled -= last + 1;
        done += last as u64 + 1;
    }
}

/// The read buffer for `waiting` bytes: room for them and a little growth, at most
/// [`READ_CHUNK`] (a longer line doubles it as it reads).
fn buffer_for(waiting: u64) -> usize {
    let want = usize::try_from(waiting).unwrap_or(READ_CHUNK);
    want.saturating_add(want / 4).clamp(4096, READ_CHUNK)
}

/// Pack names by a small id (an index line names its pack; a [`Loc`] holds the id).
#[derive(Debug, Default)]
pub(super) struct PackNames {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl PackNames {
    /// The id of `name`, given one if it has none.
    pub fn id(&mut self, name: &str) -> u32 {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        id
    }

    /// The name of `id`.
    pub fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }
}

pub(super) fn index_line(key: u128, pack: &str, loc: Loc) -> String {
    let body = format!("{key:032x} {pack} {} {}", loc.offset, loc.len);
    format!("{body} {:016x}\n", xxh3_64(body.as_bytes()))
}

pub(super) fn parse_line(line: &[u8]) -> Option<(u128, &str, u64, u32)> {
    let line = std::str::from_utf8(line).ok()?;
    let (body, check) = line.rsplit_once(' ')?;
    if u64::from_str_radix(check, 16).ok()? != xxh3_64(body.as_bytes()) {
        return None;
    }
    let mut parts = body.split(' ');
    let key = u128::from_str_radix(parts.next()?, 16).ok()?;
    let pack = parts.next().filter(|p| valid_pack_name(p))?;
    let offset = parts.next()?.parse().ok()?;
    let len = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((key, pack, offset, len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_lines_round_trip_and_reject_tampering() {
        let loc = Loc {
            pack: 0,
            offset: 12,
            len: 34,
        };
        let line = index_line(7, "1-ab.pack", loc);
        let parsed = parse_line(line.trim_end().as_bytes()).unwrap();
        assert_eq!(parsed, (7, "1-ab.pack", 12, 34));
        let tampered = line.replace(" 34 ", " 35 ");
        assert_eq!(parse_line(tampered.trim_end().as_bytes()), None);
        assert_eq!(parse_line(b"garbage"), None);
        // A pack name that would leave the folder is refused even with a valid check.
        let evil = index_line(7, "../x.pack", loc);
        assert_eq!(parse_line(evil.trim_end().as_bytes()), None);
    }

    #[test]
    fn lines_are_read_whole_whatever_the_buffer_starts_at() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index");
        let long = "x".repeat(3 * 4096 + 17);
        let lines = ["a", "", long.as_str(), "b", "tail"];
        let mut f = File::create(&path).unwrap();
        f.write_all(format!("{}\npartial", lines.join("\n")).as_bytes())
            .unwrap();
        let file = File::open(&path).unwrap();
        for offset in [0, 2] {
            let mut got = Vec::new();
            let end = read_lines(&file, offset, |l| got.push(l.to_vec())).unwrap();
            let want: Vec<&str> = lines[offset as usize / 2..].to_vec();
            assert_eq!(got, want.iter().map(|l| l.as_bytes()).collect::<Vec<_>>());
            assert_eq!(
                end,
                (lines.join("\n").len() + 1) as u64,
                "the partial line waits"
            );
        }
        assert_eq!(buffer_for(0), 4096);
        assert_eq!(buffer_for(10_000), 12_500);
        assert_eq!(buffer_for(u64::MAX), READ_CHUNK);
    }

    #[test]
    fn two_stores_see_each_others_entries_and_the_last_write_wins() {
        let dir = tempfile::tempdir().unwrap();
        let a = PackStore::new(dir.path().to_owned());
        let b = PackStore::new(dir.path().to_owned());
        assert!(a.get("http://x/").unwrap().is_none());
        a.put("http://x/", b"from a").unwrap();
        assert_eq!(b.get("http://x/").unwrap().unwrap().bytes, b"from a");
        b.put("http://x/", b"from b").unwrap();
        // Every lookup reads what the other store appended since.
        assert_eq!(a.get("http://x/").unwrap().unwrap().bytes, b"from b");
        a.put("http://y/", b"y").unwrap();
        assert_eq!(b.get("http://y/").unwrap().unwrap().bytes, b"y");
        let fresh = PackStore::new(dir.path().to_owned());
        assert_eq!(fresh.get("http://x/").unwrap().unwrap().bytes, b"from b");
    }

    #[test]
    fn an_index_cut_short_is_read_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let a = PackStore::new(dir.path().to_owned());
        a.put("http://x/", b"x").unwrap();
        a.put("http://y/", b"y").unwrap();
        assert!(a.get("http://y/").unwrap().is_some());
        let index = dir.path().join("index");
        let text = std::fs::read_to_string(&index).unwrap();
        let first = text.lines().next().unwrap();
        std::fs::write(&index, format!("{first}\n")).unwrap();
        assert!(
            a.get("http://y/").unwrap().is_none(),
            "forgotten with its line"
        );
        assert_eq!(a.get("http://x/").unwrap().unwrap().bytes, b"x");
        a.put("http://z/", b"z").unwrap();
        let b = PackStore::new(dir.path().to_owned());
        assert_eq!(b.get("http://z/").unwrap().unwrap().bytes, b"z");
    }

    #[test]
    fn a_half_written_index_line_waits_and_a_bad_one_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let a = PackStore::new(dir.path().to_owned());
        a.put("http://x/", b"x").unwrap();
        let index = dir.path().join("index");
        let mut f = OpenOptions::new().append(true).open(&index).unwrap();
        f.write_all(b"not a line\n").unwrap();
        let line = index_line(
            xxh3_128(b"http://z/"),
            "9-z.pack",
            Loc {
                pack: 0,
                offset: 0,
                len: 1,
            },
        );
        let (head, tail) = line.split_at(10);
        f.write_all(head.as_bytes()).unwrap();
        let b = PackStore::new(dir.path().to_owned());
        assert_eq!(b.get("http://x/").unwrap().unwrap().bytes, b"x");
        assert_eq!(b.lock().bad_lines, 1);
        f.write_all(tail.as_bytes()).unwrap();
        std::fs::write(dir.path().join("9-z.pack"), b"z").unwrap();
        assert_eq!(b.get("http://z/").unwrap().unwrap().bytes, b"z");
    }
}
