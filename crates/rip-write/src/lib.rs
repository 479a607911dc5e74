//! `rip-write`: a pass-through stage that persists what flows by (the reference's
//! `json:write`, `jsonl:append`, `html:write-raw` and `markdown:write`).
//!
//! Every record is written to stdout unchanged. Besides:
//!
//! - each `doc`, `error` document and `expected` record is written to
//!   `<out>/<target>/<slug>.json` (pretty JSON of the record, `_type` included), or with
//!   the sharded layout to `<out>/<target>/<shard>/<slug>.json` (see [`layout`]);
//! - with `--jsonl`, instead, they are appended to `docs.jsonl`, `errors.jsonl` and
//!   `expected.jsonl` in that folder, one compact line each;
//! - with `--format csv` or `parquet`, instead, the docs as a table per concept
//!   (`<concept>.csv`, `<concept>.parquet`; error documents and expected records as
//!   JSONL): see [`feed`];
//! - with `--markdown`, a `<slug>.md` page beside each `.json` (see [`markdown`]);
//! - with `--raw`, each `page` body under `raw/<slug>.<ext>` (`raw/<shard>/<slug>.<ext>`
//!   sharded; a text body as the UTF-8 it was decoded to, a base64 body as its bytes);
//! - at the end, `failures.json` ([`FailuresReport`]): the error documents (what failed
//!   after retry), failures that arrived unrouted, and records that could not be written.
//!
//! # File names
//!
//! A record's file is named after the URL it accounts for: its `resolves` when set (a
//! page found by `rip-route`'s resolve route stands in for the failed URL, so it is filed
//! under that URL), else its `url`. See [`slug`]: `Feats.aspx?ID=750` →
//! `Feats.aspx-ID-750.json`; names are collision-free, the same for the same set of URLs
//! whatever order they arrive in (URLs that share a readable name all get a hash suffix,
//! and a file written under the plain name is renamed when a second URL claims it), and
//! cannot leave the folder whatever the URL holds.
//!
//! # One outcome per URL
//!
//! A URL ends once. A second `doc`, `error` or `expected` for a URL that already had one in
//! this run is a **conflict**: the first record stays in the folder, the later one is
//! passed on but not written, and it is followed by a `failure` (category `VALIDATION`,
//! phase `write`, code `write.conflict`, naming both records' lines and the file kept) and
//! listed under `notPersisted` in `failures.json`. Overwriting would hide one of two
//! contradictory answers; the conflict keeps both visible and the run exits 2.
//!
//! Records that reach `rip-write` with no outcome make the run partial too, each kind with
//! one warning on stderr naming the first URL and a hint: a `failure` (no `rip-route`
//! after the stage that failed: listed under `unrouted`) and a `ref` (nothing downstream
//! fetches it, typically a retry written by a pipeline's last `rip-route`: listed under
//! `unfetched`).
//!
//! # Atomic writes
//!
//! Files are written to a temporary file in the same folder and renamed into place, so no
//! reader and no crash ever sees half a file (`--sync` also syncs the data before the
//! rename, for power loss). In JSONL mode each file is staged the same way and renamed at
//! the end of the run, replacing the previous run's. When a second URL claims a plain
//! name, the first URL's files are renamed to its hashed name (a rename is atomic too).
//!
//! # Write failures
//!
//! The folder is made and tried (a file written and removed) before the first record is
//! read: a folder that cannot be created or written stops the run at once with an error
//! naming it ([`Error::Folder`], exit 1), since every record would fail alike.
//!
//! A record that cannot be written later (disk full, a subfolder that cannot be written,
//! the folder changed under the run) is still passed on: the
//! stream is the primary output and that record still accounts for its URL. Right after
//! it comes a `failure` with category `RESOURCE`, phase `write` and an error `write.io`
//! naming the path and the cause: an annotation that says the file is missing.
//! `rip-route` passes such failures through and `rip-health` reports them as not
//! persisted, so the ledger balances whatever the disk does. The run goes on; the exit
//! code is 2 (partial).

#![deny(missing_docs)]

