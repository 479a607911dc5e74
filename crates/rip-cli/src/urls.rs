//! URLs given as arguments to the stages that read `ref`s: `rip-fetch URL…`.

use clap::Args;
use rip_core::PipeOptions;
use std::io::{self, Read};
use std::path::Path;

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
        let (input, name) = open_input(&self.urls, None)?;
        Ok((input, common.pipe_options(stage, name, stop)))
    }
}

/// The input of a program that takes URLs as arguments: the URLs, one a line (named
/// `arguments` in messages), or without any the file at `path` or stdin
/// ([`crate::open_input`]).
pub fn open_input(
    urls: &[String],
    path: Option<&Path>,
) -> anyhow::Result<(Box<dyn Read + Send>, String)> {
    if urls.is_empty() {
        return crate::open_input(path);
    }
    let lines = urls.join("\n") + "\n";
    Ok((
        Box::new(io::Cursor::new(lines.into_bytes())),
        "arguments".to_owned(),
    ))
}
