//! The programs' command lines, one module per program (its `<program>/args.rs`, whose doc
//! comments are its help text), in one library so that `ripperoni completions` and
//! `ripperoni man` are made from the very definitions each program's `--help` shows.
//!
//! Each program's `main.rs` takes its parser from here (`use rip_bin::fetch as args;`).
//! `rip-testserver`, a test tool, keeps its parser to itself and has no completions or
//! man page.

// The arguments' doc comments are their help text; flattened groups of flags have none.
#![allow(missing_docs)]

use clap::CommandFactory as _;

#[path = "rip-cache/args.rs"]
pub mod cache;
#[path = "rip-check/args.rs"]
pub mod check;
#[path = "rip-discover/args.rs"]
pub mod discover;
#[path = "rip-fetch/args.rs"]
pub mod fetch;
#[path = "rip-health/args.rs"]
pub mod health;
#[path = "rip-parse/args.rs"]
pub mod parse;
#[path = "rip-queue/args.rs"]
pub mod queue;
#[path = "rip-reconcile/args.rs"]
pub mod reconcile;
#[path = "rip-render/args.rs"]
pub mod render;
#[path = "ripperoni/args.rs"]
pub mod ripperoni;
#[path = "rip-route/args.rs"]
pub mod route;
#[path = "rip-warc/args.rs"]
pub mod warc;
#[path = "rip-write/args.rs"]
pub mod write;

/// Every program's command line as its `--help` shows it (named as the program), in
/// alphabetical order: what completions and man pages are made of. `rip-testserver`, a
/// test tool, is not among them.
pub fn commands() -> Vec<clap::Command> {
    vec![
        cache::Cli::command(),
        check::Cli::command(),
        discover::Cli::command(),
        fetch::Cli::command(),
        health::Cli::command(),
        parse::Cli::command(),
        queue::Cli::command(),
        reconcile::Cli::command(),
        render::Cli::command(),
        route::Cli::command(),
        warc::Cli::command(),
        write::Cli::command(),
        ripperoni::Cli::command(),
    ]
}