use base64::Engine as _;
use chrono::Utc;
use rip_core::{
    Context, ErrorCategory, ErrorEntry, Failure, Kind, Line, Phase, Pipe, PipeError, PipeOptions,
    Record, Summary,
};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod failures;
pub mod feed;
pub mod layout;
pub mod markdown;
mod outcomes;
pub mod slug;
pub mod store;

pub use failures::{
    CapturedEntry, FailuresReport, NotPersistedEntry, UnfetchedEntry, UnroutedEntry,
};
pub use layout::Layout;

/// How terminal records are persisted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Mode {
    /// One `<slug>.json` file per record.
    #[default]
    Files,
    /// `docs.jsonl`, `errors.jsonl`, `expected.jsonl`.
    Jsonl,
    /// A table per concept, `<concept>.csv` (see [`feed`]); error documents and expected
    /// records as JSONL.
    Csv,
    /// A table per concept, `<concept>.parquet` (see [`feed`]); error documents and
    /// expected records as JSONL.
    Parquet,
}

/// What `rip-write` writes, and where.
#[derive(Debug, Clone)]
pub struct Config {
    /// Pipe options (stage name, input name, strictness, stop flag).
    pub pipe: PipeOptions,
    /// The output folder.
    pub out: PathBuf,
    /// A subfolder of `out` for this target (e.g. `site`), or none.
    pub target: Option<String>,
    /// Files or JSONL.
    pub mode: Mode,
    /// Where the files go: flat or sharded; `None`: the folder's own layout, flat for a
    /// new folder (see [`layout`]).
    pub layout: Option<Layout>,
    /// Also write `<slug>.md` pages.
    pub markdown: bool,
    /// Also write page bodies under `raw/`.
    pub raw: bool,
    /// Write `failures.json` at the end.
    pub failures_file: bool,
    /// Sync each file's data before renaming it into place.
    pub sync: bool,
    /// The tables' columns (CSV and Parquet).
    pub columns: feed::columns::ColumnChoice,
    /// When a Parquet row group is written.
    pub row_group: feed::parquet_table::RowGroupLimit,
}

impl Config {
    /// Files mode into `out`, with `failures.json`, nothing else.
    pub fn new(out: impl Into<PathBuf>) -> Self {
        Self {
            pipe: PipeOptions::new("rip-write"),
            out: out.into(),
            target: None,
            mode: Mode::Files,
            layout: None,
            markdown: false,
            raw: false,
            failures_file: true,
            sync: false,
            columns: Default::default(),
            row_group: Default::default(),
        }
    }

    /// The folder files go to: `out`, or `out/target`.
    pub fn dir(&self) -> Result<PathBuf, Error> {
        match &self.target {
            None => Ok(self.out.clone()),
            Some(t) => {
                let plain = !t.is_empty()
                    && t != "."
                    && t != ".."
                    && !t.contains(['/', '\\', '\0'])
                    && t.len() <= 255;
                if !plain {
                    return Err(Error::Target(t.clone()));
                }
                Ok(self.out.join(t))
            }
        }
    }
}

