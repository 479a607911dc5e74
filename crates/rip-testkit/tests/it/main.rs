//! Tests across the workspace's binaries: the README's commands, run as printed; and
//! the refusal of a program older than its sources.

mod fresh;
mod readme;
