//! Atomic file writes into the output folder: a temporary file in the same folder, then a
//! rename, so a reader (or a crash) never sees a half-written file.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Prefix of temporary files (never `*.json`, so folder readers skip them).
pub const TEMP_PREFIX: &str = ".rip-write-";

/// Writes `bytes` to `dir/name` atomically; with `sync`, the data reaches the disk before
/// the rename (durable across power loss, not only across a crash of this process).
/// Creates `dir` when missing. Files get mode 0644.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8], sync: bool) -> io::Result<PathBuf> {
    let mut tmp = match temp_in(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::create_dir_all(dir)?;
            temp_in(dir)?
        }
        other => other?,
    };
    tmp.write_all(bytes)?;
    if sync {
        tmp.as_file().sync_data()?;
    }
    let path = dir.join(name);
    tmp.persist(&path).map_err(|e| e.error)?;
    Ok(path)
}

/// Makes `dir` (when missing) and checks that a file can be written in it (one is made
/// and removed): what the run needs before it reads a record, so that a folder it cannot
/// create or write stops it at once instead of annotating every record.
pub fn check_writable(dir: &Path) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    temp_in(dir)?.close()
}

pub(crate) fn temp_in(dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    b.prefix(TEMP_PREFIX).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(fs::Permissions::from_mode(0o644));
    }
    b.tempfile_in(dir)
}

/// An append-only file built under a temporary name and renamed into place at the end
/// (JSONL mode): the previous complete file stays until the new one is complete.
pub struct Staged {
    tmp: tempfile::NamedTempFile,
    out: io::BufWriter<fs::File>,
    path: PathBuf,
}

impl Staged {
    /// Starts `dir/name`.
    pub fn create(dir: &Path, name: &str) -> io::Result<Self> {
        fs::create_dir_all(dir)?;
        let tmp = temp_in(dir)?;
        let out = io::BufWriter::new(tmp.as_file().try_clone()?);
        Ok(Self {
            tmp,
            out,
            path: dir.join(name),
        })
    }

    /// Appends one line.
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        self.out.write_all(text.as_bytes())?;
        self.out.write_all(b"\n")
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes (and with `sync`, syncs) and renames into place.
    pub fn commit(mut self, sync: bool) -> io::Result<PathBuf> {
        self.out.flush()?;
        if sync {
            self.tmp.as_file().sync_data()?;
        }
        self.tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replace_whole_files_and_leave_no_temp_behind() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("site");
        write_atomic(&sub, "a.json", b"{\"v\":1}\n", false).unwrap();
        write_atomic(&sub, "a.json", b"{\"v\":2}\n", true).unwrap();
        assert_eq!(
            fs::read_to_string(sub.join("a.json")).unwrap(),
            "{\"v\":2}\n"
        );
        let names: Vec<_> = fs::read_dir(&sub)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, ["a.json"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(sub.join("a.json"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o644);
        }
    }

    #[test]
    fn a_staged_file_appears_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("docs.jsonl"), "old\n").unwrap();
        let mut s = Staged::create(dir.path(), "docs.jsonl").unwrap();
        s.line("{\"a\":1}").unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("docs.jsonl")).unwrap(),
            "old\n"
        );
        s.commit(false).unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("docs.jsonl")).unwrap(),
            "{\"a\":1}\n"
        );
    }
}
