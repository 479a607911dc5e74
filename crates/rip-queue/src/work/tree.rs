//! The processes of a run, killed when the run is stopped before its end: the command
//! (`kill_on_drop`) and everything it started (the stages of a shell pipeline), which a kill
//! of the command alone leaves running, fetching for a worker that gave the host up.

use rustix::process::{Pid, Signal};

/// The descendants of a run's command, killed (SIGKILL) when dropped while armed.
pub(super) struct RunTree(Option<u32>);

impl RunTree {
    /// The tree below the process `pid` (the command itself is tokio's to kill).
    pub(super) fn of(pid: Option<u32>) -> Self {
        Self(pid)
    }

    /// The run ended by itself: nothing to kill.
    pub(super) fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for RunTree {
    fn drop(&mut self) {
        let Some(pid) = self.0 else { return };
        // Stopped first, so that none starts another process meanwhile; then killed.
        let tree = descendants(pid);
        for &p in &tree {
            let _ = rustix::process::kill_process(p, Signal::STOP);
        }
        for &p in &tree {
            let _ = rustix::process::kill_process(p, Signal::KILL);
        }
    }
}

/// Every live descendant of `pid`, from `/proc/<pid>/task/<tid>/children`.
pub(super) fn descendants(pid: u32) -> Vec<Pid> {
    let mut found = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children = std::fs::read_to_string(task.path().join("children"));
            for child in children.unwrap_or_default().split_whitespace() {
                if let Ok(c) = child.parse::<u32>() {
                    todo.push(c);
                    found.extend(i32::try_from(c).ok().and_then(Pid::from_raw));
                }
            }
        }
    }
    found
}

/// `sh -c "sleep 60 | sleep 60"`, once both sleeps are below it (at most 60 s): a command
/// with a pipeline under it, for the tests of what is done to a run's tree.
#[cfg(test)]
pub(crate) fn two_sleeps_below_a_shell() -> std::process::Child {
    use std::time::{Duration, Instant};
    let sh = std::process::Command::new("sh")
        .args(["-c", "sleep 60 | sleep 60"])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while descendants(sh.id()).len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    sh
}

/// The state letter of process `pid` in /proc (`T`: stopped, `Z`: a zombie; `?` when it
/// is gone).
#[cfg(test)]
pub(crate) fn state_of(pid: u32) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(") ").map(|(_, rest)| rest);
    rest.and_then(|r| r.chars().next()).unwrap_or('?')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_tree_kills_the_grandchildren_of_its_command() {
        let mut sh = two_sleeps_below_a_shell();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let below = descendants(sh.id());
        assert_eq!(below.len(), 2, "{below:?}");
        drop(RunTree::of(Some(sh.id())));
        // Gone, or a zombie for its parent to reap (a kill takes effect soon, not at once).
        let dead = |p: &Pid| matches!(state_of(p.as_raw_nonzero().get() as u32), '?' | 'Z');
        while !below.iter().all(dead) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(below.iter().all(dead), "{below:?}");
        sh.kill().ok();
        sh.wait().ok();
    }
}