/// What stops `rip-write` (a record that cannot be written does not: it is annotated).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--target` is not a plain folder name.
    #[error("target `{0}` is not a plain folder name (hint: letters, digits, `-`, no `/` or `..`)")]
    Target(String),
    /// The output folder cannot be created, or no file can be written in it.
    #[error(
        "cannot write to the output folder {}: {source} (hint: name a folder this user can \
         create and write)",
        path.display()
    )]
    Folder {
        /// The folder (`out`, or `out/target`).
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The layout asked for contradicts the folder's record files.
    #[error(transparent)]
    Mixed(#[from] layout::Mixed),
    /// Reading input or writing output failed.
    #[error(transparent)]
    Pipe(#[from] PipeError),
}

/// Persists what flows from `input` to `output`.
pub fn run<R: Read + Send + 'static, W: Write>(
    config: Config,
    input: R,
    output: W,
) -> Result<Summary, Error> {
    let dir = config.dir()?;
    store::check_writable(&dir).map_err(|source| Error::Folder {
        path: dir.clone(),
        source,
    })?;
    let layout = Layout::check(&dir, config.layout)?;
    let format = match config.mode {
        Mode::Csv => Some(feed::TableFormat::Csv),
        Mode::Parquet => Some(feed::TableFormat::Parquet),
        Mode::Files | Mode::Jsonl => None,
    };
    let tables = format.map(|format| {
        let feed = feed::FeedConfig {
            format,
            columns: config.columns.clone(),
            row_group: config.row_group,
        };
        feed::Tables::new(&dir, feed)
    });
    let mut w = Writer {
        tables,
        pipe: Pipe::new(config.pipe.clone(), input, output)?,
        dir,
        layout,
        config,
        slugs: slug::Slugs::default(),
        outcomes: outcomes::Outcomes::default(),
        staged: HashMap::new(),
        report: FailuresReport::default(),
        warned: 0,
    };
    while let Some(line) = w.pipe.next_line()? {
        w.line(line)?;
    }
    w.finish()
}

/// How many write errors are logged on stderr one by one before they are only counted.
const LOGGED_WRITE_ERRORS: u32 = 5;

struct Writer<W: Write> {
    /// The tables of `--format csv` or `parquet`.
    tables: Option<feed::Tables>,
    pipe: Pipe<W>,
    dir: PathBuf,
    layout: Layout,
    config: Config,
    slugs: slug::Slugs,
    outcomes: outcomes::Outcomes,
    /// The JSONL file of each kind, or why it could not be started (said for each record).
    staged: HashMap<&'static str, Result<store::Staged, Arc<std::io::Error>>>,
    report: FailuresReport,
    warned: u32,
}

/// Why a record was not persisted: what its `failure` annotation says.
struct NotPersisted<'a> {
    code: &'static str,
    category: ErrorCategory,
    /// The path it would have had.
    path: &'a Path,
    /// The error (a write error's cause, or the conflict).
    error: String,
    /// The annotation's message.
    message: String,
}

/// A record's fields, decoded loosely (any extra field kept).
struct Fields {
    map: Map<String, Value>,
    identity: String,
}

/// Why a record to persist cannot be read: a bad input line, passed on as it is.
#[derive(Debug, thiserror::Error)]
enum BadFields {
    /// Not a JSON object.
    #[error("bad `{kind}` record: {error}")]
    Json {
        kind: Kind,
        error: serde_json::Error,
    },
    /// No `url` (nor `resolves`) to name its file after.
    #[error("bad `{kind}` record: no `url`")]
    NoUrl { kind: Kind },
}

/// Why a record's file could not be written: what its `failure` annotation says.
#[derive(Debug, thiserror::Error)]
enum WriteError {
    /// Writing the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The JSONL file of the record's kind could not be started.
    #[error("{0}")]
    Staging(Arc<std::io::Error>),
    /// A page's base64 body does not decode (`--raw`).
    #[error("bad base64 body: {0}")]
    Base64(base64::DecodeError),
    /// A doc's row could not be written to its table.
    #[error("{0}")]
    Table(#[from] feed::TableError),
}

impl Fields {
    fn of(line: &Line) -> Result<Self, BadFields> {
        let kind = || line.kind().clone();
        let map: Map<String, Value> =
            serde_json::from_str(line.text()).map_err(|error| BadFields::Json {
                kind: kind(),
                error,
            })?;
        let identity = map
            .get("resolves")
            .and_then(Value::as_str)
            .or_else(|| map.get("url").and_then(Value::as_str))
            .ok_or_else(|| BadFields::NoUrl { kind: kind() })?
            .to_owned();
        Ok(Self { map, identity })
    }

