//! rip-parse, run as a binary: golden outputs, rules errors, hostile pages, and the
//! stream guarantees (pass-through, order, context, summary).

mod differential;
mod golden;
mod html5lib;
mod meta;
mod output_schema;
mod robustness;
mod rules_errors;
mod schema;
mod stream;
mod support;
mod wiki;
