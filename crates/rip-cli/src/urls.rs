//! URLs given as arguments to the stages that read `ref`s: `rip-fetch URL…`.

use clap::Args;
use rip_core::PipeOptions;
use std::io::{self, Read};

use crate::{StageArgs, install_interrupt};

/// URLs given as arguments to a stage that reads `ref`s (`rip-fetch URL…`): each is read
/// as the `ref` of that URL, as a bare URL line of input is, instead of the input.
#[derive(Debug, Clone, Default, Args)]
pub struct UrlArgs {
    /// URLs to fetch, each read as a `ref` record, instead of the input (stdin is not read).
    #[arg(value_name = "URL", value_parser = rip_core::ndjson::url_argument, conflicts_with = "input")]
    pub urls: Vec<String>,
}

impl UrlArgs {
    /// [`StageArgs::open_pipe`], or with URLs given, the URLs as the input (named
    /// `arguments` in messages).
    pub fn open_pipe(
        &self,
        common: &StageArgs,
        stage: &str,
    ) -> anyhow::Result<(Box<dyn Read + Send>, PipeOptions)> {
        if self.urls.is_empty() {
            return common.open_pipe(stage);
        }
        let stop = install_interrupt()?;
        let lines = self.urls.join("\n") + "\n";
        let input: Box<dyn Read + Send> = Box::new(io::Cursor::new(lines.into_bytes()));
        Ok((
            input,
            common.pipe_options(stage, "arguments".to_owned(), stop),
        ))
    }
}
