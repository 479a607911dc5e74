//! How a run ended: its status and exit code, whether the same command resumes it, and
//! whether it is put in place of the previous output.

use super::pipeline::Ended;
use crate::runlog::RunStatus;

/// The judgement on an ended run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Verdict {
    /// How it ended.
    pub status: RunStatus,
    /// The wrapper's exit code.
    pub exit_code: u8,
    /// Only the source was interrupted, every other stage ended on its own: the same
    /// command resumes it.
    pub resumable: bool,
    /// Why the run is not put in place of the previous output; `None`: it is (complete
    /// or partial, with something in it).
    pub not_in_place: Option<&'static str>,
}

/// Judges a run from its stages' exit codes and summaries, and rip-health's exit code.
pub(super) fn judge(e: &Ended, health_exit: Option<i32>) -> Verdict {
    let failed = |exit: Option<i32>| exit.is_none() || exit == Some(1);
    // After a Ctrl-C the source exits 130 (or dies): the stages after it decide.
    let fatal = e
        .stages
        .iter()
        .skip(usize::from(e.interrupted))
        .any(|s| failed(s.exit));
    let source_exit = e.stages.first().and_then(|s| s.exit);
    let status = if fatal && !e.hard_stop {
        RunStatus::Failed
    } else if source_exit == Some(i32::from(rip_core::exit::NOT_READY)) {
        RunStatus::NotReady
    } else if e.interrupted || health_exit != Some(0) || e.stages.iter().any(|s| s.exit != Some(0))
    {
        RunStatus::Partial
    } else {
        RunStatus::Complete
    };
    let resumable = e.interrupted
        && !e.hard_stop
        && e.stages[1..]
            .iter()
            .all(|s| matches!(s.exit, Some(0 | 2)) && s.status.is_some());
    let not_in_place = match status {
        RunStatus::NotReady => Some("is not ready (its source is not there)"),
        RunStatus::Failed => Some("failed"),
        _ if e.terminal > 0 => None,
        _ if e.interrupted => Some("was interrupted before anything came out"),
        _ => Some("has nothing in it"),
    };
    let exit_code = if e.interrupted {
        rip_core::exit::INTERRUPTED
    } else {
        status.exit_code()
    };
    Verdict {
        status,
        exit_code,
        resumable,
        not_in_place,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::StageRun;

    fn ended(exits: &[Option<i32>], terminal: u64, signals: usize) -> Ended {
        Ended {
            stages: exits
                .iter()
                .enumerate()
                .map(|(i, &exit)| StageRun {
                    stage: format!("stage{i}"),
                    pid: i as u32,
                    exit,
                    status: Some("complete".into()),
                })
                .collect(),
            errors: Vec::new(),
            counters: Default::default(),
            terminal,
            interrupted: signals > 0,
            hard_stop: signals > 1,
        }
    }

    #[test]
    fn complete_and_partial_runs_with_records_are_put_in_place() {
        let v = judge(&ended(&[Some(0), Some(0)], 3, 0), Some(0));
        assert_eq!(
            (v.status, v.exit_code, v.not_in_place),
            (RunStatus::Complete, 0, None)
        );
        let v = judge(&ended(&[Some(0), Some(2)], 3, 0), Some(2));
        assert_eq!(
            (v.status, v.exit_code, v.not_in_place),
            (RunStatus::Partial, 2, None)
        );
    }

    #[test]
    fn not_ready_failed_and_empty_runs_are_not() {
        let v = judge(&ended(&[Some(3), Some(0)], 1, 0), Some(2));
        assert_eq!((v.status, v.exit_code), (RunStatus::NotReady, 3));
        assert!(v.not_in_place.is_some());
        let v = judge(&ended(&[Some(0), Some(1)], 5, 0), Some(2));
        assert_eq!((v.status, v.exit_code), (RunStatus::Failed, 1));
        assert!(v.not_in_place.is_some());
        let v = judge(&ended(&[Some(0), Some(0)], 0, 0), Some(2));
        assert_eq!(v.not_in_place, Some("has nothing in it"));
    }

    #[test]
    fn an_interruption_is_resumable_and_put_in_place_only_with_something_in_it() {
        let v = judge(&ended(&[Some(130), Some(0), Some(2)], 4, 1), Some(2));
        assert_eq!((v.status, v.exit_code), (RunStatus::Partial, 130));
        assert!(v.resumable);
        assert_eq!(v.not_in_place, None);
        let v = judge(&ended(&[Some(130), Some(0)], 0, 1), Some(2));
        assert_eq!(
            v.not_in_place,
            Some("was interrupted before anything came out")
        );
        // A hard stop: partial, not resumable.
        let v = judge(&ended(&[Some(130), Some(130)], 4, 2), Some(2));
        assert_eq!(
            (v.status, v.resumable, v.not_in_place),
            (RunStatus::Partial, false, None)
        );
    }
}
