//! The host schedules of a process that is its folder's only user ([`super::users`]), in
//! memory, each beside the state its file holds, so that only changed ones are written
//! out. Bounded: past [`MAX_KEPT`] hosts, idle ones go back to their files.

use std::collections::{HashMap, VecDeque};

use super::Schedule;

/// Hosts kept in memory at most (about 150 bytes each), bar those with a request
/// pending.
pub(super) const MAX_KEPT: usize = 50_000;

#[derive(Debug, Clone, Copy)]
struct Kept {
    now: Schedule,
    written: Schedule,
}

/// The schedules in memory.
#[derive(Debug, Default)]
pub(super) struct Sole {
    hosts: HashMap<String, Kept>,
    /// Hosts in the order they were first seen, for [`make_room`](Self::make_room).
    order: VecDeque<String>,
}

impl Sole {
    /// `host`'s schedule, read with `load` (its file's) the first time.
    pub(super) fn schedule(
        &mut self,
        host: &str,
        load: impl FnOnce() -> Schedule,
    ) -> &mut Schedule {
        if !self.hosts.contains_key(host) {
            let s = load();
            self.hosts
                .insert(host.to_owned(), Kept { now: s, written: s });
            self.order.push_back(host.to_owned());
        }
        &mut self.hosts.get_mut(host).expect("inserted above").now
    }

    /// When more than [`MAX_KEPT`] hosts are kept: takes out up to two of the oldest that
    /// are idle at `now` (nothing reserved ahead, held or unanswered) and returns those
    /// whose file must be written. A host with a request pending goes to the back.
    pub(super) fn make_room(&mut self, now: u64) -> Vec<(String, Schedule)> {
        let mut out = Vec::new();
        for _ in 0..2 {
            if self.hosts.len() <= MAX_KEPT {
                break;
            }
            let Some(host) = self.order.pop_front() else {
                break;
            };
            let Some(kept) = self.hosts.get(&host).copied() else {
                continue;
            };
            let s = kept.now;
            if s.unanswered != 0 || s.next.max(s.hold) > now {
                self.order.push_back(host);
                continue;
            }
            self.hosts.remove(&host);
            if s != kept.written {
                out.push((host, s));
            }
        }
        out
    }

    /// Every schedule that differs from its file, to write out.
    pub(super) fn changed(&self) -> impl Iterator<Item = (&str, Schedule)> {
        self.hosts
            .iter()
            .filter(|(_, k)| k.now != k.written)
            .map(|(h, k)| (h.as_str(), k.now))
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.hosts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changed_schedules_are_written_out() {
        let mut a = Sole::default();
        let on_file = Schedule {
            next: 5,
            ..Schedule::default()
        };
        assert_eq!(a.schedule("read", || on_file).next, 5);
        a.schedule("new", Schedule::default).next = 9;
        let changed: Vec<_> = a.changed().map(|(h, s)| (h.to_owned(), s.next)).collect();
        assert_eq!(changed, vec![("new".to_owned(), 9)]);
        // Loaded once: a second look does not read the file again.
        assert_eq!(a.schedule("read", || panic!("read again")).next, 5);
    }

    #[test]
    fn past_the_bound_idle_hosts_go_back_to_their_files_and_busy_ones_stay() {
        let mut a = Sole::default();
        let now = 1_000;
        a.schedule("busy", Schedule::default).unanswered = 900;
        a.schedule("ahead", Schedule::default).next = now + 1;
        for i in 0..MAX_KEPT {
            a.schedule(&format!("h{i}"), Schedule::default).next = 10;
        }
        assert_eq!(a.len(), MAX_KEPT + 2);
        let out = a.make_room(now);
        // The two pending went to the back; the first two idle ones went out, changed.
        assert_eq!(out.len(), 0, "{out:?}");
        let out = a.make_room(now);
        let hosts: Vec<_> = out.iter().map(|(h, _)| h.as_str()).collect();
        assert_eq!(hosts, ["h0", "h1"]);
        assert_eq!(a.len(), MAX_KEPT);
        assert_eq!(a.schedule("busy", || panic!("went out")).unanswered, 900);
        assert!(a.make_room(now).is_empty(), "within the bound");
    }
}
