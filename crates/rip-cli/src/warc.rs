//! The archive flags of the programs that fetch (`rip-fetch`, `rip-render`, `rip-discover`):
//! `--warc DIR` and `--warc-max-size`, defined once, turned into `rip_warc`'s
//! [`WriterConfig`] once. What each program archives is on its guide page.

use std::path::PathBuf;

use clap::Args;
use rip_warc::write::WriterConfig;

/// `--warc DIR` and `--warc-max-size SIZE`.
#[derive(Debug, Clone, Args)]
pub struct WarcArgs {
    /// Write every request sent and its response as WARC/1.1 records into files in DIR.
    /// The files are `rip-*.warc.gz`, one gzip member a record, named `.open` until
    /// closed; what this program archives besides (retries, redirect hops, a rendered
    /// page's subresources and DOM) is on its guide page.
    #[arg(long, value_name = "DIR")]
    pub warc: Option<PathBuf>,
    /// Close a WARC file and start the next once it holds this much (compressed).
    #[arg(long, value_name = "SIZE", default_value = "1GB", value_parser = crate::parse_size)]
    pub warc_max_size: usize,
}

impl WarcArgs {
    /// The writer's configuration, when `--warc` was given.
    pub fn config(&self) -> Option<WriterConfig> {
        self.warc.as_ref().map(|dir| WriterConfig {
            max_file_size: self.warc_max_size as u64,
            ..WriterConfig::new(dir)
        })
    }
}
