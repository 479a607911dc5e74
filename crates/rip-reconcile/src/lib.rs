//! `rip-reconcile`: gives every error document of a scrape a verdict, as the reference's
//! `reconcile:identity` does: is the content **captured elsewhere** (a broken link to
//! something the scrape did capture, under another URL), **missing**, or **dead** (known
//! not to exist)?
//!
//! It reads a whole stream ([`run_stream`], see [`stream`] for how it keeps memory low)
//! or, with `--dir`, a folder written by `rip-write` ([`run_dir`], see [`dir`]), builds an
//! identity index from the docs and writes each error document's
//! [`Resolution`] into its `resolution` field.
//!
//! The verdicts come from a [`Reconciler`], configured, not coded
//! ([`ReconcilerConfig`], a JSON file; schema in `docs/schemas/reconciler.schema.json`):
//!
//! - **No configuration** (or `{}`) is the reference's `DefaultReconciler`: every
//!   failure is `missing`. Conservative, and the report is still complete.
//! - **`key`**: an identity key taken from a URL, by a regex capture
//!   (`"urlPattern": "[?&]ID=(\\d+)"`) or the last path segment (`"pathTail": true`,
//!   `/classes/77.html` → `77`). A failure whose key is the key of exactly one doc (at
//!   another URL) is `capturedElsewhere` at that doc.
//! - **`name`**: also require a name: the text of a link that pointed at the broken URL
//!   (the error document's `linkText`, and the links the docs recorded) must equal a doc
//!   field (`"docField": "name"`, or a JSON pointer; `"docPattern"` can cut a name out of a
//!   page title). Both must match: "Catfolk" + 77 finds the Catfolk ancestry and not the
//!   spell with id 77.
//! - **Ambiguity is not guessed**: several matching docs leave the failure `missing`, with
//!   the `candidates` listed.
//! - **`dead`**: ordered rules on status, last error code and URL regex, each with a
//!   reason (`{"status": [410], "reason": "removed upstream"}`), applied when no single
//!   doc matches.
//!
//! A doc whose `resolves` names the failed URL (a resolve candidate of `rip-route` that
//! succeeded) always wins.

#![deny(missing_docs)]

pub mod config;
pub mod dir;
pub mod pick;
pub mod reconciler;
pub mod stream;

pub use config::{ConfigError, ReconcilerConfig};
pub use dir::run_dir;
pub use reconciler::{Index, Reconciler};
pub use stream::{StreamInput, run_stream};

use rip_core::Resolution;
use std::path::PathBuf;

/// What stops `rip-reconcile`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The stream could not be read or written.
    #[error(transparent)]
    Pipe(#[from] rip_core::PipeError),
    /// The input could not be read again.
    #[error(transparent)]
    Read(#[from] rip_core::ReadError),
    /// The input file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The folder, or a stream in it, could not be read.
    #[error(transparent)]
    Folder(#[from] rip_core::folder::FolderError),
    /// The temporary copy of stdin could not be written or read.
    #[error("cannot use the temporary copy of the input (hint: is $TMPDIR full?): {0}")]
    Spill(#[source] std::io::Error),
    /// The summary could not be written.
    #[error("cannot write output: {0}")]
    Output(#[source] std::io::Error),
    /// `--dir` named a folder with no record files but sub-folders that have some.
    #[error(
        "{dir} holds no *.json record files, but its sub-folders do (hint: point --dir at \
         the target folder, `<out>/<target>`)"
    )]
    NoRecords {
        /// The folder.
        dir: PathBuf,
    },
}

/// Verdicts counted by status, under the summary counter names
/// `capturedElsewhere`, `missing`, `dead`.
pub fn count_verdicts(verdicts: &[Resolution]) -> [(&'static str, u64); 3] {
    let mut n = [("capturedElsewhere", 0), ("missing", 0), ("dead", 0)];
    for v in verdicts {
        let i = match v {
            Resolution::CapturedElsewhere { .. } => 0,
            Resolution::Missing { .. } => 1,
            Resolution::Dead { .. } => 2,
        };
        n[i].1 += 1;
    }
    n
}
