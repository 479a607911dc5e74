//! `rip-parse`: see the `rip_parse` library. This file is glue: arguments → config → run.

use rip_bin::parse as args;

use std::process::ExitCode;
use std::sync::Arc;

const PROGRAM: &str = "rip-parse";

fn main() -> ExitCode {
    rip_cli::malloc::return_large_allocations();
    let mut cli: args::Cli = rip_cli::parse();
    cli.common.init_logging();
    let quiet = cli.common.quiet;
    let renamed = rip_cli::Renamed::new(PROGRAM, "--max-depth", "--max-nesting");
    cli.max_nesting = renamed
        .take(Some(cli.max_nesting), cli.old_max_depth.take(), quiet)
        .unwrap_or(cli.max_nesting);
    let renamed = rip_cli::Renamed::new(PROGRAM, "-j", "--threads");
    cli.threads = renamed
        .take(Some(cli.threads), cli.old_j.take(), quiet)
        .unwrap_or(cli.threads);
    if let Some(warning) = cli.max_body.warning(PROGRAM, "--max-body")
        && !quiet
    {
        rip_core::stderr::say(warning);
    }
    rip_cli::exit_with(PROGRAM, run(cli))
}

fn run(cli: args::Cli) -> anyhow::Result<rip_core::Status> {
    if cli.rules_schema {
        use std::io::Write as _;
        std::io::stdout().write_all(rip_parse::rules::model::json_schema().as_bytes())?;
        return Ok(rip_core::Status::Complete);
    }
    let rules = match &cli.rules {
        Some(path) => Some(Arc::new(rip_parse::Rules::load(path)?)),
        None => None,
    };
    let output_schema = match &cli.output_schema {
        Some(path) => Some(rip_parse::OutputSchema::load(
            path,
            cli.on_schema_error.into(),
        )?),
        None => None,
    };
    if cli.check_rules {
        return checked(rules.as_deref(), output_schema.as_ref());
    }
    let _metrics = cli.metrics.start(PROGRAM, cli.common.quiet)?;
    let (input, pipe) = cli.common.open_pipe(PROGRAM)?;
    let progress = rip_cli::progress::Progress::new("rip-parse", cli.common.quiet);
    let on_progress: Option<rip_parse::OnProgress> = progress.is_visible().then(|| {
        let p = progress.clone();
        Arc::new(move |s: &rip_parse::Stats| p.set(s.line())) as rip_parse::OnProgress
    });
    let config = rip_parse::Config {
        pipe,
        extract: rip_parse::ExtractOptions {
            rules,
            markdown: cli.markdown,
            limits: rip_parse::dom::ParseLimits {
                max_depth: cli.max_nesting,
                time_budget: cli.parse_timeout,
            },
            max_body: cli.max_body.bytes,
            keep_other: cli.keep_other,
            output_schema,
            stream: !cli.no_stream,
            paths: Default::default(),
        },
        threads: cli.threads,
        unordered: cli.unordered,
        window: cli.window,
        window_bytes: cli.window_mib.max(1).saturating_mul(1 << 20),
        progress: on_progress,
    };
    let report = rip_parse::run(config, input, rip_cli::stdout());
    progress.finish();
    let report = report?;
    if !cli.common.quiet {
        let passed = report.summary.passed_through_text();
        let passed = passed.map(|p| format!("; {p}")).unwrap_or_default();
        rip_core::stderr::say(format_args!("rip-parse: {}{passed}", report.stats.line()));
    }
    if report.summary.status == rip_core::Status::Failed {
        // Why the run stopped (onSchemaError = "halt"), as the last line on stderr.
        for note in &report.summary.notes {
            rip_core::stderr::say(format_args!("rip-parse: error: {note}"));
        }
    }
    Ok(report.summary.status)
}

/// `--check-rules`: the files loaded (so they are valid), said on stderr.
fn checked(
    rules: Option<&rip_parse::Rules>,
    output_schema: Option<&rip_parse::OutputSchema>,
) -> anyhow::Result<rip_core::Status> {
    anyhow::ensure!(
        rules.is_some() || output_schema.is_some(),
        "--check-rules needs --rules or --output-schema"
    );
    if let Some(r) = rules {
        let names: Vec<&str> = r.concepts.iter().map(|c| c.name.as_str()).collect();
        rip_core::stderr::say(format_args!(
            "{}: {} concepts ({}), plus `unknown`",
            r.path.display(),
            r.concepts.len(),
            names.join(", ")
        ));
        for c in r.concepts.iter().chain([&r.unknown]) {
            match c.needs_tree() {
                None => {
                    rip_core::stderr::say(format_args!("  {}: read in the streaming pass", c.name))
                }
                Some(why) => rip_core::stderr::say(format_args!(
                    "  {}: read from a tree ({why} needs one: sibling combinators, :has, \
                     :nth-child and the like, inner or outer HTML)",
                    c.name
                )),
            }
        }
    }
    if let Some(s) = output_schema {
        rip_core::stderr::say(format_args!("{}: a valid JSON Schema", s.path.display()));
    }
    Ok(rip_core::Status::Complete)
}
