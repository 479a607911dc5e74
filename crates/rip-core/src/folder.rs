//! The record files of an output folder, as `rip-write` writes them (`<out>/<name>/`).
//!
//! Each doc, error document or expected record is one `*.json` file, compact or
//! pretty-printed (`_type` `doc`, `error` or `expected`; or, as in the reference, no `_type`
//! but a `url`: a doc). The files lie directly in the folder (the flat layout), or in
//! **shards**: sub-folders named by two lowercase hex digits (`00` … `ff`, the sharded
//! layout, [`is_shard`]); a folder may hold both (a flat folder a sharded run wrote into).
//! With `rip-write --jsonl` they are streams instead (`docs.jsonl`, `errors.jsonl`,
//! `expected.jsonl`). The reports written beside them ([`REPORT_FILES`]) and anything that
//! is not a record object are not records. Other sub-folders (`raw/`) are not read.
//!
//! The stages that read a whole folder (`rip-reconcile --dir`, `rip-health --dir`) list it
//! with [`Folder::list`], read each `*.json` file with [`read_record`] and each stream with
//! [`open_stream`]. The list of record files holds their names in little memory, however
//! many there are, and gives them in the order they lie on the disk ([`RecordFiles`]).

mod records;

pub use records::RecordFiles;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use crate::{Kind, NdjsonReader};

/// Files over this size are not records: they are skipped, with a message.
pub const MAX_FILE: u64 = 256 << 20;

/// File names in an output folder that are reports, not records.
pub const REPORT_FILES: &[&str] = &["crawl-health.json", "failures.json"];

/// What can go wrong reading a folder or one of its files. [`FolderError::Unreadable`]
/// stops the reading; the others are about one record file, which a reader reports (the
/// message names the file) and skips.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// The folder could not be listed, or a stream in it opened.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        /// The folder or file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A record file could not be read (or is not UTF-8).
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A record file is larger than [`MAX_FILE`].
    #[error("{}: {len} bytes, over the {MAX_FILE}-byte limit; skipped", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size in bytes.
        len: u64,
    },
    /// A record file is not JSON.
    #[error("{}: not JSON: {source}", path.display())]
    NotJson {
        /// The file.
        path: PathBuf,
        /// What the JSON parser said.
        source: serde_json::Error,
    },
    /// The temporary file holding the names of a large folder's record files could not be
    /// written or read back.
    #[error(
        "cannot list {}: the temporary file of its file names failed: {source} (hint: is \
         $TMPDIR full?)",
        path.display()
    )]
    Spill {
        /// The folder.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Whether a sub-folder named `name` is a shard of the sharded layout: two lowercase hex
/// digits (`rip-write --layout sharded` files a record under the first two hex digits of
/// the SHA-256 of its file name's readable part).
pub fn is_shard(name: &str) -> bool {
    name.len() == 2 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The files of an output folder a reader takes in, each list sorted by name (the record
/// files by their place on the disk: see [`RecordFiles`]).
#[derive(Debug, Default)]
pub struct Folder {
    /// The `*.json` files but the reports, in the folder and in its shards: one record
    /// each, or none.
    pub records: RecordFiles,
    /// The `*.jsonl` files: streams of records (`rip-write --jsonl`).
    pub jsonl: Vec<PathBuf>,
    /// The `*.ndjson` files: streams saved beside the records.
    pub ndjson: Vec<PathBuf>,
    /// The sub-folders but the shards.
    pub subfolders: Vec<PathBuf>,
}

impl Folder {
    /// Lists the files directly in `dir` and the record files in its shards: regular
    /// files, or links to them (a link to a folder is neither a file nor a sub-folder).
    pub fn list(dir: &Path) -> Result<Self, FolderError> {
        let spill = |source| FolderError::Spill {
            path: dir.to_owned(),
            source,
        };
        let mut folder = Self {
            records: RecordFiles::new(dir),
            ..Self::default()
        };
        let mut shards = Vec::new();
        for entry in entries(dir)? {
            let entry = entry?;
            let file_name = entry.name;
            let name = file_name.to_string_lossy();
            match entry.kind {
                Entry::Folder if is_shard(&name) => shards.push(file_name),
                Entry::Folder => folder.subfolders.push(dir.join(&file_name)),
                Entry::File if name.ends_with(".ndjson") => {
                    folder.ndjson.push(dir.join(&file_name))
                }
                Entry::File if name.ends_with(".jsonl") => folder.jsonl.push(dir.join(&file_name)),
                Entry::File if is_record_name(&name) => folder
                    .records
                    .push(entry.ino, file_name.as_encoded_bytes())
                    .map_err(spill)?,
                Entry::File | Entry::Other => {}
            }
        }
        for shard in shards {
            for entry in entries(&dir.join(&shard))? {
                let entry = entry?;
                if entry.kind == Entry::File && is_record_name(&entry.name.to_string_lossy()) {
                    let mut rel = shard.as_encoded_bytes().to_vec();
                    rel.push(b'/');
                    rel.extend_from_slice(entry.name.as_encoded_bytes());
                    folder.records.push(entry.ino, &rel).map_err(spill)?;
                }
            }
        }
        folder.records.finish().map_err(spill)?;
        for list in [
            &mut folder.jsonl,
            &mut folder.ndjson,
            &mut folder.subfolders,
        ] {
            list.sort();
        }
        Ok(folder)
    }

    /// True when the folder has no record file (`*.json` or `*.jsonl`) but a sub-folder
    /// has `*.json` files or shards: it is likely `<out>` where `<out>/<name>` was meant.
    pub fn records_are_in_subfolders(&self) -> bool {
        self.records.is_empty()
            && self.jsonl.is_empty()
            && self.subfolders.iter().any(|dir| has_json(dir))
    }
}

/// A `*.json` file name that is not a report's.
fn is_record_name(name: &str) -> bool {
    name.ends_with(".json") && !REPORT_FILES.contains(&name)
}

/// What a folder entry is to a reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// A regular file, or a link to one.
    File,
    /// A folder (not a link to one).
    Folder,
    /// Anything else.
    Other,
}

/// One entry of a folder: its name, inode number and what it is.
struct Listed {
    name: std::ffi::OsString,
    ino: u64,
    kind: Entry,
}

/// The entries of `dir`; an entry that cannot be read stops the listing.
fn entries(dir: &Path) -> Result<impl Iterator<Item = Result<Listed, FolderError>>, FolderError> {
    use std::os::unix::fs::DirEntryExt;
    let unreadable = move |source| FolderError::Unreadable {
        path: dir.to_owned(),
        source,
    };
    let read = std::fs::read_dir(dir).map_err(unreadable)?;
    Ok(read.map(move |entry| {
        let entry = entry.map_err(unreadable)?;
        let ty = entry.file_type().map_err(unreadable)?;
        let kind = if ty.is_dir() {
            Entry::Folder
        } else if ty.is_file() || (ty.is_symlink() && entry.path().is_file()) {
            Entry::File
        } else {
            Entry::Other
        };
        Ok(Listed {
            name: entry.file_name(),
            ino: entry.ino(),
            kind,
        })
    }))
}

fn has_json(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|it| {
        it.flatten().any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.ends_with(".json") || (is_shard(&name) && e.path().is_dir())
        })
    })
}