    fn url(&self) -> &str {
        self.map
            .get("url")
            .and_then(Value::as_str)
            .unwrap_or(&self.identity)
    }
}

impl<W: Write> Writer<W> {
    fn line(&mut self, line: Line) -> Result<(), PipeError> {
        match line.kind() {
            Kind::Doc | Kind::Error | Kind::Expected => self.terminal(&line),
            Kind::Page if self.config.raw => self.raw(&line),
            Kind::Failure => {
                if let Ok(Record::Failure(f)) = line.decode()
                    && f.phase != Phase::Write
                {
                    self.pipe.count("unrouted", 1);
                    self.report.unrouted.push(UnroutedEntry {
                        url: f.url,
                        status: f.status,
                        category: f.category,
                        phase: f.phase,
                        attempt: f.attempt,
                    });
                }
                self.pipe.pass(&line)
            }
            Kind::Ref => {
                if let Ok(Record::Ref(r)) = line.decode() {
                    self.pipe.count("unfetchedRefs", 1);
                    self.report.unfetched.push(UnfetchedEntry {
                        url: r.url,
                        attempt: r.attempt,
                        resolves: r.context.resolves,
                    });
                }
                self.pipe.pass(&line)
            }
            _ => self.pipe.pass(&line),
        }
    }

    fn terminal(&mut self, line: &Line) -> Result<(), PipeError> {
        let fields = match Fields::of(line) {
            Ok(f) => f,
            Err(message) => {
                self.pipe.bad_record(line, message)?;
                return self.pipe.pass(line);
            }
        };
        self.pipe.pass(line)?;
        let kind = line.kind().as_str();
        let terminal_kind = match line.kind() {
            Kind::Doc => "doc",
            Kind::Error => "error",
            _ => "expected",
        };
        if let Some(first) = self
            .outcomes
            .terminal(&fields.identity, terminal_kind, line.number())
        {
            return self.conflict(kind, line.number(), &fields, first);
        }
        let written = match (self.config.mode, &mut self.tables) {
            (Mode::Files, _) => self.write_files(kind, &fields),
            (Mode::Csv | Mode::Parquet, Some(tables)) if kind == "doc" => tables
                .doc(&fields.map)
                .map(|()| None)
                .map_err(|(path, e)| (path, e.into())),
            _ => self.append(kind, line),
        };
        let file = match written {
            Ok(file) => {
                self.pipe.count("written", 1);
                file
            }
            Err((path, error)) => {
                self.write_error(kind, &fields, &path, error)?;
                None
            }
        };
        if kind == "error" {
            self.report.captured.push(captured_entry(&fields, file));
        }
        Ok(())
    }

    /// Writes `<slug>.json` (and `.md`); returns its path relative to the folder, or the
    /// path and error.
    fn write_files(
        &mut self,
        kind: &str,
        fields: &Fields,
    ) -> Result<Option<String>, (PathBuf, WriteError)> {
        let slug = self.slug(&fields.identity);
        let dir = self.layout.folder(&self.dir, &slug);
        let name = format!("{slug}.json");
        let mut text = serde_json::to_string_pretty(&fields.map).expect("a JSON map serialises");
        text.push('\n');
        let sync = self.config.sync;
        store::write_atomic(&dir, &name, text.as_bytes(), sync)
            .map_err(|e| (dir.join(&name), e.into()))?;
        if self.config.markdown {
            let md_name = format!("{slug}.md");
            let md = markdown::render(kind, &fields.map);
            store::write_atomic(&dir, &md_name, md.as_bytes(), sync)
                .map_err(|e| (dir.join(&md_name), e.into()))?;
        }
        Ok(Some(self.layout.relative(&slug, &name)))
    }

    fn append(&mut self, kind: &str, line: &Line) -> Result<Option<String>, (PathBuf, WriteError)> {
        let (key, name): (&'static str, &str) = match kind {
            "doc" => ("doc", jsonl_file(kind)),
            "error" => ("error", jsonl_file(kind)),
            _ => ("expected", jsonl_file(kind)),
        };
        let dir = self.dir.clone();
        let staged = self
            .staged
            .entry(key)
            .or_insert_with(|| store::Staged::create(&dir, name).map_err(Arc::new));
        match staged {
            Ok(s) => s
                .line(line.text())
                .map(|()| None)
                .map_err(|e| (s.path().to_owned(), e.into())),
            Err(e) => Err((dir.join(name), WriteError::Staging(e.clone()))),
        }
    }

