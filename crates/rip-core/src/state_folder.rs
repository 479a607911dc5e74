//! A `--state DIR` folder: what a resumable run keeps between its runs.
//!
//! Both of rip-discover's journals (the crawl's, and the MediaWiki listing's of
//! `rip-wikilist`) live in such a folder. It holds `params.json` (what defines the run: a
//! different command on the same folder is refused, [`StateError::Mismatch`]), a `lock`
//! (one process per folder, [`StateError::Locked`]), and the run's append-only journal,
//! opened with [`open_append`] so that a line torn by a kill does not glue itself to the
//! next one. The messages name rip-discover, the one program that keeps state folders.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What a state folder could not do.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// An I/O error on a file of the folder.
    #[error("state folder {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Another process holds the folder.
    #[error(
        "state folder {0} is in use by another rip-discover (hint: wait for it, or use another --state folder)"
    )]
    Locked(PathBuf),
    /// The folder belongs to a different crawl.
    #[error(
        "state folder {path} belongs to a different crawl: it was started with {was}, this command asks for {now} (hint: rerun the same command to resume, or use a new --state folder)"
    )]
    Mismatch {
        /// The folder.
        path: PathBuf,
        /// Its parameters.
        was: String,
        /// This command's.
        now: String,
    },
}

/// The [`StateError::Io`] of an I/O error on `path`, for `map_err`.
pub fn io_err(path: &Path) -> impl FnOnce(io::Error) -> StateError + '_ {
    move |source| StateError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Opens (or creates) a state folder: takes its lock (returned: held while the file is
/// open) and checks `params` against the folder's `params.json` (written when new).
pub fn open_folder(dir: &Path, params: &str) -> Result<File, StateError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let lock_path = dir.join("lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io_err(&lock_path))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(StateError::Locked(dir.to_owned()));
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(io_err(&lock_path)(e)),
    }
    let params_path = dir.join("params.json");
    match std::fs::read_to_string(&params_path) {
        Ok(was) if was.trim() != params.trim() => {
            return Err(StateError::Mismatch {
                path: dir.to_owned(),
                was: was.trim().to_owned(),
                now: params.trim().to_owned(),
            });
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let tmp = dir.join("params.json.tmp");
            std::fs::write(&tmp, params).map_err(io_err(&tmp))?;
            std::fs::rename(&tmp, &params_path).map_err(io_err(&params_path))?;
        }
        Err(e) => return Err(io_err(&params_path)(e)),
    }
    Ok(lock)
}

/// A journal file opened to append, a torn last line ended first (so that it does not
/// glue itself to the next one).
pub fn open_append(path: &Path) -> Result<File, StateError> {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_err(path))?;
    if file.metadata().map(|m| m.len()).unwrap_or(0) > 0 && !ends_with_newline(path) {
        file.write_all(b"\n").map_err(io_err(path))?;
    }
    Ok(file)
}

fn ends_with_newline(path: &Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = File::open(path) else {
        return true;
    };
    if f.seek(SeekFrom::End(-1)).is_err() {
        return true;
    }
    let mut b = [0u8; 1];
    f.read_exact(&mut b).is_err() || b[0] == b'\n'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_process_per_folder_and_one_run_per_folder() {
        let dir = tempfile::tempdir().unwrap();
        let lock = open_folder(dir.path(), "{\"a\":1}").unwrap();
        assert!(matches!(
            open_folder(dir.path(), "{\"a\":1}"),
            Err(StateError::Locked(_))
        ));
        drop(lock);
        drop(open_folder(dir.path(), "{\"a\":1}\n").unwrap());
        let err = open_folder(dir.path(), "{\"a\":2}").unwrap_err();
        assert!(err.to_string().contains("different crawl"), "{err}");
    }

    #[test]
    fn a_torn_last_line_is_ended_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.ndjson");
        std::fs::write(&path, "{\"a\":1}\n{\"b\":").unwrap();
        open_append(&path)
            .unwrap()
            .write_all(b"{\"c\":3}\n")
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"a\":1}\n{\"b\":\n{\"c\":3}\n");
        // A whole last line gets nothing added.
        open_append(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}
