//! `rip-warc`: see the `rip_warc` library. This file is glue: arguments → config → run.

use rip_bin::warc as args;

use std::process::ExitCode;

use args::{Cli, Command, IndexArgs, ReadArgs};

fn main() -> ExitCode {
    let cli: Cli = rip_cli::parse();
    match cli.command {
        Command::Read(read) => {
            rip_cli::init_logging(read.verbose, read.quiet);
            rip_cli::exit_with("rip-warc", run_read(read))
        }
        Command::Index(index) => {
            rip_cli::init_logging(0, index.quiet);
            rip_cli::exit_with("rip-warc", run_index(index))
        }
    }
}

fn run_read(args: ReadArgs) -> anyhow::Result<rip_core::Status> {
    let stop = rip_cli::install_interrupt()?;
    let mut pipe = rip_core::PipeOptions::new(rip_warc::read::STAGE);
    pipe.stop = Some(stop);
    let mut inputs = args.files;
    if inputs.is_empty() {
        inputs.push("-".into());
    }
    let limits = rip_warc::read::Limits {
        max_record: args.max_record as u64,
        max_body: args.max_body as u64,
        ..Default::default()
    };
    let config = rip_warc::read::Config {
        inputs,
        url: args.url,
        mime: args.mime,
        limits,
        every_capture: args.every_capture,
        pipe,
    };
    let summary = rip_warc::read::run(config, std::io::stdin(), rip_cli::stdout())?;
    if !args.quiet {
        rip_core::stderr::say(rip_warc::read::summary_line(&summary));
    }
    Ok(summary.status)
}

fn run_index(args: IndexArgs) -> anyhow::Result<rip_core::Status> {
    let config = rip_warc::index::IndexConfig {
        inputs: args.files,
        limits: rip_warc::read::Limits {
            max_record: args.max_record as u64,
            ..Default::default()
        },
    };
    let say = |what: &str| rip_core::stderr::say(format!("rip-warc index: {what}"));
    let summary = rip_warc::index::index(&config, rip_cli::stdout(), say)?;
    if !args.quiet {
        say(&format!(
            "{} records, {} indexed, {} damaged",
            summary.records, summary.indexed, summary.damaged
        ));
    }
    Ok(if summary.damaged > 0 {
        rip_core::Status::Partial
    } else {
        rip_core::Status::Complete
    })
}