    fn raw(&mut self, line: &Line) -> Result<(), PipeError> {
        let fields = match Fields::of(line) {
            Ok(f) => f,
            Err(message) => {
                self.pipe.bad_record(line, message)?;
                return self.pipe.pass(line);
            }
        };
        self.pipe.pass(line)?;
        let slug = self.slug(&fields.identity);
        let raw_dir = self.layout.folder(&self.dir.join("raw"), &slug);
        let name = format!("{slug}.{}", extension(fields.map.get("contentType")));
        let body = fields.map.get("body").and_then(Value::as_str).unwrap_or("");
        let bytes = match fields.map.get("bodyEncoding").and_then(Value::as_str) {
            Some("base64") => match base64::engine::general_purpose::STANDARD.decode(body) {
                Ok(b) => b,
                Err(e) => {
                    let path = raw_dir.join(&name);
                    return self.write_error("page", &fields, &path, WriteError::Base64(e));
                }
            },
            _ => body.as_bytes().to_vec(),
        };
        match store::write_atomic(&raw_dir, &name, &bytes, self.config.sync) {
            Ok(_) => {
                self.pipe.count("rawWritten", 1);
                Ok(())
            }
            Err(e) => self.write_error("page", &fields, &raw_dir.join(&name), e.into()),
        }
    }

    /// The slug of `identity`, after moving the files of a URL that loses its plain name
    /// to it and removing this URL's stale file of an earlier run (see [`slug`]).
    fn slug(&mut self, identity: &str) -> String {
        let (dir, layout) = (self.dir.clone(), self.layout);
        let assigned = self
            .slugs
            .assign(identity, |s| owner_on_disk(&layout.folder(&dir, s), s));
        if let Some(m) = &assigned.moved {
            self.rename_files(m);
        }
        if let Some(stale) = &assigned.stale {
            self.remove_files(stale);
        }
        assigned.slug
    }

    /// The files written under `m.from` (JSON, Markdown, raw body), renamed to `m.to`.
    fn rename_files(&mut self, m: &slug::Moved) {
        for (from, to) in self.files_of(&m.from).into_iter().zip(self.files_of(&m.to)) {
            match std::fs::rename(&from, &to) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => self.file_trouble(format!(
                    "cannot rename {} to {}: {e}",
                    from.display(),
                    to.display()
                )),
            }
        }
        let relative = |slug: &str| self.layout.relative(slug, &format!("{slug}.json"));
        let (old, new) = (relative(&m.from), relative(&m.to));
        for entry in &mut self.report.captured {
            if entry.file.as_deref() == Some(old.as_str()) {
                entry.file = Some(new.clone());
            }
        }
    }