/// One `*.json` file of a folder: its text, and the kind of record it holds.
#[derive(Debug, Clone)]
pub struct RecordFile {
    /// The file's text.
    pub text: String,
    /// [`Kind::Doc`], [`Kind::Error`] or [`Kind::Expected`]; `None` when the file holds
    /// no record (a report, an array, another kind).
    pub kind: Option<Kind>,
}

/// Reads one record file. A file that is too large, unreadable or not JSON is an error
/// naming it.
pub fn read_record(path: &Path) -> Result<RecordFile, FolderError> {
    let read = |source| FolderError::Read {
        path: path.to_owned(),
        source,
    };
    let len = std::fs::metadata(path).map_err(read)?.len();
    if len > MAX_FILE {
        return Err(FolderError::TooLarge {
            path: path.to_owned(),
            len,
        });
    }
    let text = std::fs::read_to_string(path).map_err(read)?;
    let kind = record_kind(&text).map_err(|source| FolderError::NotJson {
        path: path.to_owned(),
        source,
    })?;
    Ok(RecordFile { text, kind })
}

/// Opens a stream of records in a folder (a `*.jsonl` or `*.ndjson` file), named by its
/// path in messages.
pub fn open_stream(path: &Path) -> Result<NdjsonReader<BufReader<File>>, FolderError> {
    let file = File::open(path).map_err(|source| FolderError::Unreadable {
        path: path.to_owned(),
        source,
    })?;
    Ok(NdjsonReader::new(
        BufReader::new(file),
        path.display().to_string(),
    ))
}

/// The kind of record the JSON `text` is, read from its top-level `_type` and `url` only
/// (the rest is checked, not built). `Err` when `text` is not JSON.
fn record_kind(text: &str) -> Result<Option<Kind>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let peek = match Peek::default().deserialize(&mut de).and_then(|p| {
        de.end()?;
        Ok(p)
    }) {
        Ok(peek) => peek,
        // Valid JSON that is not an object (an array, a report's list).
        Err(e) if e.is_data() => return serde_json::from_str::<IgnoredAny>(text).map(|_| None),
        Err(e) => return Err(e),
    };
    Ok(match peek.kind {
        Some(Value::String(t)) => match Kind::from_type(&t) {
            kind @ (Kind::Doc | Kind::Error | Kind::Expected) => Some(kind),
            _ => None,
        },
        Some(_) => None,
        None => peek
            .url
            .as_ref()
            .is_some_and(Value::is_string)
            .then_some(Kind::Doc),
    })
}

/// The top-level `_type` and `url` of a JSON object.
#[derive(Default)]
struct Peek {
    kind: Option<Value>,
    url: Option<Value>,
}

