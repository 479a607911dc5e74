//! WACZ (a zip holding `archive/*.warc.gz`, as Browsertrix and ArchiveWeb.page write
//! them): each WARC under `archive/` read in name order, as a file of its own. Offsets are
//! within that WARC, as a WACZ's own CDX index gives them; a failure without a URL names
//! it `file:///…/crawl.wacz!/archive/data.warc.gz#offset=N`. A stored entry (the usual:
//! a `.warc.gz` is not compressed again) can be read again for a revisit's original.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use rip_core::{Books, ErrorCategory, PipeError, Record};
use zip::{CompressionMethod, ZipArchive};

use super::pages::{Origin, failure};
use super::stage::{Config, Reading, Reread, Seen, file_origin};

/// Reads every WARC of the WACZ `file` (at `path`).
pub(super) fn read<W: Write>(
    config: &Config,
    books: &mut Books<W>,
    seen: &mut Seen,
    path: &Path,
    file: File,
) -> Result<(), PipeError> {
    let origin = file_origin(path);
    let mut zip = match ZipArchive::new(file) {
        Ok(zip) => zip,
        Err(e) => return unreadable(books, &origin, &e.to_string()),
    };
    let mut names: Vec<String> = zip
        .file_names()
        .filter_map(Result::ok)
        .filter(|n| n.starts_with("archive/") && (n.ends_with(".warc.gz") || n.ends_with(".warc")))
        .map(|n| n.into_owned())
        .collect();
    names.sort();
    if names.is_empty() {
        return unreadable(books, &origin, "no archive/*.warc.gz in it");
    }
    for name in names {
        let entry_origin = Origin {
            name: format!("{}!/{name}", origin.name),
            url: format!("{}!/{name}", origin.url),
        };
        let entry = match zip.by_name(&name) {
            Ok(entry) => entry,
            Err(e) => {
                unreadable(books, &entry_origin, &e.to_string())?;
                continue;
            }
        };
        let reread = (entry.compression() == CompressionMethod::Stored)
            .then(|| entry.data_start())
            .flatten()
            .map(|base| Reread {
                path: path.to_owned(),
                base,
            });
        Reading::new(config, books, seen).input(entry_origin, reread, entry)?;
        if books.stop_asked() {
            break;
        }
    }
    Ok(())
}

/// A `failure` for a WACZ (or one of its entries) that cannot be read at all.
fn unreadable<W: Write>(
    books: &mut Books<W>,
    origin: &Origin,
    what: &str,
) -> Result<(), PipeError> {
    let message = format!("{}: not a readable WACZ: {what}", origin.name);
    let failure = failure(
        &origin.url,
        ErrorCategory::Validation,
        "warc.wacz",
        &message,
    );
    books.enter(&failure.url)?;
    books.mark_partial();
    books.emit(&Record::Failure(failure))
}
