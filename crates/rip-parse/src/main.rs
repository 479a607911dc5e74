//! `rip-parse`: see the library docs. This file is glue.

use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Turn fetched pages into documents.
///
/// Reads NDJSON `page` records and writes one `doc` per page (or a `failure` with
/// `phase: parse`); every other record passes through. Without `--rules`, each HTML
/// page gives a generic doc (title, canonical, lang, description, keywords, headings,
/// text, links). With `--rules site.toml`, pages are routed to the concepts the file
/// describes and their fields extracted and validated.
#[derive(Debug, Parser)]
#[command(version, about)]
struct Cli {
    #[command(flatten)]
    common: rip_cli::StageArgs,

    /// A rules file (TOML) describing the site's concepts. Checked before any input is read.
    #[arg(long, short = 'r', value_name = "FILE", env = "RIP_RULES")]
    rules: Option<PathBuf>,

    /// Check the rules file (and the --output-schema file, if any) and exit (0 when
    /// they are valid).
    #[arg(long)]
    check_rules: bool,

    /// Print the JSON Schema of rules files and exit.
    #[arg(long, exclusive = true)]
    rules_schema: bool,

    /// A JSON Schema file every doc must satisfy, whatever its concept (after the
    /// concept's own schema). Checked before any input is read.
    #[arg(long, value_name = "FILE", env = "RIP_OUTPUT_SCHEMA")]
    output_schema: Option<PathBuf>,

    /// What a doc that breaks --output-schema becomes: skip (a VALIDATION failure
    /// `parse.schema`), warn (the doc, with the violations in its errors and on stderr)
    /// or halt (that failure, then stop with exit code 1).
    #[arg(
        long,
        value_enum,
        value_name = "WHAT",
        default_value = "skip",
        requires = "output_schema"
    )]
    on_schema_error: rip_parse::OnSchemaError,

    /// Pages that are not HTML (images, PDFs, JSON, plain text) become docs of concept
    /// `unknown` with `contentType` and `bytes`, instead of `parse.notHtml` failures.
    #[arg(long)]
    keep_other: bool,

    /// Add the main content as Markdown (`markdown` field) to generic docs.
    #[arg(long)]
    markdown: bool,

    /// Worker threads (default: one per core).
    #[arg(
        long,
        short = 'j',
        value_name = "N",
        default_value_t = 0,
        hide_default_value = true
    )]
    threads: usize,

    /// Write docs as they are ready, not in input order (faster when page sizes vary).
    #[arg(long)]
    unordered: bool,

    /// Most pages in flight at once (default: 64 per thread; --window-mib bounds their bytes).
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    window: usize,

    /// Most MiB of page records in flight at once (memory: parsing takes about ten
    /// times a page's size).
    #[arg(long, value_name = "MIB", default_value_t = 16)]
    window_mib: usize,

    /// Pages whose body is larger than this become failures (e.g. 32MiB, 500k, as
    /// rip-fetch's --max-body; a bare number is read as MiB, with a warning).
    #[arg(long, value_name = "SIZE", default_value = "32MiB", value_parser = rip_cli::MibOrSize::parse)]
    max_body: rip_cli::MibOrSize,

    /// Pages whose elements nest deeper than this become failures.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    max_nesting: usize,
    /// The old spelling of --max-nesting (--max-depth is rip-discover's link depth).
    #[arg(
        long = "max-depth",
        value_name = "N",
        hide = true,
        conflicts_with = "max_nesting"
    )]
    old_max_depth: Option<usize>,

    /// Pages whose HTML takes longer than this to parse become failures.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    parse_timeout: Duration,
}

const PROGRAM: &str = "rip-parse";

fn main() -> ExitCode {
    let mut cli: Cli = rip_cli::parse();
    cli.common.init_logging();
    let quiet = cli.common.quiet;
    let renamed = rip_cli::Renamed::new(PROGRAM, "--max-depth", "--max-nesting");
    cli.max_nesting = renamed
        .take(Some(cli.max_nesting), cli.old_max_depth.take(), quiet)
        .unwrap_or(cli.max_nesting);
    if let Some(warning) = cli.max_body.warning(PROGRAM, "--max-body")
        && !quiet
    {
        eprintln!("{warning}");
    }
    rip_cli::exit_with(PROGRAM, run(cli))
}

fn run(cli: Cli) -> anyhow::Result<rip_core::Status> {
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
        Some(path) => Some(rip_parse::OutputSchema::load(path, cli.on_schema_error)?),
        None => None,
    };
    if cli.check_rules {
        anyhow::ensure!(
            rules.is_some() || output_schema.is_some(),
            "--check-rules needs --rules or --output-schema"
        );
        if let Some(r) = &rules {
            eprintln!(
                "{}: {} concepts ({}), plus `unknown`",
                r.path.display(),
                r.concepts.len(),
                r.concepts
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        if let Some(s) = &output_schema {
            eprintln!("{}: a valid JSON Schema", s.path.display());
        }
        return Ok(rip_core::Status::Complete);
    }
    let stop = rip_cli::install_interrupt()?;
    let (input, input_name) = cli.common.open_input()?;
    let mut pipe = rip_core::PipeOptions::new("rip-parse");
    pipe.input_name = input_name;
    pipe.strict = cli.common.strict;
    pipe.stop = Some(stop);
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
        },
        threads: cli.threads,
        unordered: cli.unordered,
        window: cli.window,
        window_bytes: cli.window_mib.max(1).saturating_mul(1 << 20),
        progress: on_progress,
    };
    let report = rip_parse::run(config, input, std::io::stdout());
    progress.finish();
    let report = report?;
    if !cli.common.quiet {
        let passed = report.summary.passed_through_text();
        let passed = passed.map(|p| format!("; {p}")).unwrap_or_default();
        eprintln!("rip-parse: {}{passed}", report.stats.line());
    }
    if report.summary.status == rip_core::Status::Failed {
        // Why the run stopped (onSchemaError = "halt"), as the last line on stderr.
        for note in &report.summary.notes {
            eprintln!("rip-parse: error: {note}");
        }
    }
    Ok(report.summary.status)
}
