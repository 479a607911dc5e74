//! `rip-check`: checks a stream against the record contract and passes it through.
//!
//! Every line is read as a record and fully decoded, so a record missing a field, or with
//! a field of the wrong type, is reported with its input and line (`<input>:<line>: bad
//! `page` record: missing field `status``), counted, and dropped. So is a record of a kind
//! the contract does not have (`_type` misspelt, or a kind of a later version), and one
//! whose `url` (or `finalUrl`, `parent`, `resolves`, `wikiApi`, a ledger's `entered`) is
//! not an absolute http(s) URL, the field named. Valid lines, unknown fields included, are
//! written back byte for byte. Put it between two stages to find which one writes bad
//! records, or at the end of a pipeline as a gate: it exits 2 when anything was bad.

#![deny(missing_docs)]

use rip_core::{Kind, Pipe, PipeError, PipeOptions, Summary};
use std::io::{Read, Write};

mod urls;

/// What `rip-check` does besides checking.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Pipe options (stage name, input name, strictness, stop flag).
    pub pipe: Option<PipeOptions>,
    /// Drop the `summary` records of upstream stages instead of passing them on.
    pub drop_summaries: bool,
}

/// Checks `input` record by record, writing the valid ones to `output`.
pub fn run<R: Read + Send + 'static, W: Write>(
    config: Config,
    input: R,
    output: W,
) -> Result<Summary, PipeError> {
    let opts = config
        .pipe
        .clone()
        .unwrap_or_else(|| PipeOptions::new("rip-check"));
    let mut pipe = Pipe::new(opts, input, output)?;
    while let Some(line) = pipe.next_line()? {
        match line.kind() {
            Kind::Other(name) => {
                let message = format!(
                    "unknown record kind in field `_type`: `{name}` (the contract's kinds: \
                     ref, page, failure, doc, error, expected, ledger, summary)"
                );
                pipe.bad_record(&line, message)?;
            }
            Kind::Summary if config.drop_summaries => {}
            _ => match line.decode() {
                Ok(record) => match urls::first_break(&record) {
                    None => pipe.pass(&line)?,
                    Some(why) => {
                        let message = format!("bad `{}` record: {why}", line.kind().as_str());
                        pipe.bad_record(&line, message)?;
                    }
                },
                Err(message) => pipe.bad_record(&line, message)?,
            },
        }
    }
    pipe.finish(None)
}