impl<'de> DeserializeSeed<'de> for Peek {
    type Value = Peek;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Peek, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Peek {
    type Value = Peek;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Peek, A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "_type" => self.kind = Some(map.next_value()?),
                "url" => self.url = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_a_record_by_its_type_or_its_url() {
        let kind = |text: &str| record_kind(text).map_err(|e| e.to_string());
        assert_eq!(kind(r#"{"_type":"doc","url":"u"}"#), Ok(Some(Kind::Doc)));
        assert_eq!(
            kind("{\n  \"_type\": \"error\"\n}\n"),
            Ok(Some(Kind::Error))
        );
        assert_eq!(kind(r#"{"_type":"expected"}"#), Ok(Some(Kind::Expected)));
        assert_eq!(kind(r#"{"url":"u","body":{"x":[1]}}"#), Ok(Some(Kind::Doc)));
        assert_eq!(kind(r#"{"url":5}"#), Ok(None));
        assert_eq!(kind(r#"{"_type":"ledger","url":"u"}"#), Ok(None));
        assert_eq!(kind(r#"{"_type":null,"url":"u"}"#), Ok(None));
        assert_eq!(kind(r#"[{"_type":"doc"}]"#), Ok(None));
        assert_eq!(kind(r#"{"totals":{}}"#), Ok(None));
        let broken = kind(r#"{"_type":"doc","x":tru}"#).unwrap_err();
        assert!(broken.contains("expected ident"), "{broken}");
        assert!(kind("[1, 2").is_err(), "an array cut short is not JSON");
        assert!(kind(r#"{"url":"u"} trailing"#).is_err());
    }

    #[test]
    fn a_folder_lists_records_streams_and_subfolders_apart() {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["raw", "3f", "0a", "3F", "abc"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        for name in [
            "b.json",
            "a.json",
            "3f/c.json",
            "0a/d.json",
            "3f/failures.json",
            "3f/notes.txt",
            "3F/e.json",
            "abc/f.json",
            "raw/g.json",
            "crawl-health.json",
            "failures.json",
            "docs.jsonl",
            "stream.ndjson",
            "notes.txt",
        ] {
            std::fs::write(dir.path().join(name), "{}").unwrap();
        }
        std::fs::create_dir(dir.path().join("0a/sub")).unwrap();
        let f = Folder::list(dir.path()).unwrap();
        let names = |v: &[PathBuf]| -> Vec<String> {
            v.iter()
                .map(|p| {
                    let rel = p.strip_prefix(dir.path()).unwrap();
                    rel.to_string_lossy().into_owned()
                })
                .collect()
        };
        let records: Vec<PathBuf> = f.records.iter().map(Result::unwrap).collect();
        let mut by_inode = ["b.json", "a.json", "3f/c.json", "0a/d.json"]
            .map(|n| {
                use std::os::unix::fs::MetadataExt;
                (std::fs::metadata(dir.path().join(n)).unwrap().ino(), n)
            })
            .to_vec();
        by_inode.sort();
        let want: Vec<&str> = by_inode.into_iter().map(|(_, n)| n).collect();
        assert_eq!(names(&records), want);
        assert_eq!(names(&f.jsonl), ["docs.jsonl"]);
        assert_eq!(names(&f.ndjson), ["stream.ndjson"]);
        assert_eq!(names(&f.subfolders), ["3F", "abc", "raw"]);
        assert!(!f.records_are_in_subfolders());

        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(out.path().join("site/3f")).unwrap();
        std::fs::write(out.path().join("site/3f/a.json"), "{}").unwrap();
        let listed = Folder::list(out.path()).unwrap();
        assert!(listed.records_are_in_subfolders(), "a sharded folder");
        std::fs::write(out.path().join("site/b.json"), "{}").unwrap();
        assert!(
            Folder::list(out.path())
                .unwrap()
                .records_are_in_subfolders(),
            "a flat folder"
        );
        let err = Folder::list(&out.path().join("nope")).unwrap_err();
        assert!(err.to_string().starts_with("cannot read "), "{err}");
    }

    #[test]
    fn a_shard_is_two_lowercase_hex_digits() {
        for name in ["00", "3f", "ff", "a0"] {
            assert!(is_shard(name), "{name}");
        }
        for name in ["3F", "0", "000", "g0", "raw", "", "0x"] {
            assert!(!is_shard(name), "{name}");
        }
    }

    #[test]
    fn a_record_file_too_large_or_not_json_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "not json").unwrap();
        let err = read_record(&bad).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{}: not JSON: expected ident at line 1 column 2",
                bad.display()
            )
        );
        let doc = dir.path().join("doc.json");
        std::fs::write(&doc, r#"{"_type":"doc","url":"u"}"#).unwrap();
        let file = read_record(&doc).unwrap();
        assert_eq!(file.kind, Some(Kind::Doc));
        assert_eq!(file.text, r#"{"_type":"doc","url":"u"}"#);
    }
}
