//! Refs queued past the memory budget, on disk: a [`SpillFile`] of refs tagged with their
//! sequence numbers, read back where each host's queue says.
//!
//! A host's queue keeps [`Run`]s, not offsets per ref: refs of one host that follow each
//! other in the file (grouped input, the case that needs spilling) are one run of a few
//! bytes in memory whatever their number.

use std::io;

use rip_core::Ref;
use rip_core::spill::SpillFile;

/// Consecutive entries of one host in the spill file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Run {
    /// Where the next entry to read starts.
    next: u64,
    /// Where the run ends (the file's end when it was last extended).
    end: u64,
}

impl Run {
    /// True when every entry of the run has been read.
    pub(crate) fn is_empty(&self) -> bool {
        self.next >= self.end
    }
}

/// The spill file of the hosts' queues.
#[derive(Debug, Default)]
pub(crate) struct Spill {
    file: SpillFile<Ref>,
}

impl Spill {
    /// Appends `r`; extends `last` when it ends where the file does, else returns a new run
    /// (the caller pushes it).
    pub(crate) fn write(
        &mut self,
        seq: u64,
        r: &Ref,
        last: Option<&mut Run>,
    ) -> io::Result<Option<Run>> {
        let start = self.file.write(seq, r)?;
        let end = self.file.end();
        match last {
            Some(run) if run.end == start => {
                run.end = end;
                Ok(None)
            }
            _ => Ok(Some(Run { next: start, end })),
        }
    }

    /// Reads the next entry of `run` and moves the run past it.
    pub(crate) fn read(&mut self, run: &mut Run) -> io::Result<(u64, Ref)> {
        let (seq, r, next) = self.file.read(run.next)?;
        run.next = next;
        Ok((seq, r))
    }

    /// Refs written over the run.
    pub(crate) fn spilled(&self) -> u64 {
        self.file.written()
    }

    /// Entries on disk now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> u64 {
        self.file.waiting()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(url: &str) -> Ref {
        let mut r = Ref::new(url);
        r.attempt = 2;
        r.extra
            .insert("site".into(), serde_json::json!({"from": [1, 2]}));
        r
    }

    #[test]
    fn runs_read_back_in_order_and_adjacent_entries_share_a_run() {
        let mut spill = Spill::default();
        let mut a = spill.write(0, &r("http://a/0"), None).unwrap().unwrap();
        assert_eq!(
            spill.write(1, &r("http://a/1"), Some(&mut a)).unwrap(),
            None
        );
        let mut b = spill.write(2, &r("http://b/0"), None).unwrap().unwrap();
        // a's run no longer ends at the file's end: a new run.
        let mut a2 = spill
            .write(3, &r("http://a/2"), Some(&mut a))
            .unwrap()
            .unwrap();
        assert_eq!(spill.read(&mut a).unwrap().1.url, "http://a/0");
        assert_eq!(spill.read(&mut b).unwrap(), (2, r("http://b/0")));
        assert_eq!(spill.read(&mut a).unwrap().0, 1);
        assert!(a.is_empty() && b.is_empty());
        assert_eq!(spill.held(), 1);
        assert_eq!(spill.read(&mut a2).unwrap().1.url, "http://a/2");
        // All read: the file starts over.
        assert_eq!((spill.held(), spill.file.end(), spill.spilled()), (0, 0, 4));
        let mut c = spill.write(9, &r("http://c/"), None).unwrap().unwrap();
        assert_eq!(c.next, 0);
        assert_eq!(spill.read(&mut c).unwrap().0, 9);
    }
}
