#![deny(missing_docs)]
//! `ripperoni`: the wrapper that runs a whole scrape from one state file.
//!
//! A scrape is described by `<target>.state.json` ([`state::State`], the reference's run
//! parameters; schema in `docs/schemas/state.schema.json`). `ripperoni run` checks it
//! ([`validate`]: the schema first, every problem named by its field with what was
//! expected and what was found, then contradictions), turns it into a pipeline of the
//! `rip-*` stages ([`plan`]), and runs that pipeline as child processes joined by pipes
//! ([`runner`]), exactly the shell pipeline `ripperoni pipeline` prints. The wrapper holds
//! no stage logic: it starts processes, relays bytes, counts records for its progress
//! display ([`progress`]), and reads the stages' `summary` records and `crawl-health.json`
//! for the run's account.
//!
//! What a run leaves in `<basePath>/<target>/`: the docs, error documents and expected
//! records (`rip-write`), `failures.json`, `stream.ndjson` (the final stream: records,
//! ledgers and every stage's summary), `crawl-health.json` and `report.html`
//! (`rip-reconcile --dir`, `rip-health --dir --html`), and `.ripperoni/` (crawl state,
//! each stage's stderr, what a resumed run needs). A run writes all that beside the
//! output folder, in `<basePath>/.<target>.staging/<target>/`, and replaces the output
//! folder with it, at once, only when it is complete or partial with something in it: a
//! run that is not ready, fails, or is stopped before anything came out leaves the
//! previous output as it was ([`runner`]). Every run appends a [`runlog::RunRecord`] to
//! `<basePath>/runs.ndjson`, which says when the output was kept and where the run is.
//!
//! Exit codes: 0 complete, 1 fatal, 2 partial, 3 not ready (the start URL is not there
//! yet), 130 interrupted (rerun the same command to resume).

pub mod account;
pub mod plan;
mod problem;
pub mod progress;
pub mod runlog;
pub mod runner;
pub mod scaffold;
mod schema_errors;
pub mod state;
pub mod tap;
pub mod validate;

pub use plan::Plan;
pub use state::State;
pub use validate::{Loaded, StateError, load};
