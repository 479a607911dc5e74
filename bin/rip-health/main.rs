//! `rip-health`: see the `rip_health` library. This file is glue: arguments → report →
//! exit code.

use rip_bin::health as args;

use anyhow::Context as _;
use rip_health::{Config, Tally};
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

const PROGRAM: &str = "rip-health";

fn main() -> ExitCode {
    let mut cli: args::Cli = rip_cli::parse();
    cli.common.init_logging();
    let quiet = cli.common.quiet;
    let renamed = |old, new| rip_cli::Renamed::new(PROGRAM, old, new);
    cli.name = renamed("--target", "--name").take(cli.name, cli.old_target.take(), quiet);
    cli.json = renamed("--out", "--json").take(cli.json, cli.old_out.take(), quiet);
    rip_cli::exit_with(PROGRAM, run(cli))
}

fn run(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    let mut tally = Tally::default();
    let mut target = cli.name.clone();
    if let Some(dir) = &cli.dir {
        rip_health::dir::tally_dir(dir, &mut tally, cli.common.strict)?;
        if target.is_none() {
            let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
            target = abs.file_name().map(|n| n.to_string_lossy().into_owned());
        }
    } else if cli.follow {
        follow(&cli, &mut tally, target.clone())?;
    } else {
        let (input, name) = cli.common.open_input()?;
        rip_health::tally_stream(input, &name, &mut tally, cli.common.strict)?;
    }
    let config = Config {
        target,
        require_ledger: !cli.no_ledger,
        now: chrono::Utc::now(),
    };
    let report = rip_health::build(tally, &config)?;
    let out = match (&cli.json, &cli.dir) {
        (Some(p), _) if p.as_os_str() == "-" => None,
        (Some(p), _) => Some(p.clone()),
        (None, Some(dir)) => Some(dir.join("crawl-health.json")),
        (None, None) => None,
    };
    let mut written = Vec::new();
    match &out {
        Some(path) => {
            write_atomic(path, |w| rip_health::write_json(&report, w))?;
            written.push(path.display().to_string());
        }
        None => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            rip_health::write_json(&report, &mut stdout)?;
            stdout.flush()?;
        }
    }
    if let Some(path) = &cli.html {
        let html = rip_health::html::render(&report);
        write_atomic(path, |w| w.write_all(html.as_bytes()))?;
        written.push(path.display().to_string());
    }
    if !cli.common.quiet {
        rip_core::stderr::say(rip_health::text::summary(&report, &written));
    }
    Ok(if report.is_healthy() {
        rip_core::Status::Complete
    } else {
        rip_core::Status::Partial
    })
}

/// `--follow`: reads the stream as it comes, making the live report every `--every`.
fn follow(cli: &args::Cli, tally: &mut Tally, target: Option<String>) -> anyhow::Result<()> {
    let stop = rip_cli::install_interrupt()?;
    let (input, name): (Box<dyn std::io::Read + Send>, String) = match &cli.common.input {
        Some(p) if p.as_os_str() != "-" => {
            let growing = rip_health::follow::Growing::open(p, cli.idle, stop)
                .with_context(|| format!("cannot read {}", p.display()))?;
            (Box::new(growing), p.display().to_string())
        }
        _ => cli.common.open_input()?,
    };
    let refresh = cli.every.as_secs().max(1);
    rip_health::follow::follow(input, &name, tally, cli.common.strict, cli.every, |tally| {
        let config = Config {
            target: target.clone(),
            require_ledger: !cli.no_ledger,
            now: chrono::Utc::now(),
        };
        let report = rip_health::snapshot(tally, &config)?;
        if let Some(path) = &cli.html {
            let html = rip_health::html::render_live(&report, refresh);
            if let Err(e) = rip_health::write_file(path, |w| w.write_all(html.as_bytes())) {
                rip_core::stderr::say(format!("cannot write {}: {e}", path.display()));
            }
        }
        if !cli.common.quiet {
            rip_core::stderr::say(rip_health::text::live_line(&report));
        }
        Ok(())
    })?;
    Ok(())
}

/// Writes a report file, naming it when it cannot be written.
fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    rip_health::write_file(path, write).with_context(|| format!("cannot write {}", path.display()))
}
