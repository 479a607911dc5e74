//! Stream mode: a whole NDJSON stream in, the same stream out with every `error`
//! document given a `resolution`.
//!
//! The verdict on an error document can depend on a doc that comes later in the stream,
//! so nothing is written until the input has ended. Records are not held in memory:
//! the input is read up to three times.
//!
//! 1. The input is read once through a [`Pipe`] (malformed lines are reported and
//!    counted here, once). Error documents are indexed; when the input is not a regular
//!    file (stdin, a pipe), every valid line is also copied to an anonymous temporary
//!    file (in `$TMPDIR`), which is deleted when the stage ends.
//! 2. Only with a key reconciler and at least one failure: the input (or its copy) is
//!    read again and each doc shown to the index, decoding only its key fields.
//! 3. The input (or its copy) is read a last time and written out: every line byte for
//!    byte, in its order, except error documents, which are decoded, given their verdict
//!    and written again.
//!
//! Memory therefore grows with the number of failures (and of docs sharing a failure's
//! key), never with the size of the docs. On Ctrl-C during the first read, what was read
//! is written out unreconciled and the stage ends `interrupted`.

use rip_core::{
    Kind, Line, NdjsonReader, Pipe, PipeOptions, ReadError, Record, Resolution, Summary,
};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::reconciler::{Index, Reconciler};
use crate::{Error, count_verdicts, pick};

/// Where the stream comes from.
pub enum StreamInput {
    /// A reader that can be read only once (stdin): copied to a temporary file.
    Reader(Box<dyn Read + Send>),
    /// A regular file, read again for each pass.
    File(PathBuf),
}

enum Source {
    Spill(File),
    File(PathBuf),
}

impl Source {
    fn open(&self) -> Result<Box<dyn Read>, Error> {
        match self {
            Self::Spill(f) => {
                let mut f = f.try_clone().map_err(Error::Spill)?;
                f.seek(SeekFrom::Start(0)).map_err(Error::Spill)?;
                Ok(Box::new(f))
            }
            Self::File(p) => {
                File::open(p)
                    .map(|f| Box::new(f) as Box<dyn Read>)
                    .map_err(|source| Error::Io {
                        path: p.clone(),
                        source,
                    })
            }
        }
    }
}

/// Reconciles a whole stream, writing it to `output` followed by this stage's summary.
pub fn run_stream<W: Write>(
    reconciler: &Reconciler,
    opts: PipeOptions,
    input: StreamInput,
    output: W,
) -> Result<Summary, Error> {
    let name = opts.input_name.clone();
    let (reader, source) = open(input)?;
    let mut pipe = Pipe::new(opts, reader, output)?;
    let (mut index, last_line) = index_failures(reconciler, &mut pipe, &source)?;
    let again = Reread {
        source: &source,
        name: &name,
        last_line,
    };
    let verdicts = if pipe.interrupted() {
        None
    } else {
        show_docs(reconciler, &mut index, &again)?;
        Some(index.verdicts())
    };
    write_reconciled(&mut pipe, &again, verdicts.as_deref())?;
    if let Some(verdicts) = &verdicts {
        for (name, n) in count_verdicts(verdicts) {
            pipe.count(name, n);
        }
    }
    Ok(pipe.finish(None)?)
}

/// The reader of the first pass, and where the later passes read the input again.
fn open(input: StreamInput) -> Result<(Box<dyn Read + Send>, Source), Error> {
    Ok(match input {
        StreamInput::Reader(r) => (
            r,
            Source::Spill(tempfile::tempfile().map_err(Error::Spill)?),
        ),
        StreamInput::File(p) => {
            let f = File::open(&p).map_err(|source| Error::Io {
                path: p.clone(),
                source,
            })?;
            (Box::new(f), Source::File(p))
        }
    })
}

/// Pass 1: indexes the failures, and copies the input when it cannot be read again.
/// Returns the index and the last line the later passes read (the copy holds exactly
/// the lines this pass processed; a file may hold more, after a Ctrl-C).
fn index_failures<'r, W: Write>(
    reconciler: &'r Reconciler,
    pipe: &mut Pipe<W>,
    source: &Source,
) -> Result<(Index<'r>, u64), Error> {
    let mut spill = match source {
        Source::Spill(f) => Some(BufWriter::new(f.try_clone().map_err(Error::Spill)?)),
        Source::File(_) => None,
    };
    let mut index = reconciler.empty_index();
    let mut last_line = 0;
    while let Some(line) = pipe.next_line()? {
        last_line = line.number();
        if line.kind() == &Kind::Error {
            match line.decode() {
                Ok(Record::Error(e)) => index.push(&e),
                Ok(_) => {}
                Err(message) => {
                    pipe.bad_record(&line, message)?;
                    continue;
                }
            }
        }
        if let Some(s) = spill.as_mut() {
            s.write_all(line.text().as_bytes()).map_err(Error::Spill)?;
            s.write_all(b"\n").map_err(Error::Spill)?;
        }
    }
    if let Some(s) = spill {
        s.into_inner()
            .map_err(|e| Error::Spill(e.into_error()))?
            .flush()
            .map_err(Error::Spill)?;
    }
    let last_line = match source {
        Source::Spill(_) => u64::MAX,
        Source::File(_) => last_line,
    };
    Ok((index, last_line))
}

/// Where the later passes read the input again, and up to which line.
struct Reread<'s> {
    source: &'s Source,
    name: &'s str,
    last_line: u64,
}

/// Pass 2: shows the index the docs (only with a key reconciler and a failure to match).
fn show_docs(
    reconciler: &Reconciler,
    index: &mut Index<'_>,
    again: &Reread<'_>,
) -> Result<(), Error> {
    if !reconciler.needs_docs() || index.is_empty() {
        return Ok(());
    }
    let fields = index.doc_fields();
    let wanted: Vec<&str> = fields.iter().map(String::as_str).collect();
    again.each_line(|line| {
        if line.kind() == &Kind::Doc
            && let Ok(fields) = pick::pick(line.text(), &wanted)
        {
            index.add_doc(&fields);
        }
        Ok(())
    })
}

/// Pass 3: writes everything out, error documents with their verdicts (none when
/// interrupted).
fn write_reconciled<W: Write>(
    pipe: &mut Pipe<W>,
    again: &Reread<'_>,
    verdicts: Option<&[Resolution]>,
) -> Result<(), Error> {
    let mut next = 0;
    again.each_line(|line| {
        match (line.kind(), verdicts) {
            (Kind::Error, Some(verdicts)) => {
                // Bad error records were reported in pass 1 (and not copied).
                if let Ok(Record::Error(mut e)) = line.decode() {
                    e.resolution = verdicts.get(next).cloned();
                    next += 1;
                    pipe.emit(&Record::Error(e))?;
                }
            }
            _ => pipe.pass(&line)?,
        }
        Ok(())
    })
}

impl Reread<'_> {
    /// Reads the input again up to line `last_line`, handing every valid line to `f`.
    /// Malformed lines were reported by the first pass and are skipped silently here.
    fn each_line(&self, mut f: impl FnMut(Line) -> Result<(), Error>) -> Result<(), Error> {
        for item in NdjsonReader::new(BufReader::new(self.source.open()?), self.name) {
            match item {
                Ok(line) if line.number() > self.last_line => break,
                Ok(line) => f(line)?,
                Err(ReadError::Malformed(_)) => {}
                Err(e) => return Err(Error::Read(e)),
            }
        }
        Ok(())
    }
}

/// True when `path` names a regular file that can be read more than once.
pub fn is_rereadable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
}
