//! Putting a finished run in place of the previous output, crash-safely.
//!
//! The run's folder (`<staging>/<target>`) and the output folder (`<base>/<target>`) are
//! on one filesystem (the staging folder is in `<base>`), so a rename moves either whole
//! and at once. On Linux the two are exchanged by one `renameat2(RENAME_EXCHANGE)`: at
//! every instant the output folder is the previous output or the new one, never neither.
//! Where the filesystem cannot exchange, two renames: the previous output to
//! `<staging>/.previous`, then the run to the output folder. A kill between the two
//! leaves no output folder, the previous output in `.previous` and the run beside it:
//! nothing is lost, and the next run ([`Swap::recover`], under the run lock) finishes the
//! swap, since the run had been judged fit to put in place before the first rename.
//! Either way the staging folder, the previous output now in it, is removed last
//! ([`Swap::clear`]; what a kill leaves of it, the next run removes).

use crate::plan::{PREVIOUS, Plan};
use rustix::io::Errno;
use std::fs;
use std::io;
use std::path::Path;

/// The three places of a swap.
#[derive(Debug, Clone, Copy)]
pub(super) struct Swap<'a> {
    /// `<base>/.<target>.staging`.
    pub staging: &'a Path,
    /// `<staging>/<target>`: the run to put in place.
    pub next: &'a Path,
    /// `<base>/<target>`: the output folder.
    pub output: &'a Path,
}

impl<'a> Swap<'a> {
    pub(super) fn of(plan: &'a Plan) -> Self {
        Self {
            staging: &plan.staging,
            next: &plan.next.dir,
            output: &plan.output.dir,
        }
    }

    /// Puts the run in place of the output folder; the previous output is left in the
    /// staging folder, for [`Swap::clear`].
    pub(super) fn put_in_place(&self) -> io::Result<()> {
        self.put(true)
    }

    /// Removes the staging folder (after a swap: the previous output).
    pub(super) fn clear(&self) -> io::Result<()> {
        fs::remove_dir_all(self.staging)
    }

    fn put(&self, try_exchange: bool) -> io::Result<()> {
        if !self.output.exists() {
            fs::rename(self.next, self.output)?;
        } else if !try_exchange {
            self.two_renames()?;
        } else {
            match exchange(self.next, self.output) {
                Ok(()) => {}
                // The filesystem cannot exchange.
                Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                    self.two_renames()?;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    fn two_renames(&self) -> io::Result<()> {
        let previous = self.staging.join(PREVIOUS);
        fs::rename(self.output, &previous)?;
        if let Err(e) = fs::rename(self.next, self.output) {
            // Not a crash: an error. The previous output goes back where it was.
            fs::rename(&previous, self.output)?;
            return Err(e);
        }
        Ok(())
    }

    /// Finishes a swap that a kill stopped between its two renames; says what it did.
    /// Nothing to do (`None`) unless `<staging>/.previous` exists.
    pub(super) fn recover(&self) -> io::Result<Option<String>> {
        let previous = self.staging.join(PREVIOUS);
        if !previous.exists() {
            return Ok(None);
        }
        let note = if self.output.exists() {
            None
        } else if self.next.exists() {
            fs::rename(self.next, self.output)?;
            Some(format!(
                "an earlier run was stopped while it was put in place: it is now in {}",
                self.output.display()
            ))
        } else {
            fs::rename(&previous, self.output)?;
            Some(format!(
                "an earlier run was stopped while it was put in place, and is lost: the \
                 output before it is back in {}",
                self.output.display()
            ))
        };
        self.clear()?;
        Ok(note)
    }
}

/// Exchanges two paths at once (`renameat2(RENAME_EXCHANGE)`).
fn exchange(a: &Path, b: &Path) -> Result<(), Errno> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// `<tmp>/out/{.t.staging/t, t}` holding the files `new` and `old`.
    struct Places {
        _tmp: tempfile::TempDir,
        staging: PathBuf,
        next: PathBuf,
        output: PathBuf,
    }

    impl Places {
        fn new(previous: bool) -> Self {
            let tmp = tempfile::tempdir().unwrap();
            let base = tmp.path().join("out");
            let staging = base.join(".t.staging");
            let (next, output) = (staging.join("t"), base.join("t"));
            fs::create_dir_all(next.join(".ripperoni")).unwrap();
            fs::write(next.join("new"), "new").unwrap();
            if previous {
                fs::create_dir_all(output.join(".ripperoni")).unwrap();
                fs::write(output.join("old"), "old").unwrap();
            }
            Self {
                _tmp: tmp,
                staging,
                next,
                output,
            }
        }

        fn swap(&self) -> Swap<'_> {
            Swap {
                staging: &self.staging,
                next: &self.next,
                output: &self.output,
            }
        }

        /// The run is in place, whole, and nothing else is left.
        fn assert_new_in_place(&self) {
            assert_eq!(fs::read_to_string(self.output.join("new")).unwrap(), "new");
            assert!(!self.output.join("old").exists());
            assert!(!self.staging.exists());
        }
    }

    /// A swap and its clearing, with or without a previous output and an exchange.
    fn swapped(previous: bool, try_exchange: bool) {
        let p = Places::new(previous);
        p.swap().put(try_exchange).unwrap();
        p.swap().clear().unwrap();
        p.assert_new_in_place();
    }

    #[test]
    fn a_run_is_exchanged_with_the_previous_output() {
        swapped(true, true);
    }

    #[test]
    fn without_exchange_two_renames_do_the_same() {
        swapped(true, false);
    }

    #[test]
    fn a_first_run_is_renamed_in_place() {
        swapped(false, true);
    }

    #[test]
    fn a_kill_between_the_two_renames_loses_nothing_and_the_next_run_finishes_the_swap() {
        let p = Places::new(true);
        // The first rename happened, the second did not.
        fs::rename(&p.output, p.staging.join(PREVIOUS)).unwrap();
        assert!(!p.output.exists());
        assert!(
            p.staging.join(PREVIOUS).join("old").is_file(),
            "the previous output"
        );
        assert!(p.next.join("new").is_file(), "the run");
        let note = p.swap().recover().unwrap().unwrap();
        assert!(note.contains("it is now in"), "{note}");
        p.assert_new_in_place();
    }

    #[test]
    fn a_kill_after_the_second_rename_leaves_only_the_removal() {
        let p = Places::new(true);
        fs::rename(&p.output, p.staging.join(PREVIOUS)).unwrap();
        fs::rename(&p.next, &p.output).unwrap();
        assert_eq!(p.swap().recover().unwrap(), None);
        p.assert_new_in_place();
    }

    #[test]
    fn a_failed_attempt_is_not_a_swap_to_recover() {
        let p = Places::new(true);
        assert_eq!(p.swap().recover().unwrap(), None);
        assert!(p.next.join("new").is_file(), "left for the run to clear");
        assert!(p.output.join("old").is_file());
    }
}
