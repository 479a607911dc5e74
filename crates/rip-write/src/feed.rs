//! Feeds for data tools: `--format csv` and `--format parquet` write the docs as tables,
//! one file per concept (`<concept>.csv`, `<concept>.parquet`), as Scrapy's feed exports
//! do. Error documents and expected records are no rows of a concept's table: they go to
//! `errors.jsonl` and `expected.jsonl`, as with `--jsonl`.
//!
//! Each table's columns are chosen when its first doc arrives ([`columns`]). A cell holds
//! the field's value: in CSV a string as it is, any other value as its compact JSON
//! (`8`, `true`, `["a","b"]`), a missing field or `null` an empty cell, quoted as RFC 4180
//! says (the `csv` crate); in Parquet a typed value ([`parquet_table`]). A doc's field that
//! has no column is left out of the table (a warning the first time per concept and
//! field, counted in the summary as `fieldsLeftOut`): `--fields` or `--rules` name it.
//!
//! Files are built under temporary names in the folder and renamed into place at the end
//! of the run, as the JSONL files are: the previous run's tables stay until the new ones
//! are complete.

pub mod columns;
pub mod parquet_table;

use crate::store;
use columns::{Column, ColumnChoice};
use parquet_table::{ParquetTable, RowGroupLimit};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The table formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// RFC 4180 CSV with a header row.
    Csv,
    /// Apache Parquet, snappy-compressed.
    Parquet,
}

impl TableFormat {
    fn extension(self) -> &'static str {
        match self {
            Self::Csv => "csv",
            Self::Parquet => "parquet",
        }
    }
}

/// What the tables are made of.
#[derive(Debug, Clone)]
pub struct FeedConfig {
    /// CSV or Parquet.
    pub format: TableFormat,
    /// How each concept's columns are chosen.
    pub columns: ColumnChoice,
    /// When Parquet writes a row group.
    pub row_group: RowGroupLimit,
}

enum Sink {
    Csv(Box<csv::Writer<BufWriter<File>>>),
    Parquet(Box<ParquetTable<BufWriter<File>>>),
}

struct Table {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
    columns: Vec<Column>,
    sink: Sink,
}

