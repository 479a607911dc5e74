//! `ripperoni`: see the `ripperoni` library. This file is glue: arguments → library → exit
//! code.

mod args;

use args::Command;
use std::io::Write as _;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli: args::Cli = rip_cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => rip_cli::exit_with_error("ripperoni", &err),
    }
}

fn run(cli: args::Cli) -> anyhow::Result<u8> {
    let mut stdout = std::io::stdout().lock();
    match cli.command {
        Command::Schema => {
            stdout.write_all(ripperoni::state::json_schema().as_bytes())?;
        }
        Command::Pipeline { state, base_url } => {
            let loaded = ripperoni::validate::load_with(&state, base_url.as_deref())?;
            let plan = ripperoni::Plan::new(&loaded);
            stdout.write_all(plan.shell(false).as_bytes())?;
        }
        Command::Check { state } => {
            let loaded = ripperoni::load(&state)?;
            let plan = ripperoni::Plan::new(&loaded);
            writeln!(
                stdout,
                "{}: valid; target `{}`, {} fetch round(s), output in {}",
                state.display(),
                plan.target,
                plan.rounds,
                plan.output.dir.display()
            )?;
        }
        Command::Scaffold {
            name,
            dir,
            base_url,
        } => {
            let written = ripperoni::scaffold::write(&dir, &name, &base_url)?;
            for p in &written {
                writeln!(stdout, "{}", p.display())?;
            }
            eprintln!(
                "ripperoni: serve the demo site with `rip-testserver --dir testdata/site --bind \
                 127.0.0.1:8080`, then `ripperoni run {}`",
                written[0].display()
            );
        }
        Command::Run {
            state,
            restart,
            quiet,
            verbose,
            base_url,
            bin_dir,
        } => {
            let loaded = ripperoni::validate::load_with(&state, base_url.as_deref())?;
            let opts = ripperoni::runner::Options {
                quiet,
                verbose,
                restart,
                bin_dir,
            };
            let outcome = ripperoni::runner::run(&loaded, &opts)?;
            if !quiet {
                eprint!("{}", summary(&outcome));
            }
            // Said even with -q: the output folder was not replaced.
            if let Some(note) = &outcome.kept_note {
                eprintln!("{note}");
            }
            return Ok(outcome.exit_code);
        }
    }
    stdout.flush()?;
    Ok(rip_core::exit::COMPLETE)
}

/// The end of a run: rip-health's summary, Ladon's counters, the errors, the report.
fn summary(o: &ripperoni::runner::Outcome) -> String {
    let r = &o.record;
    let c = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let secs = (r.end - r.start).num_milliseconds() as f64 / 1000.0;
    let mut s = String::new();
    s.push_str(&o.health_text);
    if !o.health_text.ends_with('\n') && !o.health_text.is_empty() {
        s.push('\n');
    }
    let how = match (r.interrupted, &r.resumed) {
        (true, _) => " (interrupted: run the same command again to resume)".to_owned(),
        (false, Some(id)) => format!(" (resumed run {id})"),
        (false, None) => String::new(),
    };
    s.push_str(&format!(
        "ripperoni: {} {} in {secs:.1}s{how}: consumed {}, persisted {}, failed {}, errors {}\n",
        r.target,
        r.status.as_str(),
        c("consumed"),
        c("persisted"),
        c("failed"),
        r.errors.len()
    ));
    for e in r.errors.iter().take(10) {
        s.push_str(&format!("  - {e}\n"));
    }
    if r.errors.len() > 10 {
        s.push_str(&format!(
            "  … and {} more (in runs.ndjson)\n",
            r.errors.len() - 10
        ));
    }
    s.push_str(&format!("report: {}\n", o.report.display()));
    s
}
