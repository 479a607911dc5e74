//! `rip-cache`: see `rip_http::cache::DiskCache::{stats, verify, compact}`. This file is
//! glue: arguments → command → report and exit code.

use rip_bin::cache as args;

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use args::Command;
use rip_http::cache::{CompactOptions, CompactPhase, DiskCache, EntryProblem};

const PROGRAM: &str = "rip-cache";

/// For fault tests: `RIP_CACHE_TEST_PAUSE=copying|locked|renamed` stops a compaction at
/// that step for a minute (the test kills it there).
const PAUSE_VAR: &str = "RIP_CACHE_TEST_PAUSE";

fn main() -> ExitCode {
    let cli: args::Cli = rip_cli::parse();
    rip_cli::init_logging(0, cli.quiet);
    match run(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(err) => rip_cli::exit_with_error(PROGRAM, &err),
    }
}

fn run(cli: &args::Cli) -> anyhow::Result<u8> {
    if !cli.cache_dir.is_dir() {
        // Every command reads a cache the stages made: a folder that is not there is a
        // mistyped path (or variable), not an empty cache, and none is made here.
        anyhow::bail!(
            "the cache folder {} does not exist (cache folder {}) (hint: check the path; \
             rip-cache keeps a cache the stages made, and creates none)",
            cli.cache_dir.display(),
            rip_cli::cache_dir::named_by()
        );
    }
    let cache = DiskCache::new(&cli.cache_dir);
    let pause = std::env::var(PAUSE_VAR).ok();
    let at = |phase: CompactPhase| {
        if pause.as_deref() == Some(phase_name(phase)) {
            rip_core::stderr::say(format_args!(
                "{PROGRAM}: paused at {} ({PAUSE_VAR})",
                phase_name(phase)
            ));
            std::thread::sleep(std::time::Duration::from_secs(60));
        }
    };
    let options = |older_than| CompactOptions {
        older_than,
        at: Some(&at),
    };
    let (report, summary, clean) = match &cli.command {
        Command::Stats => {
            let s = cache.stats()?;
            let text = format!(
                "{} entries in {} packs: {} live, {} reclaimable{}",
                s.entries,
                s.packs,
                megabytes(s.live_bytes),
                megabytes(s.reclaimable_bytes),
                missing_text(s.missing_packs, s.entries_in_missing_packs),
            );
            (serde_json::to_string(&s)?, text, true)
        }
        Command::Verify => {
            let v = cache.verify()?;
            let text = format!(
                "{} entries: {} read back, {} corrupt; {} bad index lines{}",
                v.entries,
                v.ok,
                v.corrupt,
                v.bad_index_lines,
                problem_lines(&v.problems, v.corrupt),
            );
            (serde_json::to_string(&v)?, text, v.is_clean())
        }
        Command::Compact => compact(&cache, &options(None))?,
        Command::Prune { older_than } => compact(&cache, &options(Some(*older_than)))?,
    };
    writeln!(std::io::stdout().lock(), "{report}").context("writing the report")?;
    if !cli.quiet {
        rip_core::stderr::say(format_args!(
            "{PROGRAM}: {}: {summary}",
            cli.cache_dir.display()
        ));
    }
    Ok(if clean {
        rip_core::exit::COMPLETE
    } else {
        rip_core::exit::PARTIAL
    })
}

fn compact(cache: &DiskCache, options: &CompactOptions) -> anyhow::Result<(String, String, bool)> {
    let c = cache.compact(options)?;
    let text = format!(
        "{} entries: {} kept, {} dropped as old, {} corrupt, {} appended meanwhile; {} → {}{}",
        c.entries_before,
        c.kept,
        c.dropped_old,
        c.dropped_corrupt,
        c.appended_meanwhile,
        megabytes(c.bytes_before),
        megabytes(c.bytes_after),
        problem_lines(&c.problems, c.dropped_corrupt),
    );
    Ok((serde_json::to_string(&c)?, text, c.dropped_corrupt == 0))
}

/// Problems named on stderr at most (the report names up to a thousand).
const SHOWN_PROBLEMS: usize = 10;

/// One line per problem, its URL (when known) beside its place, for the summary.
fn problem_lines(problems: &[EntryProblem], total: u64) -> String {
    let mut text = String::new();
    for p in problems.iter().take(SHOWN_PROBLEMS) {
        let url = p.url.as_deref().unwrap_or("(URL unknown)");
        text.push_str(&format!("\n  {url} at {}: {}", p.place, p.why));
    }
    let shown = problems.len().min(SHOWN_PROBLEMS) as u64;
    if total > shown {
        text.push_str(&format!(
            "\n  … {} more (the report names up to a thousand)",
            total - shown
        ));
    }
    text
}

fn phase_name(phase: CompactPhase) -> &'static str {
    match phase {
        CompactPhase::Copying => "copying",
        CompactPhase::Locked => "locked",
        CompactPhase::Renamed => "renamed",
    }
}

fn missing_text(packs: u64, entries: u64) -> String {
    match packs {
        0 => String::new(),
        _ => format!("; {packs} packs missing ({entries} entries lost)"),
    }
}

/// Bytes as megabytes, one decimal: `26.4 MB`.
fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}
