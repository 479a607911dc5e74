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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_tree_kills_the_grandchildren_of_its_command() {
        let mut sh = std::process::Command::new("sh")
            .args(["-c", "sleep 60 | sleep 60"])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while descendants(sh.id()).len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let below = descendants(sh.id());
        assert_eq!(below.len(), 2, "{below:?}");
        drop(RunTree::of(Some(sh.id())));
        // Gone, or a zombie for its parent to reap (a kill takes effect soon, not at once).
        let dead = |p: &Pid| {
            let state = std::fs::read_to_string(format!("/proc/{}/stat", p.as_raw_nonzero()));
            let state = state.unwrap_or_default();
            let after = state.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
            matches!(after, None | Some(Some('Z')))
        };
        while !below.iter().all(dead) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(below.iter().all(dead), "{below:?}");
        sh.kill().ok();
        sh.wait().ok();
    }
}
