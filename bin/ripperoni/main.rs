//! `ripperoni`: see the `ripperoni` library. This file is glue: arguments → library → exit
//! code.

mod shell;

use rip_bin::ripperoni as args;

use args::Command;
use std::io::Write;
use std::path::Path;
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
        Command::Check { state } => check(&state, &mut stdout)?,
        Command::Completions { shell, dir } => {
            shell::completions(shell, dir.as_deref(), &mut stdout)?;
        }
        Command::Man { dir } => shell::man(&dir, &mut stdout)?,
        Command::Worker {
            state,
            idle_exit,
            bin_dir,
            metrics,
        } => {
            let loaded = ripperoni::load(&state)?;
            let queue_args = metrics_args(&metrics);
            return ripperoni::runner::worker(
                &loaded,
                bin_dir.as_deref(),
                idle_exit.as_deref(),
                &queue_args,
            );
        }
        Command::Scaffold {
            name,
            dir,
            base_url,
        } => scaffold(&dir, &name, &base_url, &mut stdout)?,
        Command::Run {
            state,
            restart,
            quiet,
            verbose,
            base_url,
            bin_dir,
            metrics,
        } => {
            let served = serve_pipeline_metrics(&metrics, quiet)?;
            let opts = ripperoni::runner::Options {
                quiet,
                verbose,
                restart,
                bin_dir,
                metrics: served.as_ref().map(|(_, hook)| hook.clone()),
            };
            return scrape(&state, base_url.as_deref(), &opts);
        }
    }
    stdout.flush()?;
    Ok(rip_core::exit::COMPLETE)
}

/// `ripperoni worker --metrics`: the flags `rip-queue work` is given to serve them.
fn metrics_args(metrics: &rip_cli::metrics::MetricsArgs) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(addr) = metrics.metrics {
        args.extend(["--metrics".to_owned(), addr.to_string()]);
    }
    if let Some(linger) = metrics.metrics_linger {
        args.extend([
            "--metrics-linger".to_owned(),
            format!("{}ms", linger.as_millis()),
        ]);
    }
    args
}

/// `ripperoni run --metrics`: the wrapper's endpoint, serving its stages' metrics (each
/// scraped by the wrapper, its samples labelled with its `step`) merged with its own; and
/// the hook that tells it where each stage serves them.
fn serve_pipeline_metrics(
    metrics: &rip_cli::metrics::MetricsArgs,
    quiet: bool,
) -> anyhow::Result<
    Option<(
        rip_cli::metrics::MetricsServer,
        ripperoni::runner::MetricsHook,
    )>,
> {
    use rip_cli::metrics::{Upstreams, merge, render};
    let Some(addr) = metrics.metrics else {
        return Ok(None);
    };
    let upstreams = Upstreams::start()?;
    let stages = upstreams.clone();
    let server = rip_cli::metrics::serve(
        addr,
        std::sync::Arc::new(move || {
            let mut texts = vec![render("ripperoni")];
            texts.extend(stages.texts());
            merge(&texts)
        }),
    )?;
    if !quiet || addr.port() == 0 {
        rip_core::stderr::say(format_args!(
            "ripperoni: metrics on http://{}/metrics",
            server.addr()
        ));
    }
    let hook =
        ripperoni::runner::MetricsHook(std::sync::Arc::new(move |step: &str, line: &str| {
            if let Some(addr) = Upstreams::address_in(line) {
                upstreams.add(step, addr);
            }
        }));
    Ok(Some((server.lingering(metrics.metrics_linger), hook)))
}

/// `ripperoni run`: the scrape, its summary on stderr, and its exit code.
fn scrape(
    state: &Path,
    base_url: Option<&str>,
    opts: &ripperoni::runner::Options,
) -> anyhow::Result<u8> {
    let loaded = ripperoni::validate::load_with(state, base_url)?;
    let outcome = ripperoni::runner::run(&loaded, opts)?;
    // -q silences the progress and the health summary, not the verdict of a run that is
    // not complete: what is missing or failed, and where the report is.
    let complete = outcome.record.status == ripperoni::runlog::RunStatus::Complete;
    if !opts.quiet || !complete {
        rip_core::stderr::say(summary(&outcome, !opts.quiet));
    }
    // Said even with -q: the output folder was not replaced.
    if let Some(note) = &outcome.kept_note {
        rip_core::stderr::say(note);
    }
    Ok(outcome.exit_code)
}

/// `ripperoni check`: the state file is valid, and what it would do.
fn check(state: &Path, out: &mut impl Write) -> anyhow::Result<()> {
    let loaded = ripperoni::load(state)?;
    let plan = ripperoni::Plan::new(&loaded);
    writeln!(
        out,
        "{}: valid; target `{}`, {} fetch round(s), output in {}",
        state.display(),
        plan.target,
        plan.rounds,
        plan.output.dir.display()
    )?;
    Ok(())
}

/// `ripperoni scaffold`: the files written, one a line, and what to run next.
fn scaffold(dir: &Path, name: &str, base_url: &str, out: &mut impl Write) -> anyhow::Result<()> {
    let written = ripperoni::scaffold::write(dir, name, base_url)?;
    for p in &written {
        writeln!(out, "{}", p.display())?;
    }
    rip_core::stderr::say(format_args!(
        "ripperoni: serve the demo site with `rip-testserver --dir testdata/site --bind \
         127.0.0.1:8080`, then `ripperoni run {}`",
        written[0].display()
    ));
    Ok(())
}

/// The end of a run: rip-health's summary (with `health`), Ladon's counters, the errors,
/// the report.
fn summary(o: &ripperoni::runner::Outcome, health: bool) -> String {
    let r = &o.record;
    let c = |k: &str| r.counters.get(k).copied().unwrap_or(0);
    let secs = (r.end - r.start).num_milliseconds() as f64 / 1000.0;
    let mut s = String::new();
    if health {
        s.push_str(&o.health_text);
        if !o.health_text.ends_with('\n') && !o.health_text.is_empty() {
            s.push('\n');
        }
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
    if r.counters.contains_key("renderAuto.fetched") {
        let a = |k: &str| c(&format!("renderAuto.{k}"));
        s.push_str(&format!(
            "ripperoni: render auto: {} pages fetched, {} rendered, {} kept from the browser; \
             {} judgements from their HTML, {} by a learnt URL pattern, {} patterns learnt \
             (over the rounds)\n",
            a("fetched"),
            a("rendered"),
            a("fetched").saturating_sub(a("rendered")),
            a("autoChecked"),
            a("autoLearnt"),
            a("patternsLearnt"),
        ));
    }
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
