//! The files: named by time, serial, process and host, written as `.open`, renamed when
//! closed, rotated at a size, a `warcinfo` record first.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use chrono::Utc;

use super::member::{Compression, append_record};
use super::{Error, Record, RecordId, http};

/// The size at which a file is closed and the next one opened: 1 GiB (Heritrix's 1 GB, in
/// the binary units of the programs' `SIZE` arguments).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 30;

/// Where and how the files are written.
#[derive(Debug, Clone)]
pub struct WriterConfig {
    /// The folder (created when missing).
    pub dir: PathBuf,
    /// The files' names start with this (`rip` by default).
    pub prefix: String,
    /// A file that reached this size (compressed bytes) is closed before the next record.
    pub max_file_size: u64,
    /// `software` in each `warcinfo`.
    pub software: String,
    /// Gzip members (`.warc.gz`, the default) or uncompressed records (`.warc`).
    pub compression: Compression,
}

impl WriterConfig {
    /// Files in `dir`, the defaults otherwise.
    #[must_use]
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            prefix: "rip".to_owned(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            software: format!("ripperoni/{}", env!("CARGO_PKG_VERSION")),
            compression: Compression::Gzip,
        }
    }
}

/// The file being written.
#[derive(Debug)]
struct OpenWarc {
    /// The final path (`….warc.gz` or `….warc`); the file is at this path plus `.open` until closed.
    path: PathBuf,
    file: File,
    size: u64,
    warcinfo: RecordId,
}

/// Writes records into rotating WARC files; closes the last one when dropped (or by
/// [`close`](Self::close), which reports an error the drop cannot).
#[derive(Debug)]
pub struct WarcWriter {
    cfg: WriterConfig,
    host: String,
    serial: u32,
    current: Option<OpenWarc>,
    closed: Vec<PathBuf>,
}

impl WarcWriter {
    /// A writer into `cfg.dir`, which is created when missing. No file is opened before the
    /// first record.
    pub fn new(cfg: WriterConfig) -> Result<Self, Error> {
        std::fs::create_dir_all(&cfg.dir).map_err(|source| Error::Io {
            path: cfg.dir.clone(),
            source,
        })?;
        Ok(Self {
            cfg,
            host: host_name(),
            serial: 0,
            current: None,
            closed: Vec::new(),
        })
    }

    /// Writes `records` one after the other into one file (a file past its size is closed
    /// before them, not between them, so the records of one exchange stay together).
    pub fn write(&mut self, records: &[Record]) -> Result<(), Error> {
        let warcinfo = self.warcinfo()?;
        let members = encode(records, &warcinfo, self.cfg.compression);
        self.write_encoded(&warcinfo, &members).map(|_| ())
    }

    /// How records are stored in the files.
    #[must_use]
    pub fn compression(&self) -> Compression {
        self.cfg.compression
    }

    /// The `WARC-Warcinfo-ID` records written next carry: the file being written's, once
    /// a file past its size is closed and the next opened. With
    /// [`write_encoded`](Self::write_encoded), writers sharing this one behind a lock
    /// compress outside it (`encode` the records for this id, then write them).
    pub fn warcinfo(&mut self) -> Result<RecordId, Error> {
        if self
            .current
            .as_ref()
            .is_some_and(|f| f.size >= self.cfg.max_file_size)
        {
            self.close()?;
        }
        let f = match self.current.take() {
            Some(f) => f,
            None => self.open()?,
        };
        let id = f.warcinfo.clone();
        self.current = Some(f);
        Ok(id)
    }

    /// Writes `members` ([`encode`]d for `warcinfo`) with one `write_all`; `false`, writing
    /// nothing, when the file of `warcinfo` is no longer the one being written (encode them
    /// again for [`warcinfo`](Self::warcinfo)).
    pub fn write_encoded(&mut self, warcinfo: &RecordId, members: &[u8]) -> Result<bool, Error> {
        match self.current.as_mut() {
            Some(f) if &f.warcinfo == warcinfo => write_whole(f, members).map(|()| true),
            _ => Ok(false),
        }
    }

    /// The path of the file being written (ending `.open`), if one is.
    #[must_use]
    pub fn open_path(&self) -> Option<PathBuf> {
        self.current.as_ref().map(|f| open_name(&f.path))
    }

    /// The files closed so far, in order.
    #[must_use]
    pub fn closed(&self) -> &[PathBuf] {
        &self.closed
    }

    /// Closes the file being written, if any: synced, then renamed without `.open`.
    pub fn close(&mut self) -> Result<Option<PathBuf>, Error> {
        let Some(f) = self.current.take() else {
            return Ok(None);
        };
        let open = open_name(&f.path);
        let io = |source| Error::Io {
            path: open.clone(),
            source,
        };
        f.file.sync_data().map_err(io)?;
        drop(f.file);
        std::fs::rename(&open, &f.path).map_err(io)?;
        self.closed.push(f.path.clone());
        Ok(Some(f.path))
    }

    /// Opens the next file and writes its `warcinfo`.
    fn open(&mut self) -> Result<OpenWarc, Error> {
        self.serial += 1;
        let now = Utc::now();
        let name = format!(
            "{}-{}{:03}-{:05}-{}~{}.{}",
            self.cfg.prefix,
            now.format("%Y%m%d%H%M%S"),
            now.timestamp_subsec_millis(),
            self.serial,
            std::process::id(),
            self.host,
            self.cfg.compression.extension(),
        );
        let path = self.cfg.dir.join(&name);
        let open = open_name(&path);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&open)
            .map_err(|source| Error::Io {
                path: open.clone(),
                source,
            })?;
        let info = http::warcinfo(
            &name,
            &[
                ("software", &self.cfg.software),
                ("format", "WARC File Format 1.1"),
                (
                    "conformsTo",
                    "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
                ),
                ("hostname", &self.host),
            ],
        )?;
        let mut f = OpenWarc {
            path,
            file,
            size: 0,
            warcinfo: info.id().clone(),
        };
        let mut member = Vec::new();
        append_record(&info, None, self.cfg.compression, &mut member);
        write_whole(&mut f, &member)?;
        Ok(f)
    }
}

impl Drop for WarcWriter {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::warn!("{e}");
        }
    }
}

/// `records` one after the other (as gzip members, or uncompressed, as `compression`
/// says), for the file whose `warcinfo` this is.
#[must_use]
pub fn encode(records: &[Record], warcinfo: &RecordId, compression: Compression) -> Vec<u8> {
    // Uncompressed, the records' size is known: one allocation, not a growth per record.
    let mut out = match compression {
        Compression::None => {
            Vec::with_capacity(records.iter().map(|r| r.block().len() + 1024).sum())
        }
        Compression::Gzip => Vec::new(),
    };
    for r in records {
        append_record(r, Some(warcinfo), compression, &mut out);
    }
    out
}

/// Writes `buf` with one `write_all` (a record is never split over several writes the
/// process could be killed between, beyond what the kernel does with one write).
fn write_whole(f: &mut OpenWarc, buf: &[u8]) -> Result<(), Error> {
    f.file.write_all(buf).map_err(|source| Error::Io {
        path: open_name(&f.path),
        source,
    })?;
    f.size += buf.len() as u64;
    Ok(())
}

fn open_name(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".open");
    PathBuf::from(s)
}

/// This machine's name, made safe for a file name (`localhost` when unknown).
fn host_name() -> String {
    let raw = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default();
    let host: String = raw
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'))
        .take(64)
        .collect();
    if host.is_empty() {
        "localhost".to_owned()
    } else {
        host
    }
}
