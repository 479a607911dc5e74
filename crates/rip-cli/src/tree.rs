//! A process tree that dies with the wrapper that started it.
//!
//! A wrapper (`ripperoni worker`) starts its child as the leader of a process group of its
//! own (out of the terminal's reach: the wrapper forwards Ctrl-C itself), with [`WRAPPER_PID_ENV`]
//! set to the wrapper's pid. Everything the child starts (the programs of `rip-queue work`
//! and the stages of their shell pipelines) stays in that group. The child calls
//! [`die_with_wrapper`] first thing: it asks the kernel for SIGHUP when its parent dies
//! (`PR_SET_PDEATHSIG`, which even a SIGKILL of the wrapper sends), and kills its whole group
//! when that comes. So a wrapper killed with `kill -9` leaves nothing working: no orphan
//! keeps taking records, nor fetching for a worker that is gone.
//!
//! The parent-death signal is the kernel's; the group is what reaches the grandchildren (a
//! program's parent-death signal does not pass to the processes it forks, and a shell is
//! not ours to set one on).

use anyhow::Context as _;
use rip_core::exit::WRAPPER_PID_ENV;
use rustix::process::{Pid, Signal};

/// When this process was started by a wrapper as the leader of a process group of its own
/// ([`WRAPPER_PID_ENV`] names its parent and this process leads its group), kills the group
/// (this process included) as soon as the wrapper dies, however it dies; at once when it is
/// already gone. Otherwise (run by hand, or the variable inherited by a process that does
/// not lead its group) does nothing.
pub fn die_with_wrapper() -> anyhow::Result<()> {
    let Some(wrapper) = std::env::var(WRAPPER_PID_ENV)
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .and_then(Pid::from_raw)
    else {
        return Ok(());
    };
    let me = rustix::process::getpid();
    if rustix::process::getpgrp() != me {
        return Ok(());
    }
    // The handler first, so that a signal sent as soon as it is asked for is not lost.
    let mut hangups = signal_hook::iterator::Signals::new([signal_hook::consts::SIGHUP])
        .context("cannot install the signal handler")?;
    rustix::process::set_parent_process_death_signal(Some(Signal::HUP))
        .context("cannot ask for a signal when the wrapper dies")?;
    std::thread::spawn(move || {
        if hangups.forever().next().is_some() {
            kill_group(me);
        }
    });
    // The wrapper died before the request: nobody would send the signal.
    if rustix::process::getppid() != Some(wrapper) {
        kill_group(me);
    }
    Ok(())
}

/// Kills the process group `group` with SIGKILL (its leader, this process, included).
fn kill_group(group: Pid) {
    let _ = rustix::process::kill_process_group(group, Signal::KILL);
}