    /// Removes the files of `slug` (a URL's stale name of an earlier run).
    fn remove_files(&mut self, slug: &str) {
        for path in self.files_of(slug) {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => self.file_trouble(format!("cannot remove {}: {e}", path.display())),
            }
        }
    }

    /// Every file `rip-write` may have written for `slug`.
    fn files_of(&self, slug: &str) -> Vec<PathBuf> {
        let dir = self.layout.folder(&self.dir, slug);
        let raw = self.layout.folder(&self.dir.join("raw"), slug);
        [
            dir.join(format!("{slug}.json")),
            dir.join(format!("{slug}.md")),
        ]
        .into_iter()
        .chain(
            RAW_EXTENSIONS
                .iter()
                .map(|e| raw.join(format!("{slug}.{e}"))),
        )
        .collect()
    }

    fn file_trouble(&mut self, message: String) {
        tracing::warn!("{message}");
        self.pipe.mark_partial();
        self.pipe.note(message);
    }

    /// The annotation of a record that could not be written.
    fn write_error(
        &mut self,
        kind: &str,
        fields: &Fields,
        path: &Path,
        error: WriteError,
    ) -> Result<(), PipeError> {
        if self.warned < LOGGED_WRITE_ERRORS {
            tracing::warn!("cannot write {}: {error}", path.display());
            self.warned += 1;
        }
        let message = format!("cannot write {}: {error}", path.display());
        let why = NotPersisted {
            code: "write.io",
            category: ErrorCategory::Resource,
            path,
            error: error.to_string(),
            message,
        };
        self.not_persisted(kind, fields, why)
    }

    /// A later terminal record for a URL that already had one: passed on (done), not
    /// written, and annotated.
    fn conflict(
        &mut self,
        kind: &str,
        line: u64,
        fields: &Fields,
        first: outcomes::First,
    ) -> Result<(), PipeError> {
        self.pipe.count("conflicts", 1);
        let kept = match self.config.mode {
            Mode::Files => {
                let slug = self.slug(&fields.identity);
                self.layout.relative(&slug, &format!("{slug}.json"))
            }
            Mode::Jsonl => jsonl_file(first.kind).to_owned(),
            Mode::Csv | Mode::Parquet => match first.kind {
                "doc" if self.config.mode == Mode::Csv => "a row of a *.csv table".to_owned(),
                "doc" => "a row of a *.parquet table".to_owned(),
                _ => jsonl_file(first.kind).to_owned(),
            },
        };
        let path = self.dir.join(&kept);
        let error = format!(
            "a second terminal record for {}: this `{kind}` (line {line}) is not written; the \
             first, a `{}` on line {}, stays in {kept}",
            fields.identity, first.kind, first.line
        );
        if self.warned < LOGGED_WRITE_ERRORS {
            tracing::warn!("conflict: {error}");
            self.warned += 1;
        }
        let message = format!(
            "{error} (hint: a URL ends exactly once: were two streams concatenated, or a \
             stage run twice?)"
        );
        let why = NotPersisted {
            code: "write.conflict",
            category: ErrorCategory::Validation,
            path: &path,
            error: format!("conflict: {error}"),
            message,
        };
        self.not_persisted(kind, fields, why)
    }

    /// The `failure` annotation of a record that was not persisted, right after it.
    fn not_persisted(
        &mut self,
        kind: &str,
        fields: &Fields,
        why: NotPersisted<'_>,
    ) -> Result<(), PipeError> {
        let NotPersisted {
            code,
            category,
            path,
            error,
            message,
        } = why;
        self.pipe.count("notPersisted", 1);
        self.pipe.mark_partial();
        let record_attempt = fields
            .map
            .get("attempt")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32;
        // A failure's round is 1-based; a doc's or page's `attempt` counts rounds before it.
        let attempt = if kind == "error" {
            record_attempt.max(1)
        } else {
            record_attempt + 1
        };
        let entry = ErrorEntry {
            attempt: Some(attempt),
            ..ErrorEntry::new(code, message, "rip-write")
        };
        let mut failure = Failure::new(fields.url(), category, Phase::Write, entry);
        failure.retryable = false;
        failure.attempt = attempt;
        failure.context = serde_json::from_value::<Context>(Value::Object(fields.map.clone()))
            .unwrap_or_default();
        if let Some(Ok(mut history)) = fields
            .map
            .get("errors")
            .map(|e| serde_json::from_value::<Vec<ErrorEntry>>(e.clone()))
        {
            history.append(&mut failure.errors);
            failure.errors = history;
        }
        failure.failed_at = Some(Utc::now());
        failure
            .extra
            .insert("record".into(), Value::String(kind.to_owned()));
        failure
            .extra
            .insert("path".into(), Value::String(path.display().to_string()));
        self.report.not_persisted.push(NotPersistedEntry {
            url: fields.url().to_owned(),
            record: kind.to_owned(),
            path: path.display().to_string(),
            error,
        });
        self.pipe.emit(&Record::Failure(failure))
    }

    fn finish(mut self) -> Result<Summary, Error> {
        if let Some(tables) = self.tables.take() {
            let done = tables.finish(self.config.sync);
            for (path, e) in done.failed {
                tracing::warn!("cannot write {}: {e}", path.display());
                self.pipe.mark_partial();
                self.pipe
                    .note(format!("cannot write {}: {e}", path.display()));
            }
            for (name, n) in [
                ("fieldsLeftOut", done.left_out),
                ("cellsMistyped", done.mistyped),
            ] {
                if n > 0 {
                    self.pipe.count(name, n);
                }
            }
        }
        for (_, staged) in std::mem::take(&mut self.staged) {
            if let Ok(s) = staged {
                let path = s.path().to_owned();
                if let Err(e) = s.commit(self.config.sync) {
                    self.pipe.mark_partial();
                    self.pipe
                        .note(format!("cannot write {}: {e}", path.display()));
                }
            }
        }
        if self.warned >= LOGGED_WRITE_ERRORS {
            let n = self.report.not_persisted.len();
            tracing::warn!("{n} records could not be written (see the `write` failures)");
        }
        for warning in [
            outcomes::unrouted_warning(&self.report.unrouted),
            outcomes::unfetched_warning(&self.report.unfetched),
        ]
        .into_iter()
        .flatten()
        {
            tracing::warn!("{warning}");
            self.pipe.mark_partial();
        }
        if self.config.failures_file {
            self.report.generated_at = Some(Utc::now());
            let mut text = serde_json::to_string_pretty(&self.report).expect("serialisable");
            text.push('\n');
            if let Err(e) = store::write_atomic(
                &self.dir,
                "failures.json",
                text.as_bytes(),
                self.config.sync,
            ) {
                let path = self.dir.join("failures.json");
                tracing::warn!("cannot write {}: {e}", path.display());
                self.pipe.mark_partial();
                self.pipe
                    .note(format!("cannot write {}: {e}", path.display()));
            }
        }
        Ok(self.pipe.finish(None)?)
    }
}

