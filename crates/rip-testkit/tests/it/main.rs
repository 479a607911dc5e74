//! Tests across the workspace: the README's commands, run as printed; the refusal of a
//! program older than its sources; ARCHITECTURE.md's crate table and rules against
//! `cargo metadata`; and every relative link of the Markdown documents.

mod architecture;
mod doc_links;
mod fresh;
mod netlab;
mod readme;
