//! Large allocations given back to the system, for stages whose largest records are
//! megabytes (rip-parse).
//!
//! glibc's malloc serves a large buffer from `mmap` and gives it back when it is freed,
//! until the first such free: then it raises its threshold to that size, and every later
//! buffer up to it (a page record, its body, its doc) stays in the heap for good. A fixed
//! threshold ([`THRESHOLD`]) keeps the peak to the pages in flight, for the same CPU
//! (`docs/benchmarks-log.md`, figures moved from module docs). glibc reads the setting
//! from the environment when the process starts, and a stage cannot call `mallopt` without
//! `unsafe` (forbidden here), so the stage starts itself again with the variable set. A
//! value the user set wins. Other C libraries ignore the variable.

use std::os::unix::process::CommandExt;

/// glibc's variable for a fixed threshold.
pub const VAR: &str = "MALLOC_MMAP_THRESHOLD_";
/// The threshold set: buffers of 4 MiB and more (the rare huge page, its doc) come from
/// `mmap` and go back when freed; ordinary pages stay in the heap, with no system call
/// each (256 KiB cost rip-parse 6% more CPU in `mmap`/`munmap` for the same peak).
pub const THRESHOLD: &str = "4194304";

/// Starts this program again, with the same arguments, input and output, with a fixed
/// `mmap` threshold, unless [`VAR`] is set already. Returns only when it is set or the
/// new start failed (then the program goes on as it is).
pub fn return_large_allocations() {
    if std::env::var_os(VAR).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    // `exec` returns only on failure (before logging is set up: nothing to say it to);
    // the program then runs with glibc's default.
    let _ = std::process::Command::new(exe)
        .args(args)
        .env(VAR, THRESHOLD)
        .exec();
}
