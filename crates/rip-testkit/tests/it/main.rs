//! Tests across the workspace's binaries: the README's commands, run as printed.

mod readme;