fn captured_entry(fields: &Fields, file: Option<String>) -> CapturedEntry {
    fn decode<T: serde::de::DeserializeOwned>(map: &Map<String, Value>, key: &str) -> Option<T> {
        serde_json::from_value(map.get(key)?.clone()).ok()
    }
    let m = &fields.map;
    CapturedEntry {
        url: fields.url().to_owned(),
        resolves: decode(m, "resolves"),
        status: decode(m, "status"),
        category: decode(m, "category"),
        phase: decode(m, "phase"),
        attempt: decode(m, "attempt").unwrap_or(0),
        title: decode(m, "title"),
        wiki_api: decode(m, "wikiApi"),
        file,
        errors: decode(m, "errors").unwrap_or_default(),
    }
}

/// Who owns `<dir>/<slug>.json`: `None` when there is no such file, `Some(None)` when it
/// names no URL, else the URL it accounts for.
fn owner_on_disk(dir: &Path, slug: &str) -> Option<Option<String>> {
    let text = std::fs::read(dir.join(format!("{slug}.json"))).ok()?;
    let map: Map<String, Value> = match serde_json::from_slice(&text) {
        Ok(m) => m,
        Err(_) => return Some(None),
    };
    Some(
        map.get("resolves")
            .or_else(|| map.get("url"))
            .and_then(Value::as_str)
            .map(str::to_owned),
    )
}

/// The JSONL file of a terminal kind.
fn jsonl_file(kind: &str) -> &'static str {
    match kind {
        "doc" => "docs.jsonl",
        "error" => "errors.jsonl",
        _ => "expected.jsonl",
    }
}

/// Every extension [`extension`] gives.
const RAW_EXTENSIONS: &[&str] = &[
    "html", "json", "xml", "txt", "css", "png", "jpg", "gif", "webp", "svg", "pdf", "bin",
];

/// A file extension for a page body, by `Content-Type`.
fn extension(content_type: Option<&Value>) -> &'static str {
    let ct = rip_core::media_type(content_type.and_then(Value::as_str).unwrap_or(""));
    match ct.as_str() {
        "text/html" | "application/xhtml+xml" => "html",
        "application/json" => "json",
        "text/xml" | "application/xml" => "xml",
        "text/plain" => "txt",
        "text/css" => "css",
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "application/pdf" => "pdf",
        "" => "html",
        _ => "bin",
    }
}
