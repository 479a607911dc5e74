//! The archive flags of the programs that fetch (`rip-fetch`, `rip-render`, `rip-discover`):
//! `--warc DIR`, `--warc-max-size` and `--warc-compression`, defined once, turned into
//! `rip_warc`'s [`WriterConfig`] once. What each program archives is on its guide page.

use std::path::PathBuf;

use clap::Args;
use rip_warc::write::{Compression, WriterConfig};

/// `--warc DIR`, `--warc-max-size SIZE` and `--warc-compression gzip|none`.
#[derive(Debug, Clone, Args)]
pub struct WarcArgs {
    /// Write every request sent and its response as WARC/1.1 records into files in DIR.
    /// The files are `rip-*.warc.gz`, one gzip member a record (`rip-*.warc` with
    /// `--warc-compression none`), named `.open` until closed; what this program archives
    /// besides (retries, redirect hops, a rendered page's subresources and DOM) is on its
    /// guide page.
    #[arg(long, value_name = "DIR")]
    pub warc: Option<PathBuf>,
    /// `gzip`: one gzip member a record (`.warc.gz`). `none`: uncompressed `.warc` files
    /// (as wget's `--no-warc-compression`), no CPU spent compressing, about 4 times the
    /// bytes on HTML.
    #[arg(
        long,
        value_name = "HOW",
        default_value = "gzip",
        value_parser = compression(),
        hide_short_help = true
    )]
    pub warc_compression: Compression,
    /// Close a WARC file and start the next once it holds this much (as stored).
    #[arg(
        long,
        value_name = "SIZE",
        default_value = "1GB",
        value_parser = crate::parse_size,
        hide_short_help = true
    )]
    pub warc_max_size: usize,
}

/// `gzip` or `none` (clap lists them in the help and the completions).
fn compression() -> impl clap::builder::TypedValueParser<Value = Compression> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(["gzip", "none"])
        .map(|s: String| Compression::parse(&s).unwrap_or_default())
}

impl WarcArgs {
    /// The writer's configuration, when `--warc` was given.
    pub fn config(&self) -> Option<WriterConfig> {
        self.warc.as_ref().map(|dir| WriterConfig {
            max_file_size: self.warc_max_size as u64,
            compression: self.warc_compression,
            ..WriterConfig::new(dir)
        })
    }
}
