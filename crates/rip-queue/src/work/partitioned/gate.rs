//! A run paused while its partition's lease is in doubt, and resumed if the lease turns out
//! to be still its worker's.
//!
//! A worker that could not renew a partition's lease in time must stop asking the
//! partition's hosts before another worker could take the lease; but the broker cluster
//! electing a leader looks the same to it as its own machine cut off. So the run's processes
//! (the command and every process below it, a shell pipeline's stages) are stopped
//! (SIGSTOP), not killed: a stopped process sends no request. When the lease is renewed at
//! the revision the worker had (nobody took it meanwhile), they go on (SIGCONT) where they
//! were, the batch's records still in hand; when another worker took it, the run is dropped
//! and its processes killed, as before.
//!
//! The gate of a partition's run is found by the run through a task-local
//! ([`GATE`]), so that the shared (unpartitioned) worker, which has none, runs as ever.

use rustix::process::{Pid, Signal};
use std::sync::{Arc, Mutex};

tokio::task_local! {
    /// The gate of the partition whose batch the current task runs.
    pub(in crate::work) static GATE: Arc<Gate>;
}

/// Whether a partition's run may go on, and the process of its command now running.
#[derive(Default)]
pub(in crate::work) struct Gate(Mutex<State>);

#[derive(Default)]
struct State {
    paused: bool,
    command: Option<u32>,
}

impl Gate {
    /// Stops the run's processes (those started later are stopped as they start).
    pub(in crate::work) fn pause(&self) {
        let mut state = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !state.paused {
            state.paused = true;
            if let Some(pid) = state.command {
                signal_run(pid, Signal::STOP);
            }
        }
    }

    /// Lets the run's processes go on.
    pub(in crate::work) fn resume(&self) {
        let mut state = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.paused {
            state.paused = false;
            if let Some(pid) = state.command {
                signal_run(pid, Signal::CONT);
            }
        }
    }

    /// Whether the run is paused.
    pub(in crate::work) fn paused(&self) -> bool {
        self.0.lock().is_ok_and(|s| s.paused)
    }

    /// The run's command started as process `pid` (`None`: it has ended); stopped at once
    /// if the run is paused.
    pub(in crate::work) fn running(&self, pid: Option<u32>) {
        let mut state = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.command = pid;
        if let (true, Some(pid)) = (state.paused, pid) {
            signal_run(pid, Signal::STOP);
        }
    }
}

/// Sends `signal` to the process `pid` and every process below it. Stopping goes from the
/// top down and looks below twice, so that a process started by one not yet stopped is
/// stopped too.
fn signal_run(pid: u32, signal: Signal) {
    let command = i32::try_from(pid).ok().and_then(Pid::from_raw);
    if let Some(command) = command {
        let _ = rustix::process::kill_process(command, signal);
    }
    let rounds = if signal == Signal::STOP { 2 } else { 1 };
    for _ in 0..rounds {
        for p in crate::work::tree::descendants(pid) {
            let _ = rustix::process::kill_process(p, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::tree::{state_of, two_sleeps_below_a_shell};
    use std::time::{Duration, Instant};

    #[test]
    fn a_paused_run_is_stopped_below_its_command_and_goes_on_when_resumed() {
        let mut sh = two_sleeps_below_a_shell();
        let deadline = Instant::now() + Duration::from_secs(60);
        let below: Vec<u32> = (crate::work::tree::descendants(sh.id()).iter())
            .map(|p| p.as_raw_nonzero().get() as u32)
            .collect();
        let all: Vec<u32> = [sh.id()].into_iter().chain(below).collect();
        let gate = Gate::default();
        gate.running(Some(sh.id()));
        gate.pause();
        let states = |want: char| {
            while !all.iter().all(|&p| state_of(p) == want) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            all.iter().map(|&p| state_of(p)).collect::<String>()
        };
        assert_eq!(states('T'), "TTT");
        gate.resume();
        assert_eq!(states('S'), "SSS");
        sh.kill().ok();
        sh.wait().ok();
        for p in &all[1..] {
            let _ = std::process::Command::new("kill")
                .arg(p.to_string())
                .status();
        }
    }
}
