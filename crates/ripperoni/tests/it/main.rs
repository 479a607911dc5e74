//! Integration tests of the `ripperoni` binary: state files, the printed pipeline, and
//! whole runs on the fault-injecting test server (`cargo build --workspace --bins` first,
//! so the stages are beside the binary).

mod cli;
mod e2e;
mod interrupt;
mod keep;
mod layout;
mod outcomes;
mod queue;
mod queue_broker;
mod render;
mod schema;
mod state_fields;
mod support;
mod warc;
mod wiki;
