//! Reading every entry back.

use std::path::Path;

use super::snapshot::{PackReader, Snapshot};
use super::{MaintainError, Problems, VerifyReport};

pub(super) fn run(dir: &Path) -> Result<VerifyReport, MaintainError> {
    let snap = Snapshot::of_folder(dir)?;
    let mut report = VerifyReport {
        dir: dir.to_owned(),
        entries: snap.live.len() as u64,
        bad_index_lines: snap.bad_lines,
        ..VerifyReport::default()
    };
    let mut reader = PackReader::new(dir);
    let mut problems = Problems::default();
    for (key, loc) in snap.in_pack_order() {
        match reader.entry(&snap, key, loc) {
            Ok(_) => {
                report.ok += 1;
                report.bytes_read += u64::from(loc.len);
            }
            Err(problem) => {
                report.corrupt += 1;
                problems.add(&snap, key, loc, problem);
            }
        }
    }
    report.problems = problems.finish(dir);
    Ok(report)
}
