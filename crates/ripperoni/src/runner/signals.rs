//! SIGINT and SIGTERM, escalated: the source, then every stage, then SIGKILL. The same for
//! `ripperoni run`'s stages and for `ripperoni worker`'s `rip-queue work` and its programs.

use anyhow::Context as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The run's signal handler.
///
/// Installed before the first stage starts (the stages run in a process group of their
/// own, out of the terminal's reach: a wrapper killed by a Ctrl-C would leave them
/// running), and armed with their pids once they run; a signal that came before is
/// delivered then.
pub(super) struct Signals {
    handle: signal_hook::iterator::Handle,
    count: Arc<AtomicUsize>,
    /// The source's pid and the stages' process group, 0 until armed.
    pids: Arc<Mutex<(i32, i32)>>,
    thread: JoinHandle<()>,
    done: Arc<AtomicBool>,
    said: &'static Said,
}

/// What the first and the second signal say they do.
pub(super) struct Said {
    /// The source is interrupted.
    pub first: &'static str,
    /// Every stage is.
    pub second: &'static str,
}

/// `ripperoni run`'s words.
pub(super) const RUN: Said = Said {
    first: "ripperoni: stopping discovery; the stages finish what is in flight (Ctrl-C again \
            to stop them now)",
    second: "ripperoni: stopping every stage (the next run starts over; Ctrl-C again to kill \
             them)",
};

impl Signals {
    pub(super) fn install(said: &'static Said) -> anyhow::Result<Self> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
            .context("cannot install the signal handler")?;
        let handle = signals.handle();
        let count = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicBool::new(false));
        let pids = Arc::new(Mutex::new((0, 0)));
        let thread = std::thread::spawn({
            let count = count.clone();
            let done = done.clone();
            let pids = pids.clone();
            move || {
                for _ in signals.forever() {
                    if done.load(Ordering::SeqCst) {
                        break;
                    }
                    // Under the lock: `arm` either sees this count or sets the pids first.
                    let Ok(p) = pids.lock() else { break };
                    let n = count.fetch_add(1, Ordering::SeqCst) + 1;
                    if p.0 != 0 {
                        deliver(said, n, p.0, p.1);
                    }
                }
            }
        });
        Ok(Self {
            handle,
            count,
            pids,
            thread,
            done,
            said,
        })
    }

    /// The stages run: signals go to them from now on, and one that came before goes now.
    pub(super) fn arm(&self, source: i32, pgid: i32) {
        if let Ok(mut p) = self.pids.lock() {
            *p = (source, pgid);
            let n = self.count();
            if n > 0 {
                deliver(self.said, n, source, pgid);
            }
        }
    }

    /// Signals received so far.
    pub(super) fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    pub(super) fn close(self) {
        self.done.store(true, Ordering::SeqCst);
        self.handle.close();
        let _ = self.thread.join();
    }
}

/// The `n`th signal's effect: the source, then every stage, then SIGKILL.
fn deliver(said: &Said, n: usize, source: i32, pgid: i32) {
    use rustix::process::{Pid, Signal, kill_process, kill_process_group};
    let (Some(src), Some(group)) = (Pid::from_raw(source), Pid::from_raw(pgid)) else {
        return;
    };
    let _ = match n {
        1 => {
            rip_core::stderr::say(said.first);
            kill_process(src, Signal::INT)
        }
        2 => {
            rip_core::stderr::say(said.second);
            kill_process_group(group, Signal::INT)
        }
        _ => kill_process_group(group, Signal::KILL),
    };
}

/// Kills a process group: the stages already started when a later one could not start.
pub(super) fn kill_group(pgid: i32) {
    use rustix::process::{Pid, Signal, kill_process_group};
    if let Some(group) = Pid::from_raw(pgid) {
        let _ = kill_process_group(group, Signal::KILL);
    }
}
