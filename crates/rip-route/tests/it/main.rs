//! `rip-route` as a binary: synthetic record streams (hand-written failures, pages and
//! docs), the policy schema, and pipelines with `rip-fetch` on the fault-injecting server.

mod jq_recipes;
mod last_round;
mod ledger_property;
mod pipeline;
mod render_auto;
mod resolve_groups;
mod routes;
mod schema;
mod support;