/// Why a doc's row could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TableError {
    /// Writing the file failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The table's file could not be started (said for each doc of its concept).
    #[error("{0}")]
    Start(Arc<io::Error>),
    /// CSV said so.
    #[error("{0}")]
    Csv(#[from] csv::Error),
    /// Parquet said so.
    #[error("{0}")]
    Parquet(#[from] parquet::errors::ParquetError),
}

/// What finishing the tables gives.
pub struct Finished {
    /// The tables that could not be written, and why.
    pub failed: Vec<(PathBuf, TableError)>,
    /// Doc fields that had no column (each time).
    pub left_out: u64,
    /// Cells whose value was not of the column's type, written as null.
    pub mistyped: u64,
}

/// The tables of a run, one per concept.
pub struct Tables {
    dir: PathBuf,
    config: FeedConfig,
    tables: HashMap<String, Result<Table, Arc<io::Error>>>,
    /// File names taken, by concept, so that two concepts never share a file.
    files: HashMap<String, String>,
    warned: HashSet<(String, String)>,
    /// Doc fields that had no column (each time).
    pub left_out: u64,
    /// Cells whose value was not of the column's type (Parquet; written as null).
    pub mistyped: u64,
}

impl Tables {
    /// No table yet, in `dir`.
    pub fn new(dir: &Path, config: FeedConfig) -> Self {
        Self {
            dir: dir.to_owned(),
            config,
            tables: HashMap::new(),
            files: HashMap::new(),
            warned: HashSet::new(),
            left_out: 0,
            mistyped: 0,
        }
    }

    /// The path of `concept`'s table.
    pub fn path_of(&mut self, concept: &str) -> PathBuf {
        let ext = self.config.format.extension();
        let taken: HashSet<&String> = self.files.values().collect();
        let name = self
            .files
            .get(concept)
            .cloned()
            .unwrap_or_else(|| file_name(concept, ext, &taken));
        self.files.insert(concept.to_owned(), name.clone());
        self.dir.join(name)
    }

    /// Writes `doc` as a row of its concept's table.
    pub fn doc(&mut self, doc: &Map<String, Value>) -> Result<(), (PathBuf, TableError)> {
        let concept = doc
            .get("concept")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_owned();
        let path = self.path_of(&concept);
        if !self.tables.contains_key(&concept) {
            let columns = self.config.columns.columns(&concept, doc);
            let table = self.start(&path, columns).map_err(Arc::new);
            self.tables.insert(concept.clone(), table);
        }
        let table = match self.tables.get_mut(&concept) {
            Some(Ok(t)) => t,
            Some(Err(e)) => return Err((path, TableError::Start(e.clone()))),
            None => unreachable!("inserted above"),
        };
        match &mut table.sink {
            Sink::Csv(w) => w
                .write_record(table.columns.iter().map(|c| cell(doc.get(&c.name))))
                .map_err(|e| (path.clone(), e.into()))?,
            Sink::Parquet(p) => p.row(doc).map_err(|e| (path.clone(), e.into()))?,
        }
        if !self.config.columns.chosen() {
            self.left_out(&concept, doc);
        }
        Ok(())
    }

    /// Warns (once per concept and field) about the fields of `doc` that have no column.
    fn left_out(&mut self, concept: &str, doc: &Map<String, Value>) {
        let Some(Ok(table)) = self.tables.get(concept) else {
            return;
        };
        let missing: Vec<String> = doc
            .keys()
            .filter(|k| !rip_core::DOC_RESERVED_FIELDS.contains(&k.as_str()))
            .filter(|k| !table.columns.iter().any(|c| &c.name == *k))
            .cloned()
            .collect();
        for field in missing {
            self.left_out += 1;
            if self.warned.insert((concept.to_owned(), field.clone())) {
                tracing::warn!(
                    "field `{field}` of a `{concept}` doc has no column in {} and is left out \
                     (hint: name it with --fields, or give --rules the rules file rip-parse ran \
                     with)",
                    table.path.display()
                );
            }
        }
    }

    /// Starts a table's file under a temporary name.
    fn start(&self, path: &Path, columns: Vec<Column>) -> io::Result<Table> {
        let tmp = store::temp_in(&self.dir)?;
        let out = BufWriter::with_capacity(256 << 10, tmp.as_file().try_clone()?);
        let sink = match self.config.format {
            TableFormat::Csv => {
                let mut w = csv::Writer::from_writer(out);
                w.write_record(columns.iter().map(|c| c.name.as_str()))?;
                Sink::Csv(Box::new(w))
            }
            TableFormat::Parquet => Sink::Parquet(Box::new(
                ParquetTable::new(out, &columns, self.config.row_group)
                    .map_err(io::Error::other)?,
            )),
        };
        Ok(Table {
            tmp,
            path: path.to_owned(),
            columns,
            sink,
        })
    }

    /// Finishes every table and renames it into place.
    pub fn finish(mut self, sync: bool) -> Finished {
        let mut failed = Vec::new();
        for (_, table) in std::mem::take(&mut self.tables) {
            let Ok(table) = table else { continue };
            let path = table.path.clone();
            if let Err(e) = table.finish(sync, &mut self.mistyped) {
                failed.push((path, e));
            }
        }
        Finished {
            failed,
            left_out: self.left_out,
            mistyped: self.mistyped,
        }
    }
}

impl Table {
    fn finish(self, sync: bool, mistyped: &mut u64) -> Result<(), TableError> {
        let mut out = match self.sink {
            Sink::Csv(w) => w.into_inner().map_err(|e| e.into_error())?,
            Sink::Parquet(p) => {
                for (c, n) in self.columns.iter().zip(&p.mistyped) {
                    if *n > 0 {
                        tracing::warn!(
                            "{}: {n} values of `{}` were not of its type ({:?}) and are null \
                             (hint: the rules' `type` of the field, or --fields to leave it out)",
                            self.path.display(),
                            c.name,
                            c.ty
                        );
                        *mistyped += n;
                    }
                }
                p.finish()?
            }
        };
        out.flush()?;
        if sync {
            self.tmp.as_file().sync_data()?;
        }
        self.tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// A CSV cell: a string as it is, a missing field or `null` empty, anything else as its
/// compact JSON.
fn cell(value: Option<&Value>) -> std::borrow::Cow<'_, [u8]> {
    match value {
        None | Some(Value::Null) => (&b""[..]).into(),
        Some(Value::String(s)) => s.as_bytes().into(),
        Some(v) => serde_json::to_vec(v).unwrap_or_default().into(),
    }
}

/// The file name of `concept`'s table: the name itself when it is plain (letters, digits,
/// `-`, `_`, `.`, not starting with `.`) and free, else its plain characters and a hash.
fn file_name(concept: &str, ext: &str, taken: &HashSet<&String>) -> String {
    let plain: String = concept
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    let name = format!("{plain}.{ext}");
    if plain == concept && !plain.is_empty() && !plain.starts_with('.') && !taken.contains(&name) {
        return name;
    }
    use sha2::{Digest, Sha256};
    let hash = Sha256::digest(concept.as_bytes());
    let hex: String = hash[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}~{hex}.{ext}", plain.trim_start_matches('.'))
}
